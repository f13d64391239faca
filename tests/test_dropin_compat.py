"""The PyG drop-in's compatibility points, one named case each (the DGL ones are in
tests/with_dgl/test_dgl_dropin_compat.py).

Layers (``fastgl.nn``, and the PyG drop-in's MessagePassing subclasses of them) run beside
PyG's own class: the same state dict, float64, and outputs, parameter gradients and input
gradients must agree.
PyG's loaders cannot sample here (no pyg-lib), so a loader case checks PyG's documented batch
layout and semantics against the graph itself: seeds first, every batch edge an edge of the graph
with its ``e_id``, per-hop counts ``min(fanout, in-degree)``, times never after the seed's.
"""

import pytest
import torch
import torch_geometric.nn as pyg_nn
from pyg_layers import TOL, assert_same, layer_pair
from torch_geometric.data import Data, HeteroData
from torch_geometric.distributed import LocalFeatureStore, LocalGraphStore
from torch_geometric.testing import MyFeatureStore, MyGraphStore
from torch_geometric.utils import to_torch_coo_tensor

import fastgl.integrations.pyg as fpyg
import fastgl.nn as fnn

N, IN, OUT = 10, 5, 4
CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


def gen(seed):
    return torch.Generator().manual_seed(seed)


def edges(num_src=N, num_dst=N, num=36, seed=0, sort=False):
    """Random edges with duplicates and a self-loop; ``sort``: stably by destination."""
    ei = torch.stack(
        [
            torch.randint(0, num_src, (num,), generator=gen(seed)),
            torch.randint(0, num_dst, (num,), generator=gen(seed + 1)),
        ]
    )
    ei = torch.cat([ei, ei[:, :3], torch.tensor([[0], [0]])], 1)
    return ei[:, torch.sort(ei[1], stable=True).indices] if sort else ei


def feats(*shape, seed=2):
    return torch.randn(*shape, generator=gen(seed), dtype=torch.float64)


# Layers against PyG ##############################################################################


def same_as_pyg(make, forward, *inputs):
    """PyG's and fastgl's layer agree on ``forward(layer, *inputs)``: outputs, parameter and
    input gradients. Returns both outputs."""
    return assert_same(*layer_pair(make), forward, *inputs)


@case("GCNConv flow='target_to_source'")
def _():
    assert issubclass(fpyg.GCNConv, fnn.GCNConv)  # the drop-in's layer computes as fastgl.nn's
    ei, x = edges(), feats(N, IN)
    w = feats(ei.shape[1], seed=3).abs()
    make = lambda m: m.GCNConv(IN, OUT, flow="target_to_source")  # noqa: E731
    same_as_pyg(make, lambda m, x: m(x, ei), x)
    same_as_pyg(make, lambda m, x, w: m(x, ei, w), x, w)
    # Not the default flow's result: the edges are read the other way round.
    _, ours = layer_pair(make)
    assert not torch.allclose(ours(x, ei), layer_pair(lambda m: m.GCNConv(IN, OUT))[1](x, ei))


@case("GCNConv batched features [B, N, C]")
def _():
    ei, x = edges(), feats(3, N, IN)
    _, out = same_as_pyg(lambda m: m.GCNConv(IN, OUT), lambda m, x: m(x, ei), x)
    assert out.shape == (3, N, OUT)
    _, ours = layer_pair(lambda m: m.GCNConv(IN, OUT))
    torch.testing.assert_close(out[1], ours(x[1], ei), **TOL)


@case("GINConv batched features [B, N, C]")
def _():
    ei, x = edges(), feats(3, N, IN)
    make = lambda m: m.GINConv(torch.nn.Linear(IN, OUT), eps=0.3, train_eps=True)  # noqa: E731
    _, out = same_as_pyg(make, lambda m, x: m(x, ei), x)
    assert out.shape == (3, N, OUT)


@case("GCNConv sparse COO x")
def _():
    ei = edges()
    dense = feats(N, IN) * (feats(N, IN, seed=7) > 0.7)
    x = dense.to_sparse()
    assert x.layout == torch.sparse_coo
    _, out = same_as_pyg(lambda m: m.GCNConv(IN, OUT), lambda m: m(x, ei))
    _, ours = layer_pair(lambda m: m.GCNConv(IN, OUT))
    torch.testing.assert_close(out, ours(dense, ei), **TOL)


