"""Heterogeneous graphs in the PyG drop-in: PyG 2.8's ``NeighborLoader`` /
``LinkNeighborLoader`` on ``HeteroData`` and typed ``(FeatureStore, GraphStore)`` pairs, one named
case per behavior.

PyG's semantics (its loader docs and pyg-lib's hetero sampler): at hop ``h`` every node new at
hop ``h-1`` (the seeds at hop 1) of type ``t`` draws ``num_neighbors[edge_type][h]`` in-neighbors
along every edge type ending in ``t``; a batch has per node type ``n_id`` (seeds first) and
``num_sampled_nodes``, per edge type ``edge_index`` (row 0 the source), ``e_id`` and
``num_sampled_edges``, and ``input_id`` / ``batch_size`` on the input type. PyG's own sampler
cannot run here, so every batch is checked against these rules on the data.
"""

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.data import HeteroData
from torch_geometric.nn import HeteroConv, to_hetero
from torch_geometric.nn import SAGEConv as PyGSAGEConv
from torch_geometric.sampler.base import NumNeighbors
from torch_geometric.testing import MyFeatureStore, MyGraphStore
from torch_geometric.utils import is_undirected

from fastgl.integrations.pyg import LinkNeighborLoader, NeighborLoader, NeighborSampler, SAGEConv

NUM = {"paper": 50, "author": 30, "venue": 4}
WRITES, CITES, IN = (
    ("author", "writes", "paper"),
    ("paper", "cites", "paper"),
    ("paper", "in", "venue"),
)
REV = ("paper", "rev_writes", "author")


def hetero_data(seed=0, num_edges=(200, 150, 50, 200)):
    generator = torch.Generator().manual_seed(seed)
    data = HeteroData()
    for ntype, n in NUM.items():
        data[ntype].x = torch.randn(n, 4, generator=generator)
    data["paper"].y = torch.randint(0, 3, (NUM["paper"],), generator=generator)
    for etype, count in zip((WRITES, CITES, IN, REV), num_edges):
        src, _, dst = etype
        data[etype].edge_index = torch.stack(
            [
                torch.randint(0, NUM[src], (count,), generator=generator),
                torch.randint(0, NUM[dst], (count,), generator=generator),
            ]
        )
        data[etype].w = torch.rand(count, generator=generator)
    return data


def in_degrees(data, etype):
    return torch.bincount(data[etype].edge_index[1], minlength=NUM[etype[2]])


def check_hetero_batch(data, batch, fanouts, input_type, input_nodes, replace=False):
    """PyG's layout checked against ``data``: seeds first, ``n_id`` unique per type, every
    edge real with its ``e_id``, counts consistent, edges grouped by hop, and per hop every new
    node of the previous hop drew ``min(fanout, in-degree)`` edges along each edge type
    (``replace``: ``fanout`` edges from every node with in-edges)."""
    seeds = batch[input_type].n_id[: batch[input_type].batch_size]
    assert torch.equal(seeds, input_nodes[batch[input_type].input_id])
    node_ends = {}
    for ntype in data.node_types:
        n_id = batch[ntype].n_id
        assert n_id.unique().numel() == n_id.numel()
        assert torch.equal(batch[ntype].x, data[ntype].x[n_id])
        assert sum(batch[ntype].num_sampled_nodes) == n_id.numel()
        counts = torch.tensor(batch[ntype].num_sampled_nodes)
        node_ends[ntype] = [0] + counts.cumsum(0).tolist()
    for etype in data.edge_types:
        src, _, dst = etype
        store, (row, col) = batch[etype], batch[etype].edge_index
        global_edges = torch.stack([batch[src].n_id[row], batch[dst].n_id[col]])
        assert torch.equal(data[etype].edge_index[:, store.e_id], global_edges)
        assert sum(store.num_sampled_edges) == row.numel()
        edge_start, degrees = 0, in_degrees(data, etype)
        for hop, fanout in enumerate(fanouts[etype]):
            edge_end = edge_start + store.num_sampled_edges[hop]
            first, last = node_ends[dst][hop], node_ends[dst][hop + 1]
            targets = col[edge_start:edge_end]
            assert bool(((targets >= first) & (targets < last)).all())  # grouped by hop
            drawn = torch.bincount(targets - first, minlength=last - first)
            degree = degrees[batch[dst].n_id[first:last]]
            if fanout < 0:
                expected = degree
            elif replace:
                expected = torch.where(degree > 0, fanout, 0)
            else:
                expected = degree.clamp(max=fanout)
            assert torch.equal(drawn, expected), (etype, hop)
            edge_start = edge_end


