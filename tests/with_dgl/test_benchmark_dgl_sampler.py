"""benchmarks.dgl_sampler runs its DGL rows end to end in the DGL environment (no timing is
asserted)."""

import pytest

pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from benchmarks import dgl_sampler  # noqa: E402


def test_dgl_rows_sample_equal_work(tmp_path):
    payload = dgl_sampler.main(["--graphs", "rmat-tiny", "--batches", "3", "--batch-size", "32",
                                "--repeat", "1", "--out", str(tmp_path / "out.json")])
    rows = {row["sampler"]: row for row in payload["rows"]}
    assert set(rows) == {"dgl", "fastgl"} and rows["dgl"]["vs_baseline"] == 1.0
    # Same fanouts, same layer-wise semantics: about the same number of edges per batch.
    assert rows["fastgl"]["edges_per_batch"] == pytest.approx(rows["dgl"]["edges_per_batch"],
                                                              rel=0.1)
