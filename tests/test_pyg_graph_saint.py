"""fastgl.integrations.pyg's GraphSAINT loaders: PyG's signatures and batch layout (a Data per
subgraph, node and edge attributes sliced, node_norm and edge_norm), where PyG's own classes
cannot run."""

import doctest
import importlib.util

import pytest
import torch
from reference import attributed_pyg_data

pytest.importorskip("torch_geometric")
import torch_geometric.loader
from torch_geometric.data import Data

from fastgl import CSCGraph
from fastgl.integrations.pyg import (
    GraphSAINTEdgeSampler,
    GraphSAINTNodeSampler,
    GraphSAINTRandomWalkSampler,
)
from fastgl.sampling import SAINTNodeSampler, saint_normalization

NUM_NODES = 30


def graph_data() -> Data:
    return attributed_pyg_data(NUM_NODES, 120, seed=4)


LOADERS = {
    "node": lambda data, **kw: GraphSAINTNodeSampler(data, batch_size=8, **kw),
    "edge": lambda data, **kw: GraphSAINTEdgeSampler(data, batch_size=5, **kw),
    "walk": lambda data, **kw: GraphSAINTRandomWalkSampler(data, 4, walk_length=2, **kw),
}


@pytest.mark.skipif(
    importlib.util.find_spec("torch_sparse") is not None,
    reason="torch-sparse is installed: PyG's own loaders run",
)
@pytest.mark.parametrize(
    "make",
    [
        lambda data: torch_geometric.loader.GraphSAINTNodeSampler(data, 4),
        lambda data: torch_geometric.loader.GraphSAINTEdgeSampler(data, 4),
        lambda data: torch_geometric.loader.GraphSAINTRandomWalkSampler(data, 4, 2),
    ],
)
def test_pyg_own_loader_needs_torch_sparse_here(make):
    """The drop-ins are needed: PyG's classes refuse to run without torch-sparse."""
    with pytest.raises(ImportError, match="torch-sparse"):
        make(graph_data())


@pytest.mark.parametrize("mode", list(LOADERS))
def test_a_batch_is_pygs_data_of_an_induced_subgraph(mode):
    data = graph_data()
    loader = LOADERS[mode](data, num_steps=5, sample_coverage=10, log=False)
    assert len(loader) == 5
    batches = list(loader)
    assert len(batches) == 5
    for batch in batches:
        assert isinstance(batch, Data)
        keys = {"x", "y", "node_id", "edge_id", "edge_attr", "edge_index", "title"}
        assert set(batch.keys()) == keys | {"num_nodes", "node_norm", "edge_norm"}
        nodes, edges = batch.node_id, batch.edge_id
        assert batch.num_nodes == nodes.numel() == nodes.unique().numel()
        assert torch.equal(batch.x, data.x[nodes]) and torch.equal(batch.y, data.y[nodes])
        assert torch.equal(batch.edge_attr, data.edge_attr[edges])
        assert batch.title == "a graph"
        # Every edge among the nodes, as local (source, target) pairs.
        inside = torch.isin(data.edge_index, nodes).all(0)
        assert sorted(edges.tolist()) == inside.nonzero().view(-1).tolist()
        assert torch.equal(nodes[batch.edge_index], data.edge_index[:, edges])
        assert torch.equal(batch.node_norm, loader.node_norm[nodes])
        assert torch.equal(batch.edge_norm, loader.edge_norm[edges])


def test_the_norms_are_fastgls_estimate_from_the_same_draws():
    data = graph_data()
    torch.manual_seed(3)
    loader = GraphSAINTNodeSampler(data, batch_size=8, sample_coverage=10, log=False)
    sampler = SAINTNodeSampler(CSCGraph.from_edge_index(data.edge_index, NUM_NODES), 8)
    norm = saint_normalization(sampler, 10, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(3)
    expected = saint_normalization(sampler, 10)
    assert torch.equal(loader.node_norm, expected.node_norm)
    assert torch.equal(loader.edge_norm, expected.edge_norm)
    assert not torch.equal(loader.node_norm, norm.node_norm)  # another seed, other counts


def test_without_coverage_no_norms_and_torch_manual_seed_repeats_an_epoch():
    data = graph_data()
    loader = GraphSAINTRandomWalkSampler(data, 3, walk_length=3, num_steps=4)
    assert not hasattr(loader, "node_norm")
    torch.manual_seed(0)
    first = [batch.node_id for batch in loader]
    torch.manual_seed(0)
    again = [batch.node_id for batch in loader]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert all("node_norm" not in batch for batch in loader)


def test_norms_are_saved_and_loaded(tmp_path):
    data = graph_data()
    first = GraphSAINTRandomWalkSampler(
        data, 4, walk_length=2, sample_coverage=5, save_dir=str(tmp_path), log=False
    )
    path = tmp_path / "graphsaintrandomwalksampler_2_5.pt"
    assert path.exists()
    node_norm, edge_norm = torch.load(path)
    assert torch.equal(node_norm, first.node_norm) and torch.equal(edge_norm, first.edge_norm)
    torch.save((node_norm * 0 + 7, edge_norm), path)  # a second loader reads the file
    second = GraphSAINTRandomWalkSampler(
        data, 4, walk_length=2, sample_coverage=5, save_dir=str(tmp_path), log=False
    )
    assert torch.equal(second.node_norm, torch.full_like(node_norm, 7))


def test_workers_draw_batches_too():
    loader = GraphSAINTNodeSampler(graph_data(), batch_size=8, num_steps=4, num_workers=2)
    assert sum(batch.num_nodes > 0 for batch in loader) == 4


@pytest.mark.parametrize(
    "data, match",
    [
        (Data(x=torch.randn(3, 2)), "GraphSAINTNodeSampler: data has no edge_index"),
        (
            Data(edge_index=torch.tensor([[0], [1]]), node_norm=torch.ones(2)),
            "already has a 'node_norm' attribute",
        ),
    ],
)
def test_bad_data_is_refused(data, match):
    with pytest.raises(ValueError, match=match):
        GraphSAINTNodeSampler(data, batch_size=2)


def test_an_edgeless_graph_has_no_edges_to_draw():
    data = Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=4)
    with pytest.raises(ValueError, match="GraphSAINTEdgeSampler: the graph has no edges"):
        GraphSAINTEdgeSampler(data, batch_size=2)
    batch = next(iter(GraphSAINTNodeSampler(data, batch_size=2)))
    assert batch.edge_index.shape == (2, 0) and 1 <= batch.num_nodes <= 2


def test_docstring_examples_run():
    """fastgl's doctest run walks fastgl/ only: run the drop-in module's."""
    from fastgl.integrations.pyg import graph_saint

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        result = doctest.testmod(graph_saint, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