def test_batches_have_pyg_layout_per_type():
    data = hetero_data()
    seeds = torch.arange(0, NUM["paper"], 2)
    loader = NeighborLoader(data, [3, 2], input_nodes=("paper", seeds), batch_size=8)
    fanouts = {etype: [3, 2] for etype in data.edge_types}
    assert len(loader) == 4
    for batch in loader:
        assert isinstance(batch, HeteroData) and batch.input_type == "paper"
        assert batch["paper"].batch_size == batch["paper"].input_id.numel()
        assert set(batch.node_types) == set(NUM) and set(batch.edge_types) == set(data.edge_types)
        check_hetero_batch(data, batch, fanouts, "paper", seeds)
        assert torch.equal(batch[CITES].w, data[CITES].w[batch[CITES].e_id])  # edge features


def test_per_edge_type_fanouts_are_respected_with_pyg_defaults():
    data = hetero_data()
    num_neighbors = NumNeighbors({WRITES: [5, 0], CITES: [1, -1]}, default=[2, 1])
    loader = NeighborLoader(data, num_neighbors, input_nodes="paper", batch_size=10)
    fanouts = {WRITES: [5, 0], CITES: [1, -1], IN: [2, 1], REV: [2, 1]}
    for batch in loader:
        check_hetero_batch(data, batch, fanouts, "paper", torch.arange(NUM["paper"]))
        assert batch[WRITES].num_sampled_edges[1] == 0


def test_per_edge_type_fanouts_as_pyg_checks_them():
    data = hetero_data()
    with pytest.raises(ValueError, match="Missing number of neighbors"):
        NeighborLoader(data, {WRITES: [2]}, input_nodes="paper")
    with pytest.raises(ValueError, match="Not all edge types specified"):
        NeighborLoader(data, {("paper", "x", "venue"): [2]}, input_nodes="paper")
    with pytest.raises(ValueError, match="hops must be the same across all"):
        fanouts = {WRITES: [2], CITES: [2, 2], IN: [2], REV: [2]}
        NeighborLoader(data, fanouts, input_nodes="paper")


def test_changing_num_neighbors_rebuilds_the_sampler():
    data = hetero_data()
    loader = NeighborLoader(data, [1], input_nodes="paper", batch_size=50)
    loader.node_sampler.num_neighbors = [-1]
    batch = next(iter(loader))
    assert batch[WRITES].num_sampled_edges == [data[WRITES].num_edges]


def test_disjoint_trees_per_type():
    data = hetero_data()
    seeds = torch.tensor([3, 3, 7])  # a repeated seed grows a tree of its own
    loader = NeighborLoader(data, [2, 2], input_nodes=("paper", seeds), batch_size=3,
                            disjoint=True)  # fmt: skip
    batch = next(iter(loader))
    assert torch.equal(batch["paper"].n_id[:3], seeds)
    assert torch.equal(batch["paper"].batch[:3], torch.arange(3))
    for etype in data.edge_types:
        src, _, dst = etype
        row, col = batch[etype].edge_index
        assert torch.equal(batch[src].batch[row], batch[dst].batch[col])
        global_edges = torch.stack([batch[src].n_id[row], batch[dst].n_id[col]])
        assert torch.equal(data[etype].edge_index[:, batch[etype].e_id], global_edges)
    for ntype in data.node_types:  # a node is unique within its tree
        keys = batch[ntype].batch * 1000 + batch[ntype].n_id
        assert keys.unique().numel() == keys.numel()


def test_repeated_seeds_need_disjoint():
    data = hetero_data()
    loader = NeighborLoader(data, [2], input_nodes=("paper", torch.tensor([1, 1])), batch_size=2)
    with pytest.raises(ValueError, match="distinct unless disjoint=True"):
        next(iter(loader))


