"""Temporal sampling in the PyG drop-in: PyG 2.8's ``NeighborLoader(time_attr=...)`` and
``LinkNeighborLoader(edge_label_time=...)`` semantics on ``Data``, ``HeteroData`` and stores, one
named case per behavior.

PyG's semantics (its loader docs and pyg-lib's sampler): every seed grows its own tree (always
disjoint, PyG's ``batch`` vector) and has a time, its ``input_time`` or else its own node time;
a tree takes only neighbors whose node time (node-level ``time_attr``) or edge time (edge-level)
is no later than its seed's time (``HeteroData``: types without the attribute are not
constrained); ``'uniform'`` draws among those, ``'last'`` takes the latest. PyG's own sampler
cannot run here, so every batch is checked against these rules on the data.
"""

import pytest
import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.testing import MyFeatureStore, MyGraphStore

from fastgl.integrations.pyg import LinkNeighborLoader, NeighborLoader, NeighborSampler

NUM_NODES, NUM_EDGES = 40, 300


def temporal_data(seed=0):
    generator = torch.Generator().manual_seed(seed)
    return Data(
        x=torch.randn(NUM_NODES, 4, generator=generator),
        edge_index=torch.randint(0, NUM_NODES, (2, NUM_EDGES), generator=generator),
        node_t=torch.randint(0, 10, (NUM_NODES,), generator=generator),
        edge_t=torch.randint(0, 10, (NUM_EDGES,), generator=generator),
    )


def valid_in_edges(data, node, seed_time, time_attr):
    """Ids of the in-edges of ``node`` a tree with ``seed_time`` may take."""
    edges = (data.edge_index[1] == node).nonzero().flatten()
    times = data[time_attr][data.edge_index[0, edges]] if time_attr == "node_t" else None
    if time_attr == "edge_t":
        times = data.edge_t[edges]
    return edges[times <= seed_time], times[times <= seed_time]


def check_temporal_batch(data, batch, fanouts, time_attr, seed_time, strategy="uniform"):
    """PyG's temporal layout and rules: edges real and within one tree, every tree's edges
    respect its seed's time, per hop every node takes min(fanout, valid) in-edges ('last': the
    latest ones, ties to the later edge)."""
    n_id, (row, col) = batch.n_id, batch.edge_index
    assert torch.equal(batch.batch[: batch.batch_size], torch.arange(batch.batch_size))
    assert torch.equal(data.edge_index[:, batch.e_id], n_id[batch.edge_index])
    assert torch.equal(batch.batch[row], batch.batch[col])  # within one tree
    tree_time = seed_time[batch.batch[col]]
    if time_attr == "node_t":
        assert bool((data.node_t[n_id[row]] <= tree_time).all())  # no future leak
    else:
        assert bool((data.edge_t[batch.e_id] <= tree_time).all())
    node_end = edge_end = 0
    for hop, fanout in enumerate(fanouts):
        node_start, node_end = node_end, node_end + batch.num_sampled_nodes[hop]
        edge_start, edge_end = edge_end, edge_end + batch.num_sampled_edges[hop]
        for target in range(node_start, node_end):
            drawn = batch.e_id[edge_start:edge_end][col[edge_start:edge_end] == target]
            time = seed_time[batch.batch[target]]
            valid, times = valid_in_edges(data, n_id[target], time, time_attr)
            assert drawn.numel() == (valid.numel() if fanout < 0 else min(fanout, valid.numel()))
            assert set(drawn.tolist()) <= set(valid.tolist())
            if strategy == "last" and fanout >= 0:
                order = sorted(zip(times.tolist(), valid.tolist()))  # by time, then edge id
                assert sorted(drawn.tolist()) == sorted(e for _, e in order[-fanout:])


@pytest.mark.parametrize("time_attr", ["node_t", "edge_t"])
@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_no_future_leak_and_fanouts_on_every_batch(time_attr, strategy):
    data = temporal_data()
    seeds = torch.arange(0, NUM_NODES, 3)
    input_time = torch.randint(0, 10, (seeds.numel(),), generator=torch.Generator().manual_seed(1))
    loader = NeighborLoader(
        data,
        [3, 2],
        input_nodes=seeds,
        input_time=input_time,
        time_attr=time_attr,
        temporal_strategy=strategy,
        batch_size=4,
    )
    assert loader.node_sampler.disjoint  # temporal implies disjoint
    for batch in loader:
        assert torch.equal(batch.seed_time, input_time[batch.input_id])
        check_temporal_batch(data, batch, [3, 2], time_attr, batch.seed_time, strategy)


