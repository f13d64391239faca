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
    "decreasing": (
        torch.tensor([0, 3, 1, 4]),
        r"indptr decreases: indptr\[2\] = 1 < indptr\[1\] = 3",
    ),
    "negative": (torch.tensor([0, -2, 4, 4]), r"indptr decreases: indptr\[1\] = -2"),
}


def calls(indptr, device="cpu"):
    """Every op that reads a whole structure, called on `indptr` with otherwise valid inputs."""
    rows = indptr.numel() - 1
    indptr, indices, x = indptr.to(device), INDICES.to(device), X.to(device)
    arg = torch.zeros(rows, 3, dtype=torch.long, device=device)
    grad = torch.randn(rows, 3, device=device)
    edge_arg = torch.zeros(4, 3, dtype=torch.long, device=device)
    scores = torch.rand(4, 2, device=device)
    return {
        "spmm": lambda: ops.spmm(indptr, indices, None, x),
        "spmm_max": lambda: ops.spmm_max(indptr, indices, torch.ones(4, device=device), x),
        "es_spmm": lambda: ops.es_spmm(indptr, indices, None, x, 2, "bucket", "sum"),
        "sddmm": lambda: ops.sddmm(indptr, indices, grad, x),
        "spmm_max_backward_weight": lambda: ops.spmm_max_backward_weight(
            indptr, indices, x, arg, grad
        ),
        "spmm_max_backward_x": lambda: ops.spmm_max_backward_x(
            indptr, indices, indices, None, edge_arg, x
        ),
        "edge_softmax": lambda: ops.edge_softmax(indptr, scores),
        "edge_softmax_backward": lambda: ops.edge_softmax_backward(indptr, scores, scores),
    }


OP_NAMES = list(calls(torch.tensor([0, 4])))


@pytest.mark.parametrize("fault", list(MALFORMED))
@pytest.mark.parametrize("op", OP_NAMES)
def test_malformed_offsets_are_rejected(op, fault):
    indptr, message = MALFORMED[fault]
    if op.startswith("edge_softmax") and "last edge" in fault:
        message = r"scores has 4 rows but the structure has \d+ edges"  # its edge count
    name = "t_indptr" if op == "spmm_max_backward_x" else "indptr"
    with pytest.raises(RuntimeError, match=rf"^{op}: {message.replace('indptr', name)}"):
        calls(indptr)[op]()


@pytest.mark.parametrize("op", OP_NAMES)
def test_valid_offsets_still_run(op):
    calls(torch.tensor([0, 1, 1, 4]))[op]()  # an empty row and a repeated offset are fine


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("fault", list(MALFORMED))
@pytest.mark.parametrize("op", OP_NAMES)
def test_malformed_offsets_are_rejected_on_cuda(op, fault):
    indptr, _ = MALFORMED[fault]
    name = "t_indptr" if op == "spmm_max_backward_x" else "indptr"
    message = rf"{name} is not a valid offset array"
    if op.startswith("edge_softmax") and "last edge" in fault:
        message = r"scores has 4 rows but the structure has \d+ edges"
    with pytest.raises(RuntimeError, match=rf"^{op}: {message}"):
        calls(indptr, "cuda")[op]()


# The samplers read only the rows of their transits: they check those rows as they read them
# (not the whole array: that would cost a pass over a 100M-node indptr per batch), plus the two
# ends of the offsets, and every neighbor id they gather.
BAD_OFFSETS = "indptr is not a valid CSC offset array"
SAMPLER_GRAPHS = {
    # name: (indptr, indices, message)
    "not starting at 0": (torch.tensor([1, 2, 3, 4]), INDICES, BAD_OFFSETS),
    "short of the last edge": (torch.tensor([0, 1, 2, 3]), INDICES, BAD_OFFSETS),
    "past the last edge": (torch.tensor([0, 2, 4, 100]), INDICES, BAD_OFFSETS),
    "a negative neighbor": (
        torch.tensor([0, 2, 4, 4]),
        torch.tensor([0, -7, 1, 2]),
        "indices id -7 out of range for a graph of 3 nodes",
    ),
    "a neighbor past the last node": (
        torch.tensor([0, 2, 4, 4]),
        torch.tensor([0, 9, 1, 2]),
        "indices id 9 out of range for a graph of 3 nodes",
    ),
}


OFFSET_FAULTS = [name for name, (_, _, message) in SAMPLER_GRAPHS.items() if message == BAD_OFFSETS]


def sampler_calls(indptr, indices, transits):
    seed_ptr = torch.tensor([0, transits.numel()], device=transits.device)
    return {
        "sample_neighbors": lambda: ops.sample_neighbors(
            indptr, indices, None, transits, -1, False, 0
        ),
        "sample_hops": lambda: ops.sample_hops(
            indptr, indices, None, None, transits, seed_ptr, [-1, -1], False, False, False, 0
        ),
    }


@pytest.mark.parametrize("fault", list(SAMPLER_GRAPHS))
@pytest.mark.parametrize("op", ["sample_neighbors", "sample_hops"])
def test_samplers_reject_what_they_read(op, fault):
    indptr, indices, message = SAMPLER_GRAPHS[fault]
    with pytest.raises(RuntimeError, match=rf"^{op}: {message}"):
        sampler_calls(indptr, indices, torch.tensor([0, 1, 2]))[op]()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("fault", OFFSET_FAULTS)
