"""The PyG options of fastgl's layers against torch_geometric.nn's own layers.

GCNConv's ``flow``, batched ("static graph") and sparse features; SAGEConv's ``aggr="lstm"``,
lists of aggregations in every ``mode``, PyG aggregation modules; GATConv's
``return_attention_weights`` and ``edge_dim``. Each layer pair shares PyG's ``state_dict`` and
runs in float64; outputs, parameter gradients and input gradients must agree to 1e-6.
"""

import subprocess
import sys

import pytest
import torch

import fastgl
import fastgl.nn as fnn
from fastgl.nn.aggr import LSTMAggregation, MultiAggregation, Reduce

pyg_nn = pytest.importorskip("torch_geometric.nn")
pyg_utils = pytest.importorskip("torch_geometric.utils")
from pyg_layers import TOL, assert_same, layer_pair  # noqa: E402  (needs PyG)

N, IN = 12, 6
E = 47  # edges of _graph()


def _graph(num_nodes=N, num_edges=40, seed=0, sort=False):
    """Random edges with duplicates, self-loops (two on node 0) and an isolated last node."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes - 1, (2, num_edges), generator=g)
    edge_index = torch.cat([edge_index, torch.tensor([[0, 0, 3], [0, 0, 3]]), edge_index[:, :4]], 1)
    assert edge_index.shape[1] == E or num_edges != 40
    if sort:  # by destination, stable: what order-sensitive aggregations need
        edge_index = edge_index[:, torch.sort(edge_index[1], stable=True).indices]
    return edge_index


def _features(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# flow


FLOW_LAYERS = {
    "gcn": lambda m: m.GCNConv(IN, 5, flow="target_to_source"),
    "gcn-improved": lambda m: m.GCNConv(IN, 5, improved=True, flow="target_to_source"),
    "sage": lambda m: m.SAGEConv(IN, 5, aggr="max", flow="target_to_source"),
    "gin": lambda m: m.GINConv(torch.nn.Linear(IN, 5), eps=0.3, flow="target_to_source"),
    "gat": lambda m: m.GATConv(IN, 5, heads=2, flow="target_to_source"),
}


@pytest.mark.parametrize("name", FLOW_LAYERS)
def test_target_to_source_flow_matches_pyg(name):
    ref, ours = layer_pair(FLOW_LAYERS[name])
    assert ours.flow == "target_to_source"
    edge_index, x = _graph(), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    if name.startswith("gcn"):
        weight = _features(edge_index.shape[1], seed=4).abs()
        assert_same(ref, ours, lambda m, x, w: m(x, edge_index, w), x, weight)
    if name == "gat":  # the edges come back in the caller's orientation, as PyG's
        forward = lambda m, x: m(x, edge_index, return_attention_weights=True)  # noqa: E731
        ref_out, out = assert_same(ref, ours, forward, x)
        assert torch.equal(out[1][0], ref_out[1][0])


def test_flow_reverses_edges_and_size():
    conv = fnn.SAGEConv(IN, 5, aggr="sum").double()
    edge_index, x = _graph(), _features(N, IN)
    expected = conv(x, edge_index)
    conv.flow = "target_to_source"
    torch.testing.assert_close(conv(x, edge_index.flip(0)), expected)
    # size is (num_dst, num_src) under target_to_source, as PyG's.
    bipartite = torch.tensor([[0, 1, 1], [5, 7, 2]])  # targets 0..1 of sources 0..7
    conv.flow = "source_to_target"
    expected = conv((x[:8], x[:2]), bipartite.flip(0), size=(8, 2))
    conv.flow = "target_to_source"
    torch.testing.assert_close(conv(x[:8], bipartite, size=(2, 8)), expected)


def test_flow_bad_inputs():
    with pytest.raises(ValueError, match="flow must be 'source_to_target' or 'target_to_source'"):
        fnn.GCNConv(IN, 5, flow="both")
    conv = fnn.SAGEConv(IN, 5, flow="target_to_source")
    x, edge_index = torch.randn(N, IN), _graph()
    with pytest.raises(ValueError, match="takes one feature tensor x, got a pair"):
        conv((x, x), edge_index)
    with pytest.raises(ValueError, match="a sparse adj_t fixes the direction"):
        conv(x, _adj(edge_index))
    with pytest.raises(ValueError, match="a CSCGraph fixes the direction"):
        conv(x, fastgl.CSCGraph.from_edge_index(edge_index, N))
    conv.flow = "sideways"
    with pytest.raises(ValueError, match="SAGEConv: flow must be"):
        conv(x, edge_index)


# ---------------------------------------------------------------------------------------------
# batched ("static graph") and sparse features


BATCHED_LAYERS = {
    "gcn": lambda m: m.GCNConv(IN, 5),
    "gcn-weighted": lambda m: m.GCNConv(IN, 5, improved=True),
    "gcn-raw": lambda m: m.GCNConv(IN, 5, normalize=False),
    "gin": lambda m: m.GINConv(torch.nn.Linear(IN, 5), eps=0.3, train_eps=True),
}


@pytest.mark.parametrize("name", BATCHED_LAYERS)
def test_batched_features_on_one_graph_match_pyg(name):
    ref, ours = layer_pair(BATCHED_LAYERS[name])
    edge_index = _graph()
    x = _features(3, N, IN)
    ref_out, out = assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    assert out.shape == (3, N, 5)
    if name != "gin":
        weight = _features(edge_index.shape[1], seed=4).abs()
        assert_same(ref, ours, lambda m, x, w: m(x, edge_index, w), x, weight)
    # Every batch element is the unbatched layer on its own features; two batch dims work too.
    for i in range(3):
        torch.testing.assert_close(out[i], ours(x[i], edge_index), **TOL)
    deep = ours(x.view(3, 1, N, IN), edge_index)
    torch.testing.assert_close(deep, out.view(3, 1, N, 5), **TOL)


def test_batched_features_on_a_block_and_a_pair():
    graph = fastgl.CSCGraph.from_edge_index(_graph(), N)
    block = fastgl.NeighborSampler(graph, [3]).sample(torch.tensor([1, 4, 6])).blocks[0]
    x = _features(2, block.num_src_nodes, IN)
    gcn = fnn.GCNConv(IN, 5).double()
    out = gcn(x, block)
    assert out.shape == (2, block.num_dst_nodes, 5)
    torch.testing.assert_close(out[1], gcn(x[1], block), **TOL)
    gin = fnn.GINConv(torch.nn.Linear(IN, 5)).double()
    x_dst = x[:, : block.num_dst_nodes]
    torch.testing.assert_close(gin((x, x_dst), block)[0], gin((x[0], x_dst[0]), block), **TOL)
    with pytest.raises(ValueError, match="x_src and x_dst must have the same batch dims"):
        gin((x, x_dst[:1]), block)
    with pytest.raises(ValueError, match=r"GCNConv: x must be 2-D \[num_nodes, channels\]"):
        gcn(x[0, 0], block)


def test_sparse_features_match_pyg():
    ref, ours = layer_pair(lambda m: m.GCNConv(IN, 5))
    edge_index = _graph()
    dense = _features(N, IN) * (_features(N, IN, seed=7) > 0.8)
    x = dense.to_sparse()
    ref_out, out = assert_same(ref, ours, lambda m: m(x, edge_index))
    torch.testing.assert_close(out, ours(dense, edge_index), **TOL)


def test_gcn_cache_names_of_pyg():
    conv = fnn.GCNConv(IN, 5, cached=True)
    x, edge_index = torch.randn(N, IN), _graph()
    assert conv._cached_edge_index is None and conv._cached_adj_t is None
    conv(x, edge_index)
    assert conv._cached_edge_index is not None and conv._cached_adj_t is None
    conv._cached_adj_t = None  # not the cached kind: the cache stays
    assert conv._cached_edge_index is not None
    conv._cached_edge_index = None  # PyG's way to drop it
    assert conv._cache is None
    conv(x, _adj(edge_index).to_sparse_csr())
    assert conv._cached_adj_t is not None and conv._cached_edge_index is None
    with pytest.raises(ValueError, match="the cache can only be cleared"):
        conv._cached_adj_t = (edge_index, None)


# ---------------------------------------------------------------------------------------------
# SAGEConv's aggregations


def test_lstm_aggregation_matches_pyg():
    ref, ours = layer_pair(lambda m: m.SAGEConv(IN, 5, aggr="lstm"))
    assert (
        isinstance(ours.aggr_module, LSTMAggregation) and str(ours) == "SAGEConv(6, 5, aggr=lstm)"
    )
    edge_index, x = _graph(sort=True), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    # A sorted CSR adj_t and a bipartite graph (destinations without in-edges included).
    adj_t = pyg_utils.to_torch_csr_tensor(edge_index.flip(0), size=(N, N))
    assert_same(ref, ours, lambda m, x: m(x, adj_t), x)
    sub = edge_index[:, edge_index[1] < 5]
    assert_same(ref, ours, lambda m, a, b: m((a, b), sub), x, _features(7, IN, seed=3))


def test_lstm_aggregation_kwargs_and_checkpoint_keys():
    make = lambda m: m.SAGEConv(IN, 5, aggr="lstm", aggr_kwargs=dict(num_layers=2))  # noqa: E731
    ref, ours = layer_pair(make)
    assert "aggr_module.lstm.weight_hh_l1" in ours.state_dict()
    edge_index, x = _graph(sort=True), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)


def test_lstm_aggregation_needs_destination_sorted_edges():
    conv = fnn.SAGEConv(IN, 5, aggr="lstm")
    x = torch.randn(N, IN)
    with pytest.raises(ValueError, match="'index' tensor is not sorted by destination"):
        conv(x, _graph())
    # The same edges sorted, and a CSCGraph built from them, are fine.
    graph = fastgl.CSCGraph.from_edge_index(_graph(sort=True), N)
    torch.testing.assert_close(conv(x, graph), conv(x, _graph(sort=True)))
    with pytest.raises(ValueError, match="approx=ESSpMM applies to the sum, mean, max and min"):
        conv(x, graph, approx=fnn.ESSpMM(4))


MODES = [
    dict(mode="cat"),
    dict(mode="proj", mode_kwargs=dict(in_channels=IN, out_channels=7)),
    dict(mode="attn", mode_kwargs=dict(in_channels=IN, out_channels=8, num_heads=2)),
    *[dict(mode=m) for m in ("sum", "mean", "max", "min", "logsumexp", "std", "var")],
]


@pytest.mark.parametrize("kwargs", MODES, ids=[k["mode"] for k in MODES])
def test_multi_aggregation_matches_pyg_in_every_mode(kwargs):
    aggrs = ["mean", "max", "sum", "min"]
    ref, ours = layer_pair(lambda m: m.SAGEConv(IN, 5, aggr=aggrs, aggr_kwargs=dict(kwargs)))
    assert isinstance(ours.aggr_module, MultiAggregation)
    assert all(isinstance(a, Reduce) for a in ours.aggr_module.aggrs)  # fastgl's kernels
    assert str(ours) == f"SAGEConv(6, 5, aggr={aggrs})"
    edge_index, x = _graph(), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    x_dst = _features(9, IN, seed=5)
    assert_same(ref, ours, lambda m, a, b: m((a, b), edge_index[:, edge_index[1] < 9]), x, x_dst)


def test_multi_aggregation_with_pyg_members_matches_pyg():
    """PyG's own aggregations (by name, with arguments) beside fastgl's: PyG's keys."""
    kwargs = dict(mode="cat", aggrs_kwargs=[{}, dict(learn=True, t=0.5), {}])
    make = lambda m: m.SAGEConv(IN, 5, aggr=["max", "softmax", "std"], aggr_kwargs=kwargs)  # noqa: E731
    ref, ours = layer_pair(make)
    assert "aggr_module.aggrs.1.t" in ours.state_dict()
    edge_index, x = _graph(), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    # PyG's aggregations get the edges in the caller's order, from every kind of graph.
    graph = fastgl.CSCGraph.from_edge_index(edge_index, N)
    torch.testing.assert_close(ours(x, graph), ours(x, edge_index), **TOL)


