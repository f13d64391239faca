"""No input crashes an op: tests/fuzz_ops.py throws over 10,000 malformed and edge-case calls at
every registered fastgl op, in a child process so that a crash fails this test (naming the input
that crashed) instead of killing pytest. Every result an op returns is checked by its oracle in
tests/fuzz_oracles.py, and the oracles themselves are tested here."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fuzz_ops import FUZZED_OPS, registered_ops
from fuzz_oracles import check_result, snapshot

import fastgl  # noqa: F401  (registers the ops)

TESTS = Path(__file__).resolve().parent
ROUNDS = 9  # about 1,300 calls a round, then a round of large calls: 12,700 in all, a few seconds


def test_every_op_survives_malformed_inputs(tmp_path):
    report_path = tmp_path / "fuzz.json"
    child = subprocess.run(
        [sys.executable, str(TESTS / "fuzz_ops.py"), str(report_path), str(ROUNDS)],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=900,
    )
    last_case = child.stdout.strip().splitlines()[-1:] or ["(none)"]
    assert child.returncode == 0, (
        f"the fuzz child died (exit {child.returncode}) on: {last_case[0]}\n{child.stderr[-2000:]}"
    )
    report = json.loads(report_path.read_text())
    assert report["failures"] == []
    assert report["total"] >= 10_000, report["total"]
    assert sorted(report["per_op"]) == registered_ops()  # every registered op was fuzzed


def test_the_fuzz_enumerates_the_registered_schemas():
    names = registered_ops()
    assert {"spmm", "sample_hops", "gather_rows", "csc_from_coo"} <= set(names)
    assert all(hasattr(torch.ops.fastgl, name) for name in names)


def _corrupted(result):
    """``result`` with one entry of its first non-empty tensor changed (a yes/no answer
    flipped), or ``None``."""
    if isinstance(result, bool):
        return not result
    tensors = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, tensor in enumerate(tensors):
        if tensor.numel():
            wrong = tensor.clone()
            wrong.view(-1)[0] += 1
            return (
                type(result)(tensors[:i] + [wrong] + tensors[i + 1 :])
                if isinstance(result, tuple)
                else wrong
            )
    return None


@pytest.mark.parametrize("op", registered_ops())
def test_every_oracle_rejects_a_wrong_result(op):
    """The fuzz's oracles can fail: a result with one entry changed is caught (for gather_rows,
    whose result is its argument out, one changed row of out)."""
    rng = random.Random(7)
    valid_call, oracle = FUZZED_OPS[op]
    for _ in range(200):
        call = valid_call(rng)
        before = snapshot(call)
        result = getattr(torch.ops.fastgl, op)(**call)
        if op == "gather_rows":
            if call["out"].numel():
                assert check_result(op, oracle, before, call, result) is None
                call["out"].view(-1)[0] += 1
                assert check_result(op, oracle, before, call, result) is not None
                return
            continue
        wrong = _corrupted(result)
        if wrong is not None:
            assert check_result(op, oracle, before, call, result) is None
            assert check_result(op, oracle, before, call, wrong) is not None
            return
    pytest.fail(f"no valid call of {op} with a non-empty result in 200 tries")


def test_the_oracles_catch_a_changed_argument():
    valid_call, oracle = FUZZED_OPS["spmm"]
    call = valid_call(random.Random(3))
    before = snapshot(call)
    result = torch.ops.fastgl.spmm(**call)
    call["x"].add_(1)
    assert check_result("spmm", oracle, before, call, result) == "the op changed its argument x"


def _hops_variant(result, keep):
    """``result`` of sample_hops with its edges reduced to ``keep`` (indices into the edges),
    the last batch's last hop count adjusted to match."""
    nodes, node_counts, row, col, edge_ids, edge_counts, *rest = result
    counts = edge_counts.clone()
    counts[-1, -1] += keep.numel() - row.numel()
    return (nodes, node_counts, row[keep], col[keep], edge_ids[keep], counts, *rest)


@pytest.mark.parametrize("change", ["the last edge dropped", "the last edge drawn twice"])
def test_the_sample_hops_oracle_rejects_a_changed_sample(change):
    """A sample that is well formed but not what the fanouts and the graph give."""
    valid_call, oracle = FUZZED_OPS["sample_hops"]
    rng = random.Random(11)
    for _ in range(500):
        call = dict(valid_call(rng), replace=False)
        call["fanouts"] = [f for f in call["fanouts"] if f != 0] or [2]
        before = snapshot(call)
        result = torch.ops.fastgl.sample_hops(**call)
        if result[2].numel() and int(result[5][-1, -1]) > 0:
            break
    else:
        pytest.fail("no sample with edges in its last batch's last hop in 500 tries")
    assert check_result("sample_hops", oracle, before, call, result) is None
    last = result[2].numel() - 1
    keep = (
        torch.arange(last)
        if change == "the last edge dropped"
        else torch.cat([torch.arange(last + 1), torch.tensor([last])])
    )
    assert check_result("sample_hops", oracle, before, call, _hops_variant(result, keep))