@case("SAGEConv aggr='lstm'")
def _():
    ei, x = edges(sort=True), feats(N, IN)  # PyG's LSTM wants destination-sorted edges
    _, out = same_as_pyg(lambda m: m.SAGEConv(IN, OUT, aggr="lstm"), lambda m, x: m(x, ei), x)
    assert out.shape == (N, OUT)
    sub = ei[:, ei[1] < 6]  # bipartite: 6 destinations
    same_as_pyg(
        lambda m: m.SAGEConv(IN, OUT, aggr="lstm"),
        lambda m, a, b: m((a, b), sub),
        x,
        feats(6, IN, seed=4),
    )


@case("SAGEConv aggr=MLPAggregation")
def _():
    def make(m):
        aggr = pyg_nn.MLPAggregation(IN, IN, max_num_elements=8, num_layers=2, hidden_channels=3)
        return m.SAGEConv(IN, OUT, aggr=aggr)

    ei, x = edges(sort=True), feats(N, IN)
    assert int(torch.bincount(ei[1]).max()) <= 8
    same_as_pyg(make, lambda m, x: m(x, ei), x)


@case("SAGEConv list of aggregations with aggr_kwargs")
def _():
    ei, x = edges(), feats(N, IN)
    configs = [  # fastgl's kernels in a projected MultiAggregation; PyG's members beside them
        (
            ["mean", "max", "sum"],
            dict(mode="proj", mode_kwargs=dict(in_channels=IN, out_channels=6)),
        ),
        (["min", "softmax", "std"], dict(mode="cat", aggrs_kwargs=[{}, dict(learn=True), {}])),
    ]
    for aggr, kwargs in configs:

        def make(m, aggr=aggr, kwargs=kwargs):
            return m.SAGEConv(IN, OUT, aggr=aggr, aggr_kwargs=dict(kwargs))

        _, out = same_as_pyg(make, lambda m, x: m(x, ei), x)
        assert out.shape == (N, OUT)
    assert "aggr_module.aggrs.1.t" in layer_pair(make)[1].state_dict()  # PyG's keys


@case("GATConv return_attention_weights=True with edge_index")
def _():
    ei, x = edges(), feats(N, IN)
    forward = lambda m, x: m(x, ei, return_attention_weights=True)  # noqa: E731
    ref_out, out = same_as_pyg(lambda m: m.GATConv(IN, OUT, heads=2), forward, x)
    # PyG's return type: (out, (edge_index with self-loops, alpha [E', heads])).
    (edge_index, alpha), (ref_edge_index, _) = out[1], ref_out[1]
    assert torch.equal(edge_index, ref_edge_index)
    assert alpha.shape == (edge_index.shape[1], 2)
    torch.testing.assert_close(  # softmax over each destination's in-edges
        torch.zeros(N, 2, dtype=alpha.dtype).index_add_(0, edge_index[1], alpha),
        torch.ones(N, 2, dtype=alpha.dtype),
    )


@case("GATConv return_attention_weights=True with a sparse adjacency")
def _():
    ei, x = edges(), feats(N, IN)
    adj_t = to_torch_coo_tensor(ei.flip(0), size=(N, N))
    forward = lambda m, x: m(x, adj_t, return_attention_weights=True)  # noqa: E731
    ref_out, out = same_as_pyg(lambda m: m.GATConv(IN, OUT, heads=2), forward, x)
    # PyG's return type: (out, (adj_t with self-loops, alpha [E', heads])), adj_t sparse of
    # the input's layout whose values are alpha.
    (adj, alpha), (ref_adj, ref_alpha) = out[1], ref_out[1]
    assert adj.layout == ref_adj.layout == torch.sparse_coo and adj.shape == ref_adj.shape
    torch.testing.assert_close(adj.to_dense(), ref_adj.to_dense(), **TOL)
    torch.testing.assert_close(alpha, ref_alpha, **TOL)
    torch.testing.assert_close(adj.coalesce().values(), ref_adj.coalesce().values(), **TOL)


