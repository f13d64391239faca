"""PyG-compatibility cases of the PyG drop-in's loaders, one per behavior PyG's own loader tests
(test/loader/test_{neighbor,link_neighbor}_loader.py of PyG 2.8) exercise: graphs without
edges, PyG's remote-backend input ``(FeatureStore, GraphStore)``, argument handling.

Where PyG's sampler cannot run here (no pyg-lib / torch-sparse), the reference is the drop-in's
own output on the equivalent ``Data``, which tests/test_pyg_integration.py checks against PyG's
layout rules.
"""

import doctest

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.distributed import LocalFeatureStore, LocalGraphStore
from torch_geometric.testing import MyFeatureStore, MyGraphStore
from torch_geometric.utils import to_torch_csr_tensor

import fastgl.integrations.pyg.loader
import fastgl.integrations.pyg.sampler
from fastgl.integrations.pyg import LinkNeighborLoader, NeighborLoader, NeighborSampler

NUM_NODES = 60


def random_edge_index(num_nodes=NUM_NODES, num_edges=400, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, num_nodes, (2, num_edges), generator=generator)


def stored(edge_index, layout):
    """``edge_index`` in the edge order of ``layout`` (stable), and the pair a graph store
    holds for it: ``(row, col)``, ``(rowptr, col)`` or ``(row, colptr)``."""
    row, col = edge_index
    if layout == "coo":
        return edge_index, (row, col)
    key = row if layout == "csr" else col
    order = torch.sort(key, stable=True).indices
    edge_index = edge_index[:, order]
    row, col = edge_index
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(key, minlength=NUM_NODES)])
    ptr = ptr.cumsum(0)
    return edge_index, ((ptr, col) if layout == "csr" else (row, ptr))


def stores(x, y, edges, layout, size=(NUM_NODES, NUM_NODES)):
    feature_store, graph_store = MyFeatureStore(), MyGraphStore()
    feature_store.put_tensor(x, group_name=None, attr_name="x", index=None)
    feature_store.put_tensor(y, group_name=None, attr_name="y", index=None)
    graph_store.put_edge_index(edges, edge_type=None, layout=layout, size=size)
    return feature_store, graph_store


def node_features(seed=1):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(NUM_NODES, 5, generator=generator)
    return x, torch.randint(0, 3, (NUM_NODES,), generator=generator)


def batches(make_loader, seed=0):
    torch.manual_seed(seed)
    return list(make_loader())


def assert_same_batches(expected, actual, keys):
    assert len(expected) == len(actual) > 0
    for a, b in zip(expected, actual):
        a, b = a.to_dict(), b.to_dict()
        for key in keys:
            assert (key in a) == (key in b), key
            if torch.is_tensor(a.get(key)):
                assert torch.equal(a[key], b[key]), key
            else:
                assert a.get(key) == b.get(key), key


# Graphs without edges ############################################################################


@pytest.mark.parametrize("edges", ["absent", "empty"])
def test_edgeless_graph_samples_seeds_only(edges):
    x = torch.randn(10, 3)
    data = Data(x=x, num_nodes=10)
    if edges == "empty":
        data.edge_index = torch.empty(2, 0, dtype=torch.long)
    seeds = torch.tensor([7, 2, 5, 9, 0])
    loader = NeighborLoader(data, [3, 2], input_nodes=seeds, batch_size=2)
    got = []
    for batch in loader:
        assert torch.equal(batch.n_id, seeds[batch.input_id])
        assert torch.equal(batch.x, x[batch.n_id])
        assert batch.num_sampled_nodes == [batch.batch_size, 0, 0]
        assert batch.num_sampled_edges == [0, 0]
        assert batch.e_id.numel() == 0
        if edges == "empty":
            assert batch.edge_index.shape == (2, 0)
        else:  # PyG's filter keeps only the edge attributes the data has
            assert "edge_index" not in batch
        got.append(batch.n_id)
    assert torch.equal(torch.cat(got), seeds)


@pytest.mark.parametrize("neg_sampling", [None, "binary", "triplet"])
def test_edgeless_link_loader_gives_the_label_nodes_only(neg_sampling):
    label_index = random_edge_index(100, 100)
    loader = LinkNeighborLoader(
        Data(num_nodes=100),
        num_neighbors=[],
        batch_size=20,
        edge_label_index=label_index,
        neg_sampling=neg_sampling,
    )
    for batch in loader:
        assert batch.input_id.numel() == 20 and batch.e_id.numel() == 0
        if neg_sampling == "triplet":
            nodes = torch.cat([batch.src_index, batch.dst_pos_index, batch.dst_neg_index])
        else:
            nodes = batch.edge_label_index.flatten()
            assert batch.edge_label_index.size(1) == (40 if neg_sampling else 20)
        assert batch.num_nodes == nodes.unique().numel()
        assert torch.equal(batch.n_id.sort().values, batch.n_id[nodes].unique())