def test_replace_draws_the_fanout_from_every_nonempty_row():
    data = hetero_data()
    loader = NeighborLoader(data, [4, 3], input_nodes="paper", batch_size=16, replace=True)
    fanouts = {etype: [4, 3] for etype in data.edge_types}
    for batch in loader:
        check_hetero_batch(data, batch, fanouts, "paper", torch.arange(NUM["paper"]), replace=True)


def test_weight_attr_never_draws_zero_weight_edges():
    data = hetero_data()
    data[CITES].w[::2] = 0.0
    del data[REV].w  # an edge type without the attribute draws uniformly
    loader = NeighborLoader(data, [2, 2], input_nodes="paper", batch_size=10, weight_attr="w")
    fanouts = {etype: [2, 2] for etype in data.edge_types}
    for batch in loader:
        assert bool((batch[CITES].e_id % 2 == 1).all())
        # Without the attribute: min(fanout, in-degree) edges, as unweighted.
        check_hetero_batch(data.edge_type_subgraph([WRITES, REV]), batch, fanouts, "paper",
                           torch.arange(NUM["paper"]))  # fmt: skip


def test_backward_direction_samples_out_edges():
    data = hetero_data()
    sampler = NeighborSampler(data, [-1], sample_direction="backward")
    loader = NeighborLoader(data, [-1], input_nodes=("author", torch.arange(5)), batch_size=5,
                            neighbor_sampler=sampler)  # fmt: skip
    batch = next(iter(loader))
    row, col = batch[WRITES].edge_index  # author -> paper, leaving the seed authors
    assert bool((row < 5).all())
    out_edges = (data[WRITES].edge_index[0] < 5).nonzero().flatten()
    assert sorted(batch[WRITES].e_id.tolist()) == out_edges.tolist()
    global_edges = torch.stack([batch["author"].n_id[row], batch["paper"].n_id[col]])
    assert torch.equal(data[WRITES].edge_index[:, batch[WRITES].e_id], global_edges)


def test_bidirectional_subgraphs():
    data = hetero_data()
    loader = NeighborLoader(data, [3, 2], input_nodes="paper", batch_size=10,
                            subgraph_type="bidirectional")  # fmt: skip
    cites = set(map(tuple, data[CITES].edge_index.t().tolist()))
    writes = set(map(tuple, data[WRITES].edge_index.t().tolist()))
    rev_writes = set(map(tuple, data[REV].edge_index.t().tolist()))
    for batch in loader:
        # PyG's to_bidirectional: a type's edges in both directions, an edge type joined with
        # its reverse type (rev_writes for writes), edge ids dropped.
        assert is_undirected(batch[CITES].edge_index) and "e_id" not in batch[CITES]
        found = batch["paper"].n_id[batch[CITES].edge_index]
        assert set(map(tuple, found.t().tolist())) <= cites | {(b, a) for a, b in cites}
        row, col = batch[WRITES].edge_index
        found = torch.stack([batch["author"].n_id[row], batch["paper"].n_id[col]])
        assert set(map(tuple, found.t().tolist())) <= writes | {(b, a) for a, b in rev_writes}
        assert torch.equal(batch[REV].edge_index, batch[WRITES].edge_index.flip(0))


def test_edge_types_without_edges_and_unreached_types():
    data = hetero_data(num_edges=(0, 0, 50, 200))  # venue <- paper <- nothing
    loader = NeighborLoader(data, [2, 2], input_nodes=("venue", torch.arange(4)), batch_size=4)
    batch = next(iter(loader))
    assert batch["author"].n_id.numel() == 0 and batch["author"].num_sampled_nodes == [0, 0, 0]
    assert batch[CITES].edge_index.shape == (2, 0) and batch[CITES].num_sampled_edges == [0, 0]
    check_hetero_batch(data, batch, {e: [2, 2] for e in data.edge_types}, "venue", torch.arange(4))


