"""fastgl.integrations.pyg: PyG's loaders on fastgl's sampler, checked against PyG's layout rules.

PyG's own sampler cannot run here (no pyg-lib / torch-sparse wheels), so the layout is checked
against the data itself and the distribution against the definition.
"""

import collections
import copy
import pickle

import pytest
import torch
from scipy import stats
from torch_geometric.data import Data, HeteroData
from torch_geometric.loader import NeighborLoader as PyGNeighborLoader
from torch_geometric.nn import GraphSAGE

from fastgl.integrations.pyg import LinkNeighborLoader, NeighborLoader, NeighborSampler


def random_data(num_nodes=200, num_edges=2000, seed=0):
    generator = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=generator)
    return Data(
        x=torch.randn(num_nodes, 6, generator=generator),
        edge_index=edge_index,
        y=torch.randint(0, 3, (num_nodes,), generator=generator),
        w=torch.rand(num_edges, generator=generator),
    )


def star_data(num_leaves):
    """Node 0 has an in-edge from each leaf 1..num_leaves (edge id = leaf - 1)."""
    leaves = torch.arange(1, num_leaves + 1)
    return Data(
        edge_index=torch.stack([leaves, torch.zeros_like(leaves)]), num_nodes=num_leaves + 1
    )


def check_pyg_layout(data, batch, fanouts, input_nodes):
    """Seeds first, edges are real, e_id global, edges grouped by hop, fanouts respected."""
    n_id, local = batch.n_id, batch.edge_index
    assert torch.equal(n_id[: batch.batch_size], input_nodes[batch.input_id])
    assert n_id.unique().numel() == n_id.numel()
    assert torch.equal(data.edge_index[:, batch.e_id], n_id[local])
    assert torch.equal(batch.x, data.x[n_id])
    assert sum(batch.num_sampled_nodes) == n_id.numel()
    assert sum(batch.num_sampled_edges) == local.shape[1]
    in_degree = torch.bincount(data.edge_index[1], minlength=data.num_nodes)
    node_end = edge_start = 0
    for hop, fanout in enumerate(fanouts):
        node_start, node_end = node_end, node_end + batch.num_sampled_nodes[hop]
        edge_end = edge_start + batch.num_sampled_edges[hop]
        targets = local[1, edge_start:edge_end]
        assert bool(((targets >= node_start) & (targets < node_end)).all())  # grouped by hop
        drawn = torch.bincount(targets - node_start, minlength=node_end - node_start)
        assert torch.equal(drawn, in_degree[n_id[node_start:node_end]].clamp(max=fanout))
        edge_start = edge_end


def test_neighbor_loader_batches_have_pyg_layout():
    data = random_data()
    input_nodes = torch.arange(0, 200, 3)
    loader = NeighborLoader(
        data, num_neighbors=[4, 3], input_nodes=input_nodes, batch_size=16, shuffle=True
    )
    seen = []
    for batch in loader:
        check_pyg_layout(data, batch, [4, 3], input_nodes)
        seen.append(batch.n_id[: batch.batch_size])
    assert torch.equal(torch.cat(seen).sort().values, input_nodes)


def test_input_nodes_as_mask_and_workers():
    data = random_data()
    mask = torch.zeros(200, dtype=torch.bool)
    mask[50:90] = True
    loader = NeighborLoader(data, [3, 3], input_nodes=mask, batch_size=8, num_workers=2)
    seeds = [batch.n_id[: batch.batch_size] for batch in loader]
    assert torch.equal(torch.cat(seeds), torch.arange(50, 90))


def test_trim_to_layer_gives_the_untrimmed_result():
    # Only true when edges are grouped by hop and nodes ordered by hop, as PyG's layout requires.
    data = random_data()
    torch.manual_seed(0)
    model = GraphSAGE(6, 16, num_layers=2).eval()
    for batch in NeighborLoader(data, [5, 4], batch_size=32):
        full = model(batch.x, batch.edge_index)[: batch.batch_size]
        trimmed = model(
            batch.x,
            batch.edge_index,
            num_sampled_nodes_per_hop=batch.num_sampled_nodes,
            num_sampled_edges_per_hop=batch.num_sampled_edges,
        )[: batch.batch_size]
        torch.testing.assert_close(trimmed, full)


def test_pyg_loader_accepts_the_sampler_as_neighbor_sampler():
    data = random_data()
    sampler = NeighborSampler(data, [2, 2])
    loader = PyGNeighborLoader(data, [2, 2], batch_size=10, neighbor_sampler=sampler)
    batch = next(iter(loader))
    check_pyg_layout(data, batch, [2, 2], torch.arange(200))


def test_uniform_draws_are_uniform():
    data = star_data(10)
    loader = NeighborLoader(data, [3], input_nodes=torch.tensor([0]), batch_size=1)
    counts = collections.Counter()
    torch.manual_seed(0)
    for _ in range(500):
        counts.update(next(iter(loader)).e_id.tolist())
    assert stats.chisquare([counts[e] for e in range(10)]).pvalue > 1e-3


