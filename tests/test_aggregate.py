"""aggregate / spmm / sddmm against a pure-PyTorch reference, with gradients and bad inputs."""

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_edge_softmax

from fastgl import CSCGraph, NeighborSampler, ops
from fastgl.graph import Block
from fastgl.nn.functional import aggregate, edge_softmax, gat_scores
from fastgl.ops import csc_from_coo, sddmm, spmm
from fastgl.ops._compat import register_autograd_kernel
from fastgl.ops._ops import _edge_softmax_grad, _edge_softmax_setup_context


def reference_aggregate(src, dst, num_dst, x, weight=None, reduce="sum"):
    """Edge-list reference: out[dst] += w * x[src] (divided by the in-degree for mean), or the
    per-feature maximum of the messages (0 for a node without in-edges)."""
    messages = x[src] if weight is None else weight.unsqueeze(1) * x[src]
    if reduce == "max":
        index = dst.unsqueeze(1).expand_as(messages)
        return torch.zeros(num_dst, x.shape[1], dtype=x.dtype).scatter_reduce(
            0, index, messages, "amax", include_self=False
        )
    out = torch.zeros(num_dst, x.shape[1], dtype=x.dtype).index_add_(0, dst, messages)
    if reduce == "mean":
        degree = torch.bincount(dst, minlength=num_dst).clamp(min=1).to(x.dtype)
        out = out / degree.unsqueeze(1)
    return out


def slot_targets(graph):
    return torch.repeat_interleave(torch.arange(graph.num_nodes), graph.in_degrees())


@st.composite
def graphs(draw):
    num_nodes = draw(st.integers(1, 40))
    num_edges = draw(st.integers(0, 200))
    seed = draw(st.integers(0, 2**31 - 1))
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    dtype = draw(st.sampled_from([torch.int32, torch.int64]))
    return CSCGraph.from_edge_index(edge_index.to(dtype), num_nodes=num_nodes), gen


@settings(max_examples=60)
@given(
    graphs(),
    st.sampled_from([1, 5, 33, 70]),
    st.sampled_from(["sum", "mean", "max"]),
    st.booleans(),
)
def test_graph_matches_reference(graph_and_gen, dim, reduce, weighted):
    graph, gen = graph_and_gen
    x = torch.randn(graph.num_nodes, dim, generator=gen, dtype=torch.float64)
    weight = torch.rand(graph.num_edges, generator=gen, dtype=torch.float64) if weighted else None
    got = aggregate(graph, x, weight, reduce)
    expected = reference_aggregate(
        graph.indices.long(), slot_targets(graph), graph.num_nodes, x, weight, reduce
    )
    torch.testing.assert_close(got, expected)


def sampled_blocks():
    gen = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 300, (2, 3000), generator=gen)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=300)
    sub = NeighborSampler(graph, [5, 4]).sample(torch.arange(0, 300, 7), generator=gen)
    return sub.blocks


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_sampled_block_matches_reference(reduce):
    for block in sampled_blocks():
        x = torch.randn(block.num_src_nodes, 16, dtype=torch.float64)
        weight = torch.rand(block.num_edges, dtype=torch.float64)
        got = aggregate(block, x, weight, reduce)
        assert got.shape == (block.num_dst_nodes, 16)
        torch.testing.assert_close(
            got, reference_aggregate(block.src, block.dst, block.num_dst_nodes, x, weight, reduce)
        )


def shuffled(block):
    """The same block with its edges in a random order (destinations no longer sorted)."""
    order = torch.randperm(block.num_edges, generator=torch.Generator().manual_seed(1))
    return Block(
        src=block.src[order],
        dst=block.dst[order],
        eid=block.eid[order],
        src_nodes=block.src_nodes,
        num_src_nodes=block.num_src_nodes,
        num_dst_nodes=block.num_dst_nodes,
    ), order


