"""The CPU sum kernel's partitioning (column slabs, row ranges of equal work) and the structures
cached for aggregation: results independent of how the work is split, every slab width, skewed
degrees, and the transposed structure built once per graph or block."""

import pytest
import torch
from reference import random_edge_index

from fastgl import CSCGraph, NeighborSampler
from fastgl.nn import functional as _aggregate
from fastgl.nn.functional import aggregate, es_spmm
from fastgl.ops import spmm


def reference_spmm(graph, x, weight):
    dst = torch.repeat_interleave(torch.arange(graph.num_nodes), graph.in_degrees())
    messages = weight.unsqueeze(1) * x[graph.indices.long()]
    return torch.zeros(graph.num_nodes, x.shape[1], dtype=x.dtype).index_add_(0, dst, messages)


def skewed_graph(num_nodes=3000, num_edges=60000, seed=0):
    """Half the edges point at five hubs, so equal row counts would be very unequal work."""
    edge_index = random_edge_index(num_nodes, num_edges, seed=seed)
    edge_index[1, : num_edges // 2] %= 5
    return CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)


# Widths around the kernel's fixed slab widths (16 ... 256 columns), several slabs beyond.
@pytest.mark.parametrize("dim", [1, 3, 15, 16, 17, 32, 64, 100, 128, 255, 256, 257, 600])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_slab_width_matches_reference(dim, dtype):
    graph = skewed_graph()
    gen = torch.Generator().manual_seed(dim)
    x = torch.randn(graph.num_nodes, dim, generator=gen, dtype=dtype)
    weight = torch.rand(graph.num_edges, generator=gen, dtype=dtype)
    got = spmm(graph.indptr, graph.indices, weight, x)
    # Sums in another order (and fused multiply-adds) differ by rounding: the bound is relative
    # to the sum of the terms' magnitudes, a dropped or doubled edge is far outside it.
    bound = reference_spmm(graph, x.abs().double(), weight.abs().double())
    error = (got.double() - reference_spmm(graph, x.double(), weight.double())).abs()
    eps = torch.finfo(dtype).eps
    assert bool((error <= 8 * eps * bound + 1e-30).all())


@pytest.mark.parametrize("dim", [16, 300])
def test_result_is_the_same_bits_for_any_thread_count(dim):
    """Each output entry is summed by one task in slot order, however rows and columns are split:
    the result does not depend on the split, bit for bit."""
    graph = skewed_graph(seed=1)
    x = torch.randn(graph.num_nodes, dim, generator=torch.Generator().manual_seed(2))
    weight = torch.rand(graph.num_edges, generator=torch.Generator().manual_seed(3))
    threads = torch.get_num_threads()
    try:
        results = []
        for count in (1, 2, 3, 7):
            torch.set_num_threads(count)
            results.append(spmm(graph.indptr, graph.indices, weight, x))
            results.append(es_spmm(graph, x, 8, "fastrand"))
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(results[::2], results[2::2]):
        assert torch.equal(a, b)
    for a, b in zip(results[1::2], results[3::2]):
        assert torch.equal(a, b)


def test_rows_without_edges_and_more_threads_than_rows():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [2, 2]]), num_nodes=3)
    x = torch.randn(3, 40)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(4)
        out = spmm(graph.indptr, graph.indices, None, x)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(out[:2], torch.zeros(2, 40))
    torch.testing.assert_close(out[2], x[0] + x[1])


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_transposed_structure_is_built_once(kind, monkeypatch):
    graph = skewed_graph(num_nodes=500, num_edges=5000, seed=4)
    if kind == "graph":
        structure = graph
    else:
        sub = NeighborSampler(graph, [5, 3]).sample(
            torch.arange(40), torch.Generator().manual_seed(0)
        )
        structure = sub.blocks[0]
    num_src = graph.num_nodes if kind == "graph" else structure.num_src_nodes
    builds = []
    real = _aggregate._transposed

    def counting(*args):
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(_aggregate, "_transposed", counting)
    for _ in range(3):
        x = torch.randn(num_src, 8, requires_grad=True)
        for reduce in ("sum", "mean", "max"):
            aggregate(structure, x, reduce=reduce).sum().backward()
    assert len(builds) == 1


def test_cached_structures_give_the_same_gradients_as_fresh_ones():
    graph = skewed_graph(num_nodes=300, num_edges=4000, seed=5)
    x = torch.randn(300, 6, dtype=torch.float64, requires_grad=True)
    weight = torch.rand(graph.num_edges, dtype=torch.float64)
    grads = []
    for _ in range(2):  # the second backward runs on the cached transposed structure
        (grad,) = torch.autograd.grad(aggregate(graph, x, weight).pow(2).sum(), x)
        grads.append(grad)
    fresh = CSCGraph(graph.indptr, graph.indices, graph.eid)
    (expected,) = torch.autograd.grad(aggregate(fresh, x, weight).pow(2).sum(), x)
    assert torch.equal(grads[0], grads[1]) and torch.equal(grads[1], expected)


def test_x_with_more_rows_than_sources_gets_a_gradient_of_its_shape():
    """The cached transposed structure is sized by x's rows (rows past the sources get zero)."""
    graph = skewed_graph(num_nodes=50, num_edges=300, seed=6)
    for rows in (50, 53, 50):
        x = torch.randn(rows, 4, dtype=torch.float64, requires_grad=True)
        (grad,) = torch.autograd.grad(aggregate(graph, x).sum(), x)
        assert grad.shape == (rows, 4) and torch.equal(
            grad[50:], torch.zeros(rows - 50, 4, dtype=grad.dtype)
        )
        torch.testing.assert_close(
            grad[:50, 0].long(), torch.bincount(graph.indices.long(), minlength=50)
        )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_mean_of_a_high_degree_row_does_not_overflow(dtype):
    """Mean in half precision is scaled per edge, inside the fp32 accumulation: the sum alone
    (10,000 x 60,000) would overflow fp16."""
    num_edges = 10_000
    graph = CSCGraph.from_edge_index(
        torch.stack([torch.arange(num_edges) % 7, torch.zeros(num_edges, dtype=torch.long)]),
        num_nodes=7,
    )
    x = torch.full((7, 3), 60_000.0).to(dtype)
    out = aggregate(graph, x, reduce="mean")
    assert out.dtype == dtype and torch.isfinite(out).all()
    torch.testing.assert_close(out[0].float(), x[0].float(), rtol=1e-2, atol=0)
