"""The command line: `fastgl info` and `fastgl train`, run as a user would."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

PLANETOID = Path(__file__).resolve().parents[2] / "shared" / "data" / "planetoid" / "raw"


def run_fastgl(*args, check=True, cwd=None):
    """Runs the command line; runs write their default runs/<timestamp> into ``cwd``."""
    result = subprocess.run(
        [sys.executable, "-m", "fastgl", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
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
    assert "CPU kernels:" in out


def test_gcc_builds_on_x86_64_glibc_carry_wide_cpu_kernels():
    """The hot CPU loops are compiled for AVX-512 and AVX2 besides the baseline; if the
    multiversioning test in common/multiversion.h stops matching (it once did, silently, and
    spmm ran 1.9x slower) every test would still pass but this one."""
    import platform

    from fastgl import _C

    if _C.compiler != "gcc" or platform.machine() != "x86_64" or platform.libc_ver()[0] != "glibc":
        pytest.skip(
            f"multiversioning is built only by GCC on x86-64 glibc (this build: "
            f"{_C.compiler}, {platform.machine()}, {platform.libc_ver()[0] or 'no glibc'})"
        )
    assert _C.cpu_isas == ("avx512f", "avx2", "default")


def test_train_help_gives_every_default():
    from fastgl import cli

    help_text = " ".join(run_fastgl("train", "--help").stdout.split())
    parser = argparse.ArgumentParser()
    cli._add_train_arguments(parser)
    for action in parser._actions:
        if action.default is None or action.default is False or action.dest == "help":
            continue
        assert action.help, f"--{action.dest} has no help"
        shown = f"(default: {action.default})" in help_text or "default" in action.help
        assert shown, f"--{action.dest}: its default {action.default!r} is not in --help"
    assert "cora, citeseer or pubmed (default: cora)" in help_text
    assert "(default: 200 on planetoid, as the papers train Cora, else 10)" in help_text
    # The options whose default depends on the model give it per model.
    assert "split between the heads for gat (default: 64 for sage, gin and gat, 16 for gcn)" in (
        help_text
    )
    assert "attention heads of gat (default: 8)" in help_text
    assert "learning rate (default: 0.01 for sage, gcn and gin, 0.005 for gat)" in help_text
    assert "dropout probability (default: 0.5 for sage, gcn and gin, 0.6 for gat)" in help_text
    assert "weight decay (default: 0.0005)" in help_text


@pytest.mark.parametrize("model", ["sage", "gcn", "gin", "gat"])
def test_each_model_gets_its_own_defaults_unless_given(model):
    from fastgl import cli

    parser = argparse.ArgumentParser()
    cli._add_train_arguments(parser)
    args = cli.resolve_defaults(parser.parse_args(["--model", model]))
    expected = {"heads": 1, **cli.MODEL_DEFAULTS[model]}
    assert {option: getattr(args, option) for option in expected} == expected
    assert args.epochs == 10
    args = cli.resolve_defaults(
        parser.parse_args(
            ["--model", model, "--dataset", "planetoid", "--lr", "0.1", "--heads", "2"]
        )
    )
    assert args.lr == 0.1 and args.heads == 2 and args.epochs == 200
    assert args.hidden == cli.MODEL_DEFAULTS[model]["hidden"]


def test_train_synthetic_writes_summary(tmp_path):
    summary_path = tmp_path / "summary.json"
    result = run_fastgl(
        "train",
        "--num-nodes",
        "3000",
        "--no-progress",
        "--summary-json",
        str(summary_path),
        cwd=tmp_path,
    )
    assert "epoch 10/10" in result.stdout and "sample" in result.stdout
    summary = json.loads(summary_path.read_text())
    for key in ("test_acc", "val_acc", "epoch_time_s", "sample_s", "load_s", "compute_s"):
        assert key in summary
    # 150 labelled nodes (5 %): measured 0.547 after the 10 epochs; chance is 0.125.
    assert summary["test_acc"] > 0.45
    losses = [epoch["loss"] for epoch in summary["epochs"]]
    assert losses == sorted(losses, reverse=True)  # falls every epoch (measured 2.15 to 0.69)
    assert summary["sample_s"] > 0 and summary["compute_s"] > 0


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
@pytest.mark.parametrize("model", ["sage", "gcn", "gat"])
def test_bare_command_trains_cora_to_the_papers_accuracy(tmp_path, model):
    """With no option but the data and the model, each model trains as its paper does (GCN: Kipf
    & Welling report 0.815 full-batch; GAT: Velickovic et al. 0.830) on sampled neighborhoods
    (fanouts 10 10). Measured at seed 0, the default: GraphSAGE 0.805, GCN 0.803, GAT 0.809; over
    seeds 0-3 every model stays within 0.797-0.813. A CPU run repeats exactly for a seed."""
    summary_path = tmp_path / "cora.json"
    run_fastgl(
        "train",
        "--dataset",
        "planetoid",
        "--root",
        str(PLANETOID),
        "--name",
        "cora",
        "--model",
        model,
        "--no-progress",
        "--summary-json",
        str(summary_path),
        cwd=tmp_path,
    )
    summary = json.loads(summary_path.read_text())
    assert summary["num_nodes"] == 2708 and summary["config"]["epochs"] == 200
    assert summary["test_acc"] >= 0.80


def test_train_fails_with_clear_error_and_nonzero_exit(tmp_path):
    result = run_fastgl("train", "--dataset", "planetoid", check=False, cwd=tmp_path)
    assert result.returncode != 0
    assert "--root" in result.stderr
    result = run_fastgl(
        "train", "--dataset", "planetoid", "--root", str(tmp_path), check=False, cwd=tmp_path
    )
    assert result.returncode != 0
    assert "ind.cora" in result.stderr


def test_unusable_device_is_one_error_line_before_any_data(tmp_path):
    import torch

    from fastgl import _C

    result = run_fastgl("train", "--device", "tpu", check=False, cwd=tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr == "fastgl train: error: --device: expected cpu, cuda or cuda:N, got 'tpu'\n"
    )
    assert result.stdout == ""  # the dataset was never built (it would be printed)
    if _C.with_cuda and torch.cuda.is_available():
        pytest.skip("CUDA is usable here: --device cuda would train")
    result = run_fastgl("train", "--device", "cuda", check=False, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("fastgl train: error: --device cuda: ")
    assert "built without CUDA kernels" in line or "torch sees no GPU" in line
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--epochs", "0"], "epochs must be at least 1, got 0"),
        (["--batch-size", "0"], "batch size must be at least 1, got 0"),
        (
            ["--model", "gat", "--hidden", "10"],
            "hidden must be a multiple of heads, got hidden 10 and heads 8",
        ),
        (["--dropout", "1"], "dropout must be in [0, 1), got 1.0"),
    ],
)
def test_bad_settings_are_one_error_line_before_any_data(tmp_path, options, message):
    result = run_fastgl("train", *options, check=False, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("fastgl train: error: ") and line.endswith(message)
    assert "fastgl train" not in line.removeprefix("fastgl train: error: ")


@pytest.mark.parametrize("flag, normalized", [([], True), (["--no-normalize-features"], False)])
def test_planetoid_features_are_row_normalized_unless_told(flag, normalized):
    from fastgl import cli, data

    parser = argparse.ArgumentParser()
    cli._add_train_arguments(parser)
    args = parser.parse_args(["--dataset", "planetoid", "--root", "R", "--name", "citeseer", *flag])
    make, kwargs = cli.dataset_recipe(args)
    assert make is data.read_planetoid
    assert kwargs == {"root": "R", "name": "citeseer", "normalize_features": normalized}


def test_missing_scipy_is_one_error_line_before_any_data(tmp_path, monkeypatch, capsys):
    from fastgl import cli

    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy now raises ImportError
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    assert cli.main(["train", "--dataset", "planetoid", "--root", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "fastgl train: error: --dataset planetoid needs scipy, which is not installed: "
        "pip install scipy (or install fastgl with its data extra)\n"
    )


def test_missing_matplotlib_is_said_before_training(monkeypatch, capsys):
    from fastgl import cli

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    cli.check_optional_dependencies("synthetic")
    assert capsys.readouterr().err == (
        "note: matplotlib is not installed, so no figure.png will be drawn "
        "(pip install matplotlib)\n"
    )
    monkeypatch.undo()
    cli.check_optional_dependencies("synthetic")
    assert capsys.readouterr().err == ""


def test_a_run_without_matplotlib_writes_its_logs_and_says_so(tmp_path, monkeypatch, capsys):
    from fastgl import cli

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "run"
    options = ["--num-nodes", "2000", "--epochs", "1", "--no-progress", "--out-dir", str(out)]
    assert cli.main(["train", *options]) == 0
    stdout, stderr = capsys.readouterr()
    assert "matplotlib is not installed, so no figure.png will be drawn" in stderr
    assert f"wrote log.json and summary.json into {out}" in stdout
    assert sorted(path.name for path in out.iterdir()) == ["log.json", "summary.json"]


def test_train_with_no_arguments_leaves_a_run_directory(tmp_path):
    """What `make demo` shows, on a smaller graph: bars, epochs, the phase table, and the logs
    and figure in runs/<timestamp>."""
    from fastgl.data import synthetic_node_classification

    result = run_fastgl("train", "--num-nodes", "30000", "--epochs", "2", cwd=tmp_path)
    (run,) = (tmp_path / "runs").iterdir()
    assert "epoch 2/2" in result.stdout
    assert "mean of 2 epochs:" in result.stdout and "features gathered from the feature store" in (
        result.stdout
    )
    assert "H2D" not in result.stdout and "device" not in result.stdout  # nothing moves on a CPU
    lines = result.stdout.splitlines()
    assert lines[-1] == f"wrote log.json, summary.json and figure.png into runs/{run.name}"
    assert all(len(line) <= 100 for line in lines[1:-1])  # but the dataset and the run's path
    assert "it/s" in result.stderr  # tqdm's progress bars
    log = json.loads((run / "log.json").read_text())
    summary = json.loads((run / "summary.json").read_text())
    assert len(log["epochs"]) == 2 and log["config"]["reorder"] == 8
    assert log["config"]["dataset_args"] == {  # the task trained, from its logs alone
        "function": "synthetic_node_classification",
        "num_nodes": 30000,
        "seed": 0,
        "feature_noise": 8.0,
        "split": [0.05, 0.05],
    }
    edges = synthetic_node_classification(num_nodes=30000).num_edges
    assert lines[:2] == [
        f"synthetic-n30000-d15-s0: 30,000 nodes, {edges:,} edges, 64 features, 8 classes",
        "training on 1,500 nodes, validating on 1,500, testing on 27,000",
    ]
    assert set(log["epochs"][0]["phases"]) == {
        "sample_s",
        "idmap_s",
        "reorder_s",
        "load_s",
        "compute_s",
        "wait_s",
    }
    assert summary["bytes_h2d"] > 0 and 0 < summary["match_degree"] <= 1
    assert (run / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_train_pipeline_options_reach_the_loader(tmp_path):
    out = tmp_path / "run"
    result = run_fastgl(
        "train",
        "--num-nodes",
        "2000",
        "--epochs",
        "1",
        "--no-progress",
        "--reorder",
        "1",
        "--no-match",
        "--cache-budget",
        "0.5",
        "--feature-dtype",
        "bfloat16",
        "--no-prefetch",
        "--phases-per-epoch",
        "--out-dir",
        str(out),
        cwd=tmp_path,
    )
    assert "seconds per phase and % of the epoch time (time_s) per epoch" in result.stdout
    assert "    1  " in result.stdout and " mean  " in result.stdout
    assert "background thread" not in result.stdout  # nothing overlaps without prefetching
    config = json.loads((out / "log.json").read_text())["config"]
    assert config["reorder"] == 1 and config["match"] is False and config["cache"] == 0.5
    assert config["feature_dtype"] == "torch.bfloat16" and config["prefetch"] is False
    epoch = json.loads((out / "log.json").read_text())["epochs"][0]
    assert epoch["rows_reused"] == 0 and epoch["rows_cached"] > 0


def test_train_reads_npz_and_generates_rmat(tmp_path):
    from fastgl.data import save_npz, synthetic_node_classification

    path = tmp_path / "graph.npz"
    save_npz(synthetic_node_classification(num_nodes=1500, seed=2), path)
    for args in (
        ["--dataset", "npz", "--root", str(path)],
        ["--dataset", "rmat", "--rmat-preset", "tiny", "--num-features", "16"],
    ):
        out = tmp_path / args[1]
        run_fastgl(
            "train", *args, "--epochs", "1", "--no-progress", "--out-dir", str(out), cwd=tmp_path
        )
        summary = json.loads((out / "summary.json").read_text())
        assert summary["num_nodes"] == (1500 if args[1] == "npz" else 1000)


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, None),
        ("all", "all"),
        ("0.25", 0.25),
        ("512MB", 512 * 10**6),
        ("2GiB", 2 * 2**30),
        ("1.5kib", 1536),
        ("4096", 4096),
    ],
)
def test_cache_budget_sizes(text, expected):
    from fastgl.cli import parse_cache_budget

    assert parse_cache_budget(text) == expected


@pytest.mark.parametrize("text", ["lots", "12XB", "1.5"])
def test_cache_budget_rejects_nonsense(text):
    from fastgl.cli import parse_cache_budget

    with pytest.raises(ValueError, match="--cache-budget"):
        parse_cache_budget(text)