def test_last_takes_the_latest_valid_neighbors():
    # Node 0's in-edges come from nodes 1..6 at times 1..6; as of time 4 the latest two are 3, 4.
    edge_index = torch.tensor([[1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 0, 0]])
    data = Data(edge_index=edge_index, t=torch.tensor([0, 1, 2, 3, 4, 5, 6]), num_nodes=7)
    loader = NeighborLoader(
        data,
        [2],
        input_nodes=torch.tensor([0]),
        input_time=torch.tensor([4]),
        time_attr="t",
        temporal_strategy="last",
    )
    batch = next(iter(loader))
    assert sorted(batch.n_id[1:].tolist()) == [3, 4]


def test_seed_time_defaults_to_the_seeds_node_time():
    data = temporal_data()
    loader = NeighborLoader(data, [-1, -1], time_attr="node_t", batch_size=8)
    for batch in loader:
        assert "seed_time" not in batch  # PyG: no input_time, no seed_time
        seed_time = data.node_t[batch.n_id[: batch.batch_size]]
        check_temporal_batch(data, batch, [-1, -1], "node_t", seed_time)


def test_input_time_overrides_the_node_time():
    data = temporal_data()
    seeds = torch.arange(NUM_NODES)
    late = NeighborLoader(data, [-1], input_nodes=seeds, input_time=torch.full((NUM_NODES,), 99),
                          time_attr="node_t", batch_size=NUM_NODES)  # fmt: skip
    batch = next(iter(late))  # every in-edge is valid as of time 99
    assert batch.e_id.numel() == NUM_EDGES
    early = NeighborLoader(data, [-1], input_nodes=seeds, input_time=torch.full((NUM_NODES,), -1),
                           time_attr="node_t", batch_size=NUM_NODES)  # fmt: skip
    assert next(iter(early)).e_id.numel() == 0


def test_time_attr_is_node_or_edge_level_as_pyg_decides():
    data = temporal_data()
    assert NeighborSampler(data, [2], time_attr="node_t").node_time is data.node_t
    sampler = NeighborSampler(data, [2], time_attr="edge_t")
    assert sampler.edge_time is data.edge_t and sampler.node_time is None
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        NeighborSampler(data, [2], time_attr="missing")


def test_edge_level_time_needs_input_time():
    loader = NeighborLoader(temporal_data(), [2], time_attr="edge_t", batch_size=4)
    with pytest.raises(ValueError, match="seed_time is required with edge_time"):
        next(iter(loader))


def test_bidirectional_temporal_batches_keep_trees_and_times():
    data = temporal_data()
    loader = NeighborLoader(data, [3, 3], time_attr="node_t", batch_size=6,
                            subgraph_type="bidirectional")  # fmt: skip
    for batch in loader:
        row, col = batch.edge_index
        assert torch.equal(batch.batch[row], batch.batch[col])
        seed_time = data.node_t[batch.n_id[: batch.batch_size]]
        assert bool((data.node_t[batch.n_id] <= seed_time[batch.batch]).all())


def test_temporal_with_induced_subgraph_is_rejected_as_in_pyg():
    # PyG: temporal sampling is disjoint, and disjoint induced subgraphs are refused.
    with pytest.raises(ValueError, match="temporal sampling .* cannot be combined"):
        NeighborLoader(temporal_data(), [2], time_attr="node_t", subgraph_type="induced")


def test_backward_temporal_samples_out_neighbors_in_time():
    data = temporal_data()
    sampler = NeighborSampler(data, [-1], time_attr="node_t", sample_direction="backward")
    loader = NeighborLoader(data, [-1], time_attr="node_t", batch_size=8, neighbor_sampler=sampler)
    for batch in loader:
        seed_time = data.node_t[batch.n_id[: batch.batch_size]]
        source, target = batch.n_id[batch.edge_index]
        assert torch.equal(data.edge_index[:, batch.e_id], torch.stack([source, target]))
        assert bool((batch.edge_index[0] < batch.batch_size).all())  # edges leave the seeds
        assert bool((data.node_t[target] <= seed_time[batch.batch[batch.edge_index[1]]]).all())
        for seed in range(batch.batch_size):
            out = (data.edge_index[0] == batch.n_id[seed]).nonzero().flatten()
            valid = out[data.node_t[data.edge_index[1, out]] <= seed_time[seed]]
            assert sorted(batch.e_id[batch.edge_index[0] == seed].tolist()) == valid.tolist()


