"""No input crashes an op: tests/fuzz_ops.py throws over 10,000 malformed and edge-case calls at
every registered fastgl op, in a child process so that a crash fails this test (naming the input
that crashed) instead of killing pytest."""

import json
import subprocess
import sys
from pathlib import Path

import torch

import fastgl  # noqa: F401  (registers the ops)
from fuzz_ops import registered_ops

TESTS = Path(__file__).resolve().parent
ROUNDS = 9  # about 1,240 calls a round: 11,000 in all, a few seconds


def test_every_op_survives_malformed_inputs(tmp_path):
    report_path = tmp_path / "fuzz.json"
    child = subprocess.run([sys.executable, str(TESTS / "fuzz_ops.py"), str(report_path),
                            str(ROUNDS)], cwd=TESTS, capture_output=True, text=True, timeout=900)
    last_case = child.stdout.strip().splitlines()[-1:] or ["(none)"]
    assert child.returncode == 0, (f"the fuzz child died (exit {child.returncode}) on: "
                                   f"{last_case[0]}\n{child.stderr[-2000:]}")
    report = json.loads(report_path.read_text())
    assert report["failures"] == []
    assert report["total"] >= 10_000, report["total"]
    assert sorted(report["per_op"]) == registered_ops()  # every registered op was fuzzed


def test_the_fuzz_enumerates_the_registered_schemas():
    names = registered_ops()
    assert {"spmm", "sample_hops", "gather_rows", "csc_from_coo"} <= set(names)
    assert all(hasattr(torch.ops.fastgl, name) for name in names)