@case("GATConv edge_dim with edge_attr")
def _():
    ei, x = edges(), feats(N, IN)
    edge_attr = feats(ei.shape[1], 3, seed=6)
    for fill_value in ("mean", 0.5):
        make = lambda m, f=fill_value: m.GATConv(IN, OUT, heads=2, edge_dim=3, fill_value=f)  # noqa: E731
        same_as_pyg(make, lambda m, x, e: m(x, ei, e, return_attention_weights=True), x, edge_attr)
    # The edge features change the result.
    _, ours = layer_pair(make)
    assert not torch.allclose(ours(x, ei, edge_attr), ours(x, ei, edge_attr * 2))


class GraphSAGE(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.conv1, self.conv2 = m.SAGEConv((-1, -1), 8), m.SAGEConv((-1, -1), 3)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


@case("to_hetero on fastgl layers")
def _():
    data = hetero_data()
    results = {}
    for m in (pyg_nn, fpyg):
        torch.manual_seed(0)
        model = pyg_nn.to_hetero(GraphSAGE(m), data.metadata(), aggr="sum")
        model(data.x_dict, data.edge_index_dict)  # initializes the lazy layers
        if m is fpyg:
            model.load_state_dict(results["pyg"][2])
        out = model(data.x_dict, data.edge_index_dict)
        out["paper"].sum().backward()
        grads = {k: p.grad for k, p in model.named_parameters()}
        results["pyg" if m is pyg_nn else "fastgl"] = out, grads, model.state_dict()
    (out, grads, _), (ref_out, ref_grads, _) = results["fastgl"], results["pyg"]
    assert out.keys() == ref_out.keys()
    for key in out:
        torch.testing.assert_close(out[key], ref_out[key])
    assert grads.keys() == ref_grads.keys()
    for key, g in grads.items():
        if ref_grads[key] is None:
            assert g is None or not g.any(), key
        else:
            torch.testing.assert_close(g, ref_grads[key], msg=key)


# Homogeneous loaders ##############################################################################


def check_batch(edge_index, batch, seeds, fanouts, x=None):
    """PyG's layout on ``edge_index``: seeds first (``seeds[input_id]``), ``n_id`` unique, every
    edge an edge of the graph with its ``e_id``, edges grouped by hop, and per hop each node new
    at the previous hop drew ``min(fanout, in-degree)`` in-edges."""
    n_id, (row, col) = batch.n_id, batch.edge_index
    assert torch.equal(n_id[: batch.batch_size], seeds[batch.input_id])
    assert n_id.unique().numel() == n_id.numel()
    assert torch.equal(edge_index[:, batch.e_id], n_id[batch.edge_index])
    assert batch.e_id.unique().numel() == batch.e_id.numel()
    assert sum(batch.num_sampled_nodes) == n_id.numel()
    assert sum(batch.num_sampled_edges) == row.numel()
    if x is not None:
        assert torch.equal(batch.x, x[n_id])
    degree = torch.bincount(edge_index[1], minlength=int(n_id.max()) + 1)
    node_ends = [0, *torch.tensor(batch.num_sampled_nodes).cumsum(0).tolist()]
    edge_end = 0
    for hop, fanout in enumerate(fanouts):
        edge_start, edge_end = edge_end, edge_end + batch.num_sampled_edges[hop]
        first, last = node_ends[hop], node_ends[hop + 1]
        targets = col[edge_start:edge_end]
        assert bool(((targets >= first) & (targets < last)).all())
        drawn = torch.bincount(targets - first, minlength=last - first)
        expected = degree[n_id[first:last]]
        assert torch.equal(drawn, expected if fanout < 0 else expected.clamp(max=fanout))


@case("NeighborLoader graph without edges")
def _():
    x = feats(8, 3)
    seeds = torch.tensor([6, 1, 4, 7, 0])
    for data in (Data(x=x), Data(x=x, edge_index=torch.empty(2, 0, dtype=torch.long))):
        loader = fpyg.NeighborLoader(data, [3, 2], input_nodes=seeds, batch_size=2)
        got = []
        for batch in loader:
            assert torch.equal(batch.n_id, seeds[batch.input_id])  # the seeds alone
            assert torch.equal(batch.x, x[batch.n_id])
            assert batch.num_sampled_nodes == [batch.batch_size, 0, 0]
            assert batch.num_sampled_edges == [0, 0] and batch.e_id.numel() == 0
            got.append(batch.n_id)
        assert torch.equal(torch.cat(got), seeds)


@case("LinkNeighborLoader graph without edges")
def _():
    label_index = torch.randint(0, 30, (2, 12), generator=gen(3))
    loader = fpyg.LinkNeighborLoader(
        Data(num_nodes=30), [2], edge_label_index=label_index, batch_size=4, neg_sampling="binary"
    )
    seen = []
    for batch in loader:
        assert batch.e_id.numel() == 0 and batch.num_sampled_edges == [0]
        pos = batch.edge_label_index[:, :4]
        assert torch.equal(batch.n_id[pos], label_index[:, batch.input_id])
        assert torch.equal(batch.edge_label, torch.tensor([1.0] * 4 + [0.0] * 4))
        # Only the label edges' endpoints (and the negatives') are in the batch.
        assert torch.equal(batch.edge_label_index.unique(), torch.arange(batch.num_nodes))
        seen.append(batch.input_id)
    assert torch.equal(torch.cat(seen), torch.arange(12))


@case("NeighborLoader (FeatureStore, GraphStore) homogeneous")
def _():
    ei, x = edges(num=60), feats(N, 3)
    y = torch.arange(N)
    # PyG's in-memory stores, COO and CSC.
    local = (
        LocalFeatureStore.from_data(node_id=torch.arange(N), x=x, y=y),
        LocalGraphStore.from_data(edge_id=torch.arange(ei.shape[1]), edge_index=ei, num_nodes=N),
    )
    (attr,) = local[1].get_all_edge_attrs()
    local_edges = torch.stack(list(local[1].get_edge_index(attr)))
    order = torch.sort(ei[1], stable=True).indices
    colptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(ei[1], minlength=N)])
    mine = MyFeatureStore(), MyGraphStore()
    mine[0].put_tensor(x, group_name=None, attr_name="x", index=None)
    mine[0].put_tensor(y, group_name=None, attr_name="y", index=None)
    mine[1].put_edge_index(
        (ei[0, order], colptr.cumsum(0)), edge_type=None, layout="csc", size=(N, N)
    )
    seeds = torch.tensor([3, 0, 8, 5])
    for stores, stored in ((local, local_edges), (mine, ei[:, order])):
        for batch in fpyg.NeighborLoader(stores, [3, 2], input_nodes=seeds, batch_size=2):
            # e_id: positions in the store's edge order.
            check_batch(stored, batch, seeds, [3, 2], x)
            assert torch.equal(batch.y, y[batch.n_id])