# LinkNeighborLoader ##############################################################################


def label_edges(data, num=40, seed=2):
    generator = torch.Generator().manual_seed(seed)
    index = torch.randint(0, NUM_NODES, (2, num), generator=generator)
    # The endpoints exist by the label time, as PyG's tests and docs set it up.
    time = torch.maximum(data.node_t[index[0]], data.node_t[index[1]])
    return index, time + torch.randint(0, 3, (num,), generator=generator)


@pytest.mark.parametrize("neg_sampling", [None, "binary", "triplet"])
def test_link_loader_trees_respect_the_edge_label_time(neg_sampling):
    data = temporal_data()
    index, label_time = label_edges(data)
    torch.manual_seed(0)
    loader = LinkNeighborLoader(
        data,
        [-1, 2],
        edge_label_index=index,
        edge_label_time=label_time,
        time_attr="node_t",
        neg_sampling=neg_sampling,
        batch_size=8,
        shuffle=True,
    )
    for batch in loader:
        seed_time = label_time[batch.input_id]
        num_pos = batch.input_id.numel()
        # Every node of tree i (the seed edge's endpoints and negatives) exists by its time.
        assert bool((data.node_t[batch.n_id] <= seed_time[batch.batch]).all())
        row, col = batch.edge_index
        assert torch.equal(batch.batch[row], batch.batch[col])
        if neg_sampling == "triplet":
            assert torch.equal(batch.n_id[batch.src_index], index[0, batch.input_id])
            assert torch.equal(batch.n_id[batch.dst_pos_index], index[1, batch.input_id])
            assert torch.equal(batch.src_index, torch.arange(num_pos))  # seeds first
        else:
            assert torch.equal(batch.edge_label_time[:num_pos], seed_time)
            pos = batch.edge_label_index[:, :num_pos]
            assert torch.equal(batch.n_id[pos], index[:, batch.input_id])


def test_link_loader_time_attr_without_edge_label_time_raises_pyg_error():
    data = temporal_data()
    with pytest.raises(ValueError, match="'edge_label_time' is not set while 'time_attr' is set"):
        LinkNeighborLoader(data, [2], edge_label_index=data.edge_index, time_attr="node_t")
    with pytest.raises(ValueError, match="'input_time' is set while 'time_attr' is not set"):
        NeighborLoader(data, [2], input_time=torch.zeros(NUM_NODES))


# (FeatureStore, GraphStore) input ################################################################


@pytest.mark.parametrize("time_attr", ["time", "edge_time"])
def test_store_input_samples_like_data_input(time_attr):
    # PyG's rule for homogeneous stores: a tensor named 'time' is node-level, others edge-level.
    data = temporal_data()
    time = data.node_t if time_attr == "time" else data.edge_t
    feature_store, graph_store = MyFeatureStore(), MyGraphStore()
    feature_store.put_tensor(data.x, group_name=None, attr_name="x", index=None)
    feature_store.put_tensor(time, group_name=None, attr_name=time_attr, index=None)
    edges = (data.edge_index[0], data.edge_index[1])
    graph_store.put_edge_index(edges, edge_type=None, layout="coo", size=(NUM_NODES, NUM_NODES))
    reference = Data(x=data.x, edge_index=data.edge_index)
    reference[time_attr] = time
    seeds = torch.arange(0, NUM_NODES, 2)
    input_time = torch.randint(3, 10, (seeds.numel(),), generator=torch.Generator().manual_seed(3))
    got = {}
    for name, graph in (("data", reference), ("store", (feature_store, graph_store))):
        torch.manual_seed(0)
        loader = NeighborLoader(graph, [3, 2], input_nodes=seeds, input_time=input_time,
                                time_attr=time_attr, batch_size=5)  # fmt: skip
        got[name] = list(loader)
    for a, b in zip(got["data"], got["store"], strict=True):
        for key in ("n_id", "e_id", "edge_index", "batch", "x"):
            assert torch.equal(a[key], b[key]), key
        check_data = Data(edge_index=data.edge_index, node_t=data.node_t, edge_t=data.edge_t)
        fanouts = [3, 2]
        check_temporal_batch(check_data, b, fanouts, "node_t" if time_attr == "time" else "edge_t",
                             b.seed_time)  # fmt: skip


# HeteroData ######################################################################################

