"""The benchmark scripts still run end to end (on a tiny graph; no timing is asserted)."""

import json

from benchmarks import sampling


def test_sampling_benchmark_runs_and_writes_json(tmp_path):
    out = tmp_path / "sampling.json"
    payload = sampling.main(["--preset", "tiny", "--repeat", "1", "--batch-sizes", "64",
                             "--num-batches", "1", "2", "--batched-size", "32",
                             "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["benchmark"] == "sampling"
    for key in ("device_name", "torch", "git_commit", "torch_threads"):
        assert key in written["environment"]
    methods = {row["method"] for row in written["sampling"]}
    assert {"fastgl", "torch", "fastgl-batched"} <= methods
    assert all(row["edges_per_s"] > 0 for row in payload["sampling"])