class HeteroGraphSAGE(torch.nn.Module):
    """GraphSAGE with one conv per edge type, summed per destination type (PyG's HeteroConv)."""

    def __init__(self, conv, edge_types):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            HeteroConv({etype: conv((-1, -1), out) for etype in edge_types}, aggr="sum")
            for out in (16, 3)
        )

    def forward(self, x_dict, edge_index_dict):
        x_dict = {k: x.relu() for k, x in self.layers[0](x_dict, edge_index_dict).items()}
        return self.layers[1](x_dict, edge_index_dict)


def train_step_matches_pyg(make_model, batch):
    """One forward/backward of the model on fastgl's and on PyG's SAGEConv (same weights, PyG's
    state-dict keys): same output for the seed papers, same gradients."""
    models, results = {"fastgl": make_model(SAGEConv), "pyg": make_model(PyGSAGEConv)}, {}
    for model in models.values():
        model(batch.x_dict, batch.edge_index_dict)  # initializes the lazy layers
    models["pyg"].load_state_dict(models["fastgl"].state_dict())
    seeds = batch["paper"].batch_size
    for name, model in models.items():
        out = model(batch.x_dict, batch.edge_index_dict)["paper"][:seeds]
        F.cross_entropy(out, batch["paper"].y[:seeds]).backward()
        results[name] = out, {k: p.grad for k, p in model.named_parameters()}
    torch.testing.assert_close(results["fastgl"][0], results["pyg"][0])
    assert results["fastgl"][1].keys() == results["pyg"][1].keys()
    for key, grad in results["fastgl"][1].items():
        if "venue" in key:  # no seed paper depends on the venues
            assert grad is None and results["pyg"][1][key] is None, key
        else:
            torch.testing.assert_close(grad, results["pyg"][1][key], msg=key)


def test_hetero_conv_of_fastgl_sage_convs_trains_on_a_batch_like_pyg():
    data = hetero_data()
    torch.manual_seed(0)
    batch = next(iter(NeighborLoader(data, [4, 3], input_nodes="paper", batch_size=16)))
    train_step_matches_pyg(lambda conv: HeteroGraphSAGE(conv, data.edge_types), batch)


class TwoLayers(torch.nn.Module):
    """A homogeneous two-layer GNN for PyG's to_hetero."""

    def __init__(self, conv1, conv2):
        super().__init__()
        self.conv1, self.conv2 = conv1, conv2

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


# Two layers per conv class, from fastgl.integrations.pyg or torch_geometric.nn. GCNConv and
# GATConv add self-loops by default, which PyG's to_hetero refuses on bipartite edge types.
TO_HETERO_LAYERS = {
    "SAGEConv": lambda m: (m.SAGEConv((-1, -1), 16), m.SAGEConv((-1, -1), 3)),
    "GATConv": lambda m: (
        m.GATConv((-1, -1), 8, heads=2, add_self_loops=False),
        m.GATConv((-1, -1), 3, add_self_loops=False),
    ),
    "GINConv": lambda m: (
        m.GINConv(torch.nn.LazyLinear(16), train_eps=True),
        m.GINConv(torch.nn.LazyLinear(3)),
    ),
    "GCNConv": lambda m: (m.GCNConv(-1, 16), m.GCNConv(-1, 3)),  # one node type only
}


def papers_only(data):
    """``data``'s papers and their citations both ways: no bipartite edge type."""
    out = HeteroData()
    out["paper"].x, out["paper"].y = data["paper"].x, data["paper"].y
    out[CITES].edge_index = data[CITES].edge_index
    out["paper", "cited_by", "paper"].edge_index = data[CITES].edge_index.flip(0)
    return out


def to_hetero_step(name, module, batch):
    """to_hetero (aggr="sum") of the two ``name`` layers of ``module`` (fastgl's drop-in or
    ``torch_geometric.nn``), its lazy layers initialized on ``batch``, in float64."""
    torch.manual_seed(0)
    model = to_hetero(TwoLayers(*TO_HETERO_LAYERS[name](module)), batch.metadata(), aggr="sum")
    model(batch.x_dict, batch.edge_index_dict)  # initializes the lazy layers
    return model.double()