@pytest.mark.parametrize(
    "indptr, match",
    [
        (torch.tensor([0, 1]), r"shape \[\d+\]"),
        (None, "int64 tensor"),
        ("first", r"^Block: indptr must run from 0 to num_edges = \d+, got -1 to"),
        ("last", r"^Block: indptr must run from 0 to num_edges = \d+, got 0 to \d+"),
        ("decreasing", r"^Block: indptr must never decrease, but indptr\[2\] = \d+ < indptr\[1\]"),
    ],
)
def test_block_offsets_that_would_read_out_of_bounds_are_rejected(indptr, match):
    block = sampled_blocks()[0]
    good = block.indptr.clone()
    if indptr is None:
        indptr = good.int()
    elif indptr == "first":
        indptr = good.clone()
        indptr[0] = -1
    elif indptr == "last":
        indptr = good.clone()
        indptr[-1] += 1
    elif indptr == "decreasing":
        indptr = good.clone()
        indptr[1] = indptr[2] + 1
    bad = dataclasses.replace(block, indptr=indptr)
    with pytest.raises(ValueError, match=match):
        aggregate(bad, torch.randn(block.num_src_nodes, 4))


def test_block_offsets_move_with_the_block():
    block = sampled_blocks()[0]
    moved = block.to("cpu")
    assert moved.indptr is not None and torch.equal(moved.indptr, block.indptr)
    x = torch.randn(block.num_src_nodes, 4)
    torch.testing.assert_close(
        aggregate(moved, x), aggregate(dataclasses.replace(block, indptr=None), x)
    )


def test_unsorted_block_uses_its_own_edge_order():
    block, order = shuffled(sampled_blocks()[0])
    assert not bool((block.dst[1:] >= block.dst[:-1]).all())
    x = torch.randn(block.num_src_nodes, 8, dtype=torch.float64)
    weight = torch.rand(block.num_edges, dtype=torch.float64)
    torch.testing.assert_close(
        aggregate(block, x, weight, "mean"),
        reference_aggregate(block.src, block.dst, block.num_dst_nodes, x, weight, "mean"),
    )


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_gradcheck_graph_and_unsorted_block(reduce):
    gen = torch.Generator().manual_seed(3)
    graph = CSCGraph.from_edge_index(torch.randint(0, 12, (2, 40), generator=gen), num_nodes=14)
    x = torch.randn(14, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.rand(40, dtype=torch.float64, generator=gen, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w: aggregate(graph, x, w, reduce), (x, w))
    assert torch.autograd.gradcheck(lambda x: aggregate(graph, x, None, reduce), (x,))

    block, _ = shuffled(sampled_blocks()[1])
    xb = torch.randn(block.num_src_nodes, 2, dtype=torch.float64, requires_grad=True)
    wb = torch.rand(block.num_edges, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w: aggregate(block, x, w, reduce), (xb, wb))


@settings(max_examples=30)
@given(graphs(), st.sampled_from([1, 6, 40]))
def test_max_backward_ops_match_autograd_of_reference(graph_and_gen, dim):
    # Continuous random values: no ties, so every (row, feature) has one winner, as in torch.
    graph, gen = graph_and_gen
    x = torch.randn(graph.num_nodes, dim, generator=gen, dtype=torch.float64, requires_grad=True)
    w = torch.rand(graph.num_edges, generator=gen, dtype=torch.float64, requires_grad=True)
    grad_out = torch.randn(graph.num_nodes, dim, generator=gen, dtype=torch.float64)
    got = torch.autograd.grad(aggregate(graph, x, w, "max"), (x, w), grad_out)
    expected_out = reference_aggregate(
        graph.indices.long(), slot_targets(graph), graph.num_nodes, x, w, "max"
    )
    expected = torch.autograd.grad(expected_out, (x, w), grad_out, allow_unused=True)
    for ours, theirs in zip(got, expected):
        torch.testing.assert_close(ours, torch.zeros_like(ours) if theirs is None else theirs)


def test_max_backward_ops_reject_bad_inputs():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 2]]))
    x, grad = torch.ones(3, 2), torch.ones(3, 2)
    arg = torch.zeros(3, 2, dtype=torch.long)
    backward_weight = torch.ops.fastgl.spmm_max_backward_weight
    with pytest.raises(RuntimeError, match="spmm_max_backward_weight: arg has shape"):
        backward_weight(graph.indptr, graph.indices, x, arg[:2], grad)
    with pytest.raises(RuntimeError, match="spmm_max_backward_weight: arg must be Long"):
        backward_weight(graph.indptr, graph.indices, x, arg.int(), grad)
    with pytest.raises(RuntimeError, match="spmm_max_backward_weight: grad has 3 columns but x"):
        backward_weight(
            graph.indptr,
            graph.indices,
            torch.ones(3, 2),
            torch.zeros(3, 3, dtype=torch.long),
            torch.ones(3, 3),
        )
    slots = torch.tensor([0, 1, 2])
    backward_x = torch.ops.fastgl.spmm_max_backward_x
    with pytest.raises(RuntimeError, match="spmm_max_backward_x: t_slots id 5 out of range"):
        backward_x(graph.indptr, graph.indices, torch.tensor([0, 1, 5]), None, arg, grad)
    with pytest.raises(RuntimeError, match="spmm_max_backward_x: edge_weight has 2 entries"):
        backward_x(graph.indptr, graph.indices, slots, torch.ones(2), arg, grad)
    with pytest.raises(RuntimeError, match="spmm_max_backward_x: t_rows id 2 out of range"):
        backward_x(graph.indptr, graph.indices, slots, None, arg[:2], grad[:2])