def test_edgeless_graph_with_hops_takes_every_neighbor_option():
    data = Data(num_nodes=4)
    for kwargs in (dict(replace=True), dict(disjoint=True), dict(subgraph_type="induced")):
        batch = next(iter(NeighborLoader(data, [-1, 2], batch_size=4, **kwargs)))
        assert torch.equal(batch.n_id, torch.arange(4)) and batch.e_id.numel() == 0, kwargs


def test_sparse_adjacency_without_edge_index_is_rejected_not_taken_as_edgeless():
    edge_index = random_edge_index()
    data = Data(num_nodes=NUM_NODES)
    data.adj_t = to_torch_csr_tensor(edge_index.flip(0), size=(NUM_NODES, NUM_NODES))
    with pytest.raises(ValueError, match="'adj_t' but no edge_index"):
        NeighborLoader(data, [2], batch_size=4)


def test_data_without_a_node_count_is_rejected():
    with pytest.raises(ValueError, match="number of nodes"):
        NeighborSampler(Data(), [2])


# (FeatureStore, GraphStore) input ################################################################


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
@pytest.mark.parametrize("subgraph_type", ["directional", "bidirectional", "induced"])
def test_feature_store_graph_store_input_matches_data_input(layout, subgraph_type):
    x, y = node_features()
    edge_index, edges = stored(random_edge_index(), layout)
    data = Data(x=x, y=y, edge_index=edge_index)
    remote = stores(x, y, edges, layout)
    seeds = torch.arange(0, NUM_NODES, 2)

    def loader(graph):
        return NeighborLoader(
            graph, [3, 2], input_nodes=seeds, batch_size=8, subgraph_type=subgraph_type
        )

    expected, actual = batches(lambda: loader(data)), batches(lambda: loader(remote))
    assert_same_batches(
        expected,
        actual,
        ["n_id", "e_id", "edge_index", "x", "y", "input_id", "batch_size", "num_sampled_nodes"],
    )
    for batch in actual:  # e_id: positions in the stored order, as PyG's
        original, sampled = edge_index[:, batch.e_id], batch.n_id[batch.edge_index]
        if subgraph_type == "bidirectional":  # a reversed edge keeps the id of its edge
            assert bool(((original == sampled).all(0) | (original.flip(0) == sampled).all(0)).all())
        else:
            assert torch.equal(original, sampled)


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_feature_store_graph_store_backward_direction_matches_data_input(layout):
    x, y = node_features()
    edge_index, edges = stored(random_edge_index(), layout)
    data = Data(x=x, y=y, edge_index=edge_index)

    def loader(graph):
        sampler = NeighborSampler(graph, [3, 2], sample_direction="backward")
        return NeighborLoader(graph, [3, 2], input_nodes=torch.arange(20), batch_size=10,
                              neighbor_sampler=sampler)  # fmt: skip

    expected = batches(lambda: loader(data))
    actual = batches(lambda: loader(stores(x, y, edges, layout)))
    assert_same_batches(expected, actual, ["n_id", "e_id", "edge_index", "x"])
    for batch in actual:  # the first hop's edges leave the seeds
        first_hop = batch.edge_index[0, : batch.num_sampled_edges[0]]
        assert bool((first_hop < batch.batch_size).all())


@pytest.mark.parametrize("neg_sampling", ["binary", "triplet"])
def test_feature_store_graph_store_link_loader_matches_data_input(neg_sampling):
    x, y = node_features()
    edge_index = random_edge_index()
    data = Data(x=x, y=y, edge_index=edge_index)
    remote = stores(x, y, (edge_index[0], edge_index[1]), "coo")
    label_index = edge_index[:, :40]

    def loader(graph, labels):
        return LinkNeighborLoader(
            graph, [3, 2], edge_label_index=labels, batch_size=10, neg_sampling=neg_sampling
        )

    expected = batches(lambda: loader(data, label_index))
    actual = batches(lambda: loader(remote, (None, label_index)))
    keys = ["n_id", "e_id", "edge_index", "x", "y", "input_id"]
    keys += ["edge_label_index", "edge_label"] if neg_sampling == "binary" else ["dst_neg_index"]
    assert_same_batches(expected, actual, keys)