def hetero_data(seed=0, num=(40, 30, 20)):
    """paper <- author (writes), paper <- paper (cites), author <- paper (rev_writes)."""
    data = HeteroData()
    data["paper"].x = torch.randn(12, 4, generator=gen(seed))
    data["author"].x = torch.randn(8, 4, generator=gen(seed + 1))
    for (src, rel, dst), count in zip(hetero_types(), num):
        ns, nd = data[src].num_nodes, data[dst].num_nodes
        data[src, rel, dst].edge_index = torch.stack(
            [
                torch.randint(0, ns, (count,), generator=gen(seed + 2 + len(rel))),
                torch.randint(0, nd, (count,), generator=gen(seed + 3 + len(rel))),
            ]
        )
    return data


def hetero_types():
    return [("author", "writes", "paper"), ("paper", "cites", "paper"), REV]


REV = ("paper", "rev_writes", "author")


def check_hetero_batch(data, batch, fanouts, input_type, seeds):
    """PyG's layout per type: ``n_id`` (seeds first, unique), ``num_sampled_nodes``, per edge
    type ``edge_index`` / ``e_id`` real edges, ``num_sampled_edges`` grouped by hop with
    ``min(fanout, in-degree)`` draws per new node of the previous hop; ``input_id`` and
    ``batch_size`` on the input type."""
    store = batch[input_type]
    assert torch.equal(store.n_id[: store.batch_size], seeds[store.input_id])
    assert store.batch_size == store.input_id.numel()
    node_ends = {}
    for ntype in data.node_types:
        n_id = batch[ntype].n_id
        assert n_id.unique().numel() == n_id.numel()
        assert torch.equal(batch[ntype].x, data[ntype].x[n_id])
        assert sum(batch[ntype].num_sampled_nodes) == n_id.numel()
        node_ends[ntype] = [0, *torch.tensor(batch[ntype].num_sampled_nodes).cumsum(0).tolist()]
    for etype in data.edge_types:
        src, _, dst = etype
        (row, col), e_id = batch[etype].edge_index, batch[etype].e_id
        real = torch.stack([batch[src].n_id[row], batch[dst].n_id[col]])
        assert torch.equal(data[etype].edge_index[:, e_id], real)
        assert sum(batch[etype].num_sampled_edges) == row.numel()
        degree = torch.bincount(data[etype].edge_index[1], minlength=data[dst].num_nodes)
        edge_end = 0
        for hop, fanout in enumerate(fanouts[etype]):
            edge_start, edge_end = edge_end, edge_end + batch[etype].num_sampled_edges[hop]
            first, last = node_ends[dst][hop], node_ends[dst][hop + 1]
            targets = col[edge_start:edge_end]
            assert bool(((targets >= first) & (targets < last)).all()), (etype, hop)
            drawn = torch.bincount(targets - first, minlength=last - first)
            expected = degree[batch[dst].n_id[first:last]]
            expected = expected if fanout < 0 else expected.clamp(max=fanout)
            assert torch.equal(drawn, expected), (etype, hop)