def test_max_backward_ignores_winners_outside_the_row():
    # Row 2's winner 0 is an edge of row 1: it wins nothing there (and is no memory error).
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 2]]))
    arg = torch.tensor([[-1], [0], [0]])
    grad = torch.tensor([[1.0], [2.0], [4.0]])
    got = torch.ops.fastgl.spmm_max_backward_weight(
        graph.indptr, graph.indices, torch.ones(3, 1), arg, grad
    )
    assert got.tolist() == [2.0, 0.0, 0.0]


def test_backward_is_deterministic():
    graph = CSCGraph.from_edge_index(
        torch.randint(0, 500, (2, 20000), generator=torch.Generator().manual_seed(4))
    )
    x = torch.randn(graph.num_nodes, 64, requires_grad=True)
    grads = []
    for _ in range(2):
        x.grad = None
        aggregate(graph, x, reduce="mean").square().sum().backward()
        grads.append(x.grad.clone())
    assert torch.equal(grads[0], grads[1])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_accumulates_in_fp32(dtype):
    graph = CSCGraph.from_edge_index(
        torch.randint(0, 50, (2, 4000), generator=torch.Generator().manual_seed(5))
    )
    x = torch.rand(graph.num_nodes, 24)
    got = aggregate(graph, x.to(dtype), reduce="sum")
    assert got.dtype == dtype
    expected = aggregate(graph, x.to(dtype).float(), reduce="sum")
    # ~80 edges per node summed in fp32, one rounding at the end: within the output format's ulp.
    torch.testing.assert_close(
        got.float(), expected, rtol=1e-2 if dtype == torch.bfloat16 else 2e-3, atol=0
    )


def test_nodes_without_in_edges_and_empty_graph():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 1]]), num_nodes=4)
    out = aggregate(graph, torch.ones(4, 2), reduce="mean")
    assert out.tolist() == [[0, 0], [1, 1], [0, 0], [0, 0]]
    empty = CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.long), num_nodes=3)
    assert aggregate(empty, torch.ones(3, 5)).abs().sum() == 0


def test_sddmm_matches_reference():
    gen = torch.Generator().manual_seed(6)
    graph = CSCGraph.from_edge_index(torch.randint(0, 30, (2, 300), generator=gen), num_nodes=30)
    a = torch.randn(30, 7, dtype=torch.float64, generator=gen)
    b = torch.randn(30, 7, dtype=torch.float64, generator=gen)
    expected = (a[slot_targets(graph)] * b[graph.indices]).sum(1)
    torch.testing.assert_close(sddmm(graph.indptr, graph.indices, a, b), expected)