def test_pyg_local_stores_are_sampled_like_their_data():
    x, y = node_features()
    edge_index = random_edge_index()
    graph_store = LocalGraphStore.from_data(
        edge_id=torch.arange(edge_index.size(1)), edge_index=edge_index, num_nodes=NUM_NODES
    )
    feature_store = LocalFeatureStore.from_data(node_id=torch.arange(NUM_NODES), x=x, y=y)
    (attr,) = graph_store.get_all_edge_attrs()
    stored_edges = torch.stack(list(graph_store.get_edge_index(attr)))  # sorted by the store
    loader = NeighborLoader(
        (feature_store, graph_store), [4, 3], input_nodes=torch.arange(NUM_NODES), batch_size=16
    )
    for batch in loader:
        assert torch.equal(batch.x, x[batch.n_id]) and torch.equal(batch.y, y[batch.n_id])
        assert torch.equal(stored_edges[:, batch.e_id], batch.n_id[batch.edge_index])
        assert sum(batch.num_sampled_edges) == batch.edge_index.size(1)


def test_graph_store_csc_is_built_once_and_cached():
    x, y = node_features()
    edge_index = random_edge_index()
    feature_store, graph_store = stores(x, y, (edge_index[0], edge_index[1]), "coo")
    first = NeighborSampler((feature_store, graph_store), [2])
    assert NeighborSampler((feature_store, graph_store), [5, 5]).graph is first.graph
    backward = NeighborSampler((feature_store, graph_store), [2], sample_direction="backward")
    assert backward.graph is not first.graph
    # The edges change in place: read anew, not served from the cache.
    edge_index[0].copy_(edge_index[0].flip(0))
    changed = NeighborSampler((feature_store, graph_store), [2])
    assert changed.graph is not first.graph
    assert torch.equal(changed.graph.indices, fastgl_csc(edge_index).indices)
    # Other tensors under the same key: read anew as well.
    new_edges = random_edge_index(seed=5)
    graph_store.put_edge_index(
        (new_edges[0], new_edges[1]), edge_type=None, layout="coo", size=(NUM_NODES, NUM_NODES)
    )
    replaced = NeighborSampler((feature_store, graph_store), [2])
    assert torch.equal(replaced.graph.indices, fastgl_csc(new_edges).indices)


def test_csc_graph_store_is_sampled_in_place_and_padded_to_its_size():
    x, y = node_features()
    edge_index = random_edge_index(num_nodes=50)
    order = torch.sort(edge_index[1], stable=True).indices
    row = edge_index[0, order]
    colptr = torch.cat(
        [torch.zeros(1, dtype=torch.long), torch.bincount(edge_index[1], minlength=50)]
    )
    colptr = colptr.cumsum(0)  # covers 50 nodes; the store's size says 60
    remote = stores(x, y, (row, colptr), "csc")
    graph = NeighborSampler(remote, [2]).graph
    assert graph.indices is row and graph.eid is None  # fastgl's layout already: no sort
    assert graph.num_nodes == NUM_NODES and torch.equal(graph.indptr[50:], colptr[-1].repeat(11))
    loader = NeighborLoader(remote, [-1], input_nodes=torch.tensor([3, 55]), batch_size=2)
    batch = next(iter(loader))
    in_degree = int(colptr[4] - colptr[3])
    assert batch.num_sampled_edges == [in_degree]
    assert torch.equal(edge_index[:, order][:, batch.e_id], batch.n_id[batch.edge_index])


def fastgl_csc(edge_index):
    return NeighborSampler(Data(edge_index=edge_index, num_nodes=NUM_NODES), [1]).graph


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_graph_store_without_size_counts_nodes_from_edges_and_features(layout):
    x, y = node_features()
    edge_index = random_edge_index(num_nodes=NUM_NODES - 10)  # the last 10 nodes are isolated
    _, edges = stored(edge_index, layout)
    remote = stores(x, y, edges, layout, size=None)
    sampler = NeighborSampler(remote, [2])
    assert sampler.num_nodes == sampler.graph.num_nodes == NUM_NODES
    batch = next(
        iter(NeighborLoader(remote, [2], input_nodes=torch.tensor([59, 58]), batch_size=2))
    )
    assert torch.equal(batch.n_id, torch.tensor([59, 58])) and torch.equal(batch.x, x[[59, 58]])


