"""benchmarks.dgl_sampler runs its DGL rows end to end in the DGL environment (no timing is
asserted)."""

import pytest

pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from benchmarks import dgl_sampler


def test_dgl_rows_sample_equal_work(tmp_path):
    payload = dgl_sampler.main(
        [
            "--graphs",
            "rmat-tiny",
            "--batches",
            "3",
            "--batch-size",
            "32",
            "--repeat",
            "1",
            "--thread-counts",
            "1",
            "2",
            "--out",
            str(tmp_path / "out.json"),
        ]
    )
    rows = {(row["sampler"], row["threads"]): row for row in payload["rows"]}
    assert set(rows) == {(s, t) for s in ("dgl", "fastgl-dgl", "fastgl", "torch") for t in (1, 2)}
    for threads in (1, 2):
        dgl_row, dropin = rows["dgl", threads], rows["fastgl-dgl", threads]
        assert dgl_row["vs_baseline"] == 1.0
        # Same fanouts, same layer-wise semantics: about the same number of edges per batch.
        assert dropin["edges_per_batch"] == pytest.approx(dgl_row["edges_per_batch"], rel=0.1)
        # fastgl and the PyTorch sampler share the hop-wise semantics.
        native, torch_row = rows["fastgl", threads], rows["torch", threads]
        assert native["edges_per_batch"] == pytest.approx(torch_row["edges_per_batch"], rel=0.1)
        assert native["vs_torch"] == pytest.approx(native["edges_per_s"] / torch_row["edges_per_s"])
    assert rows["dgl", 2]["speedup_vs_1_thread"] == pytest.approx(
        rows["dgl", 2]["edges_per_s"] / rows["dgl", 1]["edges_per_s"]
    )


def test_hetero_rows_sample_equal_work(tmp_path):
    payload = dgl_sampler.main(
        [
            "--graphs",
            "hetero-tiny",
            "--batches",
            "3",
            "--batch-size",
            "32",
            "--repeat",
            "1",
            "--thread-counts",
            "1",
            "--out",
            str(tmp_path / "out.json"),
        ]
    )
    rows = {row["sampler"]: row for row in payload["rows"]}
    assert set(rows) == {"dgl", "fastgl-dgl", "fastgl"}
    assert all(row["graph"] == "hetero-tiny" and row["baseline"] == "dgl" for row in rows.values())
    # DGL's layer-wise semantics on both: about the same number of edges per batch.
    assert rows["fastgl-dgl"]["edges_per_batch"] == pytest.approx(
        rows["dgl"]["edges_per_batch"], rel=0.1
    )
    # fastgl's own sampler is hop-wise: only new nodes draw, so fewer edges.
    assert 0 < rows["fastgl"]["edges_per_batch"] < rows["dgl"]["edges_per_batch"]
    graph = payload["graphs"]["hetero-tiny"]
    assert graph["num_nodes_per_type"] == {"user": 1_000, "item": 400, "tag": 50}
    assert graph["num_edges_per_relation"]["item-bought-by-user"] == 5_000
    assert graph["num_edges"] == sum(graph["num_edges_per_relation"].values()) == 20_000
