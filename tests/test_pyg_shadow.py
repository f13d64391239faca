"""ShaDow's ego graphs (fastgl.sampling.ShaDowSampler) and the ShaDowKHopSampler drop-in for PyG:
each ego graph is the root's sampled k-hop neighborhood and every edge among it, in PyG's batch
layout, where PyG's own class needs torch-sparse."""

import doctest
import importlib.util

import pytest
import torch
from reference import random_edge_index

pytest.importorskip("torch_geometric")
import torch_geometric.loader
from torch_geometric.data import Batch, Data

from fastgl import CSCGraph
from fastgl.integrations.pyg import ShaDowKHopSampler
from fastgl.sampling import ShaDowSampler


def k_hop_in_neighborhood(edge_index: torch.Tensor, root: int, depth: int) -> set[int]:
    reached, frontier = {root}, {root}
    for _ in range(depth):
        frontier = {u for u, v in edge_index.t().tolist() if v in frontier and u not in reached}
        reached |= frontier
    return reached


def graph_data(num_edges: int = 90) -> Data:
    edge_index = random_edge_index(30, num_edges, seed=6)
    return Data(
        x=torch.randn(30, 3),
        y=torch.arange(30) * 10,
        node_id=torch.arange(30),
        edge_attr=torch.arange(num_edges).float(),
        edge_index=edge_index,
    )


def check_batch(batch, data: Data, roots: list[int], depth: int, exact: bool) -> None:
    assert isinstance(batch, Batch) and batch.ptr.numel() == len(roots) + 1
    assert torch.equal(
        batch.batch, torch.repeat_interleave(torch.arange(len(roots)), batch.ptr.diff())
    )
    assert batch.y.tolist() == [10 * r for r in roots]
    assert batch.node_id[batch.root_n_id].tolist() == roots
    assert torch.equal(batch.x, data.x[batch.node_id])
    for i, root in enumerate(roots):
        start, end = batch.ptr[i].item(), batch.ptr[i + 1].item()
        nodes = batch.node_id[start:end]
        assert torch.equal(nodes, nodes.unique()) and start <= batch.root_n_id[i] < end
        hood = k_hop_in_neighborhood(data.edge_index, root, depth)
        assert set(nodes.tolist()) == hood if exact else set(nodes.tolist()) <= hood
        # Every edge among the ego graph's nodes, once, with its attributes.
        mine = (batch.edge_index[1] >= start) & (batch.edge_index[1] < end)
        assert bool(
            ((batch.edge_index[0][mine] >= start) & (batch.edge_index[0][mine] < end)).all()
        )
        edges = batch.edge_attr[mine].long()
        inside = torch.isin(data.edge_index, nodes).all(0)
        assert sorted(edges.tolist()) == inside.nonzero().view(-1).tolist()
        ends = batch.node_id[batch.edge_index[:, mine]]
        assert torch.equal(ends, data.edge_index[:, edges])


def test_with_all_neighbors_each_ego_graph_is_the_exact_k_hop_neighborhood():
    data = graph_data()
    loader = ShaDowKHopSampler(data, depth=2, num_neighbors=-1, batch_size=7)
    for start, batch in zip(range(0, 30, 7), loader):
        check_batch(batch, data, list(range(start, min(start + 7, 30))), 2, exact=True)


def test_sampled_ego_graphs_lie_in_the_neighborhood_and_are_bounded():
    data = graph_data(300)
    torch.manual_seed(0)
    roots = torch.tensor([3, 3, 8, 29])
    loader = ShaDowKHopSampler(data, depth=2, num_neighbors=2, node_idx=roots, batch_size=4)
    batch = next(iter(loader))
    check_batch(batch, data, roots.tolist(), 2, exact=False)
    assert int(batch.ptr.diff().max()) <= 1 + 2 + 4
    egos = ShaDowSampler(CSCGraph.from_edge_index(data.edge_index, 30), 2, 2).sample(roots)
    assert egos.root_index.numel() == 4 and egos.ptr[1] - egos.ptr[0] > 1  # roots keep theirs


def test_no_roots_and_an_isolated_root():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), 3)
    none = ShaDowSampler(graph, 2, 2).sample(torch.empty(0, dtype=torch.long))
    assert none.ptr.tolist() == [0] and none.nodes.numel() == none.eid.numel() == 0
    alone = ShaDowSampler(graph, 2, -1).sample(torch.tensor([2, 0]))
    assert alone.nodes.tolist() == [2, 0, 1] and alone.root_index.tolist() == [0, 1]
    assert alone.edge_index.tolist() == [[2, 1], [1, 2]] and alone.edge_ptr.tolist() == [0, 0, 2]


def test_torch_manual_seed_repeats_and_a_mask_picks_the_roots():
    data = graph_data(300)
    mask = torch.zeros(30, dtype=torch.bool)
    mask[[4, 9]] = True
    loader = ShaDowKHopSampler(data, 3, 2, node_idx=mask, batch_size=2)
    torch.manual_seed(1)
    first = next(iter(loader))
    torch.manual_seed(1)
    again = next(iter(loader))
    assert torch.equal(first.node_id, again.node_id) and first.y.tolist() == [40, 90]


@pytest.mark.skipif(
    importlib.util.find_spec("torch_sparse") is not None,
    reason="torch-sparse is installed: PyG's own loader runs",
)
def test_pyg_own_shadow_sampler_needs_torch_sparse_here():
    with pytest.raises(ImportError, match="torch-sparse"):
        torch_geometric.loader.ShaDowKHopSampler(graph_data(), 2, 2)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda g: ShaDowSampler(g, 0, 2), ValueError, "ShaDowSampler: depth must be >= 1, got 0"),
        (lambda g: ShaDowSampler(g, 2, 0), ValueError, "num_neighbors must be -1 .all. or >= 1"),
        (lambda g: ShaDowSampler(g, 2.5, 2), TypeError, "ShaDowSampler: depth must be an int"),
        (
            lambda g: ShaDowKHopSampler(Data(x=torch.randn(3, 2)), 2, 2),
            ValueError,
            "ShaDowKHopSampler: data needs an edge_index",
        ),
        (
            lambda g: ShaDowSampler(g, 1, 2).sample(torch.tensor([7])),
            ValueError,
            "seed id 7 out of range for a graph of 3 nodes",
        ),
    ],
)
def test_bad_arguments_are_refused(make, error, match):
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]), 3)
    with pytest.raises(error, match=match):
        make(graph)


def test_docstring_examples_run():
    from fastgl.integrations.pyg import shadow

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        result = doctest.testmod(shadow)
    assert result.attempted > 0 and result.failed == 0