@case("NeighborLoader (FeatureStore, GraphStore) heterogeneous")
def _():
    data = hetero_data()
    num_nodes = {t: data[t].num_nodes for t in data.node_types}
    ids = {e: torch.arange(data[e].num_edges) for e in data.edge_types}
    feature_store = LocalFeatureStore.from_hetero_data(
        node_id_dict={t: torch.arange(n) for t, n in num_nodes.items()}, x_dict=data.x_dict
    )
    graph_store = LocalGraphStore.from_hetero_data(ids, data.edge_index_dict, num_nodes)
    stored = data.clone()  # the edges in the store's order: e_id are positions in it
    for attr in graph_store.get_all_edge_attrs():
        stored[attr.edge_type].edge_index = torch.stack(list(graph_store.get_edge_index(attr)))
    seeds = torch.arange(12)
    fanouts = {e: [2, 2] for e in data.edge_types}
    loader = fpyg.NeighborLoader(
        (feature_store, graph_store), [2, 2], input_nodes=("paper", seeds), batch_size=5
    )
    batches = list(loader)
    assert len(batches) == 3
    for batch in batches:
        assert isinstance(batch, HeteroData)
        check_hetero_batch(stored, batch, fanouts, "paper", seeds)


# Temporal sampling ################################################################################


def temporal_data(edge_time_distinct=False):
    ei = edges(num=80, seed=5)
    node_t = torch.randint(0, 6, (N,), generator=gen(8))
    edge_t = (
        torch.randperm(ei.shape[1], generator=gen(9))
        if edge_time_distinct
        else torch.randint(0, 6, (ei.shape[1],), generator=gen(9))
    )
    return Data(x=feats(N, 3), edge_index=ei, node_t=node_t, edge_t=edge_t)