def test_weight_attr_draws_proportionally():
    data = star_data(5)
    data.p = torch.tensor([0.0, 1.0, 2.0, 3.0, 0.0])
    loader = NeighborLoader(
        data, [2], input_nodes=torch.tensor([0]), batch_size=1, weight_attr="p", replace=True
    )
    counts = collections.Counter()
    torch.manual_seed(1)
    for _ in range(1200):
        counts.update(next(iter(loader)).e_id.tolist())
    assert counts[0] == counts[4] == 0
    expected = [2400 * p / 6 for p in (1, 2, 3)]
    assert stats.chisquare([counts[e] for e in (1, 2, 3)], expected).pvalue > 1e-3


def test_replace_draws_exactly_the_fanout():
    data = star_data(3)
    batch = next(
        iter(NeighborLoader(data, [7], input_nodes=torch.tensor([0]), batch_size=1, replace=True))
    )
    assert batch.edge_index.shape[1] == 7


def test_disjoint_trees():
    data = random_data()
    seeds = torch.tensor([4, 4, 9, 100])  # a seed may repeat: each gets its own tree
    batch = next(iter(NeighborLoader(data, [3, 2], input_nodes=seeds, batch_size=4, disjoint=True)))
    assert torch.equal(batch.n_id[:4], seeds) and torch.equal(batch.batch[:4], torch.arange(4))
    row, col = batch.edge_index
    assert torch.equal(batch.batch[row], batch.batch[col])  # edges never cross trees
    assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
    for tree in range(4):  # within a tree, nodes are distinct
        nodes = batch.n_id[batch.batch == tree]
        assert nodes.unique().numel() == nodes.numel()


def test_induced_subgraph_has_every_edge_between_sampled_nodes():
    data = random_data()
    batch = next(iter(NeighborLoader(data, [3, 2], batch_size=8, subgraph_type="induced")))
    nodes = set(batch.n_id.tolist())
    expected = {
        e
        for e in range(data.num_edges)
        if int(data.edge_index[0, e]) in nodes and int(data.edge_index[1, e]) in nodes
    }
    assert set(batch.e_id.tolist()) == expected
    assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])


def test_backward_direction_samples_out_edges():
    data = random_data()
    sampler = NeighborSampler(data, [3], sample_direction="backward")
    loader = PyGNeighborLoader(data, [3], batch_size=10, neighbor_sampler=sampler)
    batch = next(iter(loader))
    assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
    assert bool((batch.edge_index[0] < batch.batch_size).all())  # sources are the seeds


def test_same_seed_same_batches():
    data = random_data()

    def first_batch():
        torch.manual_seed(3)
        return next(iter(NeighborLoader(data, [4, 4], batch_size=16, shuffle=True)))

    a, b = first_batch(), first_batch()
    assert torch.equal(a.n_id, b.n_id) and torch.equal(a.e_id, b.e_id)


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_link_neighbor_loader(mode):
    data = random_data()
    label_index = data.edge_index[:, :100]
    loader = LinkNeighborLoader(
        data, [3, 2], edge_label_index=label_index, batch_size=20, neg_sampling=mode
    )
    batches = list(loader)
    assert len(batches) == 5
    for batch in batches:
        assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
        if mode == "binary":
            pos = batch.edge_label == 1
            assert int(pos.sum()) == 20 and int((~pos).sum()) == 20
            seeds = batch.n_id[batch.edge_label_index[:, pos]]
            assert torch.equal(seeds, label_index[:, batch.input_id])
        else:
            assert torch.equal(batch.n_id[batch.src_index], label_index[0, batch.input_id])
            assert torch.equal(batch.n_id[batch.dst_pos_index], label_index[1, batch.input_id])
            assert batch.dst_neg_index.numel() == 20


def test_unsupported_inputs_are_rejected_clearly():
    data = random_data()
    hetero = HeteroData()
    hetero["a"].num_nodes = 3
    hetero["a", "r", "a"].edge_index = torch.tensor([[0, 1], [1, 2]])
    hetero["a", "r", "a"].w = torch.ones(2)
    hetero["a"].t = torch.arange(3)
    with pytest.raises(NotImplementedError, match="temporal sampling with weight_attr"):
        NeighborLoader(hetero, [2], input_nodes="a", time_attr="t", weight_attr="w")
    with pytest.raises(NotImplementedError, match="'induced' is not supported yet for hetero"):
        NeighborLoader(hetero, [2], input_nodes="a", subgraph_type="induced")
    data.t = torch.arange(200)
    with pytest.raises(NotImplementedError, match="temporal sampling with weight_attr"):
        NeighborLoader(data, [2], time_attr="t", weight_attr="w")
    data.bad = torch.ones(3)
    with pytest.raises(ValueError, match="weight_attr 'bad'"):
        NeighborLoader(data, [2], weight_attr="bad")
    with pytest.raises(ValueError, match="distinct"):
        next(iter(NeighborLoader(data, [2], input_nodes=torch.tensor([1, 1]), batch_size=2)))


