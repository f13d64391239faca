"""CUDA spmm/sddmm/aggregate against the CPU reference kernels (equal up to summation order)."""

import pytest
import torch

from fastgl import CSCGraph
from fastgl.nn.functional import aggregate, edge_softmax, es_spmm
from fastgl.ops import sddmm, spmm


def graph_with_hub(index_dtype):
    """Random edges plus one node with 5000 in-edges: rows far longer than a 32-edge tile."""
    gen = torch.Generator().manual_seed(0)
    edges = torch.randint(0, 800, (2, 20000), generator=gen)
    hub = torch.stack([torch.randint(0, 800, (5000,), generator=gen), torch.full((5000,), 3)])
    return CSCGraph.from_edge_index(torch.cat([edges, hub], 1).to(index_dtype), num_nodes=900)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("dim", [1, 32, 45, 300])
@pytest.mark.parametrize("weighted", [False, True])
def test_spmm_and_sddmm_cuda_equal_cpu(index_dtype, dim, weighted):
    graph = graph_with_hub(index_dtype)
    x = torch.randn(graph.num_nodes, dim)
    w = torch.rand(graph.num_edges) if weighted else None
    expected = spmm(graph.indptr, graph.indices, w, x)
    cuda = graph.to("cuda")
    got = spmm(cuda.indptr, cuda.indices, None if w is None else w.cuda(), x.cuda())
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-4, atol=1e-4)
    max_cuda, arg_cuda = torch.ops.fastgl.spmm_max(
        cuda.indptr, cuda.indices, None if w is None else w.cuda(), x.cuda()
    )
    max_cpu, arg_cpu = torch.ops.fastgl.spmm_max(graph.indptr, graph.indices, w, x)
    assert torch.equal(max_cuda.cpu(), max_cpu) and torch.equal(arg_cuda.cpu(), arg_cpu)
    a = torch.randn(graph.num_nodes, dim)
    torch.testing.assert_close(
        sddmm(cuda.indptr, cuda.indices, a.cuda(), x.cuda()).cpu(),
        sddmm(graph.indptr, graph.indices, a, x),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("width", [1, 16, 32, 33, 600])
@pytest.mark.parametrize("strategy", ["bucket", "fastrand"])
def test_es_spmm_cuda_picks_the_cpu_edges(index_dtype, width, strategy):
    graph = graph_with_hub(index_dtype)
    cuda = graph.to("cuda")
    for dim in (1, 45, 300):
        x = torch.randn(graph.num_nodes, dim)
        w = torch.rand(graph.num_edges)
        for reduce in ("sum", "max"):
            expected = torch.ops.fastgl.es_spmm(
                graph.indptr, graph.indices, w, x, width, strategy, reduce
            )
            got = torch.ops.fastgl.es_spmm(
                cuda.indptr, cuda.indices, w.cuda(), x.cuda(), width, strategy, reduce
            ).cpu()
            if reduce == "max":  # the same picked edges give bit-identical maxima
                assert torch.equal(got, expected)
            else:
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_es_spmm_cuda_half_precision(dtype):
    graph = graph_with_hub(torch.int64)
    x = torch.rand(graph.num_nodes, 40).to(dtype)
    got = es_spmm(graph.to("cuda"), x.cuda(), 64, "fastrand").cpu()
    torch.testing.assert_close(
        got.float(), es_spmm(graph, x, 64, "fastrand").float(), rtol=1e-2, atol=1e-2
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_spmm_cuda_dtypes(dtype):
    graph = graph_with_hub(torch.int64)
    x = torch.rand(graph.num_nodes, 40).to(dtype)
    cuda = graph.to("cuda")
    got = spmm(cuda.indptr, cuda.indices, None, x.cuda()).cpu()
    expected = spmm(graph.indptr, graph.indices, None, x)  # CPU also accumulates in fp32
    torch.testing.assert_close(got.float(), expected.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_aggregate_backward_cuda_equals_cpu(reduce):
    graph = graph_with_hub(torch.int64)
    x = torch.randn(graph.num_nodes, 70, requires_grad=True)
    w = torch.rand(graph.num_edges, requires_grad=True)
    aggregate(graph, x, w, reduce).square().sum().backward()
    xc = x.detach().cuda().requires_grad_()
    wc = w.detach().cuda().requires_grad_()
    aggregate(graph.to("cuda"), xc, wc, reduce).square().sum().backward()
    torch.testing.assert_close(xc.grad.cpu(), x.grad, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(wc.grad.cpu(), w.grad, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("heads", [1, 4])
def test_edge_softmax_cuda_equals_cpu(heads):
    graph = graph_with_hub(torch.int64)
    scores = torch.randn(graph.num_edges, heads, requires_grad=True)
    out = edge_softmax(graph, scores)
    grad = torch.randn_like(out)
    out.backward(grad)
    scores_cuda = scores.detach().cuda().requires_grad_()
    out_cuda = edge_softmax(graph.to("cuda"), scores_cuda)
    out_cuda.backward(grad.cuda())
    torch.testing.assert_close(out_cuda.detach().cpu(), out.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(scores_cuda.grad.cpu(), scores.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("reduce", ["sum", "max"])
def test_aggregate_backward_cuda_is_deterministic(reduce):
    graph = graph_with_hub(torch.int64).to("cuda")
    x = torch.randn(graph.num_nodes, 70, device="cuda", requires_grad=True)
    w = torch.rand(graph.num_edges, device="cuda", requires_grad=True)
    grads = [
        torch.autograd.grad(aggregate(graph, x, w, reduce).square().sum(), (x, w)) for _ in range(2)
    ]
    assert all(torch.equal(a, b) for a, b in zip(*grads))
