"""fastgl.nn: the FastGLConv layers and models against torch_geometric.nn.

Every layer gets PyG's parameters through ``load_state_dict(strict=True)`` and must then give
PyG's outputs and parameter gradients (to 1e-5) on a square graph (``edge_index`` and CSCGraph),
a bipartite graph (``(x_src, x_dst)``, ``size=``) and sampled blocks.
"""

import dataclasses

import pytest
import torch

import fastgl
import fastgl.nn as fnn
from fastgl.graph import Block

pyg_nn = pytest.importorskip("torch_geometric.nn")

IN, OUT = 16, 8
TOL = dict(atol=1e-5, rtol=1e-5)


def _gin_nn(channels):
    # The same architecture on both sides; load_state_dict copies its weights.
    return torch.nn.Sequential(
        torch.nn.Linear(channels, 16), torch.nn.ReLU(), torch.nn.Linear(16, OUT)
    )


# name -> factory(module, in_channels); module is torch_geometric.nn or fastgl.nn.
LAYERS = {
    "gcn": lambda m, c: m.GCNConv(c, OUT),
    "gcn-improved": lambda m, c: m.GCNConv(c, OUT, improved=True),
    "gcn-no-loops": lambda m, c: m.GCNConv(c, OUT, add_self_loops=False),
    "gcn-raw": lambda m, c: m.GCNConv(c, OUT, normalize=False, bias=False),
    "sage-mean": lambda m, c: m.SAGEConv(c, OUT),
    "sage-sum": lambda m, c: m.SAGEConv(c, OUT, aggr="sum", bias=False),
    "sage-max": lambda m, c: m.SAGEConv(c, OUT, aggr="max"),
    "sage-project": lambda m, c: m.SAGEConv(c, OUT, project=True, normalize=True),
    "sage-wide": lambda m, c: m.SAGEConv(c, 32, aggr="mean", root_weight=False),
    "gin": lambda m, c: m.GINConv(_gin_nn(c), eps=0.25, train_eps=True),
    "gin-fixed-eps": lambda m, c: m.GINConv(_gin_nn(c), eps=-0.5),
    "gat": lambda m, c: m.GATConv(c, OUT),
    "gat-heads": lambda m, c: m.GATConv(c, OUT, heads=3, negative_slope=0.1),
    "gat-mean": lambda m, c: m.GATConv(c, OUT, heads=2, concat=False, residual=True),
    "gat-no-loops": lambda m, c: m.GATConv(c, OUT, heads=2, add_self_loops=False, bias=False),
}
GCN = [name for name in LAYERS if name.startswith("gcn")]
BIPARTITE = [name for name in LAYERS if not name.startswith("gcn")]


def layer_pair(layers, name, in_channels=IN):
    """PyG's layer ``layers[name]`` and fastgl's with the same parameters (PyG's state dict,
    non-zero biases and eps so that every parameter shows in the outputs)."""
    torch.manual_seed(1)
    ref = layers[name](pyg_nn, in_channels)
    ours = layers[name](fnn, in_channels)
    ours.load_state_dict(ref.state_dict(), strict=True)
    for module in (ref, ours):
        for key, p in module.named_parameters():
            if key.endswith("bias") or key == "eps":
                with torch.no_grad():
                    p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p))
    return ref, ours


def _pair(name, in_channels=IN):
    return layer_pair(LAYERS, name, in_channels)