def check_temporal(data, batch, fanouts, time_attr, seed_time, strategy):
    """Every seed its own tree (PyG's ``batch``); a tree takes only edges (edge-level) or source
    nodes (node-level) not later than its seed's time: per hop ``min(fanout, valid)`` of them,
    with ``'last'`` the latest ones."""
    n_id, (row, col) = batch.n_id, batch.edge_index
    assert torch.equal(batch.batch[: batch.batch_size], torch.arange(batch.batch_size))
    assert torch.equal(data.edge_index[:, batch.e_id], n_id[batch.edge_index])
    assert torch.equal(batch.batch[row], batch.batch[col])
    times = data.node_t[data.edge_index[0]] if time_attr == "node_t" else data.edge_t
    assert bool((times[batch.e_id] <= seed_time[batch.batch[col]]).all())  # no future leak
    node_ends = [0, *torch.tensor(batch.num_sampled_nodes).cumsum(0).tolist()]
    edge_end = 0
    for hop, fanout in enumerate(fanouts):
        edge_start, edge_end = edge_end, edge_end + batch.num_sampled_edges[hop]
        for target in range(node_ends[hop], node_ends[hop + 1]):
            drawn = batch.e_id[edge_start:edge_end][col[edge_start:edge_end] == target]
            valid = (data.edge_index[1] == n_id[target]).nonzero().flatten()
            valid = valid[times[valid] <= seed_time[batch.batch[target]]]
            assert drawn.numel() == min(fanout, valid.numel())
            assert set(drawn.tolist()) <= set(valid.tolist())
            if strategy == "last":
                latest = valid[torch.sort(times[valid], stable=True).indices][-fanout:]
                assert sorted(drawn.tolist()) == sorted(latest.tolist())


@case("NeighborLoader time_attr node-level, 'uniform', input_time")
def _():
    data = temporal_data()
    seeds = torch.arange(N)
    input_time = torch.randint(0, 6, (N,), generator=gen(10))
    loader = fpyg.NeighborLoader(data, [3, 2], input_nodes=seeds, input_time=input_time,
                                 time_attr="node_t", batch_size=4)  # fmt: skip
    assert loader.node_sampler.disjoint  # temporal implies disjoint, as in PyG
    for batch in loader:
        assert torch.equal(batch.seed_time, input_time[batch.input_id])
        check_temporal(data, batch, [3, 2], "node_t", batch.seed_time, "uniform")
    # Without input_time a seed's time is its own node time.
    for batch in fpyg.NeighborLoader(data, [2, 2], time_attr="node_t", batch_size=5):
        seed_time = data.node_t[batch.n_id[: batch.batch_size]]
        check_temporal(data, batch, [2, 2], "node_t", seed_time, "uniform")


@case("NeighborLoader time_attr edge-level, 'last', input_time")
def _():
    data = temporal_data(edge_time_distinct=True)  # 'last' without ties
    seeds = torch.arange(0, N, 2)
    input_time = torch.randint(20, 80, (seeds.numel(),), generator=gen(11))
    for strategy in ("last", "uniform"):
        loader = fpyg.NeighborLoader(data, [2, 2], input_nodes=seeds, input_time=input_time,
                                     time_attr="edge_t", temporal_strategy=strategy,
                                     batch_size=3)  # fmt: skip
        for batch in loader:
            check_temporal(data, batch, [2, 2], "edge_t", batch.seed_time, strategy)


@case("LinkNeighborLoader edge_label_time")
def _():
    data = temporal_data()
    index = torch.randint(0, N, (2, 12), generator=gen(12))
    label_time = torch.maximum(data.node_t[index[0]], data.node_t[index[1]])
    loader = fpyg.LinkNeighborLoader(data, [2, 2], edge_label_index=index,
                                     edge_label_time=label_time, time_attr="node_t",
                                     batch_size=4)  # fmt: skip
    for batch in loader:
        seed_time = label_time[batch.input_id]
        pos = batch.edge_label_index
        assert torch.equal(batch.n_id[pos], index[:, batch.input_id])
        assert torch.equal(batch.edge_label_time, seed_time)
        row, col = batch.edge_index
        assert torch.equal(batch.batch[row], batch.batch[col])
        assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
        # Every node of tree i (its seed edge's endpoints included) exists by its time.
        assert bool((data.node_t[batch.n_id] <= seed_time[batch.batch % 4]).all())


# Heterogeneous loaders ############################################################################


