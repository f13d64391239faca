"""fastgl.integrations.dgl.conv against dgl.nn.pytorch (DGL 2.1).

Every layer loads the state_dict of DGL's layer with ``strict=True`` and must then give DGL's
outputs and gradients (input features, edge weights, every parameter) in float64 to 1e-8, on a
DGLGraph with self-loops, a DGLGraph with isolated and zero-in-degree nodes, and blocks from
``dgl.to_block`` whose edge-id order is not their CSC order; and, on the shapes DGL accepts
(one feature tensor on bipartite graphs and blocks, graphs and blocks without source,
destination or edges), the same result, or where DGL's layer raises, an error of the class it
raises. Runs in the DGL environment (``.venv-dgl``); skipped where DGL is not installed.
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
F32_TOL = dict(atol=1e-6, rtol=1e-6)
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
        elif a is None:  # unused by ours (e.g. the LSTM on a graph without edges): DGL's zero
            assert not e.any(), name
        else:
            assert a is not None, name
            torch.testing.assert_close(
                a, e, **TOL, msg=lambda m, name=name: f"gradient of {name}: {m}"
            )
    return actual if len(actual) > 1 else actual[0]


def _same_outcome(factory, graph, feat, edge_weight=None, dgl_gradients=True, **kwargs):
    """Where DGL's layer raises, fastgl's raises an error of the same class (``dgl.DGLError``,
    or the ``RuntimeError`` or ``ValueError`` of a torch operation) naming the layer, and a
    ``ValueError`` as fastgl's bad-input errors are; elsewhere outputs and gradients agree
    (:func:`_compare`).

    ``dgl_gradients=False`` where DGL's backward is known to be wrong or to crash (see
    :func:`_dgl_max_backward_is_broken`): then the outputs agree with DGL's and fastgl's
    gradients with respect to the inputs pass ``torch.autograd.gradcheck``."""
    theirs, ours = _pair_of_layers(factory)
    try:
        expected = theirs(graph, feat, edge_weight=edge_weight, **kwargs)
    except (dgl.DGLError, RuntimeError, ValueError) as error:
        with pytest.raises(type(error)) as caught:
            ours(graph, feat, edge_weight=edge_weight, **kwargs)
        assert isinstance(caught.value, ValueError)
        assert str(caught.value).startswith(f"{type(ours).__name__}: ")
        return caught.value
    if dgl_gradients:
        return _compare(factory, graph, feat, edge_weight, **kwargs)
    leaves = _leaves(feat, edge_weight)
    paired, weighted = isinstance(feat, tuple), edge_weight is not None

    def run(*inputs):
        x = tuple(inputs[:2]) if paired else inputs[0]
        return ours(graph, x, edge_weight=inputs[-1] if weighted else None, **kwargs)

    actual = run(*leaves)
    torch.testing.assert_close(actual, expected, **TOL)
    assert torch.autograd.gradcheck(run, tuple(leaves))
    return actual


def _dgl_max_backward_is_broken(config, graph):
    """DGL's max aggregation (SAGEConv 'pool', GINConv 'max') has a backward that disagrees
    with its own forward in two places, where fastgl's gradients are checked numerically
    instead: on a graph without edges it routes gradient to source 0 (and crashes when there is
    no source 0 or an edge weight is given), and on a graph with a single destination it drops
    all but one edge's share of the edge-weight gradient (finite differences of DGL's own
    output agree with fastgl)."""
    max_config = config in ("sage-pool", "gin-max-learn-eps")
    return max_config and (graph.num_edges() == 0 or graph.num_dst_nodes() == 1)


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
    "lstm": lambda m: m.SAGEConv(IN, OUT, "lstm"),
    "lstm-widen-no-bias": lambda m: m.SAGEConv(IN, 9, "lstm", bias=False, feat_drop=0.2),
}


@pytest.mark.parametrize("kind", ["graph", "block-isolated"])
@pytest.mark.parametrize("aggregator", ["mean", "pool", "lstm"])
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


@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool", "lstm"])
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


def _hub_graph(seed=4):
    """In-degrees 0 to 12 with repeats and multi-edges, edge ids shuffled: LSTM sequences of
    many lengths, each to be read in edge-id order."""
    g = torch.Generator().manual_seed(seed)
    dst = torch.repeat_interleave(torch.arange(13), torch.arange(13))
    dst = torch.cat([dst, torch.tensor([5, 5, 9])])
    src = torch.cat([torch.randint(0, 20, (dst.numel() - 3,), generator=g), torch.tensor([3] * 3)])
    perm = torch.randperm(dst.numel(), generator=g)
    return dgl.graph((src[perm], dst[perm]), num_nodes=20)


@pytest.mark.parametrize("kind", ["hub", "hub-block"])
def test_sageconv_lstm_reads_every_sequence_in_edge_id_order(kind):
    graph = _hub_graph()
    if kind == "hub-block":
        seeds = torch.tensor([12, 0, 5, 9, 3, 11, 7])
        graph = dgl.to_block(dgl.in_subgraph(graph, seeds, relabel_nodes=False), seeds)
    _compare(SAGE["lstm"], graph, _inputs(graph, IN), _edge_weight(graph))
    _compare(
        lambda m: m.SAGEConv((IN, IN_DST), OUT, "lstm"),
        graph,
        _inputs(graph, IN, paired=True, dst_width=IN_DST),
    )


def test_sageconv_lstm_float32_and_training_match_dgl():
    graph = _graph("block")
    feat = torch.randn(graph.num_src_nodes(), IN)
    torch.manual_seed(5)
    theirs = dglnn.SAGEConv(IN, OUT, "lstm", feat_drop=0.5)
    torch.manual_seed(5)
    ours = fconv.SAGEConv(IN, OUT, "lstm", feat_drop=0.5)
    for key, value in theirs.state_dict().items():  # the same seed draws DGL's parameters
        torch.testing.assert_close(ours.state_dict()[key], value, atol=0, rtol=0)
    torch.testing.assert_close(ours.eval()(graph, feat), theirs.eval()(graph, feat), **F32_TOL)
    torch.manual_seed(7)
    expected = theirs.train()(graph, feat)
    torch.manual_seed(7)
    torch.testing.assert_close(ours.train()(graph, feat), expected, **F32_TOL)


def test_sageconv_lstm_needs_two_dimensional_features():
    graph = _graph("graph")
    error = _same_outcome(SAGE["lstm"], graph, _inputs(graph, IN, extra_dims=(2,)))
    assert isinstance(error, ValueError)  # DGL's LSTM refuses the 4-D mailbox
    assert "SAGEConv: aggregator_type='lstm' needs 2-D" in str(error)


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
    # DGL stores the source features on the source nodes: a DGLError (and a ValueError) here.
    # (How many destination rows a layer takes is its own rule, as in DGL: tested below.)
    with pytest.raises(dgl.DGLError, match=f"{name}: feat has {n - 1} rows but the graph has {n}"):
        layer(graph, torch.randn(n - 1, IN))
    with pytest.raises(ValueError, match=f"{name}: feat has {block.num_dst_nodes()} rows"):
        layer(block, torch.randn(block.num_dst_nodes(), IN))  # a block wants source rows
    with pytest.raises(dgl.DGLError, match=f"{name}: feat_src has 3 rows"):
        layer(block, (torch.randn(3, IN), torch.randn(block.num_dst_nodes(), IN)))
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
    # One tensor on a (non-block) bipartite graph is the destination features too, so DGL's
    # GINConv broadcasts its single destination row against the two source rows.
    out = _same_outcome(lambda m: m.GINConv(None, "sum"), bipartite, _inputs(bipartite, IN))
    assert out.shape == (2, IN)
    _compare(lambda m: m.GINConv(None, "mean"), bipartite, _inputs(bipartite, IN, paired=True))
    feat = (
        _inputs(block, IN),
        torch.randn(block.num_dst_nodes(), IN + 1, dtype=torch.float64),
    )
    error = _same_outcome(lambda m: m.GINConv(None, "sum"), block, feat)
    assert isinstance(error, RuntimeError) and "does not broadcast" in str(error)


# ---------------------------------------------------------------------------------------------
# Shapes at the edges: one tensor on bipartite graphs and blocks, graphs without nodes or edges


def _bipartite(num_src, num_dst, src, dst):
    edges = (torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64))
    return dgl.heterograph({("u", "e", "v"): edges}, {"u": num_src, "v": num_dst})


def _block(num_src, num_dst, src, dst):
    edges = (torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64))
    return dgl.create_block(edges, num_src_nodes=num_src, num_dst_nodes=num_dst)


def _random_edges(num_src, num_dst, num_edges, seed=5):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    return src.tolist(), torch.randint(0, num_dst, (num_edges,), generator=g).tolist()


BIPARTITE = {  # with edges; destinations without in-edges in most
    "bipartite-2x4": lambda: _bipartite(2, 4, [0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 2, 3] * 2),
    "bipartite-1x4": lambda: _bipartite(1, 4, [0, 0, 0, 0, 0], [2, 0, 3, 1, 2]),
    "bipartite-5x1": lambda: _bipartite(5, 1, [3, 0, 4, 1], [0, 0, 0, 0]),
    "bipartite-7x5": lambda: _bipartite(7, 5, *_random_edges(7, 5, 16)),
    "block-2x4": lambda: _block(2, 4, [1, 0, 1, 0, 1], [3, 0, 1, 2, 0]),
    "block-1x3": lambda: _block(1, 3, [0, 0], [2, 0]),
    "block-7x5": lambda: _block(7, 5, *_random_edges(7, 5, 16)),
}

EMPTY = {  # no source nodes, no destination nodes or no edges
    "graph-0": lambda: dgl.graph(([], []), num_nodes=0),
    "graph-5-no-edges": lambda: dgl.graph(([], []), num_nodes=5),
    "bipartite-0x0": lambda: _bipartite(0, 0, [], []),
    "bipartite-0x3": lambda: _bipartite(0, 3, [], []),
    "bipartite-3x0": lambda: _bipartite(3, 0, [], []),
    "bipartite-4x3-no-edges": lambda: _bipartite(4, 3, [], []),
    "block-0x0": lambda: _block(0, 0, [], []),
    "block-0x2": lambda: _block(0, 2, [], []),
    "block-3x0": lambda: _block(3, 0, [], []),
    "block-4x2-no-edges": lambda: _block(4, 2, [], []),
}

EDGE_CONFIGS = [
    "graphconv-both",
    "graphconv-right-widen",
    "graphconv-left-no-bias",
    "graphconv-no-weight",
    "sage-mean",
    "sage-mean-widen",
    "sage-gcn",
    "sage-gcn-widen-no-bias",
    "sage-pool",
    "sage-lstm",
    "gin-sum",
    "gin-max-learn-eps",
    "gin-mean-mlp-relu",
    "gat-heads",
    "gat-residual-linear",
    "gat-residual-identity",
]


def _allowing_zero_in_degree(config):
    family, name = config.split("-", 1)
    if family in ("graphconv", "gat"):
        table = GRAPHCONV if family == "graphconv" else GAT
        return lambda m: table[name](m, True)
    return ALL[config]


def _edge_case_inputs(graph, paired, weighted):
    return _inputs(graph, IN, paired=paired), _edge_weight(graph) if weighted else None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("config", EDGE_CONFIGS)
@pytest.mark.parametrize("shape", sorted(BIPARTITE))
def test_one_tensor_on_bipartite_graphs_and_blocks_matches_dgl(shape, config, weighted):
    # DGL's rule (expand_as_pair): in a block the first num_dst rows are the destinations';
    # on another graph the whole tensor serves as the destination features too. GraphConv
    # reads no destination rows; GATConv and SAGEConv's 'gcn' need one per destination (else a
    # DGLError); GINConv and the other SAGEConv aggregators add them with torch broadcasting
    # (one row broadcasts; other counts are a RuntimeError).
    graph = BIPARTITE[shape]()
    feat, weight = _edge_case_inputs(graph, False, weighted)
    dgl_gradients = not _dgl_max_backward_is_broken(config, graph)
    _same_outcome(_allowing_zero_in_degree(config), graph, feat, weight, dgl_gradients)


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("config", EDGE_CONFIGS)
@pytest.mark.parametrize("shape", sorted(EMPTY))
def test_graphs_without_nodes_or_edges_match_dgl(shape, config, paired):
    graph = EMPTY[shape]()
    feat, weight = _edge_case_inputs(graph, paired, weighted=True)
    factory = _allowing_zero_in_degree(config)
    if config.startswith("gat-residual") and graph.num_dst_nodes() == 0:
        _gat_residual_without_destinations(factory, graph, feat, weight)
        return
    dgl_gradients = not _dgl_max_backward_is_broken(config, graph)
    _same_outcome(factory, graph, feat, weight, dgl_gradients)


def _gat_residual_without_destinations(factory, graph, feat, weight):
    """DGL's GATConv with a residual fails on a graph without destinations: it views the
    residual as ``[0, -1, out_feats]``, which torch refuses as ambiguous. fastgl counts the
    heads instead and gives the empty output (where DGL's own checks raise, so does fastgl)."""
    theirs, ours = _pair_of_layers(factory)
    try:
        theirs(graph, feat, edge_weight=weight)
    except dgl.DGLError:
        _same_outcome(factory, graph, feat, weight)
        return
    except RuntimeError as error:
        assert "ambiguous" in str(error)
    out = ours(graph, feat, edge_weight=weight)
    assert out.shape == (0, ours._num_heads, ours._out_feats)
    leaves = _leaves(feat, weight)
    grads = torch.autograd.grad(out.sum(), leaves, allow_unused=True)
    assert all(g is None or not g.any() for g in grads)


@pytest.mark.parametrize("name", ["GraphConv", "GATConv"])
@pytest.mark.parametrize("shape", ["bipartite-2x4", "bipartite-0x3", "block-0x2", "block-3x0"])
def test_zero_in_degree_check_on_edge_shapes_matches_dgl(shape, name):
    graph = {**BIPARTITE, **EMPTY}[shape]()
    config = "graphconv-both" if name == "GraphConv" else "gat-heads"
    table = GRAPHCONV if name == "GraphConv" else GAT
    _same_outcome(lambda m: table[config.split("-", 1)[1]](m, False), graph, _inputs(graph, IN))


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("config", EDGE_CONFIGS)
def test_pair_with_other_destination_rows_matches_dgl(config, rows):
    # The same rules for the destination half of a pair: GraphConv ignores its rows, one row
    # broadcasts where DGL adds it, other counts fail as in DGL.
    block = _graph("block")
    feat = (_inputs(block, IN), torch.randn(rows, IN, dtype=torch.float64, requires_grad=True))
    _same_outcome(_allowing_zero_in_degree(config), block, feat, _edge_weight(block))
