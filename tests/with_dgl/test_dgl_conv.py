"""fastgl.integrations.dgl.conv against dgl.nn.pytorch (DGL 2.1).

Every layer loads the state_dict of DGL's layer with ``strict=True`` and must then give DGL's
outputs and gradients (input features, edge weights, every parameter) in float64 to 1e-8, on a
DGLGraph with self-loops, a DGLGraph with isolated and zero-in-degree nodes, and blocks from
``dgl.to_block`` whose edge-id order is not their CSC order. Runs in the DGL environment
(``.venv-dgl``); skipped where DGL is not installed.
"""

import pytest
import torch

# Not importorskip("dgl"): without DGL, tests/ is on sys.path (conftest), so this folder itself
# would import as an empty namespace package named dgl.
dglnn = pytest.importorskip(
    "dgl.nn.pytorch",
    reason="the DGL drop-in layers are tested against "
    "DGL itself (`make test-dgl` installs it in its own environment, .venv-dgl)",
)
import dgl  # noqa: E402

from fastgl.integrations.dgl import conv as fconv  # noqa: E402

TOL = dict(atol=1e-8, rtol=1e-8)
IN, OUT, IN_DST = 6, 4, 5


# ---------------------------------------------------------------------------------------------
# Graphs


def _edges(num_nodes, num_edges, seed, num_dst=None):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=g)
    dst = torch.randint(0, num_dst or num_nodes, (num_edges,), generator=g)
    return src, dst


def _graph(kind, seed=0):
    """A DGL graph of ``kind``; its edge-id order is random (not destination-sorted)."""
    if kind == "graph":  # every node has an in-edge (self-loops appended)
        return dgl.add_self_loop(dgl.graph(_edges(14, 40, seed), num_nodes=14))
    if kind == "isolated":  # nodes 10..13 get no in-edge, 12 and 13 no edge at all
        src, dst = _edges(12, 30, seed, num_dst=10)
        loops = torch.tensor([1, 4])  # and a few self-loops
        return dgl.graph((torch.cat([src, loops]), torch.cat([dst, loops])), num_nodes=14)
    if kind in ("block", "block-isolated"):
        src, dst = _edges(30, 90, seed)
        if kind == "block":
            src, dst = torch.cat([src, torch.arange(30)]), torch.cat([dst, torch.arange(30)])
        seeds = torch.randperm(30, generator=torch.Generator().manual_seed(seed))[:9]
        keep = torch.isin(dst, seeds)
        perm = torch.randperm(int(keep.sum()), generator=torch.Generator().manual_seed(seed))
        frontier = dgl.graph((src[keep][perm], dst[keep][perm]), num_nodes=30)
        return dgl.to_block(frontier, seeds)
    raise AssertionError(kind)


KINDS = ["graph", "isolated", "block", "block-isolated"]


def test_test_graphs_cover_the_cases():
    g, iso, block, block_iso = (_graph(kind) for kind in KINDS)
    assert (g.in_degrees() > 0).all() and (block.in_degrees() > 0).all()
    assert (iso.in_degrees() == 0).any() and (block_iso.in_degrees() == 0).any()
    assert block.is_block and block.num_src_nodes() > block.num_dst_nodes()
    for graph in (g, block):  # the layers must reorder edge data: eid order is not CSC order
        eid = graph.adj_tensors("csc")[2]
        assert not torch.equal(eid, torch.arange(eid.numel()))


# ---------------------------------------------------------------------------------------------
# Comparison harness