def _random_graph(num_nodes=60, num_edges=400, seed=0):
    """Duplicate edges, self-loops (two on node 0) and an isolated last node."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes - 1, (2, num_edges), generator=g)
    loops = torch.tensor([[0, 0, 3, 7], [0, 0, 3, 7]])
    return torch.cat([edge_index, loops, edge_index[:, :10]], dim=1)


def _compare(ref, ours, run_ref, run_ours, inputs):
    """Outputs, parameter gradients and input gradients agree."""
    out_ref, out_ours = run_ref(ref), run_ours(ours)
    torch.testing.assert_close(out_ours, out_ref, **TOL)
    upstream = torch.randn_like(out_ref)
    for t in inputs:
        t.grad = None
    wrt_ref, wrt_ours = list(ref.parameters()) + inputs, list(ours.parameters()) + inputs
    # Unused parameters (lin_r without x_dst, say) get no gradient: compare them as zeros.
    grads_ref = torch.autograd.grad(out_ref, wrt_ref, upstream, allow_unused=True)
    grads_ours = torch.autograd.grad(out_ours, wrt_ours, upstream, allow_unused=True)
    names = [key for key, _ in ours.named_parameters()] + [f"input {i}" for i in range(len(inputs))]
    for key, t, g_ref, g_ours in zip(names, wrt_ours, grads_ref, grads_ours):
        g_ref = torch.zeros_like(t) if g_ref is None else g_ref
        g_ours = torch.zeros_like(t) if g_ours is None else g_ours
        torch.testing.assert_close(
            g_ours, g_ref, **TOL, msg=lambda m, key=key: f"grad of {key}: {m}"
        )


@pytest.mark.parametrize("name", list(LAYERS))
def test_state_dict_keys_and_shapes_are_pyg(name):
    for in_channels in (IN,) if name.startswith("gcn") else (IN, (IN, 12)):
        if name.startswith("gin") and in_channels != IN:
            continue
        ref, ours = LAYERS[name](pyg_nn, in_channels), LAYERS[name](fnn, in_channels)
        assert {k: v.shape for k, v in ours.state_dict().items()} == {
            k: v.shape for k, v in ref.state_dict().items()
        }
        ours.load_state_dict(ref.state_dict(), strict=True)


@pytest.mark.parametrize("name", list(LAYERS))
def test_square_graph_matches_pyg(name):
    edge_index = _random_graph()
    x = torch.randn(60, IN, requires_grad=True)
    ref, ours = _pair(name)
    _compare(ref, ours, lambda m: m(x, edge_index), lambda m: m(x, edge_index), [x])
    # The same graph as a CSCGraph gives the same result.
    graph = fastgl.CSCGraph.from_edge_index(edge_index, 60)
    torch.testing.assert_close(ours(x, graph), ref(x, edge_index), **TOL)


@pytest.mark.parametrize("name", GCN)
def test_gcn_edge_weight_matches_pyg(name):
    edge_index = _random_graph()
    weight = torch.rand(edge_index.shape[1], requires_grad=True)
    x = torch.randn(60, IN, requires_grad=True)
    ref, ours = _pair(name)
    _compare(
        ref,
        ours,
        lambda m: m(x, edge_index, weight),
        lambda m: m(x, edge_index, weight),
        [x, weight],
    )
    # CSCGraph: weights in the original edge order, or the graph's own weights.
    graph = fastgl.CSCGraph.from_edge_index(edge_index, 60)
    weighted = fastgl.CSCGraph.from_edge_index(edge_index, 60, weight.detach())
    expected = ref(x, edge_index, weight)
    torch.testing.assert_close(ours(x, graph, weight), expected, **TOL)
    torch.testing.assert_close(ours(x, weighted), expected, **TOL)


@pytest.mark.parametrize("name", BIPARTITE)
def test_bipartite_matches_pyg(name):
    g = torch.Generator().manual_seed(2)
    num_src, num_dst = 50, 20
    edge_index = torch.stack(
        [
            torch.randint(0, num_src, (300,), generator=g),
            torch.randint(0, num_dst - 2, (300,), generator=g),
        ]
    )
    edge_index[:, :3] = torch.tensor([[1, 4, 4], [1, 4, 4]])  # self-loops in bipartite ids
    dst_channels = IN if name.startswith("gin") else 12
    x_src = torch.randn(num_src, IN, requires_grad=True)
    x_dst = torch.randn(num_dst, dst_channels, requires_grad=True)
    ref, ours = _pair(name, IN if name.startswith("gin") else (IN, dst_channels))
    size = (num_src, num_dst)
    _compare(
        ref,
        ours,
        lambda m: m((x_src, x_dst), edge_index),
        lambda m: m((x_src, x_dst), edge_index),
        [x_src, x_dst],
    )
    _compare(
        ref,
        ours,
        lambda m: m((x_src, x_dst), edge_index, size=size),
        lambda m: m((x_src, x_dst), edge_index, size=size),
        [x_src, x_dst],
    )
    # Without destination features (no root term; GAT without a destination score).
    _compare(
        ref,
        ours,
        lambda m: m((x_src, None), edge_index, size=size),
        lambda m: m((x_src, None), edge_index, size=size),
        [x_src],
    )


@pytest.mark.parametrize("name", GCN)
def test_gcn_with_size_normalizes_over_the_prefix_graph(name):
    """GCN has no bipartite mode in PyG; with size= (num_dst <= num_src) fastgl's destinations are
    the first num_dst sources, i.e. PyG on the square graph of num_src nodes, first rows."""
    g = torch.Generator().manual_seed(3)
    edge_index = torch.stack(
        [torch.randint(0, 50, (300,), generator=g), torch.randint(0, 20, (300,), generator=g)]
    )
    x = torch.randn(50, IN, requires_grad=True)
    ref, ours = _pair(name)
    _compare(
        ref, ours, lambda m: m(x, edge_index)[:20], lambda m: m(x, edge_index, size=(50, 20)), [x]
    )


def _sample(num_nodes=200, seeds=(3, 17, 42, 99, 150), fanouts=(5, 5)):
    g = torch.Generator().manual_seed(4)
    edge_index = torch.randint(0, num_nodes, (2, 1600), generator=g)
    graph = fastgl.CSCGraph.from_edge_index(edge_index, num_nodes)
    torch.manual_seed(5)
    return (
        edge_index,
        graph,
        fastgl.NeighborSampler(graph, list(fanouts)).sample(torch.tensor(seeds)),
    )


def _shuffled(block: Block) -> Block:
    """The same block with its edges in random order (not destination-sorted)."""
    perm = torch.randperm(block.num_edges, generator=torch.Generator().manual_seed(6))
    return Block(
        block.src[perm],
        block.dst[perm],
        block.eid[perm],
        block.src_nodes,
        block.num_src_nodes,
        block.num_dst_nodes,
    )


@pytest.mark.parametrize("name", list(LAYERS))
def test_blocks_match_pyg(name):
    _, _, sub = _sample()
    x_all = torch.randn(sub.nodes.numel(), IN)
    ref, ours = _pair(name)
    # A hand-made block: unsorted, with self-loops, a destination without in-edges (node 1).
    handmade = Block(
        src=torch.tensor([5, 0, 7, 2, 3, 0, 6, 2]),
        dst=torch.tensor([0, 0, 2, 2, 0, 2, 3, 3]),
        eid=torch.arange(8),
        src_nodes=torch.arange(8),
        num_src_nodes=8,
        num_dst_nodes=4,
    )
    # PyG normalizes a block over its own edges: that is ours for blocks without degrees.
    plain = [dataclasses.replace(b, src_in_degrees=None) for b in sub.blocks]
    for block in plain + [handmade]:
        for b in (block, _shuffled(block)):
            _compare_on_block(ref, ours, name, b, x_all)


def _compare_on_block(ref, ours, name, b, x_all):
    """PyG's layer on the block's edge_index against ours on the block itself."""
    x = x_all[: b.num_src_nodes].clone().requires_grad_()
    edge_index = torch.stack([b.src, b.dst])
    n_src, n_dst = b.num_src_nodes, b.num_dst_nodes
    if name.startswith("gcn"):

        def run_ref(m):
            return m(x, edge_index)[:n_dst]
    else:

        def run_ref(m):
            return m((x, x[:n_dst]), edge_index, size=(n_src, n_dst))

    _compare(ref, ours, run_ref, lambda m: m(x, b), [x])


@pytest.mark.parametrize("name", list(LAYERS))
def test_graph_without_edges(name):
    x = torch.randn(7, IN)
    edge_index = torch.empty(2, 0, dtype=torch.long)
    ref, ours = _pair(name)
    torch.testing.assert_close(ours(x, edge_index), ref(x, edge_index), **TOL)


def test_gat_attention_parameters_train():
    edge_index = _random_graph()
    x = torch.randn(60, IN)
    target = torch.randn(60, 3 * OUT)
    torch.manual_seed(7)
    conv = fnn.GATConv(IN, OUT, heads=3)
    att_before = (conv.att_src.detach().clone(), conv.att_dst.detach().clone())
    loss_fn = torch.nn.MSELoss()
    loss = loss_fn(conv(x, edge_index), target)
    loss.backward()
    assert conv.att_src.grad.abs().sum() > 0 and conv.att_dst.grad.abs().sum() > 0
    # Train only the attention vectors: the loss can drop through them alone.
    optimizer = torch.optim.Adam([conv.att_src, conv.att_dst], lr=0.05)
    first = loss.item()
    for _ in range(30):
        optimizer.zero_grad()
        loss = loss_fn(conv(x, edge_index), target)
        loss.backward()
        optimizer.step()
    assert loss.item() < first
    assert not torch.equal(conv.att_src, att_before[0])
    assert not torch.equal(conv.att_dst, att_before[1])


@pytest.mark.parametrize("name", ["gcn", "gat-heads", "sage-max"])
def test_gradcheck_float64(name):
    edge_index = torch.tensor([[0, 1, 2, 3, 3, 4, 1], [1, 2, 0, 0, 4, 4, 1]])
    torch.manual_seed(8)
    conv = LAYERS[name](fnn, 3).double()
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: conv(t, edge_index), (x,))


def test_gcn_cached_follows_the_graph():
    edge_index = _random_graph()
    other = _random_graph(seed=9)
    x = torch.randn(60, IN)
    ref, ours = _pair("gcn")
    ours.cached = True
    torch.testing.assert_close(ours(x, edge_index), ref(x, edge_index), **TOL)
    torch.testing.assert_close(ours(x, edge_index), ref(x, edge_index), **TOL)  # cache hit
    torch.testing.assert_close(ours(x, other), ref(x, other), **TOL)  # another graph
    other[1, :50] = 0  # modified in place: noticed
    torch.testing.assert_close(ours(x, other), ref(x, other), **TOL)


def test_gat_dropout_only_in_training():
    edge_index = _random_graph()
    x = torch.randn(60, IN)
    conv = fnn.GATConv(IN, OUT, heads=2, dropout=0.5)
    conv.eval()
    torch.testing.assert_close(conv(x, edge_index), conv(x, edge_index))
    conv.train()
    torch.manual_seed(0)
    a = conv(x, edge_index)
    torch.manual_seed(1)
    assert not torch.allclose(a, conv(x, edge_index))


def test_lazy_in_channels():
    edge_index = _random_graph()
    x = torch.randn(60, IN)
    for conv in (fnn.SAGEConv(-1, OUT), fnn.GCNConv(-1, OUT), fnn.GATConv(-1, OUT, heads=2)):
        assert conv(x, edge_index).shape[0] == 60


# --- models -------------------------------------------------------------------------------------

MODELS = {
    "GraphSAGE": {},
    "GCN": {},
    "GIN": {},
    "GAT": {"heads": 2},
}


def _model_pair(name, **kwargs):
    torch.manual_seed(10)
    ref = getattr(pyg_nn.models, name)(
        IN, 16, num_layers=2, out_channels=5, **MODELS[name], **kwargs
    )
    ours = getattr(fnn, name)(IN, 16, num_layers=2, out_channels=5, **MODELS[name], **kwargs)
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ref.eval(), ours.eval()


@pytest.mark.parametrize("name", list(MODELS))
def test_model_on_blocks_matches_pyg(name):
    edge_index, _, sub = _sample()
    x = torch.randn(200, IN)[sub.nodes]
    ref, ours = _model_pair(name)
    # PyG's own mini-batch path: NeighborLoader layout, layer-wise trimming.
    expected = ref(
        x,
        sub.edge_index,
        num_sampled_nodes_per_hop=sub.num_sampled_nodes,
        num_sampled_edges_per_hop=sub.num_sampled_edges,
    )[: sub.batch_size]
    out = ours(x, [dataclasses.replace(b, src_in_degrees=None) for b in sub.blocks])
    assert out.shape == (sub.batch_size, 5)
    torch.testing.assert_close(out, expected, **TOL)


@pytest.mark.parametrize("fanouts", [(-1, -1), (-1, -1, -1)])
def test_gcn_on_full_neighborhood_blocks_is_full_graph_gcn(fanouts):
    # Sampled blocks carry their sources' in-degrees, so with every neighbor sampled the GCN
    # normalization is the full graph's (the graph has no self-loops: a sampled node's degree
    # counts its loop, while full-graph GCN replaces it).
    g = torch.Generator().manual_seed(8)
    edge_index = torch.randint(0, 120, (2, 700), generator=g)
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    graph = fastgl.CSCGraph.from_edge_index(edge_index, 120)
    seeds = torch.tensor([7, 3, 88, 41])
    sub = fastgl.NeighborSampler(graph, list(fanouts)).sample(seeds)
    x = torch.randn(120, IN, generator=g)
    torch.manual_seed(11)
    model = fnn.GCN(IN, 16, num_layers=len(fanouts), out_channels=5).eval()
    torch.testing.assert_close(model(x[sub.nodes], sub.blocks), model(x, edge_index)[seeds], **TOL)
    # Without the degrees the sources beyond the destinations count only their self-loop.
    plain = [dataclasses.replace(b, src_in_degrees=None) for b in sub.blocks]
    assert not torch.allclose(model(x[sub.nodes], plain), model(x, edge_index)[seeds], **TOL)


@pytest.mark.parametrize("name", list(MODELS))
def test_model_full_graph_matches_pyg(name):
    edge_index = _random_graph()
    x = torch.randn(60, IN)
    ref, ours = _model_pair(name)
    torch.testing.assert_close(ours(x, edge_index), ref(x, edge_index), **TOL)
    graph = fastgl.CSCGraph.from_edge_index(edge_index, 60)
    torch.testing.assert_close(ours(x, graph), ref(x, edge_index), **TOL)


@pytest.mark.parametrize("name", list(MODELS))
def test_model_trains_on_blocks(name):
    _, _, sub = _sample()
    x = torch.randn(sub.nodes.numel(), IN)
    model = getattr(fnn, name)(IN, 16, 2, 5, dropout=0.3, **MODELS[name]).train()
    out = model(x, sub.blocks)
    torch.nn.functional.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long)).backward()
    for key, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), key
        if key.endswith("eps") or "att_" in key or key.endswith("weight"):
            assert p.grad.abs().sum() > 0, key


def test_gcn_model_edge_weights_per_block():
    _, _, sub = _sample()
    x = torch.randn(sub.nodes.numel(), IN)
    model = fnn.GCN(IN, 16, 2, 5)
    # Weighted GCN normalizes over the block's own edges, as a block without degrees does.
    blocks = [dataclasses.replace(b, src_in_degrees=None) for b in sub.blocks]
    ones = [torch.ones(b.num_edges) for b in blocks]
    torch.testing.assert_close(model(x, blocks, ones), model(x, blocks))


def test_gcn_reads_a_block_weight_like_a_graph_weight():
    """With no edge_weight, GCNConv weighs a Block's edges by its own weight, as a CSCGraph's."""
    _, _, sub = _sample()
    block = sub.blocks[0]
    x = torch.randn(block.num_src_nodes, IN)
    weight = torch.rand(block.num_edges, generator=torch.Generator().manual_seed(7))
    conv = fnn.GCNConv(IN, OUT)
    weighted = dataclasses.replace(block, weight=weight)
    torch.testing.assert_close(conv(x, weighted), conv(x, block, weight))
    with pytest.raises(ValueError, match=r"GCNConv: weight must have shape \[\d+\]"):
        conv(x, dataclasses.replace(block, weight=weight[1:]))


# --- bad input ----------------------------------------------------------------------------------


def test_bad_inputs_raise_clear_errors():
    edge_index = _random_graph()
    x = torch.randn(60, IN)
    sage, gcn = fnn.SAGEConv(IN, OUT), fnn.GCNConv(IN, OUT)
    _, _, sub = _sample()
    block = sub.blocks[0]
    graph = fastgl.CSCGraph.from_edge_index(edge_index, 60)
    cases = [
        (
            lambda: sage(x[:50], graph),
            ValueError,
            "SAGEConv: x has 50 rows but the graph has 60 source nodes",
        ),
        (lambda: sage(x[:50], edge_index), ValueError, "source id 58, out of range for 50"),
        (lambda: sage(x, graph, size=(60, 30)), ValueError, "disagrees with a CSCGraph"),
        (lambda: sage(x, edge_index[:1]), ValueError, r"edge_index must have shape \[2, E\]"),
        (lambda: sage(x, edge_index.float()), ValueError, "edge_index must be int32 or int64"),
        (
            lambda: sage(x, torch.tensor([[0, 70], [1, 2]])),
            ValueError,
            "source id 70, out of range for 60",
        ),
        (lambda: sage(x, torch.tensor([[0, 1], [1, -1]])), ValueError, "target id -1"),
        (lambda: sage(x.long(), edge_index), ValueError, "floating-point"),
        (lambda: sage(x[0], edge_index), ValueError, "must be 2-D"),
        # A sparse [2, E] matrix is an adj_t of 2 destinations and E sources.
        (lambda: sage(x, edge_index.to_sparse()), ValueError, "graph has 414 source nodes"),
        (lambda: sage(x, "graph"), TypeError, "edge_index tensor"),
        (lambda: sage(x, block), ValueError, f"graph has {block.num_src_nodes} source nodes"),
        (
            lambda: sage(torch.randn(block.num_src_nodes, IN), block, size=(5, 5)),
            ValueError,
            "disagrees with a Block",
        ),
        (lambda: sage((x, None), edge_index), ValueError, "pass size="),
        (lambda: sage((x, x[:10]), edge_index), ValueError, "target id"),
        (lambda: sage(x, edge_index, size=(60, 61)), ValueError, "must not exceed num_src"),
        (lambda: sage(x, edge_index, size=(60,)), ValueError, "size must be a pair"),
        (lambda: gcn((x, x), edge_index), ValueError, "does not support bipartite"),
        (lambda: gcn(x, edge_index, torch.ones(3)), ValueError, "edge_weight must have shape"),
        (
            lambda: fnn.GCNConv(IN, OUT, normalize=False, add_self_loops=True),
            ValueError,
            "self-loops",
        ),
        (lambda: fnn.SAGEConv(IN, OUT, aggr="nope"), ValueError, "SAGEConv: aggr 'nope'"),
        (lambda: fnn.SAGEConv(-1, OUT, project=True), ValueError, "lazy"),
        (lambda: fnn.GATConv(IN, OUT, edge_dim=0), ValueError, "edge_dim must be None or"),
        (
            lambda: fnn.GATConv(IN, OUT)(x, edge_index, edge_attr=torch.ones(1)),
            ValueError,
            r"edge_attr was given but the layer has no edge features \(edge_dim=None\)",
        ),
        (lambda: fnn.GraphSAGE(IN, 16, 2)(x, [block]), ValueError, "list of 2 Blocks"),
        (
            lambda: fnn.GraphSAGE(IN, 16, 2)(x, edge_index, torch.ones(3)),
            ValueError,
            "no edge_weight",
        ),
        (lambda: fnn.GAT(IN, 15, 2, heads=2), ValueError, "divisible"),
        (lambda: fnn.GraphSAGE(IN, 16, 0), ValueError, "num_layers"),
        (lambda: fnn.GraphSAGE(IN, 16, 2, act="nope"), ValueError, "unknown activation"),
    ]
    for run, error, message in cases:
        with pytest.raises(error, match=message):
            run()