def test_pyg_aggregation_modules_match_pyg():
    def make(m):
        aggr = pyg_nn.MLPAggregation(IN, IN, max_num_elements=8, num_layers=2, hidden_channels=4)
        return m.SAGEConv(IN, 5, aggr=aggr)

    ref, ours = layer_pair(make)
    assert str(ours) == str(ref)
    edge_index, x = _graph(sort=True), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    # PyG's basic aggregation modules run on fastgl's kernels.
    conv = fnn.SAGEConv(IN, 5, aggr=pyg_nn.aggr.MinAggregation())
    assert isinstance(conv.aggr_module, Reduce) and conv.aggr_module.reduce == "min"


def test_min_aggregation_matches_pyg_with_sparse_values():
    ref, ours = layer_pair(lambda m: m.SAGEConv(IN, 5, aggr="min"))
    edge_index, x = _graph(), _features(N, IN)
    assert_same(ref, ours, lambda m, x: m(x, edge_index), x)
    values = _features(edge_index.shape[1], seed=9)
    adj_t = pyg_utils.to_torch_csr_tensor(edge_index.flip(0), values, size=(N, N))
    assert_same(ref, ours, lambda m, x: m(x, adj_t), x)


def test_aggregations_run_without_torch_geometric():
    """fastgl.nn imports, and its own aggregations run, with PyG unimportable; PyG's
    aggregations then say what they need."""
    code = """
import sys
sys.modules["torch_geometric"] = None
import torch
import fastgl.nn as fnn
x, edge_index = torch.randn(5, 4), torch.tensor([[0, 1, 2, 3], [1, 1, 2, 4]])
kwargs = dict(mode="attn", mode_kwargs=dict(in_channels=4, out_channels=6, num_heads=2))
conv = fnn.SAGEConv(4, 3, aggr=["mean", "max", "min", "sum"], aggr_kwargs=kwargs)
assert conv(x, edge_index).shape == (5, 3)
assert fnn.SAGEConv(4, 3, aggr="lstm")(x, edge_index).shape == (5, 3)
try:
    fnn.SAGEConv(4, 3, aggr="softmax")
except ValueError as error:
    assert "need torch_geometric, which is not installed" in str(error), error
else:
    raise AssertionError("no error")
assert "torch_geometric" not in [m.split(".")[0] for m in sys.modules if sys.modules[m]]
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_multi_aggregation_compiles_without_graph_breaks():
    """The basic aggregations trace whole (the graph's id checks are in-graph assertions
    under torch.compile) and still reject bad ids."""
    conv = fnn.SAGEConv(IN, 5, aggr=["mean", "max", "min", "sum"])
    compiled = torch.compile(conv, fullgraph=True, backend="eager")
    x, edge_index = torch.randn(N, IN), _graph()
    torch.testing.assert_close(compiled(x, edge_index), conv(x, edge_index))
    bad = edge_index.clone()
    bad[0, 3] = N
    with pytest.raises(RuntimeError, match="SAGEConv: edge_index has a source id out of range"):
        compiled(x, bad)


def test_aggregation_bad_inputs():
    cases = [
        (dict(aggr="nope"), ValueError, "SAGEConv: aggr 'nope'"),
        (dict(aggr="mean", aggr_kwargs=dict(t=1)), ValueError, "aggr 'mean' takes no arguments"),
        (dict(aggr=["mean", "max"], aggr_kwargs=dict(mode="median")), ValueError, "mode must be"),
        (
            dict(aggr=["mean", "max"], aggr_kwargs=dict(mode="proj")),
            ValueError,
            "needs in_channels",
        ),
        (
            dict(aggr=["mean"], aggr_kwargs=dict(mode="attn", mode_kwargs=dict(in_channels=6))),
            ValueError,
            "needs two or more aggregations",
        ),
        (dict(aggr=[]), ValueError, "must not be empty"),
        (
            dict(aggr=["mean", "max"], aggr_kwargs=dict(aggrs_kwargs=[{}])),
            ValueError,
            "one dict per aggregation",
        ),
        (dict(aggr=["mean", ["max"]]), TypeError, "aggr must be a name"),
        (dict(aggr=3), TypeError, "aggr must be a name"),
        (
            dict(aggr=pyg_nn.aggr.MeanAggregation(), aggr_kwargs=dict(t=1)),
            ValueError,
            "aggr_kwargs apply to an aggregation given by name",
        ),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            fnn.SAGEConv(IN, 5, **kwargs)


# ---------------------------------------------------------------------------------------------
# GATConv's attention weights and edge features


ATTENTION_LAYERS = {
    "gat": lambda m: m.GATConv(IN, 4, heads=2),
    "gat-mean": lambda m: m.GATConv(IN, 4, heads=3, concat=False, residual=True),
    "gat-no-loops": lambda m: m.GATConv(IN, 4, heads=2, add_self_loops=False),
}


@pytest.mark.parametrize("name", ATTENTION_LAYERS)
def test_attention_weights_of_an_edge_index_match_pyg(name):
    ref, ours = layer_pair(ATTENTION_LAYERS[name])
    edge_index, x = _graph(), _features(N, IN)
    ref_out, out = assert_same(
        ref, ours, lambda m, x: m(x, edge_index, return_attention_weights=True), x
    )
    assert torch.equal(out[1][0], ref_out[1][0])  # PyG's edges, self-loops included
    if name == "gat-no-loops":
        assert torch.equal(out[1][0], edge_index)
    # Bipartite, and with a CSCGraph (whose edges come back in their original order).
    x_dst, sub = _features(8, IN, seed=2), edge_index[:, edge_index[1] < 8]
    if name != "gat-mean":
        forward = lambda m, a, b: m((a, b), sub, return_attention_weights=True)  # noqa: E731
        ref_out, out = assert_same(ref, ours, forward, x, x_dst)
        assert torch.equal(out[1][0], ref_out[1][0])
    graph = fastgl.CSCGraph.from_edge_index(edge_index, N)
    on_graph = ours(x, graph, return_attention_weights=True)
    on_edges = ours(x, edge_index, return_attention_weights=True)
    assert torch.equal(on_graph[1][0], on_edges[1][0])
    torch.testing.assert_close(on_graph[1][1], on_edges[1][1], **TOL)
    assert ours(x, edge_index, return_attention_weights=False).shape == on_edges[0].shape


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("name", ATTENTION_LAYERS)
def test_attention_weights_of_a_sparse_adj_t_match_pyg(name, layout):
    ref, ours = layer_pair(ATTENTION_LAYERS[name])
    edge_index, x = _graph(), _features(N, IN)
    adj_t = pyg_utils.to_torch_coo_tensor(edge_index.flip(0), size=(N, N))
    adj_t = adj_t.to_sparse_csr() if layout == "csr" else adj_t
    forward = lambda m, x: m(x, adj_t, return_attention_weights=True)  # noqa: E731
    ref_out, out = assert_same(ref, ours, forward, x)
    adj, alpha = out[1]
    ref_adj, ref_alpha = ref_out[1]
    assert adj.layout == ref_adj.layout == adj_t.layout and adj.shape == ref_adj.shape
    torch.testing.assert_close(adj.to_dense(), ref_adj.to_dense(), **TOL)
    torch.testing.assert_close(alpha, ref_alpha, **TOL)
    torch.testing.assert_close(alpha, adj.values())
    # A CSC adj_t (which PyG cannot loop) comes back as a CSC of the same weights.
    csc = ours(x, adj_t.to_dense().to_sparse_csc(), return_attention_weights=True)[1][0]
    assert csc.layout == torch.sparse_csc
    torch.testing.assert_close(csc.to_dense(), adj.to_dense(), **TOL)


FILL_VALUES = [0.5, "mean", "add", "max", "min", "mul", torch.tensor([0.1, -0.2, 0.3, 0.4])]


@pytest.mark.parametrize("fill_value", FILL_VALUES, ids=[str(f) for f in FILL_VALUES])
def test_edge_features_match_pyg(fill_value):
    make = lambda m: m.GATConv(IN, 4, heads=2, edge_dim=4, fill_value=fill_value)  # noqa: E731
    ref, ours = layer_pair(make)
    edge_index, x = _graph(), _features(N, IN)
    edge_attr = _features(edge_index.shape[1], 4, seed=6)
    forward = lambda m, x, e: m(x, edge_index, e, return_attention_weights=True)  # noqa: E731
    assert_same(ref, ours, forward, x, edge_attr)
    # The same edges as a CSCGraph, edge features in its original (edge_index) order.
    graph = fastgl.CSCGraph.from_edge_index(edge_index, N)
    torch.testing.assert_close(ours(x, graph, edge_attr), ours(x, edge_index, edge_attr), **TOL)


def test_edge_features_variants_match_pyg():
    edge_index, x = _graph(), _features(N, IN)
    weight = _features(edge_index.shape[1], seed=6)
    ref, ours = layer_pair(lambda m: m.GATConv(IN, 4, heads=2, edge_dim=1))  # [E] features
    assert_same(ref, ours, lambda m, x, w: m(x, edge_index, w), x, weight)
    ref, ours = layer_pair(lambda m: m.GATConv(IN, 4, edge_dim=3, add_self_loops=False))
    edge_attr = _features(edge_index.shape[1], 3, seed=8)
    assert_same(ref, ours, lambda m, x, e: m(x, edge_index, e), x, edge_attr)
    # Bipartite: loops only on the first min(num_src, num_dst) nodes.
    ref, ours = layer_pair(lambda m: m.GATConv((IN, 3), 4, heads=2, edge_dim=3))
    sub = edge_index[:, edge_index[1] < 8]
    forward = lambda m, a, b, e: m((a, b), sub, e[: sub.shape[1]])  # noqa: E731
    assert_same(ref, ours, forward, x, _features(8, 3, seed=2), edge_attr)


def test_edge_feature_bad_inputs():
    x, edge_index = torch.randn(N, IN), _graph()
    conv = fnn.GATConv(IN, 4, edge_dim=3)
    cases = [
        (
            lambda: conv(x, edge_index, torch.randn(5, 3)),
            ValueError,
            rf"edge_attr must be \[num_edges, edge_dim\] = \[{E}, 3\]",
        ),
        (lambda: conv(x, edge_index, torch.randn(E, 2)), ValueError, "edge_attr must be"),
        (
            lambda: conv(x, _adj(edge_index), torch.randn(E, 3)),
            NotImplementedError,
            "edge_attr with a sparse adj_t",
        ),
        (
            lambda: fnn.GATConv(IN, 4)(x, edge_index, torch.randn(E)),
            ValueError,
            "edge_attr was given but the layer has no edge features",
        ),
        (lambda: fnn.GATConv(IN, 4, edge_dim=2, fill_value="median"), ValueError, "fill_value"),
        (lambda: fnn.GATConv(IN, 4, edge_dim=2, fill_value=[1]), TypeError, "fill_value"),
        (lambda: fnn.GATConv(IN, 4, edge_dim=-1), ValueError, "edge_dim must be None or"),
    ]
    for run, error, message in cases:
        with pytest.raises(error, match=message):
            run()


def _adj(edge_index):
    return torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.shape[1]), (N, N))