def _inputs(graph, width, paired=False, dst_width=None, seed=1, extra_dims=()):
    """Float64 leaf features for ``graph``: one tensor, or a pair (feat_src, feat_dst)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randn(graph.num_src_nodes(), *extra_dims, width, generator=g, dtype=torch.float64)
    if not paired:
        return src.requires_grad_()
    dst = torch.randn(
        graph.num_dst_nodes(), *extra_dims, dst_width or width, generator=g, dtype=torch.float64
    )
    return src.requires_grad_(), dst.requires_grad_()


def _edge_weight(graph, seed=2):
    g = torch.Generator().manual_seed(seed)
    # Positive and distinct: no ties for max aggregation, whose tie-breaking is unspecified.
    return (torch.rand(graph.num_edges(), generator=g, dtype=torch.float64) + 0.1).requires_grad_()


def _pair_of_layers(factory):
    """``(dgl_layer, fastgl_layer)`` in float64 eval mode, fastgl's loaded from DGL's strictly."""
    torch.manual_seed(0)
    theirs = factory(dglnn).double().eval()
    ours = factory(fconv).double().eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    return theirs, ours


def _leaves(feat, edge_weight):
    feats = list(feat) if isinstance(feat, tuple) else [feat]
    return feats + ([edge_weight] if edge_weight is not None else [])


def _run(layer, graph, feat, edge_weight, **kwargs):
    """``(outputs, gradients)``: gradients of a fixed random projection of the main output
    with respect to the inputs (``input0``, ...) and every parameter (by name)."""
    out = layer(graph, feat, edge_weight=edge_weight, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    grad_out = torch.randn(
        outs[0].shape, generator=torch.Generator().manual_seed(3), dtype=outs[0].dtype
    )
    leaves = _leaves(feat, edge_weight)
    params = dict(layer.named_parameters())
    grads = torch.autograd.grad(
        outs[0], leaves + list(params.values()), grad_outputs=grad_out, allow_unused=True
    )
    names = [f"input{i}" for i in range(len(leaves))] + list(params)
    return outs, dict(zip(names, grads))


def _compare(factory, graph, feat, edge_weight=None, **kwargs):
    """Outputs and all gradients of fastgl's layer equal DGL's (float64, 1e-8)."""
    theirs, ours = _pair_of_layers(factory)
    expected, expected_grads = _run(theirs, graph, feat, edge_weight, **kwargs)
    actual, actual_grads = _run(ours, graph, feat, edge_weight, **kwargs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        torch.testing.assert_close(a, e, **TOL)
    assert actual_grads.keys() == expected_grads.keys()
    for name, e in expected_grads.items():
        a = actual_grads[name]
        if e is None:  # unused by DGL: unused by ours, or an exact zero
            assert a is None or not a.any(), name
        else:
            assert a is not None, name
            torch.testing.assert_close(
                a, e, **TOL, msg=lambda m, name=name: f"gradient of {name}: {m}"
            )
    return actual if len(actual) > 1 else actual[0]


# ---------------------------------------------------------------------------------------------
# GraphConv

GRAPHCONV = {
    "both": lambda m, z: m.GraphConv(IN, OUT, allow_zero_in_degree=z),
    "right-widen": lambda m, z: m.GraphConv(IN, 9, norm="right", allow_zero_in_degree=z),
    "left-no-bias": lambda m, z: m.GraphConv(
        IN, OUT, norm="left", bias=False, allow_zero_in_degree=z
    ),
    "none-relu": lambda m, z: m.GraphConv(
        IN, OUT, norm="none", activation=torch.relu, allow_zero_in_degree=z
    ),
    "no-weight": lambda m, z: m.GraphConv(IN, IN, weight=False, allow_zero_in_degree=z),
}


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_graphconv_pair_and_nd_features_match_dgl(kind):
    graph = _graph(kind)
    _compare(lambda m: m.GraphConv(IN, OUT), graph, _inputs(graph, IN, paired=True))
    _compare(
        lambda m: m.GraphConv(IN, OUT, norm="left"),
        graph,
        _inputs(graph, IN, extra_dims=(3,)),
        _edge_weight(graph),
    )


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_graphconv_external_weight_matches_dgl(kind):
    graph = _graph(kind)
    weight = torch.randn(IN, OUT, dtype=torch.float64, requires_grad=True)
    feat = _inputs(graph, IN)
    outs, grads = [], []
    for module in (dglnn, fconv):
        out = module.GraphConv(IN, OUT, weight=False).double()(graph, feat, weight=weight)
        outs.append(out)
        grads.append(torch.autograd.grad(out.pow(2).sum(), [feat, weight]))
    torch.testing.assert_close(outs[1], outs[0], **TOL)
    for a, e in zip(grads[1], grads[0]):
        torch.testing.assert_close(a, e, **TOL)


def test_graphconv_external_weight_conflicts_with_own_weight():
    graph = _graph("graph")
    with pytest.raises(dgl.DGLError, match="GraphConv: an external weight"):
        fconv.GraphConv(IN, OUT)(
            graph, torch.randn(graph.num_nodes(), IN), weight=torch.randn(IN, OUT)
        )


def test_graphconv_float32_matches_dgl():
    graph = _graph("block")
    feat = torch.randn(graph.num_src_nodes(), IN)
    theirs = dglnn.GraphConv(IN, OUT)
    ours = fconv.GraphConv(IN, OUT)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    torch.testing.assert_close(ours(graph, feat), theirs(graph, feat), atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# SAGEConv

SAGE = {
    "mean": lambda m: m.SAGEConv(IN, OUT, "mean"),
    "mean-widen": lambda m: m.SAGEConv(IN, 9, "mean", activation=torch.tanh),
    "gcn": lambda m: m.SAGEConv(IN, OUT, "gcn"),
    "gcn-widen-no-bias": lambda m: m.SAGEConv(IN, 9, "gcn", bias=False),
    "pool": lambda m: m.SAGEConv(IN, OUT, "pool", feat_drop=0.3),
    "pool-no-bias-norm": lambda m: m.SAGEConv(
        IN, OUT, "pool", bias=False, norm=torch.nn.LayerNorm(OUT)
    ),
}


@pytest.mark.parametrize("kind", ["graph", "block-isolated"])
@pytest.mark.parametrize("aggregator", ["mean", "pool"])
def test_sageconv_pair_of_sizes_matches_dgl(kind, aggregator):
    graph = _graph(kind)
    _compare(
        lambda m: m.SAGEConv((IN, IN_DST), OUT, aggregator),
        graph,
        _inputs(graph, IN, paired=True, dst_width=IN_DST),
        _edge_weight(graph),
    )


def _as_bipartite(graph):
    """The same edges between separate source and destination node types."""
    return dgl.heterograph(
        {("src", "e", "dst"): graph.edges(order="eid")},
        {"src": graph.num_src_nodes(), "dst": graph.num_dst_nodes()},
    )


@pytest.mark.parametrize("config", ["gcn", "gcn-widen-no-bias"])
def test_sageconv_gcn_with_a_pair_matches_dgl(config):
    block = _graph("block")
    _compare(SAGE[config], block, _inputs(block, IN, paired=True), _edge_weight(block))
    # On a homogeneous DGLGraph, DGL's 'gcn' stores the destination features under the key of
    # the source features (one node store), so it aggregates feat_dst over the in-edges; ours
    # aggregates feat_src, as DGL does whenever the two stores are separate (bipartite graphs).
    graph = _graph("graph")
    feat, weight = _inputs(graph, IN, paired=True), _edge_weight(graph)
    theirs, ours = _pair_of_layers(SAGE[config])
    torch.testing.assert_close(
        ours(graph, feat, edge_weight=weight),
        theirs(_as_bipartite(graph), feat, edge_weight=weight),
        **TOL,
    )
    _compare(SAGE[config], _as_bipartite(graph), feat, weight)


@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool"])
def test_sageconv_graph_without_edges_matches_dgl(aggregator):
    graph = dgl.graph(([], []), num_nodes=5)

    def factory(m):
        return m.SAGEConv(3, OUT, aggregator)

    if aggregator != "pool":
        _compare(factory, graph, _inputs(graph, 3))
        return
    # Without edges DGL's max aggregation routes the gradient of its (zero) output to node 0;
    # the output does not depend on the neighbors, so only fc_self's gradient is right.
    theirs, ours = _pair_of_layers(factory)
    feat = _inputs(graph, 3)
    out = ours(graph, feat)
    torch.testing.assert_close(out, theirs(graph, feat), **TOL)
    torch.testing.assert_close(out, ours.fc_self(feat), **TOL)
    (grad,) = torch.autograd.grad(out.sum(), feat)
    (expected,) = torch.autograd.grad(ours.fc_self(feat).sum(), feat)
    torch.testing.assert_close(grad, expected, **TOL)


def test_sageconv_feat_drop_in_training_matches_dgl_with_the_same_seed():
    # One dropout on the whole feature tensor, drawn in DGL's order, so the masks agree.
    graph = _graph("block")
    theirs, ours = _pair_of_layers(lambda m: m.SAGEConv(IN, OUT, "pool", feat_drop=0.5))
    feat = _inputs(graph, IN)
    torch.manual_seed(7)
    expected = theirs.train()(graph, feat)
    torch.manual_seed(7)
    actual = ours.train()(graph, feat)
    torch.testing.assert_close(actual, expected, **TOL)
    assert not torch.allclose(actual, ours.eval()(graph, feat))


def test_sageconv_lstm_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"fastgl.*dgl\.nn\.SAGEConv"):
        fconv.SAGEConv(IN, OUT, "lstm")


# ---------------------------------------------------------------------------------------------
# GINConv

GIN = {
    "sum": lambda m: m.GINConv(None, "sum"),
    "max-learn-eps": lambda m: m.GINConv(
        torch.nn.Linear(IN, OUT), "max", init_eps=0.3, learn_eps=True
    ),
    "mean-mlp-relu": lambda m: m.GINConv(
        torch.nn.Sequential(torch.nn.Linear(IN, 8), torch.nn.ReLU(), torch.nn.Linear(8, OUT)),
        "mean",
        init_eps=-0.2,
        activation=torch.relu,
    ),
    "sum-learn-eps": lambda m: m.GINConv(torch.nn.Linear(IN, OUT), "sum", learn_eps=True),
}


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_ginconv_pair_and_nd_features_match_dgl(kind):
    graph = _graph(kind)
    _compare(GIN["max-learn-eps"], graph, _inputs(graph, IN, paired=True), _edge_weight(graph))
    _compare(GIN["sum-learn-eps"], graph, _inputs(graph, IN, extra_dims=(2,)))


# ---------------------------------------------------------------------------------------------
# GATConv

GAT = {
    "one-head": lambda m, z: m.GATConv(IN, OUT, 1, allow_zero_in_degree=z),
    "heads": lambda m, z: m.GATConv(
        IN, OUT, 3, negative_slope=0.1, feat_drop=0.2, attn_drop=0.3, allow_zero_in_degree=z
    ),
    "residual-linear": lambda m, z: m.GATConv(
        IN, OUT, 2, residual=True, activation=torch.nn.functional.elu, allow_zero_in_degree=z
    ),
    "residual-identity": lambda m, z: m.GATConv(2 * 3, 3, 2, residual=True, allow_zero_in_degree=z),
    "residual-no-bias": lambda m, z: m.GATConv(
        IN, OUT, 2, residual=True, bias=False, allow_zero_in_degree=z
    ),
    "no-bias": lambda m, z: m.GATConv(IN, OUT, 2, bias=False, allow_zero_in_degree=z),
}


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_gatconv_attention_matches_dgl(kind):
    graph = _graph(kind)
    _, attention = _compare(
        lambda m: GAT["heads"](m, False),
        graph,
        _inputs(graph, IN),
        _edge_weight(graph),
        get_attention=True,
    )
    assert attention.shape == (graph.num_edges(), 3, 1)


@pytest.mark.parametrize("kind", ["graph", "block-isolated"])
@pytest.mark.parametrize("residual", [False, True])
def test_gatconv_pair_of_sizes_matches_dgl(kind, residual):
    graph = _graph(kind)
    _compare(
        lambda m: m.GATConv((IN, IN_DST), OUT, 2, residual=residual, allow_zero_in_degree=True),
        graph,
        _inputs(graph, IN, paired=True, dst_width=IN_DST),
    )


@pytest.mark.parametrize("kind", ["graph", "block"])
def test_gatconv_shared_fc_on_a_pair_and_nd_features_match_dgl(kind):
    graph = _graph(kind)
    _compare(lambda m: GAT["residual-linear"](m, False), graph, _inputs(graph, IN, paired=True))
    _compare(
        lambda m: GAT["residual-identity"](m, False),
        graph,
        _inputs(graph, 6, extra_dims=(2,)),
        get_attention=True,
    )


def test_gatconv_feat_drop_in_training_matches_dgl_with_the_same_seed():
    graph = _graph("block")
    theirs, ours = _pair_of_layers(lambda m: m.GATConv(IN, OUT, 2, feat_drop=0.5))
    feat = _inputs(graph, IN)
    torch.manual_seed(7)
    expected = theirs.train()(graph, feat)
    torch.manual_seed(7)
    actual = ours.train()(graph, feat)
    torch.testing.assert_close(actual, expected, **TOL)


# ---------------------------------------------------------------------------------------------
# Across layers: int32 graphs, COO-only graphs, state_dict layouts


def _without_residual(factory):
    return lambda m: factory(m, False)


ALL = {
    **{f"graphconv-{k}": _without_residual(f) for k, f in GRAPHCONV.items()},
    **{f"sage-{k}": f for k, f in SAGE.items()},
    **{f"gin-{k}": f for k, f in GIN.items()},
    **{f"gat-{k}": _without_residual(f) for k, f in GAT.items()},
}


def _factory_for(config, kind):
    """``ALL[config]``, except that GraphConv and GATConv allow zero-in-degree nodes exactly on
    the graphs that have them (elsewhere DGL's check must stay on, and pass)."""
    family, name = config.split("-", 1)
    if family in ("graphconv", "gat"):
        table, allow_zero = (GRAPHCONV if family == "graphconv" else GAT), "isolated" in kind
        return lambda m: table[name](m, allow_zero)
    return ALL[config]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("config", sorted(ALL))
@pytest.mark.parametrize("weighted", [False, True])
def test_layer_matches_dgl(kind, config, weighted):
    graph = _graph(kind)
    _compare(
        _factory_for(config, kind),
        graph,
        _inputs(graph, IN),
        _edge_weight(graph) if weighted else None,
    )


@pytest.mark.parametrize("config", sorted(ALL))
def test_state_dict_layouts_are_dgl_s(config):
    theirs, ours = ALL[config](dglnn), ALL[config](fconv)
    theirs_state, ours_state = theirs.state_dict(), ours.state_dict()
    assert {k: v.shape for k, v in ours_state.items()} == {
        k: v.shape for k, v in theirs_state.items()
    }
    assert {k: v.dtype for k, v in ours_state.items()} == {
        k: v.dtype for k, v in theirs_state.items()
    }
    theirs.load_state_dict(ours_state, strict=True)  # and back


@pytest.mark.parametrize("name", ["graphconv-both", "sage-pool", "gin-max-learn-eps", "gat-heads"])
@pytest.mark.parametrize("kind", ["graph", "block"])
def test_int32_and_coo_only_graphs_match_dgl(name, kind):
    graph = _graph(kind)
    feat, weight = _inputs(graph, IN), _edge_weight(graph)
    expected = _compare(ALL[name], graph, feat, weight)
    _, ours = _pair_of_layers(ALL[name])
    torch.testing.assert_close(ours(graph.int(), feat, edge_weight=weight), expected, **TOL)
    coo_only = graph.formats("coo")  # cannot give a CSC: the layers sort its COO instead
    torch.testing.assert_close(ours(coo_only, feat, edge_weight=weight), expected, **TOL)


# ---------------------------------------------------------------------------------------------
# Errors


def _layers(allow_zero=False):
    return {
        "GraphConv": fconv.GraphConv(IN, OUT, allow_zero_in_degree=allow_zero),
        "SAGEConv": fconv.SAGEConv(IN, OUT, "mean"),
        "GINConv": fconv.GINConv(None, "sum"),
        "GATConv": fconv.GATConv(IN, OUT, 2, allow_zero_in_degree=allow_zero),
    }


@pytest.mark.parametrize("kind", ["isolated", "block-isolated"])
@pytest.mark.parametrize("name", ["GraphConv", "GATConv"])
def test_zero_in_degree_error_matches_dgl(kind, name):
    graph = _graph(kind)
    feat = torch.randn(graph.num_src_nodes(), IN)
    with pytest.raises(dgl.DGLError, match="0-in-degree"):  # DGL's own layer refuses it ...
        getattr(dglnn, name)(*((IN, OUT) if name == "GraphConv" else (IN, OUT, 2)))(graph, feat)
    with pytest.raises(dgl.DGLError, match=f"{name}: there are 0-in-degree nodes"):  # ... ours too
        _layers()[name](graph, feat)
    with pytest.raises(ValueError, match="allow_zero_in_degree=True"):
        _layers()[name](graph, feat)
    _layers(allow_zero=True)[name](graph, feat)  # the flag lets it run
    layer = _layers()[name]
    layer.set_allow_zero_in_degree(True)
    layer(graph, feat)
    # A graph whose every destination has an in-edge passes the check.
    loops = dgl.add_self_loop(graph) if not graph.is_block else _graph("block")
    _layers()[name](loops, torch.randn(loops.num_src_nodes(), IN))


@pytest.mark.parametrize("name", ["GraphConv", "SAGEConv", "GINConv", "GATConv"])
def test_bad_inputs_name_the_layer_and_argument(name):
    layer = _layers(allow_zero=True)[name]
    graph, block = _graph("graph"), _graph("block")
    n = graph.num_nodes()
    with pytest.raises(ValueError, match=f"{name}: feat has {n - 1} rows but the graph has {n}"):
        layer(graph, torch.randn(n - 1, IN))
    with pytest.raises(ValueError, match=f"{name}: feat has {block.num_dst_nodes()} rows"):
        layer(block, torch.randn(block.num_dst_nodes(), IN))  # a block wants source rows
    with pytest.raises(
        ValueError,
        match=f"{name}: feat_dst has 3 rows but the graph has {block.num_dst_nodes()} destination",
    ):
        layer(block, (torch.randn(block.num_src_nodes(), IN), torch.randn(3, IN)))
    with pytest.raises(ValueError, match=f"{name}: feat must be a floating-point tensor"):
        layer(graph, torch.ones(n, IN, dtype=torch.int64))
    with pytest.raises(ValueError, match=f"{name}: feat must be a tensor or a pair"):
        layer(graph, (torch.randn(n, IN),) * 3)
    with pytest.raises(TypeError, match=f"{name}: graph must be a dgl.DGLGraph"):
        layer(torch.zeros(2, 5, dtype=torch.int64), torch.randn(n, IN))
    with pytest.raises(ValueError, match=rf"{name}: edge_weight must have shape \[{n + 40}\]"):
        layer(graph, torch.randn(n, IN), edge_weight=torch.rand(n + 39))
    with pytest.raises(ValueError, match=f"{name}: edge_weight must have shape"):
        layer(graph, torch.randn(n, IN), edge_weight=torch.rand(n + 40, 2))
    hetero = dgl.heterograph({("a", "x", "a"): ([0], [1]), ("a", "y", "a"): ([1], [0])})
    with pytest.raises(ValueError, match=f"{name}: graph must have a single edge type"):
        layer(hetero, torch.randn(2, IN))


@pytest.mark.parametrize("name", ["GraphConv", "SAGEConv", "GATConv"])
def test_wrong_feature_width_names_the_layer(name):
    graph = _graph("graph")
    with pytest.raises(
        ValueError, match=f"{name}: feat has {IN + 1} features but the layer expects {IN}"
    ):
        _layers()[name](graph, torch.randn(graph.num_nodes(), IN + 1))


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="GraphConv: norm must be"):
        fconv.GraphConv(IN, OUT, norm="sym")
    with pytest.raises(dgl.DGLError, match="SAGEConv: aggregator_type must be"):
        fconv.SAGEConv(IN, OUT, "max")
    with pytest.raises(ValueError, match="GINConv: aggregator_type must be"):
        fconv.GINConv(None, "min")
    with pytest.raises(ValueError, match="GATConv: num_heads must be"):
        fconv.GATConv(IN, OUT, 0)


