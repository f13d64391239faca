"""ES-SpMM (es_spmm and the models' approx=ESSpMM switch) against a pure-PyTorch reference."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import picked_slots
from test_aggregate import graphs, reference_aggregate, sampled_blocks, shuffled

import fastgl.nn as fnn
from fastgl import CSCGraph
from fastgl.nn.functional import aggregate, es_spmm


def reference_es_spmm(indptr, indices, x, width, strategy, weight=None, reduce="sum"):
    """Aggregates each row over its picked CSC slots (repeats counted as often as picked)."""
    src, dst = [], []
    for row in range(indptr.numel() - 1):
        first, degree = int(indptr[row]), int(indptr[row + 1] - indptr[row])
        for slot in picked_slots(degree, width, strategy):
            src.append(first + slot)
            dst.append(row)
    slots, dst = torch.tensor(src, dtype=torch.long), torch.tensor(dst, dtype=torch.long)
    picked_weight = None if weight is None else weight[slots]
    return reference_aggregate(
        indices.long()[slots], dst, indptr.numel() - 1, x, picked_weight, reduce
    )


def graph_with_long_rows():
    """Random edges, a node with 1500 in-edges and one with exactly 2 * 577 (FastRand repeats)."""
    gen = torch.Generator().manual_seed(2)
    edges = [torch.randint(0, 200, (2, 1500), generator=gen)]
    for node, degree in ((5, 1500), (9, 1154)):
        edges.append(
            torch.stack(
                [torch.randint(0, 200, (degree,), generator=gen), torch.full((degree,), node)]
            )
        )
    return CSCGraph.from_edge_index(torch.cat(edges, 1), num_nodes=200)


@settings(max_examples=60)
@given(
    graphs(),
    st.sampled_from([1, 2, 3, 8, 50]),
    st.sampled_from(["bucket", "fastrand"]),
    st.sampled_from(["sum", "mean", "max"]),
    st.booleans(),
)
def test_graph_matches_reference(graph_and_gen, width, strategy, reduce, weighted):
    graph, gen = graph_and_gen
    x = torch.randn(graph.num_nodes, 7, generator=gen, dtype=torch.float64)
    weight = torch.rand(graph.num_edges, generator=gen, dtype=torch.float64) if weighted else None
    got = es_spmm(graph, x, width, strategy, weight, reduce)
    torch.testing.assert_close(
        got, reference_es_spmm(graph.indptr, graph.indices, x, width, strategy, weight, reduce)
    )


@pytest.mark.parametrize("strategy", ["bucket", "fastrand"])
@pytest.mark.parametrize("width", [1, 16, 100, 600])
def test_long_rows_match_reference(strategy, width):
    graph = graph_with_long_rows()
    x = torch.randn(200, 33, dtype=torch.float64)
    weight = torch.rand(graph.num_edges, dtype=torch.float64)
    for reduce in ("sum", "mean", "max"):
        torch.testing.assert_close(
            es_spmm(graph, x, width, strategy, weight, reduce),
            reference_es_spmm(graph.indptr, graph.indices, x, width, strategy, weight, reduce),
        )


def test_fastrand_spreads_over_the_row_and_bucket_keeps_its_start():
    # One row of 1000 in-edges from sources 0..999 and x = source id: the result shows which were
    # read (bucket: the first 10; fastrand: ids spread up to 885).
    graph = CSCGraph.from_edge_index(
        torch.stack([torch.arange(1000), torch.zeros(1000, dtype=torch.long)]), 1000
    )
    ids = torch.arange(1000, dtype=torch.float64).unsqueeze(1)
    assert es_spmm(graph, ids, 10, "bucket")[0, 0] == sum(range(10))
    fastrand = es_spmm(graph, ids, 10, "fastrand", reduce="max")[0, 0]
    assert fastrand == max((j * 577) % 1000 for j in range(10)) and fastrand > 800


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_wide_enough_is_exact(reduce):
    graph = graph_with_long_rows()
    x = torch.randn(200, 9)
    width = int(graph.in_degrees().max())
    for strategy in ("bucket", "fastrand"):
        torch.testing.assert_close(
            es_spmm(graph, x, width, strategy, reduce=reduce), aggregate(graph, x, reduce=reduce)
        )


def test_blocks_sorted_and_unsorted():
    block = sampled_blocks()[0]
    x = torch.randn(block.num_src_nodes, 5, dtype=torch.float64)
    weight = torch.rand(block.num_edges, dtype=torch.float64)
    indptr = torch.cat(
        [
            torch.zeros(1, dtype=torch.long),
            torch.bincount(block.dst, minlength=block.num_dst_nodes).cumsum(0),
        ]
    )
    for width in (1, 3):
        expected = reference_es_spmm(indptr, block.src, x, width, "fastrand", weight)
        torch.testing.assert_close(es_spmm(block, x, width, "fastrand", weight), expected)
    # An unsorted block's rows hold its edges in the block's own order.
    unsorted, order = shuffled(block)
    row_order = torch.sort(unsorted.dst, stable=True).indices
    expected = reference_es_spmm(
        indptr, unsorted.src[row_order], x, 2, "bucket", weight[order][row_order]
    )
    torch.testing.assert_close(es_spmm(unsorted, x, 2, "bucket", weight[order]), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_accumulates_in_float(dtype):
    graph = graph_with_long_rows()
    x = torch.rand(200, 16)
    got = es_spmm(graph, x.to(dtype), 64, "fastrand")
    assert got.dtype == dtype
    torch.testing.assert_close(got.float(), es_spmm(graph, x, 64, "fastrand"), rtol=1e-2, atol=0.5)


def test_inference_only():
    graph = graph_with_long_rows()
    x = torch.randn(200, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="es_spmm: inference only"):
        es_spmm(graph, x, 8)
    with pytest.raises(RuntimeError, match="es_spmm: inference only"):
        es_spmm(graph, x.detach(), 8, edge_weight=torch.rand(graph.num_edges, requires_grad=True))
    with torch.no_grad():
        assert es_spmm(graph, x, 8).shape == (200, 4)
    with torch.inference_mode():
        assert es_spmm(graph, x, 8).shape == (200, 4)


def test_bad_inputs_raise_clear_errors():
    graph = graph_with_long_rows()
    x = torch.randn(200, 4)
    for width in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="es_spmm: width must be an int >= 1"):
            es_spmm(graph, x, width)
    with pytest.raises(
        ValueError, match="es_spmm: strategy must be 'bucket' or 'fastrand', got 'random'"
    ):
        es_spmm(graph, x, 4, "random")
    with pytest.raises(ValueError, match="es_spmm: reduce must be one of"):
        es_spmm(graph, x, 4, reduce="min")
    with pytest.raises(ValueError, match=r"es_spmm: edge_weight must have shape \[4154\]"):
        es_spmm(graph, x, 4, edge_weight=torch.rand(7))
    with pytest.raises(ValueError, match="es_spmm: x must be a 2-D tensor"):
        es_spmm(graph, x[:, 0], 4)
    with pytest.raises(TypeError, match="es_spmm: expected a CSCGraph or a Block"):
        es_spmm("graph", x, 4)
    with pytest.raises(RuntimeError, match="es_spmm: edge_weight dtype"):
        es_spmm(graph, x, 4, edge_weight=torch.rand(graph.num_edges, dtype=torch.float64))
    with pytest.raises(ValueError, match="es_spmm: x is on meta but the graph is on cpu"):
        es_spmm(graph, x.to("meta"), 4)
    with pytest.raises(ValueError, match="es_spmm: edge_weight is on meta"):
        es_spmm(graph, x, 4, edge_weight=torch.rand(graph.num_edges, device="meta"))
    with pytest.raises(
        RuntimeError, match="es_spmm: indices id 199 out of range for a graph of 100"
    ):
        es_spmm(graph, x[:100], 4)
    op = torch.ops.fastgl.es_spmm
    with pytest.raises(RuntimeError, match="es_spmm: strategy must be 'bucket' or 'fastrand'"):
        op(graph.indptr, graph.indices, None, x, 4, "random", "sum")
    with pytest.raises(RuntimeError, match="es_spmm: reduce must be 'sum' or 'max'"):
        op(graph.indptr, graph.indices, None, x, 4, "bucket", "mean")
    with pytest.raises(RuntimeError, match="es_spmm: width must be >= 1"):
        op(graph.indptr, graph.indices, None, x, 0, "bucket", "sum")


@pytest.mark.skipif(
    not hasattr(torch.library, "opcheck"), reason="torch.library.opcheck is missing"
)
def test_opcheck():
    graph = graph_with_long_rows()
    x = torch.randn(200, 6)
    w = torch.rand(graph.num_edges)
    for strategy in ("bucket", "fastrand"):
        for reduce in ("sum", "max"):
            torch.library.opcheck(
                torch.ops.fastgl.es_spmm.default,
                (graph.indptr, graph.indices, w, x, 5, strategy, reduce),
            )


def test_torch_compile_fullgraph():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch.compile is missing in torch {torch.__version__}")
    graph = graph_with_long_rows()
    x = torch.randn(200, 6)

    def infer(x):
        return (
            torch.ops.fastgl.es_spmm(
                graph.indptr, graph.indices, None, x.relu(), 8, "fastrand", "sum"
            )
            * 2
        )

    compiled = torch.compile(infer, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), infer(x))


# --- the models' inference switch ---------------------------------------------------------------

MODELS = {"GCN": {}, "GraphSAGE": {}, "GIN": {}, "GAT": {"heads": 2}}


@pytest.mark.parametrize("name", list(MODELS))
def test_models_with_approx_wide_enough_are_exact(name):
    graph = graph_with_long_rows()
    x = torch.randn(200, 12)
    model = getattr(fnn, name)(12, 16, 2, 3, **MODELS[name]).eval()
    wide = fnn.ESSpMM(width=int(graph.in_degrees().max()), strategy="fastrand")
    with torch.no_grad():
        exact = model(x, graph)
        torch.testing.assert_close(model(x, graph, approx=wide), exact)
        narrow = model(x, graph, approx=fnn.ESSpMM(width=4, strategy="fastrand"))
    assert narrow.shape == exact.shape and not torch.allclose(narrow, exact)


@pytest.mark.parametrize("name", list(MODELS))
def test_models_with_approx_on_blocks_use_es_spmm(name, monkeypatch):
    blocks = sampled_blocks()
    x = torch.randn(blocks[0].num_src_nodes, 12)
    model = getattr(fnn, name)(12, 16, 2, 3, **MODELS[name]).eval()
    calls = []
    real = fnn.ESSpMM.aggregate

    def counting(self, *args, **kwargs):
        calls.append(self.width)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(fnn.ESSpMM, "aggregate", counting)
    with torch.no_grad():
        out = model(x, blocks, approx=fnn.ESSpMM(width=2))
    assert out.shape == (blocks[-1].num_dst_nodes, 3)
    assert calls and set(calls) == {2}


def test_sage_max_under_approx_matches_reference():
    graph = graph_with_long_rows()
    x = torch.randn(200, 5)
    conv = fnn.SAGEConv(5, 4, aggr="max").eval()
    with torch.no_grad():
        got = conv(x, graph, approx=fnn.ESSpMM(7, "bucket"))
        pooled = reference_es_spmm(graph.indptr, graph.indices, x, 7, "bucket", reduce="max")
        torch.testing.assert_close(got, conv.lin_l(pooled) + conv.lin_r(x))


def test_approx_refuses_training_and_bad_settings():
    graph = graph_with_long_rows()
    model = fnn.GraphSAGE(12, 16, 2, 3)
    with pytest.raises(RuntimeError, match="es_spmm: inference only"):
        model(torch.randn(200, 12), graph, approx=fnn.ESSpMM(width=4))
    with pytest.raises(ValueError, match="ESSpMM: width must be an int >= 1"):
        fnn.ESSpMM(width=0)
    with pytest.raises(ValueError, match="ESSpMM: strategy must be"):
        fnn.ESSpMM(width=4, strategy="uniform")
    with pytest.raises(TypeError, match="approx must be a fastgl.nn.ESSpMM"), torch.no_grad():
        model(torch.randn(200, 12), graph, approx=16)