# The layers: fastgl.nn's, as PyG MessagePassing modules ##########################################

LAYERS = {  # name -> layer of fastgl.integrations.pyg or torch_geometric.nn (same arguments)
    "GCNConv": lambda m: m.GCNConv(8, 6, improved=True),
    "SAGEConv": lambda m: m.SAGEConv(8, 6, project=True),
    "GINConv": lambda m: m.GINConv(
        torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(), torch.nn.Linear(6, 6)),
        train_eps=True,
    ),
    "GATConv": lambda m: m.GATConv(8, 3, heads=2),
}
X = torch.randn(7, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 1, 3], [1, 2, 3, 4, 5, 6, 0, 0, 0]])


@pytest.mark.parametrize("name", LAYERS)
def test_conv_layers_are_fastgl_layers_and_pyg_message_passing(name):
    import torch_geometric.nn as pyg_nn

    import fastgl.integrations.pyg as pyg_dropin
    import fastgl.nn

    cls = getattr(pyg_dropin, name)
    assert issubclass(cls, getattr(fastgl.nn, name)) and issubclass(cls, pyg_nn.MessagePassing)
    assert cls.forward is getattr(fastgl.nn, name).forward  # fastgl's code computes
    ours, theirs = LAYERS[name](pyg_dropin).double(), LAYERS[name](pyg_nn).double()
    assert isinstance(ours, pyg_nn.MessagePassing)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    ours.load_state_dict(theirs.state_dict())  # strict, both ways
    torch.testing.assert_close(ours(X, EDGE_INDEX), theirs(X, EDGE_INDEX))
    back = LAYERS[name](pyg_nn).double()
    back.load_state_dict(ours.state_dict())
    torch.testing.assert_close(back(X, EDGE_INDEX), theirs(X, EDGE_INDEX))
    assert (ours.flow, ours.explain, ours.decomposed_layers) == ("source_to_target", None, 1)
    assert ours.aggr == theirs.aggr and ours.node_dim == theirs.node_dim
    assert getattr(ours, "add_self_loops", None) == getattr(theirs, "add_self_loops", None)
    # A copy (to_hetero deep-copies per edge type) and a pickled one (DataLoader workers).
    for copy_ in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert type(copy_) is cls
        torch.testing.assert_close(copy_(X, EDGE_INDEX), theirs(X, EDGE_INDEX))


def test_message_passing_steps_fastgl_does_not_have_are_refused():
    import torch_geometric.nn as pyg_nn
    from torch_geometric.explain.algorithm.utils import clear_masks, set_masks
    from torch_geometric.utils import get_num_hops

    from fastgl.integrations.pyg import GCNConv, SAGEConv

    model = torch.nn.Sequential(GCNConv(8, 8), torch.nn.ReLU(), SAGEConv(8, 4))
    assert get_num_hops(model) == 2
    conv = model[0]
    for register in ("register_message_forward_pre_hook", "register_propagate_forward_hook"):
        with pytest.raises(NotImplementedError, match=register):
            getattr(conv, register)(lambda *args: None)
    with pytest.raises(NotImplementedError, match="propagate"):
        conv.propagate(EDGE_INDEX, x=X)
    with pytest.raises(NotImplementedError, match="decomposed_layers=2"):
        conv.decomposed_layers = 2
    conv.decomposed_layers = 1
    # Explainer edge masks would be silently ignored: refused (node-feature masks need none).
    with pytest.raises(NotImplementedError, match="edge masks"):
        set_masks(model, torch.ones(EDGE_INDEX.shape[1]), EDGE_INDEX)
    conv.explain = False  # PyG's "do not explain this layer" is fine
    clear_masks(model)
    assert (conv.explain, model[2].explain) == (False, None)

    # to_hetero_with_bases weighs messages by a message hook: refused, not ignored.
    class OneLayer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = SAGEConv(8, 4)

        def forward(self, x, edge_index):
            return self.conv(x, edge_index)

    metadata = (["a", "b"], [("a", "to", "b"), ("b", "to", "a")])
    with pytest.raises(NotImplementedError, match="register_message_forward_hook"):
        pyg_nn.to_hetero_with_bases(OneLayer(), metadata, num_bases=2)


def test_conv_layers_compile():
    from fastgl.integrations.pyg import SAGEConv

    conv = SAGEConv(8, 6).double()
    compiled = torch.compile(conv, backend="aot_eager")
    torch.testing.assert_close(compiled(X, EDGE_INDEX), conv(X, EDGE_INDEX))