@case("NeighborLoader HeteroData")
def _():
    data = hetero_data()
    seeds = torch.tensor([11, 0, 5, 3, 7, 2, 9])
    loader = fpyg.NeighborLoader(data, [3, 2], input_nodes=("paper", seeds), batch_size=3)
    batches = list(loader)
    assert len(batches) == 3
    for batch in batches:
        assert isinstance(batch, HeteroData) and batch.input_type == "paper"
        assert set(batch.node_types) == {"paper", "author"}
        assert "input_id" not in batch["author"] and "batch_size" not in batch["author"]
        check_hetero_batch(data, batch, {e: [3, 2] for e in data.edge_types}, "paper", seeds)
    assert torch.equal(torch.cat([b["paper"].input_id for b in batches]), torch.arange(7))


@case("NeighborLoader per-edge-type fanout dict")
def _():
    data = hetero_data()
    writes, cites, rev = hetero_types()
    fanouts = {writes: [1, 0], cites: [-1, 2], rev: [2, 1]}
    seeds = torch.arange(12)
    loader = fpyg.NeighborLoader(data, fanouts, input_nodes=("paper", seeds), batch_size=4)
    for batch in loader:
        check_hetero_batch(data, batch, fanouts, "paper", seeds)
        assert batch[writes].num_sampled_edges[1] == 0


@case("LinkNeighborLoader HeteroData")
def _():
    data = hetero_data()
    writes = hetero_types()[0]
    index = data[writes].edge_index[:, :9]
    loader = fpyg.LinkNeighborLoader(data, [2, 1], edge_label_index=(writes, index),
                                     batch_size=3)  # fmt: skip
    for batch in loader:
        store = batch[writes]
        pos = store.edge_label_index
        found = torch.stack([batch["author"].n_id[pos[0]], batch["paper"].n_id[pos[1]]])
        assert torch.equal(found, index[:, store.input_id])
        for etype in data.edge_types:
            src, _, dst = etype
            row, col = batch[etype].edge_index
            real = torch.stack([batch[src].n_id[row], batch[dst].n_id[col]])
            assert torch.equal(data[etype].edge_index[:, batch[etype].e_id], real)


@case("NeighborLoader HeteroData time_attr")
def _():
    data = hetero_data()
    data["paper"].t = torch.randint(0, 5, (12,), generator=gen(13))
    data["author"].t = torch.randint(0, 5, (8,), generator=gen(14))
    seeds = torch.arange(12)
    input_time = torch.randint(0, 5, (12,), generator=gen(15))
    loader = fpyg.NeighborLoader(data, [2, 2], input_nodes=("paper", seeds),
                                 input_time=input_time, time_attr="t", batch_size=5)  # fmt: skip
    for batch in loader:
        seed_time = batch["paper"].seed_time
        assert torch.equal(seed_time, input_time[batch["paper"].input_id])
        assert torch.equal(batch["paper"].batch[: batch["paper"].batch_size],
                           torch.arange(batch["paper"].batch_size))  # fmt: skip
        node_ends = {
            t: [0, *torch.tensor(batch[t].num_sampled_nodes).cumsum(0).tolist()]
            for t in data.node_types
        }
        for etype in data.edge_types:
            src, _, dst = etype
            (row, col), e_id = batch[etype].edge_index, batch[etype].e_id
            ei = data[etype].edge_index
            real = torch.stack([batch[src].n_id[row], batch[dst].n_id[col]])
            assert torch.equal(ei[:, e_id], real)
            assert torch.equal(batch[src].batch[row], batch[dst].batch[col])  # within one tree
            times = data[src].t[ei[0]]  # a neighbor is valid if not later than its tree's seed
            edge_end = 0
            for hop in range(2):
                edge_start, edge_end = edge_end, edge_end + batch[etype].num_sampled_edges[hop]
                for target in range(node_ends[dst][hop], node_ends[dst][hop + 1]):
                    drawn = e_id[edge_start:edge_end][col[edge_start:edge_end] == target]
                    valid = (ei[1] == batch[dst].n_id[target]).nonzero().flatten()
                    valid = valid[times[valid] <= seed_time[batch[dst].batch[target]]]
                    assert drawn.numel() == min(2, valid.numel()), (etype, hop)
                    assert set(drawn.tolist()) <= set(valid.tolist())


@pytest.mark.parametrize("name", CASES)
def test_dropin_compat(name):
    CASES[name]()