HNUM = {"paper": 30, "author": 20, "venue": 5}
WRITES, CITES = ("author", "writes", "paper"), ("paper", "cites", "paper")
IN, HAS = ("venue", "has", "paper"), ("paper", "rev_writes", "author")


def temporal_hetero_data(seed=0):
    """Papers and authors have times, venues none (PyG: their nodes are never constrained);
    every edge type has edge times but 'has'."""
    generator = torch.Generator().manual_seed(seed)
    data = HeteroData()
    for ntype, n in HNUM.items():
        data[ntype].x = torch.randn(n, 3, generator=generator)
    data["paper"].t = torch.randint(0, 10, (HNUM["paper"],), generator=generator)
    data["author"].t = torch.randint(0, 10, (HNUM["author"],), generator=generator)
    for etype, count in ((WRITES, 120), (CITES, 100), (IN, 30), (HAS, 120)):
        src, _, dst = etype
        data[etype].edge_index = torch.stack(
            [
                torch.randint(0, HNUM[src], (count,), generator=generator),
                torch.randint(0, HNUM[dst], (count,), generator=generator),
            ]
        )
        if etype != IN:
            data[etype].et = torch.randint(0, 10, (count,), generator=generator)
    return data


def check_hetero_temporal_batch(data, batch, fanouts, time_attr, tree_time, strategy="uniform"):
    """Per edge type: edges real and within one tree, a timed edge (node-level: from a timed
    source type) never later than its tree's time, and per hop every node drew
    min(fanout, valid in-edges) along the type ('last': the latest ones, ties to the later
    edge)."""
    node_ends = {
        t: [0] + torch.tensor(batch[t].num_sampled_nodes).cumsum(0).tolist()
        for t in data.node_types
    }
    for etype in data.edge_types:
        src, _, dst = etype
        store, (row, col) = batch[etype], batch[etype].edge_index
        edges = data[etype].edge_index
        assert torch.equal(edges[:, store.e_id], torch.stack([batch[src].n_id[row],
                                                              batch[dst].n_id[col]]))  # fmt: skip
        assert torch.equal(batch[src].batch[row], batch[dst].batch[col])
        if time_attr in data[src] and time_attr == "t":
            times = data[src].t[edges[0]]
        elif time_attr in data[etype]:
            times = data[etype][time_attr]
        else:
            times = None  # untimed: every in-edge is valid
        edge_end = 0
        for hop, fanout in enumerate(fanouts):
            edge_start, edge_end = edge_end, edge_end + store.num_sampled_edges[hop]
            for target in range(node_ends[dst][hop], node_ends[dst][hop + 1]):
                drawn = store.e_id[edge_start:edge_end][col[edge_start:edge_end] == target]
                valid = (edges[1] == batch[dst].n_id[target]).nonzero().flatten()
                if times is not None:
                    valid = valid[times[valid] <= tree_time[batch[dst].batch[target]]]
                expected = valid.numel() if fanout < 0 else min(fanout, valid.numel())
                assert drawn.numel() == expected, (etype, hop)
                assert set(drawn.tolist()) <= set(valid.tolist())
                if strategy == "last" and times is not None and fanout >= 0:
                    latest = sorted(zip(times[valid].tolist(), valid.tolist()))[-fanout:]
                    assert sorted(drawn.tolist()) == sorted(e for _, e in latest)


@pytest.mark.parametrize("time_attr", ["t", "et"])
@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_hetero_no_future_leak_per_edge_type(time_attr, strategy):
    data = temporal_hetero_data()
    seeds = torch.arange(0, HNUM["paper"], 2)
    input_time = torch.randint(2, 10, (seeds.numel(),), generator=torch.Generator().manual_seed(1))
    loader = NeighborLoader(data, [2, 2], input_nodes=("paper", seeds), input_time=input_time,
                            time_attr=time_attr, temporal_strategy=strategy,
                            batch_size=5)  # fmt: skip
    assert loader.node_sampler.disjoint
    for batch in loader:
        assert torch.equal(batch["paper"].seed_time, input_time[batch["paper"].input_id])
        assert torch.equal(batch["paper"].batch[:5], torch.arange(5))
        check_hetero_temporal_batch(data, batch, [2, 2], time_attr, batch["paper"].seed_time,
                                    strategy)  # fmt: skip