@pytest.mark.parametrize("op", ["sample_neighbors", "sample_hops"])
def test_samplers_reject_bad_offsets_on_cuda(op, fault):
    indptr, indices, message = SAMPLER_GRAPHS[fault]
    with pytest.raises(RuntimeError, match=rf"^{op}: {message}"):
        sampler_calls(indptr.cuda(), indices.cuda(), torch.tensor([0, 1, 2], device="cuda"))[op]()


@pytest.mark.parametrize("op", ["sample_neighbors", "sample_hops"])
def test_samplers_without_transits_read_nothing(op):
    indptr, indices, _ = SAMPLER_GRAPHS["past the last edge"]
    sampler_calls(indptr, indices, torch.tensor([], dtype=torch.long))[op]()


@pytest.mark.parametrize("fanouts", [[], [1]])
def test_sample_hops_checks_the_rows_it_reads_for_in_degrees(fanouts):
    # Node 1's row [2, 1) is read only for its in-degree (a seed with no hops, or a node the
    # last hop reached): it must not come back as a negative degree.
    indptr = torch.tensor([0, 2, 1, 4]) if not fanouts else torch.tensor([0, 3, 1, 4])
    seeds = torch.tensor([1]) if not fanouts else torch.tensor([0])
    with pytest.raises(RuntimeError, match=rf"^sample_hops: {BAD_OFFSETS}"):
        ops.sample_hops(
            indptr,
            torch.tensor([1, 1, 1, 0]),
            None,
            None,
            seeds,
            torch.tensor([0, 1]),
            fanouts,
            False,
            False,
            False,
            0,
        )


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
        ),
    ],
)
def test_sample_hops_without_hops_checks_indptr_ends(device):
    # No hop reads a row as a transit, so no count pass sees the ends: they are checked anyway.
    indptr, indices, _ = SAMPLER_GRAPHS["not starting at 0"]
    with pytest.raises(RuntimeError, match=rf"^sample_hops: {BAD_OFFSETS}"):
        ops.sample_hops(
            indptr.to(device),
            indices.to(device),
            None,
            None,
            torch.tensor([0], device=device),
            torch.tensor([0, 1], device=device),
            [],
            False,
            False,
            False,
            0,
        )


# Weighted draws assume finite, non-negative weights with a finite sum per row: anything else
# (which once came back as wrong samples) is an error for the row that holds it.
BAD_WEIGHTS = {
    "NaN": float("nan"),
    "negative": -1.0,
    "infinite": float("inf"),
    "overflowing sum": 1e308,
}


def weighted_sampler_calls(weight, replace, device):
    indptr = torch.tensor([0, 2, 4, 4], device=device)
    indices = torch.tensor([0, 1, 2, 0], device=device)
    transits = torch.tensor([2, 1], device=device)
    return {
        "sample_neighbors": lambda: ops.sample_neighbors(
            indptr, indices, weight, transits, 1, replace, 0
        ),
        "sample_hops": lambda: ops.sample_hops(
            indptr,
            indices,
            weight,
            None,
            transits,
            torch.tensor([0, 2], device=device),
            [1],
            replace,
            False,
            False,
            0,
        ),
    }


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
        ),
    ],
)
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("fault", list(BAD_WEIGHTS))
@pytest.mark.parametrize("op", ["sample_neighbors", "sample_hops"])
def test_samplers_reject_unusable_weights(op, fault, replace, device):
    weight = torch.tensor([1.0, 2.0, 1.0, BAD_WEIGHTS[fault]], dtype=torch.float64, device=device)
    if fault == "overflowing sum":
        weight[2] = BAD_WEIGHTS[fault]
    with pytest.raises(RuntimeError, match=rf"^{op}: weight must be finite and non-negative"):
        weighted_sampler_calls(weight, replace, device)[op]()
    # The same row with its fault set to zero draws only positive-weight edges.
    weight[2:] = torch.tensor([0.0, 1.0], dtype=torch.float64)
    result = weighted_sampler_calls(weight, replace, device)[op]()
    edge_ids = result[2] if op == "sample_neighbors" else result[4]
    assert set(edge_ids.tolist()) == {3}, "node 1 (transit 1) holds edges 2 (weight 0) and 3"


# Outputs sized by an int argument (a fanout with replacement, a node count) are checked against
# the device's memory before they are allocated: the error names the op, not the allocator.
@pytest.mark.parametrize("op", ["sample_neighbors", "sample_hops", "csc_from_coo"])
def test_outputs_larger_than_memory_are_refused_by_name(op):
    indptr, indices = torch.tensor([0, 2]), torch.tensor([0, 0])
    huge = 2**40
    call = {
        "sample_neighbors": lambda: ops.sample_neighbors(
            indptr, indices, None, torch.tensor([0]), huge, True, 0
        ),
        "sample_hops": lambda: ops.sample_hops(
            indptr,
            indices,
            None,
            None,
            torch.tensor([0]),
            torch.tensor([0, 1]),
            [huge],
            True,
            False,
            False,
            0,
        ),
        "csc_from_coo": lambda: ops.csc_from_coo(indices, indices, huge),
    }[op]
    with pytest.raises(
        RuntimeError,
        match=rf"^{op}: .* would need \d+ entries of \d+ bytes, "
        r"more than the \d+ MiB of memory on cpu",
    ):
        call()