def test_bad_inputs():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]))
    x = torch.ones(3, 2)
    with pytest.raises(ValueError, match="aggregate: reduce must be one of"):
        aggregate(graph, x, reduce="median")
    with pytest.raises(RuntimeError, match="spmm_max: indices id 1 out of range"):
        torch.ops.fastgl.spmm_max(graph.indptr, graph.indices, None, torch.ones(1, 2))
    with pytest.raises(ValueError, match="aggregate: x must be a 2-D tensor"):
        aggregate(graph, torch.ones(3))
    with pytest.raises(ValueError, match=r"aggregate: edge_weight must have shape \[2\]"):
        aggregate(graph, x, torch.ones(3))
    with pytest.raises(
        RuntimeError, match="spmm: edge_weight dtype Double differs from the features. dtype Float"
    ):
        aggregate(graph, x, torch.ones(2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="spmm: indices id 1 out of range"):
        spmm(graph.indptr, graph.indices, None, torch.ones(1, 2))
    with pytest.raises(RuntimeError, match="spmm: x must be a floating-point tensor"):
        spmm(graph.indptr, graph.indices, None, torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(RuntimeError, match="sddmm: a has 3 columns but b has 2"):
        sddmm(graph.indptr, graph.indices, torch.ones(3, 3), torch.ones(3, 2))
    with pytest.raises(TypeError, match="aggregate: expected a CSCGraph or a Block"):
        aggregate("graph", x)
    with pytest.raises(ValueError, match="aggregate: x is on meta but the graph is on cpu"):
        aggregate(graph, x.to("meta"))
    with pytest.raises(ValueError, match="aggregate: edge_weight is on meta"):
        aggregate(graph, x, torch.ones(2, device="meta"))
    with pytest.raises(ValueError, match="edge_softmax: scores is on meta"):
        edge_softmax(graph, torch.ones(2, device="meta"))


@pytest.mark.skipif(
    not hasattr(torch.library, "opcheck"), reason="torch.library.opcheck is missing"
)
def test_opcheck():
    gen = torch.Generator().manual_seed(7)
    graph = CSCGraph.from_edge_index(torch.randint(0, 20, (2, 90), generator=gen), num_nodes=20)
    x = torch.randn(20, 6, generator=gen)
    w = torch.rand(90, generator=gen)
    torch.library.opcheck(torch.ops.fastgl.spmm.default, (graph.indptr, graph.indices, w, x))
    torch.library.opcheck(torch.ops.fastgl.spmm.default, (graph.indptr, graph.indices, None, x))
    torch.library.opcheck(torch.ops.fastgl.sddmm.default, (graph.indptr, graph.indices, x, x))
    torch.library.opcheck(torch.ops.fastgl.spmm_max.default, (graph.indptr, graph.indices, w, x))
    _, arg = torch.ops.fastgl.spmm_max(graph.indptr, graph.indices, w, x)
    grad = torch.randn(20, 6, generator=gen)
    torch.library.opcheck(
        torch.ops.fastgl.spmm_max_backward_weight.default,
        (graph.indptr, graph.indices, x, arg, grad),
    )
    rows = torch.repeat_interleave(torch.arange(20), graph.in_degrees())
    t_indptr, t_rows, t_slots = csc_from_coo(rows, graph.indices, 20)
    torch.library.opcheck(
        torch.ops.fastgl.spmm_max_backward_x.default, (t_indptr, t_rows, t_slots, w, arg, grad)
    )


def test_torch_compile_forward_and_backward():
    gen = torch.Generator().manual_seed(8)
    graph = CSCGraph.from_edge_index(torch.randint(0, 40, (2, 200), generator=gen), num_nodes=40)

    def loss(x, w):
        return aggregate(graph, x, w, "mean").relu().sum()

    compiled = torch.compile(loss, backend="aot_eager", fullgraph=False)
    x = torch.randn(40, 5, requires_grad=True)
    w = torch.rand(200, requires_grad=True)
    eager_grads = torch.autograd.grad(loss(x, w), (x, w))
    compiled_grads = torch.autograd.grad(compiled(x, w), (x, w))
    for eager, compiled_grad in zip(eager_grads, compiled_grads):
        torch.testing.assert_close(eager, compiled_grad)


@settings(max_examples=40)
@given(graphs(), st.sampled_from([None, 1, 3]))
def test_edge_softmax_matches_reference(graph_and_gen, heads):
    graph, gen = graph_and_gen
    shape = (graph.num_edges,) if heads is None else (graph.num_edges, heads)
    scores = torch.randn(shape, generator=gen, dtype=torch.float64) * 5
    got = edge_softmax(graph, scores)
    assert got.shape == scores.shape
    columns = scores if heads else scores.unsqueeze(1)
    expected = reference_edge_softmax(slot_targets(graph), graph.num_nodes, columns)
    torch.testing.assert_close(got if heads else got.unsqueeze(1), expected)


def test_edge_softmax_unsorted_block_and_gradcheck():
    block, _ = shuffled(sampled_blocks()[0])
    scores = torch.randn(block.num_edges, 2, dtype=torch.float64, requires_grad=True)
    got = edge_softmax(block, scores)
    torch.testing.assert_close(got, reference_edge_softmax(block.dst, block.num_dst_nodes, scores))
    sums = torch.zeros(block.num_dst_nodes, 2, dtype=torch.float64).index_add_(0, block.dst, got)
    has_edges = torch.bincount(block.dst, minlength=block.num_dst_nodes) > 0
    torch.testing.assert_close(sums[has_edges], torch.ones_like(sums[has_edges]))
    assert torch.autograd.gradcheck(lambda s: edge_softmax(block, s), (scores,))


def _edge_softmax_case():
    """``(indptr, scores)``: rows without edges, one edge, many; two heads, float64."""
    gen = torch.Generator().manual_seed(11)
    indptr = torch.tensor([0, 0, 1, 4, 4, 9, 15])
    return indptr, torch.randn(15, 2, generator=gen, dtype=torch.float64, requires_grad=True)


def test_edge_softmax_op_is_differentiable():
    indptr, scores = _edge_softmax_case()
    assert torch.autograd.gradcheck(lambda s: ops.edge_softmax(indptr, s), (scores,))
    assert torch.autograd.gradcheck(lambda s: torch.ops.fastgl.edge_softmax(indptr, s), (scores,))


def test_edge_softmax_op_and_nn_gradients_agree():
    """The op in CSC slot order and nn.functional's edge_softmax over a block in its own (shuffled)
    edge order give the same values and gradients, slot for slot."""
    block, _ = shuffled(sampled_blocks()[0])
    indptr, _, perm = csc_from_coo(block.src, block.dst, block.num_src_nodes)
    indptr = indptr[: block.num_dst_nodes + 1]
    gen = torch.Generator().manual_seed(12)
    scores = torch.randn(block.num_edges, 3, generator=gen, dtype=torch.float64)
    upstream = torch.randn(block.num_edges, 3, generator=gen, dtype=torch.float64)
    block_scores = scores.clone().requires_grad_()
    block_out = edge_softmax(block, block_scores)
    block_out.backward(upstream)
    slot_scores = scores[perm].requires_grad_()
    slot_out = ops.edge_softmax(indptr, slot_scores)
    slot_out.backward(upstream[perm])
    torch.testing.assert_close(slot_out, block_out[perm], rtol=0, atol=0)
    torch.testing.assert_close(slot_scores.grad, block_scores.grad[perm], rtol=0, atol=0)


def test_edge_softmax_op_compiles_with_its_backward():
    indptr, scores = _edge_softmax_case()

    def loss(s):
        return (ops.edge_softmax(indptr, s) * torch.arange(2.0, dtype=s.dtype)).sum()

    compiled = torch.compile(loss, backend="aot_eager", fullgraph=True)
    (eager,) = torch.autograd.grad(loss(scores), scores)
    (traced,) = torch.autograd.grad(compiled(scores), scores)
    torch.testing.assert_close(traced, eager)


# torch < 2.4 has no torch.library.register_autograd: _compat registers an Autograd kernel built
# from the same setup_context and backward. Run that path here, on a copy of edge_softmax in a
# namespace of its own, whatever the torch version.
_FALLBACK_LIBRARY = torch.library.Library("fastgl_autograd_fallback_test", "DEF")
_FALLBACK_LIBRARY.define("edge_softmax(Tensor indptr, Tensor scores) -> Tensor")
_FALLBACK_LIBRARY.impl("edge_softmax", torch.ops.fastgl.edge_softmax, "CPU")
register_autograd_kernel(
    "fastgl_autograd_fallback_test::edge_softmax",
    _edge_softmax_grad,
    _edge_softmax_setup_context,
)


def test_autograd_fallback_for_old_torch_is_differentiable():
    indptr, scores = _edge_softmax_case()
    fallback = torch.ops.fastgl_autograd_fallback_test.edge_softmax
    assert torch.autograd.gradcheck(lambda s: fallback(indptr, s), (scores,))
    upstream = torch.randn_like(scores)
    (expected,) = torch.autograd.grad(ops.edge_softmax(indptr, scores), scores, upstream)
    (got,) = torch.autograd.grad(fallback(indptr, scores), scores, upstream)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    with torch.no_grad():
        assert not fallback(indptr, scores).requires_grad


def test_gat_attention_parameters_train():
    """The whole attention path is differentiable: attention vectors get gradients and learn."""
    gen = torch.Generator().manual_seed(9)
    graph = CSCGraph.from_edge_index(torch.randint(0, 30, (2, 200), generator=gen), num_nodes=30)
    h = torch.randn(30, 4, generator=gen)
    target = torch.randn(30, 4, generator=gen)
    att_src = torch.zeros(4, 1, requires_grad=True)
    att_dst = torch.zeros(4, 1, requires_grad=True)
    optimizer = torch.optim.Adam([att_src, att_dst], lr=0.1)

    def loss():
        weights = edge_softmax(graph, gat_scores(graph, h @ att_src, h @ att_dst))
        return (aggregate(graph, h, weights[:, 0]) - target).square().mean()

    first = loss().item()
    for _ in range(30):
        optimizer.zero_grad()
        loss().backward()
        assert att_src.grad.abs().sum() > 0 and att_dst.grad.abs().sum() > 0
        optimizer.step()
    assert loss().item() < first


def test_edge_softmax_and_gat_scores_bad_inputs():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]))
    with pytest.raises(
        RuntimeError, match="edge_softmax: scores has 3 rows but the structure has 2"
    ):
        edge_softmax(graph, torch.ones(3))
    with pytest.raises(
        RuntimeError, match=r"edge_softmax: scores must be 2-D, got shape \[2, 1, 1\]"
    ):
        edge_softmax(graph, torch.ones(2, 1, 1))
    with pytest.raises(TypeError, match="edge_softmax: scores must be a tensor, got list"):
        edge_softmax(graph, [0.5, 0.5])
    with pytest.raises(ValueError, match=r"edge_softmax: scores must have shape \[E\] or"):
        edge_softmax(graph, torch.tensor(0.5))
    with pytest.raises(TypeError, match="edge_softmax: expected a CSCGraph or a Block, got str"):
        edge_softmax("graph", torch.ones(2))
    block, _ = shuffled(sampled_blocks()[0])  # its scores are gathered into slot order first
    with pytest.raises(
        ValueError, match=rf"edge_softmax: scores must have {block.num_edges} rows, one per edge"
    ):
        edge_softmax(block, torch.ones(block.num_edges + 1, 2))
    with pytest.raises(RuntimeError, match="edge_softmax: scores must be a floating-point"):
        torch.ops.fastgl.edge_softmax(graph.indptr, torch.ones(2, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="gat_scores: alpha_src and alpha_dst must be"):
        gat_scores(graph, torch.ones(3, 2), torch.ones(3, 1))


@pytest.mark.skipif(
    not hasattr(torch.library, "opcheck"), reason="torch.library.opcheck is missing"
)
def test_edge_softmax_opcheck():
    graph = CSCGraph.from_edge_index(
        torch.randint(0, 20, (2, 90), generator=torch.Generator().manual_seed(10))
    )
    scores = torch.randn(90, 3)
    torch.library.opcheck(torch.ops.fastgl.edge_softmax.default, (graph.indptr, scores))
    # With a score that needs a gradient: the op's registered autograd is checked too.
    torch.library.opcheck(
        torch.ops.fastgl.edge_softmax.default, (graph.indptr, scores.clone().requires_grad_())
    )
    out = torch.ops.fastgl.edge_softmax(graph.indptr, scores)
    torch.library.opcheck(
        torch.ops.fastgl.edge_softmax_backward.default, (graph.indptr, out, torch.randn(90, 3))
    )