def test_hetero_seed_time_defaults_to_the_seeds_node_time():
    data = temporal_hetero_data()
    loader = NeighborLoader(data, [-1, -1], input_nodes="paper", time_attr="t", batch_size=10)
    for batch in loader:
        tree_time = data["paper"].t[batch["paper"].n_id[: batch["paper"].batch_size]]
        check_hetero_temporal_batch(data, batch, [-1, -1], "t", tree_time)


def test_hetero_time_attr_must_be_one_level():
    data = temporal_hetero_data()
    data[WRITES].t = torch.zeros(120, dtype=torch.long)
    with pytest.raises(ValueError, match="holds both node-level and edge-level"):
        NeighborLoader(data, [2], input_nodes="paper", time_attr="t")
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        NeighborLoader(data, [2], input_nodes="paper", time_attr="missing")


@pytest.mark.parametrize("neg_sampling", [None, "binary", "triplet"])
def test_hetero_link_loader_trees_respect_the_edge_label_time(neg_sampling):
    data = temporal_hetero_data()
    index = data[WRITES].edge_index[:, :30]
    label_time = torch.maximum(data["author"].t[index[0]], data["paper"].t[index[1]])
    torch.manual_seed(0)
    loader = LinkNeighborLoader(data, [2, 2], edge_label_index=(WRITES, index),
                                edge_label_time=label_time + 1, time_attr="t",
                                neg_sampling=neg_sampling, batch_size=6)  # fmt: skip
    for batch in loader:
        seed_time = label_time[batch[WRITES].input_id] + 1
        for ntype in ("paper", "author"):  # every timed node of tree i exists by its time
            times = data[ntype].t[batch[ntype].n_id]
            assert bool((times <= seed_time[batch[ntype].batch]).all()), ntype
        for etype in data.edge_types:
            src, _, dst = etype
            row, col = batch[etype].edge_index
            assert torch.equal(batch[src].batch[row], batch[dst].batch[col])


@pytest.mark.parametrize("time_attr", ["t", "et"])
def test_hetero_store_input_samples_like_hetero_data_input(time_attr):
    data = temporal_hetero_data()
    feature_store, graph_store = MyFeatureStore(), MyGraphStore()
    for ntype in data.node_types:
        feature_store.put_tensor(data[ntype].x, group_name=ntype, attr_name="x", index=None)
    for store in data.node_stores if time_attr == "t" else data.edge_stores:
        if time_attr in store:
            group = store._key
            feature_store.put_tensor(store[time_attr], group_name=group, attr_name=time_attr,
                                     index=None)  # fmt: skip
    for etype in data.edge_types:
        edges = (data[etype].edge_index[0], data[etype].edge_index[1])
        size = (HNUM[etype[0]], HNUM[etype[2]])
        graph_store.put_edge_index(edges, edge_type=etype, layout="coo", size=size)
    seeds, input_time = torch.arange(HNUM["paper"]), torch.randint(3, 10, (HNUM["paper"],))
    got = {}
    for name, graph in (("data", data), ("store", (feature_store, graph_store))):
        torch.manual_seed(0)
        loader = NeighborLoader(graph, [2, 2], input_nodes=("paper", seeds), input_time=input_time,
                                time_attr=time_attr, batch_size=10)  # fmt: skip
        got[name] = list(loader)
    for a, b in zip(got["data"], got["store"], strict=True):
        for ntype in data.node_types:
            assert torch.equal(a[ntype].n_id, b[ntype].n_id) and torch.equal(
                a[ntype].batch, b[ntype].batch
            )
        for etype in data.edge_types:
            assert torch.equal(a[etype].e_id, b[etype].e_id)
        check_hetero_temporal_batch(data, b, [2, 2], time_attr, b["paper"].seed_time)


def test_hetero_backward_temporal_samples_out_neighbors_in_time():
    data = temporal_hetero_data()
    sampler = NeighborSampler(data, [-1], time_attr="t", sample_direction="backward")
    loader = NeighborLoader(data, [-1], input_nodes="paper", time_attr="t", batch_size=10,
                            neighbor_sampler=sampler)  # fmt: skip
    for batch in loader:
        seed_time = data["paper"].t[batch["paper"].n_id[:10]]
        row, col = batch[HAS].edge_index  # paper -> author, leaving the seed papers
        assert bool((row < 10).all())
        for seed in range(10):
            out = (data[HAS].edge_index[0] == batch["paper"].n_id[seed]).nonzero().flatten()
            valid = out[data["author"].t[data[HAS].edge_index[1, out]] <= seed_time[seed]]
            assert sorted(batch[HAS].e_id[row == seed].tolist()) == valid.tolist()