@pytest.mark.parametrize("name", TO_HETERO_LAYERS)
def test_to_hetero_of_fastgl_layers_trains_on_a_batch_like_pyg(name):
    import torch_geometric.nn as pyg_nn

    import fastgl.integrations.pyg as fastgl_pyg

    data = hetero_data() if name != "GCNConv" else papers_only(hetero_data())
    torch.manual_seed(0)
    batch = next(iter(NeighborLoader(data, [4, 3], input_nodes="paper", batch_size=16)))
    ours, theirs = (to_hetero_step(name, m, batch) for m in (fastgl_pyg, pyg_nn))
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    theirs.load_state_dict(ours.state_dict())
    x_dict = {k: x.double() for k, x in batch.x_dict.items()}
    seeds, results = batch["paper"].batch_size, []
    for model in (ours, theirs):
        out = model(x_dict, batch.edge_index_dict)
        assert out.keys() == set(batch.node_types)
        loss = F.cross_entropy(out["paper"][:seeds], batch["paper"].y[:seeds])
        (loss + sum(o.square().mean() for o in out.values())).backward()  # every type's output
        results.append((out, {k: p.grad for k, p in model.named_parameters()}))
    (out, grads), (ref_out, ref_grads) = results
    for ntype in batch.node_types:  # every type summed over the edge types ending in it
        torch.testing.assert_close(out[ntype], ref_out[ntype], msg=ntype)
    assert grads.keys() == ref_grads.keys()
    for key, grad in grads.items():
        torch.testing.assert_close(grad, ref_grads[key], msg=key)


@pytest.mark.parametrize("name", ["GCNConv", "GATConv"])
def test_to_hetero_refuses_self_loops_on_bipartite_edge_types_like_pyg(name):
    import torch_geometric.nn as pyg_nn

    import fastgl.integrations.pyg as fastgl_pyg

    data = hetero_data()
    for module in (fastgl_pyg, pyg_nn):
        conv = getattr(module, name)
        with pytest.raises(ValueError, match="'add_self_loops' attribute set to 'True'"):
            to_hetero(TwoLayers(conv(-1, 16), conv(-1, 3)), data.metadata())
    # Without self-loops, GCNConv still takes no (x_src, x_dst) pair: both refuse it.
    for module in (fastgl_pyg, pyg_nn):
        convs = [module.GCNConv(-1, out, add_self_loops=False) for out in (16, 3)]
        model = to_hetero(TwoLayers(*convs), data.metadata())
        with pytest.raises(ValueError, match="tuple of node features"):
            model(data.x_dict, data.edge_index_dict)


# LinkNeighborLoader ##############################################################################


@pytest.mark.parametrize("neg_sampling", [None, "binary", "triplet"])
def test_link_loader_on_an_edge_type(neg_sampling):
    data = hetero_data()
    label_index = data[WRITES].edge_index[:, :40]
    loader = LinkNeighborLoader(data, [3, 2], edge_label_index=(WRITES, label_index),
                                neg_sampling=neg_sampling, batch_size=10)  # fmt: skip
    for batch in loader:
        store = batch[WRITES]
        src, dst = batch["author"].n_id, batch["paper"].n_id
        if neg_sampling == "triplet":
            assert torch.equal(src[batch["author"].src_index], label_index[0, store.input_id])
            assert torch.equal(dst[batch["paper"].dst_pos_index], label_index[1, store.input_id])
            assert batch["paper"].dst_neg_index.numel() == 10
        else:
            num = 20 if neg_sampling == "binary" else 10
            assert store.edge_label_index.shape == (2, num)
            pos = store.edge_label_index[:, :10]
            assert torch.equal(
                torch.stack([src[pos[0]], dst[pos[1]]]), label_index[:, store.input_id]
            )
        for etype in data.edge_types:
            s, _, d = etype
            row, col = batch[etype].edge_index
            global_edges = torch.stack([batch[s].n_id[row], batch[d].n_id[col]])
            assert torch.equal(data[etype].edge_index[:, batch[etype].e_id], global_edges)


