"""The command line: `fastgl info` and `fastgl train`, run as a user would."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

PLANETOID = Path(__file__).resolve().parents[2] / "shared" / "data" / "planetoid" / "raw"


def run_fastgl(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "fastgl", *args], capture_output=True,
                            text=True, timeout=600)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_info_names_versions_backends_and_threads():
    import torch

    import fastgl

    out = run_fastgl("info").stdout
    assert f"fastgl: {fastgl.__version__}" in out
    assert f"torch: {torch.__version__}" in out
    assert "compiled backends: cpu" in out
    assert "CUDA archs:" in out and "threads:" in out and "GPU:" in out


def test_train_synthetic_writes_summary(tmp_path):
    summary_path = tmp_path / "summary.json"
    result = run_fastgl("train", "--num-nodes", "3000", "--epochs", "3", "--no-progress",
                        "--summary-json", str(summary_path))
    assert "epoch 3/3" in result.stdout and "sample" in result.stdout
    summary = json.loads(summary_path.read_text())
    for key in ("test_acc", "val_acc", "epoch_time_s", "sample_s", "load_s", "compute_s"):
        assert key in summary
    assert summary["test_acc"] > 0.5  # 8 balanced classes: chance is 0.125
    assert summary["sample_s"] > 0 and summary["compute_s"] > 0


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
def test_train_cora_reaches_published_range(tmp_path):
    summary_path = tmp_path / "cora.json"
    run_fastgl("train", "--dataset", "planetoid", "--root", str(PLANETOID), "--name", "cora",
               "--epochs", "30", "--no-progress", "--summary-json", str(summary_path))
    summary = json.loads(summary_path.read_text())
    assert summary["num_nodes"] == 2708
    assert summary["test_acc"] >= 0.72  # GraphSAGE on Cora: about 0.78-0.81 with this setup


# The setups of the papers (Kipf & Welling: GCN hidden 16, dropout 0.5, lr 0.01, weight decay
# 5e-4, row-normalized features; Velickovic et al.: GAT 8 heads x 8, dropout 0.6, lr 0.005),
# trained on sampled neighborhoods (fanouts 10, 10). Over seeds 0-7 these reached GCN
# 0.798-0.816 and GAT 0.795-0.819; a CPU run repeats exactly for a given seed.
CORA_SETUPS = {
    "gcn": ["--hidden", "16", "--lr", "0.01", "--dropout", "0.5"],
    "gat": ["--hidden", "64", "--heads", "8", "--lr", "0.005", "--dropout", "0.6"],
}


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
@pytest.mark.parametrize("model", sorted(CORA_SETUPS))
def test_cora_accuracy_of_gcn_and_gat(tmp_path, model):
    summary_path = tmp_path / "cora.json"
    run_fastgl("train", "--dataset", "planetoid", "--root", str(PLANETOID), "--name", "cora",
               "--normalize-features", "--model", model, *CORA_SETUPS[model], "--epochs", "200",
               "--weight-decay", "5e-4", "--fanouts", "10", "10", "--seed", "0", "--no-progress",
               "--summary-json", str(summary_path))
    assert json.loads(summary_path.read_text())["test_acc"] >= 0.79


def test_train_fails_with_clear_error_and_nonzero_exit(tmp_path):
    result = run_fastgl("train", "--dataset", "planetoid", check=False)
    assert result.returncode != 0
    assert "--root" in result.stderr
    result = run_fastgl("train", "--dataset", "planetoid", "--root", str(tmp_path), check=False)
    assert result.returncode != 0
    assert "ind.cora" in result.stderr
