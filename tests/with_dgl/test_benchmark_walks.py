"""benchmarks.walks runs its DGL rows end to end in the DGL environment (no timing is
asserted)."""

import pytest

pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from test_benchmarks import check_walk_rows

from benchmarks import walks


@pytest.mark.parametrize("dgl_graph", ["sorted", "csc"])
def test_dgl_rows_walk_equal_work(tmp_path, dgl_graph):
    payload = walks.main(
        [
            "--dgl-graph",
            dgl_graph,
            "--graphs",
            "rmat-tiny",
            "--walks",
            "200",
            "--length",
            "12",
            "--repeat",
            "1",
            "--thread-counts",
            "1",
            "--out",
            str(tmp_path / "out.json"),
        ]
    )
    rows = {(r["algorithm"], r["walker"], r["threads"]): r for r in payload["rows"]}
    walkers = ("dgl", "fastgl-dgl", "fastgl-sample", "fastgl-transit", "torch")
    assert set(rows) == {(a, w, 1) for a in walks.ALGORITHMS for w in walkers}
    check_walk_rows(rows)
    for algorithm in walks.ALGORITHMS:
        dgl_row = rows[algorithm, "dgl", 1]
        assert dgl_row["baseline"] == "dgl" and dgl_row["vs_baseline"] == 1.0
        dropin = rows[algorithm, "fastgl-dgl", 1]
        assert dropin["vs_baseline"] == dropin["steps_per_s"] / dgl_row["steps_per_s"]