def test_other_bad_forward_inputs():
    graph, block = _graph("graph"), _graph("block")
    n = graph.num_nodes()
    with pytest.raises(
        ValueError,
        match="SAGEConv: aggregator_type='gcn' needs source and "
        "destination features of the same shape",
    ):
        fconv.SAGEConv(IN, OUT, "gcn")(graph, (torch.randn(n, IN), torch.randn(n, IN + 1)))
    with pytest.raises(ValueError, match="GATConv: the layer was built for a pair"):
        fconv.GATConv((IN, IN_DST), OUT, 2)(graph, torch.randn(n, IN))
    with pytest.raises(ValueError, match="GraphConv: weight must be 2-D"):
        fconv.GraphConv(IN, OUT, weight=False)(graph, torch.randn(n, IN), weight=torch.randn(IN))
    bipartite = dgl.heterograph({("u", "e", "v"): ([0, 1], [0, 0])})
    with pytest.raises(
        ValueError,
        match="GINConv: the graph has 2 source and 1 destination nodes; pass feat as a pair",
    ):
        fconv.GINConv()(bipartite, torch.randn(2, IN))
    # With a pair, a (non-block) bipartite graph works as in DGL.
    _compare(lambda m: m.GINConv(None, "mean"), bipartite, _inputs(bipartite, IN, paired=True))
    with pytest.raises(ValueError, match="GINConv: feat_src and feat_dst must have the same"):
        fconv.GINConv()(
            block,
            (torch.randn(block.num_src_nodes(), IN), torch.randn(block.num_dst_nodes(), IN + 1)),
        )
