"""benchmarks/pipeline.py runs end to end on a tiny graph and writes a consistent JSON (no timing
is asserted beyond "positive")."""

import json

import pytest

from benchmarks import pipeline


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("pipeline") / "pipeline.json"
    # tiny has 80 training seeds: batches of 16 give 5, of which --max-batches keeps 4.
    pipeline.main(
        [
            "--preset",
            "tiny",
            "--batch-size",
            "16",
            "--fanouts",
            "5",
            "5",
            "--num-features",
            "16",
            "--hidden",
            "8",
            "--max-batches",
            "4",
            "--reorder",
            "4",
            "--out",
            str(out),
        ]
    )
    return json.loads(out.read_text())


def test_writes_the_four_configs_with_the_environment(result):
    assert result["benchmark"] == "pipeline"
    for key in (
        "device_name",
        "torch",
        "git_commit",
        "torch_threads",
        "load_average_1_5_15",
        "load_average_after",
    ):
        assert key in result["environment"]
    assert [row["config"] for row in result["rows"]] == ["a", "b", "c", "d"]
    assert result["args"]["max_batches"] == 4
    assert result["data"]["batches_run"] == 4 and result["data"]["batches_per_epoch"] == 5
    for row in result["rows"]:
        assert row["batches"] == 4 and len(row["records"]) == 4
        assert row["epoch_s"] > 0
        for phase in ("sample_s", "load_s", "compute_s"):
            assert row[phase] > 0, (row["config"], phase)
        assert row["speedup_vs_torch"] > 0 and row["speedup_vs_plain"] > 0
    by_key = {row["config"]: row for row in result["rows"]}
    assert by_key["d"]["speedup_vs_torch"] == pytest.approx(1.0)
    assert by_key["a"]["speedup_vs_plain"] == pytest.approx(1.0)


def test_match_never_moves_more_bytes(result):
    rows = {row["config"]: row for row in result["rows"]}
    plain, matched, reordered = rows["a"], rows["b"], rows["c"]
    # (a) and (b) sample the same batches: same rows, same features, same loss.
    sizes = [r["num_nodes"] for r in plain["records"]]
    assert sizes == [r["num_nodes"] for r in matched["records"]]
    assert matched["loss_mean"] == pytest.approx(plain["loss_mean"], rel=1e-4)
    assert plain["bytes_h2d"] >= matched["bytes_h2d"]
    assert plain["rows_reused"] == 0 and plain["match_degree"] is None
    row_bytes = plain["row_bytes"]
    for row in (plain, matched, reordered):
        assert row["rows_loaded"] + row["rows_reused"] + row["rows_cached"] == row["num_nodes"]
        assert row["bytes_h2d"] == row["rows_loaded"] * row_bytes
    assert 0 < matched["match_degree"] <= 1 and 0 < reordered["match_degree"] <= 1
    window = result["window_match_degree"]
    assert window["window"] == 4
    assert 0 < window["avg_pairwise_in_window"] <= 1
    for key in ("consecutive_sample_order", "consecutive_greedy_order"):
        assert 0 < window[key] <= 1


def test_torch_baseline_moves_every_row(result):
    torch_row = next(row for row in result["rows"] if row["config"] == "d")
    row_bytes = 16 * 4  # 16 float32 features
    assert torch_row["row_bytes"] == row_bytes
    assert torch_row["bytes_h2d"] == sum(r["num_nodes"] for r in torch_row["records"]) * row_bytes
    assert torch_row["rows_reused"] == 0 and torch_row["bytes_vs_plain"] > 0
