"""Ops that read a whole CSR-like structure check every offset first: a malformed `indptr` is an
error naming the op and the fault, never a crash, garbage or uninitialized memory."""

import pytest
import torch

import fastgl  # noqa: F401  (registers the ops)

ops = torch.ops.fastgl
INDICES = torch.tensor([0, 1, 2, 3])
X = torch.randn(4, 3)

MALFORMED = {
    # name: (indptr over INDICES' 4 edges, what the message must say)
    "past the last edge": (torch.tensor([0, 2, 4, 100]), r"indptr\[-1\] is 100 but must be 4"),
    "short of the last edge": (torch.tensor([0, 1, 2, 3]), r"indptr\[-1\] is 3 but must be 4"),
    "not starting at 0": (torch.tensor([1, 2, 3, 4]), r"indptr\[0\] is 1 but must be 0"),
    "decreasing": (torch.tensor([0, 3, 1, 4]), r"indptr decreases: indptr\[2\] = 1 < indptr\[1\] = 3"),
    "negative": (torch.tensor([0, -2, 4, 4]), r"indptr decreases: indptr\[1\] = -2"),
}


def calls(indptr):
    """Every op that reads a whole structure, called on `indptr` with otherwise valid inputs."""
    rows = indptr.numel() - 1
    arg = torch.zeros(rows, 3, dtype=torch.long)
    grad = torch.randn(rows, 3)
    return {
        "spmm": lambda: ops.spmm(indptr, INDICES, None, X),
        "spmm_max": lambda: ops.spmm_max(indptr, INDICES, torch.ones(4), X),
        "es_spmm": lambda: ops.es_spmm(indptr, INDICES, None, X, 2, "bucket", "sum"),
        "sddmm": lambda: ops.sddmm(indptr, INDICES, torch.randn(rows, 3), X),
        "spmm_max_backward_weight": lambda: ops.spmm_max_backward_weight(indptr, INDICES, X, arg,
                                                                         grad),
        "spmm_max_backward_x": lambda: ops.spmm_max_backward_x(indptr, INDICES, INDICES, None,
                                                               torch.zeros(4, 3, dtype=torch.long),
                                                               torch.randn(4, 3)),
        "edge_softmax": lambda: ops.edge_softmax(indptr, torch.randn(4, 2)),
        "edge_softmax_backward": lambda: ops.edge_softmax_backward(indptr, torch.rand(4, 2),
                                                                   torch.randn(4, 2)),
    }


OP_NAMES = list(calls(torch.tensor([0, 4])))


@pytest.mark.parametrize("fault", list(MALFORMED))
@pytest.mark.parametrize("op", OP_NAMES)
def test_malformed_offsets_are_rejected(op, fault):
    indptr, message = MALFORMED[fault]
    if op.startswith("edge_softmax") and "last edge" in fault:
        message = r"scores has 4 rows but the structure has \d+ edges"  # its edge count
    name = "t_indptr" if op == "spmm_max_backward_x" else "indptr"
    with pytest.raises(RuntimeError, match=rf"{op}: {message.replace('indptr', name)}"):
        calls(indptr)[op]()


@pytest.mark.parametrize("op", OP_NAMES)
def test_valid_offsets_still_run(op):
    calls(torch.tensor([0, 1, 1, 4]))[op]()  # an empty row and a repeated offset are fine
