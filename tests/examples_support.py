"""Running the drop-in examples of integrations/examples and fastgl's own training on Cora."""

import difflib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "integrations" / "examples"
PLANETOID = REPO.parent / "shared" / "data" / "planetoid" / "raw"
SEEDS = (0, 1, 2)
# The examples' setup (GraphSAGE, hidden 64, fanouts 10 10, batch 512, lr 0.01, weight decay
# 5e-4, dropout 0.5, 50 epochs, row-normalized features) as fastgl's own training command.
NATIVE_TRAIN = [
    "train",
    "--dataset",
    "planetoid",
    "--name",
    "cora",
    "--normalize-features",
    "--model",
    "sage",
    "--hidden",
    "64",
    "--fanouts",
    "10",
    "10",
    "--epochs",
    "50",
    "--weight-decay",
    "5e-4",
    "--batch-size",
    "512",
    "--no-progress",
]


def changed_lines(original: str, dropin: str) -> list:
    """Lines that differ between two example files (removed or added), blank lines aside: the
    import sorter separates fastgl's imports from the third-party ones by one."""
    a = (EXAMPLES / original).read_text().splitlines()
    b = (EXAMPLES / dropin).read_text().splitlines()
    return [
        line[1:]
        for line in difflib.unified_diff(a, b, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]


def run_example(script: str, seed: int, cwd: Path) -> subprocess.CompletedProcess:
    # Run from outside the repository, so the installed fastgl is the one imported.
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--root", str(PLANETOID), "--seed", str(seed)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def example_accuracy(script: str, seed: int, cwd: Path) -> float:
    result = run_example(script, seed, cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("test accuracy "), result.stdout
    return float(last.split()[-1])


def native_accuracy(seed: int, cwd: Path) -> float:
    summary = cwd / f"native-{seed}.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fastgl",
            *NATIVE_TRAIN,
            "--root",
            str(PLANETOID),
            "--seed",
            str(seed),
            "--summary-json",
            str(summary),
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    return json.loads(summary.read_text())["test_acc"]


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)