def test_disjoint_link_trees_are_numbered_as_pyg_lib_numbers_them():
    # pyg-lib numbers the trees in the order of PyG's seed dict (source type, then destination
    # type), not in the graph's node type order (paper before author here); PyG then takes the
    # tree number modulo the positives.
    data = hetero_data()
    label_index = data[WRITES].edge_index[:, :8]
    neg = dict(mode="binary", amount=0.5)
    loader = LinkNeighborLoader(data, [2], edge_label_index=(WRITES, label_index),
                                neg_sampling=neg, batch_size=4, disjoint=True)  # fmt: skip
    for batch in loader:
        num_seeds = 4 + 2  # positives and ceil(0.5 * 4) negatives per endpoint type
        assert torch.equal(batch["author"].batch[:num_seeds], torch.arange(num_seeds) % 4)
        assert torch.equal(
            batch["paper"].batch[:num_seeds], (num_seeds + torch.arange(num_seeds)) % 4
        )


# (FeatureStore, GraphStore) input ################################################################


def stored(edge_index, layout, num_src, num_dst):
    """``edge_index`` in the edge order of ``layout`` (stable), and the pair a graph store
    holds for it."""
    if layout == "coo":
        return edge_index, (edge_index[0], edge_index[1])
    key, size = (edge_index[0], num_src) if layout == "csr" else (edge_index[1], num_dst)
    edge_index = edge_index[:, torch.sort(key, stable=True).indices]
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(key, minlength=size)])
    ptr = ptr.cumsum(0)
    row, col = edge_index
    return edge_index, ((ptr, col) if layout == "csr" else (row, ptr))


def hetero_stores(data, layouts):
    """The stores of ``data`` (its edges reordered as the layouts store them) and that data."""
    feature_store, graph_store = MyFeatureStore(), MyGraphStore()
    for ntype in data.node_types:
        feature_store.put_tensor(data[ntype].x, group_name=ntype, attr_name="x", index=None)
    for etype, layout in zip(data.edge_types, layouts):
        size = (NUM[etype[0]], NUM[etype[2]])
        edge_index, edges = stored(data[etype].edge_index, layout, *size)
        data[etype].edge_index = edge_index
        graph_store.put_edge_index(edges, edge_type=etype, layout=layout, size=size)
    return feature_store, graph_store


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_store_input_samples_like_hetero_data_input(direction):
    data = hetero_data()
    remote = hetero_stores(data, ["coo", "csr", "csc", "coo"])
    got = {}
    for name, graph in (("data", data), ("store", remote)):
        torch.manual_seed(0)
        sampler = NeighborSampler(graph, [3, 2], sample_direction=direction)
        loader = NeighborLoader(graph, [3, 2], input_nodes=("paper", torch.arange(NUM["paper"])),
                                batch_size=10, neighbor_sampler=sampler)  # fmt: skip
        got[name] = list(loader)
    for a, b in zip(got["data"], got["store"], strict=True):
        for ntype in data.node_types:
            assert torch.equal(a[ntype].n_id, b[ntype].n_id)
            assert torch.equal(a[ntype].x, b[ntype].x)
            assert a[ntype].num_sampled_nodes == b[ntype].num_sampled_nodes
        for etype in data.edge_types:
            assert torch.equal(a[etype].edge_index, b[etype].edge_index)
            assert torch.equal(a[etype].e_id, b[etype].e_id)  # positions in the stored layout


def test_store_graph_is_built_once_and_cached():
    data = hetero_data()
    remote = hetero_stores(data, ["coo", "csr", "csc", "coo"])
    first = NeighborSampler(remote, [2])
    assert NeighborSampler(remote, [5, 5]).graph is first.graph
    (attr,) = [a for a in remote[1].get_all_edge_attrs() if a.edge_type == CITES]
    remote[1].get_edge_index(attr)[0].add_(0)  # bumps the tensor's version: read anew
    assert NeighborSampler(remote, [2]).graph is not first.graph


def test_hetero_loader_with_workers():
    data = hetero_data()
    loader = NeighborLoader(data, [2, 2], input_nodes="paper", batch_size=25, num_workers=2)
    fanouts = {etype: [2, 2] for etype in data.edge_types}
    batches = list(loader)
    assert len(batches) == 2
    for batch in batches:
        check_hetero_batch(data, batch, fanouts, "paper", torch.arange(NUM["paper"]))