def test_graph_store_size_gives_the_node_count_as_in_pyg():
    x, y = node_features()
    edge_index = random_edge_index(num_nodes=20)
    remote = stores(x, y, (edge_index[0], edge_index[1]), "coo", size=(20, 20))
    assert NeighborSampler(remote, [2]).num_nodes == 20
    with pytest.raises(ValueError, match="seed id 30 out of range for a graph of 20 nodes"):
        next(iter(NeighborLoader(remote, [2], input_nodes=torch.tensor([30]))))


def test_graph_store_without_edges_samples_seeds_only():
    x, y = node_features()
    feature_store = MyFeatureStore()
    feature_store.put_tensor(x, group_name=None, attr_name="x", index=None)
    loader = NeighborLoader(
        (feature_store, MyGraphStore()), [3], input_nodes=torch.tensor([4, 1]), batch_size=2
    )
    batch = next(iter(loader))
    assert torch.equal(batch.n_id, torch.tensor([4, 1])) and batch.edge_index.shape == (2, 0)
    with pytest.raises(ValueError, match="cannot tell the number of nodes"):
        NeighborSampler((MyFeatureStore(), MyGraphStore()), [3])


def test_feature_store_graph_store_with_workers():
    x, y = node_features()
    edge_index = random_edge_index()
    remote = stores(x, y, (edge_index[0], edge_index[1]), "coo")
    loader = NeighborLoader(
        remote, [3, 2], input_nodes=torch.arange(NUM_NODES), batch_size=15, num_workers=2
    )
    seeds = []
    for batch in loader:
        assert torch.equal(batch.x, x[batch.n_id])
        assert torch.equal(edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
        seeds.append(batch.n_id[: batch.batch_size])
    assert torch.equal(torch.cat(seeds), torch.arange(NUM_NODES))


def test_unsupported_store_inputs_are_rejected_clearly():
    x, y = node_features()
    edge_index = random_edge_index()
    remote = stores(x, y, (edge_index[0], edge_index[1]), "coo")
    with pytest.raises(NotImplementedError, match="weight_attr is not supported for"):
        NeighborSampler(remote, [2], weight_attr="w")
    with pytest.raises(ValueError, match="one tensor named 'time'"):
        NeighborSampler(remote, [2], time_attr="time")
    feature_store, graph_store = remote
    graph_store.put_edge_index(
        (edge_index[0], edge_index[1]), edge_type=("a", "to", "a"), layout="coo", size=(60, 60)
    )
    with pytest.raises(ValueError, match="mixes edges without a type"):
        NeighborSampler((feature_store, graph_store), [2])
    with pytest.raises(ValueError, match="a torch_geometric Data, HeteroData or a"):
        NeighborSampler((graph_store, feature_store), [2])


# Argument handling ###############################################################################


def test_disjoint_with_induced_subgraph_is_rejected_as_in_pyg():
    # An induced subgraph over the trees' nodes would join trees that share a node.
    data = Data(edge_index=random_edge_index(), num_nodes=NUM_NODES)
    with pytest.raises(ValueError, match="disjoint=True cannot be combined"):
        NeighborLoader(data, [3, 3], batch_size=4, disjoint=True, subgraph_type="induced")
    with (
        pytest.raises(ValueError, match="disjoint=True cannot be combined"),
        pytest.warns(UserWarning, match="deprecated"),
    ):
        NeighborLoader(data, [3, 3], batch_size=4, disjoint=True, directed=False)


def test_directed_false_is_deprecated_and_samples_induced_subgraphs():
    data = Data(edge_index=random_edge_index(), num_nodes=NUM_NODES)
    with pytest.warns(UserWarning, match="subgraph_type='induced'"):
        loader = NeighborLoader(data, [3, 2], batch_size=8, directed=False)
    assert loader.node_sampler.subgraph_type.value == "induced"
    batch = next(iter(loader))
    nodes = set(batch.n_id.tolist())
    inside = [e for e in range(data.num_edges) if set(data.edge_index[:, e].tolist()) <= nodes]
    assert sorted(batch.e_id.tolist()) == inside


def test_docstring_examples_run():
    """fastgl's doctest run (tests/test_doctests.py) walks fastgl/ only: run the drop-in's."""
    for module in (fastgl.integrations.pyg.loader, fastgl.integrations.pyg.sampler):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            result = doctest.testmod(
                module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            )
        assert result.attempted > 0 and result.failed == 0, module.__name__
