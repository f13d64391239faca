"""The DGL drop-in's compatibility points, one named case each (the PyG ones are in
tests/test_dropin_compat.py), against DGL 2.1 itself.

Layers (``fastgl.integrations.dgl``) load the state dict of DGL's layer and must give its outputs
and gradients (inputs and every parameter) in float64. The sampler's draws are random, so its
cases compare what is deterministic with DGL's own sampler (full fanouts, per-destination counts
``min(fanout, eligible in-edges)``, excluded edges) and check every block edge against the graph.
Runs in the DGL environment (``.venv-dgl``); skipped where DGL is not installed.
"""

import pytest
import torch

# Not importorskip("dgl"): without DGL, tests/ is on sys.path (conftest), so this folder itself
# would import as an empty namespace package named dgl.
dglnn = pytest.importorskip("dgl.nn.pytorch", reason="DGL is not installed (it runs in .venv-dgl)")
import dgl  # noqa: E402

from fastgl.integrations import dgl as fdgl  # noqa: E402

IN, OUT = 5, 3
TOL = dict(atol=1e-8, rtol=1e-8)
CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


def gen(seed):
    return torch.Generator().manual_seed(seed)


def feats(rows, seed=1, width=IN):
    return torch.randn(rows, width, generator=gen(seed), dtype=torch.float64)


# Layers against DGL ###############################################################################


def run(layer, graph, feat):
    """The output and the gradients of a fixed projection of it: inputs, then parameters."""
    leaves = [
        t.detach().clone().requires_grad_() for t in (feat if isinstance(feat, tuple) else [feat])
    ]
    out = layer(graph, tuple(leaves) if isinstance(feat, tuple) else leaves[0])
    probe = torch.cos(torch.arange(out.numel(), dtype=out.dtype)).view_as(out)
    params = dict(layer.named_parameters())
    grads = torch.autograd.grad(
        (out * probe).sum(), leaves + list(params.values()), allow_unused=True
    )
    names = [f"input{i}" for i in range(len(leaves))] + list(params)
    return out, dict(zip(names, grads))


def same_as_dgl(make, graph, feat):
    """``make(dgl.nn.pytorch)`` and ``make(fastgl.integrations.dgl)`` (DGL's state dict, float64)
    agree on ``graph``: the output and every gradient. Returns fastgl's output."""
    torch.manual_seed(0)
    theirs, ours = make(dglnn).double().eval(), make(fdgl).double().eval()
    ours.load_state_dict(theirs.state_dict(), strict=True)
    with torch.no_grad():  # non-zero biases, so that they show in the outputs
        for layer in (theirs, ours):
            for key, p in layer.named_parameters():
                if "bias" in key:
                    p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p))
    expected, expected_grads = run(theirs, graph, feat)
    actual, grads = run(ours, graph, feat)
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual, expected, **TOL)
    assert grads.keys() == expected_grads.keys()
    for key, e in expected_grads.items():
        a = grads[key]
        if e is None or a is None:  # unused by one of them: a zero gradient in the other
            assert (e is None or not e.any()) and (a is None or not a.any()), key
        else:
            torch.testing.assert_close(a, e, **TOL, msg=key)
    return actual


LAYERS = {
    "GraphConv": lambda m: m.GraphConv(IN, OUT, allow_zero_in_degree=True),
    "SAGEConv": lambda m: m.SAGEConv(IN, OUT, "mean"),
    "GINConv": lambda m: m.GINConv(torch.nn.Linear(IN, OUT), "sum", init_eps=0.2),
    "GATConv": lambda m: m.GATConv(IN, OUT, 2, allow_zero_in_degree=True),
}


@case("GraphConv one feature tensor on a bipartite block (2 sources, 4 destinations)")
def _():
    block = dgl.create_block(
        (torch.tensor([1, 0, 1, 0, 1]), torch.tensor([3, 0, 1, 2, 0])),
        num_src_nodes=2,
        num_dst_nodes=4,
    )
    # DGL's expand_as_pair: the tensor's rows are the sources; GraphConv reads no destination.
    out = same_as_dgl(lambda m: m.GraphConv(IN, OUT), block, feats(2))
    assert out.shape == (4, OUT)
    same_as_dgl(lambda m: m.GraphConv(IN, OUT, norm="left", bias=False), block, feats(2))


@case("SAGEConv aggregator_type='lstm'")
def _():
    src = torch.randint(0, 12, (40,), generator=gen(2))
    dst = torch.randint(0, 10, (40,), generator=gen(3))  # 10, 11 without in-edges
    graph = dgl.graph((src, dst), num_nodes=12)
    out = same_as_dgl(lambda m: m.SAGEConv(IN, OUT, "lstm"), graph, feats(12))
    assert out.shape == (12, OUT)
    seeds = torch.tensor([4, 0, 7, 11])
    block = dgl.to_block(dgl.in_subgraph(graph, seeds, relabel_nodes=False), seeds)
    same_as_dgl(lambda m: m.SAGEConv(IN, OUT, "lstm"), block, feats(block.num_src_nodes()))


def zero_source_case(name):
    def check():
        block = dgl.create_block(
            (torch.tensor([], dtype=torch.long),) * 2, num_src_nodes=0, num_dst_nodes=3
        )
        out = same_as_dgl(LAYERS[name], block, (feats(0), feats(3, seed=2)))
        assert out.shape[0] == 3
        bipartite = dgl.heterograph({("u", "e", "v"): ([], [])}, {"u": 0, "v": 3})
        same_as_dgl(LAYERS[name], bipartite, (feats(0), feats(3, seed=2)))

    return check


def zero_edge_case(name):
    def check():
        graph = dgl.graph(([], []), num_nodes=5)
        out = same_as_dgl(LAYERS[name], graph, feats(5))
        assert out.shape[0] == 5
        block = dgl.create_block(
            (torch.tensor([], dtype=torch.long),) * 2, num_src_nodes=4, num_dst_nodes=2
        )
        same_as_dgl(LAYERS[name], block, feats(4))

    return check


for _name in LAYERS:
    CASES[f"{_name} on a graph with zero source nodes"] = zero_source_case(_name)
    CASES[f"{_name} on a graph with zero edges"] = zero_edge_case(_name)


# NeighborSampler ##################################################################################


def random_graph(num_nodes=40, num_edges=300, seed=0):
    src = torch.randint(0, num_nodes, (num_edges,), generator=gen(seed))
    dst = torch.randint(0, num_nodes, (num_edges,), generator=gen(seed + 1))
    return dgl.graph((src, dst), num_nodes=num_nodes)


@case("NeighborSampler exclude with edge ids past the last edge (ignored, as DGL)")
def _():
    g = random_graph()
    seeds = torch.arange(0, 40, 3)
    e = g.num_edges()
    for exclude in (torch.tensor([e, e + 5, 10 * e]), torch.tensor([2, e, 7, e + 1, 30])):
        ours = fdgl.NeighborSampler([-1]).sample(g, seeds, exclude_eids=exclude)[2][0]
        theirs = dgl.dataloading.NeighborSampler([-1]).sample(g, seeds, exclude_eids=exclude)
        eids = sorted(ours.edata[dgl.EID].tolist())
        assert eids == sorted(theirs[2][0].edata[dgl.EID].tolist())
        kept = (torch.isin(g.in_edges(seeds, form="eid"), exclude, invert=True)).sum()
        assert len(eids) == int(kept) > 0


WRITES, WRITTEN_BY = ("author", "writes", "paper"), ("paper", "written-by", "author")
CITES = ("paper", "cites", "paper")
NUM = {"author": 20, "paper": 30}


def hetero_graph():
    a = torch.randint(0, NUM["author"], (90,), generator=gen(4))
    p = torch.randint(0, NUM["paper"], (90,), generator=gen(5))
    cites = tuple(torch.randint(0, NUM["paper"], (120,), generator=gen(6 + i)) for i in range(2))
    g = dgl.heterograph({WRITES: (a, p), WRITTEN_BY: (p, a), CITES: cites}, num_nodes_dict=NUM)
    for ntype, n in NUM.items():
        g.nodes[ntype].data["feat"] = torch.randn(n, 4, generator=gen(8))
        g.nodes[ntype].data["label"] = torch.arange(n)
    return g


def hetero_seeds():
    return {"paper": torch.tensor([3, 17, 0, 29, 8]), "author": torch.tensor([5, 19])}


def check_blocks(g, blocks, seeds):
    """DGL's block layout per type: NID/EID, destinations a prefix of the sources, layers
    chained, the last one's destinations the seeds, every edge an edge of the graph."""
    for ntype in g.ntypes:
        expected = seeds.get(ntype, torch.zeros(0, dtype=g.idtype))
        assert torch.equal(blocks[-1].dstnodes[ntype].data[dgl.NID], expected)
    for i, block in enumerate(blocks):
        assert block.canonical_etypes == g.canonical_etypes
        for ntype in g.ntypes:
            src = block.srcnodes[ntype].data[dgl.NID]
            dst = block.dstnodes[ntype].data[dgl.NID]
            assert torch.equal(src[: block.num_dst_nodes(ntype)], dst)
            assert src.unique().numel() == src.numel()
            if i + 1 < len(blocks):
                assert torch.equal(blocks[i + 1].srcnodes[ntype].data[dgl.NID], dst)
        for etype in g.canonical_etypes:
            u, v = block.edges(etype=etype)
            gu, gv = g.find_edges(block.edges[etype].data[dgl.EID], etype=etype)
            assert torch.equal(block.srcnodes[etype[0]].data[dgl.NID][u.long()], gu)
            assert torch.equal(block.dstnodes[etype[2]].data[dgl.NID][v.long()], gv)


def same_counts_as_dgl(g, fanouts, seeds, **kwargs):
    """fastgl's and DGL's sampler: the same seeds' layer, with the same in-degree per seed and
    edge type (the counts are deterministic: ``min(fanout, eligible in-edges)``)."""
    ours = fdgl.NeighborSampler(fanouts, **kwargs).sample(g, seeds)[2]
    theirs = dgl.dataloading.NeighborSampler(fanouts, **kwargs).sample(g, seeds)[2]
    check_blocks(g, ours, seeds)
    assert len(ours) == len(theirs)
    for etype in g.canonical_etypes:
        assert torch.equal(ours[-1].in_degrees(etype=etype), theirs[-1].in_degrees(etype=etype))
    return ours


@case("hetero NeighborSampler per-etype fanouts")
def _():
    g = hetero_graph()
    layer0 = {"writes": 2, WRITTEN_BY: -1, "cites": 0}  # names and canonical triples
    layer1 = {WRITES: 1, "written-by": 3, CITES: 4}
    blocks = same_counts_as_dgl(g, [layer0, layer1], hetero_seeds())
    for block, layer in zip(blocks, (layer0, layer1)):
        for key, fanout in layer.items():
            etype = g.to_canonical_etype(key)
            dst = block.dstnodes[etype[2]].data[dgl.NID]
            degree = g.in_degrees(dst, etype=etype)
            expected = degree if fanout < 0 else degree.clamp(max=fanout)
            assert torch.equal(block.in_degrees(etype=etype), expected), etype


@case("hetero NeighborSampler prob per edge type")
def _():
    g = hetero_graph()
    p = torch.rand(g.num_edges(CITES), generator=gen(9), dtype=torch.float64)
    p[::3] = 0
    g.edges[CITES].data["p"] = p  # writes / written-by have no "p": uniform, as in DGL
    seeds = hetero_seeds()
    for _ in range(5):
        blocks = same_counts_as_dgl(g, [3, 3], seeds, prob="p")
        for block in blocks:
            assert bool((p[block.edges[CITES].data[dgl.EID]] > 0).all())
    full = fdgl.NeighborSampler([-1], prob="p").sample(g, {"paper": torch.arange(30)})[2][0]
    assert full.num_edges(WRITES) == g.num_edges(WRITES)


@case("hetero NeighborSampler mask per edge type")
def _():
    g = hetero_graph()
    g.edges[WRITES].data["m"] = torch.arange(g.num_edges(WRITES)) % 2 == 0
    g.edges[CITES].data["m"] = torch.arange(g.num_edges(CITES)) % 3 != 0
    seeds = hetero_seeds()
    for fanouts in ([2, 2], [-1]):
        blocks = same_counts_as_dgl(g, fanouts, seeds, mask="m")
        for block in blocks:
            for etype in (WRITES, CITES):
                assert bool(g.edges[etype].data["m"][block.edges[etype].data[dgl.EID]].all())


@case("hetero as_edge_prediction_sampler exclude='reverse_types'")
def _():
    g = hetero_graph()
    seed_edges = {"writes": torch.arange(g.num_edges(WRITES))}
    results = []
    for sampler_class in (fdgl.NeighborSampler, dgl.dataloading.NeighborSampler):
        sampler = dgl.dataloading.as_edge_prediction_sampler(
            sampler_class([-1, -1]),
            exclude="reverse_types",
            reverse_etypes={"writes": "written-by", "written-by": "writes"},
        )
        loader = dgl.dataloading.DataLoader(g, seed_edges, sampler, batch_size=30)
        results.append(list(loader))
    for ours, theirs in zip(*results, strict=True):
        _, pair_graph, blocks = ours
        seeds = set(pair_graph.edges[WRITES].data[dgl.EID].tolist())
        check_blocks(g, blocks, {t: blocks[-1].dstnodes[t].data[dgl.NID] for t in g.ntypes})
        for block in blocks:  # edge e of writes and its reverse, edge e of written-by
            assert not seeds & set(block.edges[WRITES].data[dgl.EID].tolist())
            assert not seeds & set(block.edges[WRITTEN_BY].data[dgl.EID].tolist())
        for a, b in zip(blocks, theirs[2], strict=True):  # full fanouts: DGL's very edges
            for etype in g.canonical_etypes:
                eid_a = sorted(a.edges[etype].data[dgl.EID].tolist())
                assert eid_a == sorted(b.edges[etype].data[dgl.EID].tolist()), etype
            for ntype in g.ntypes:
                ids_a = a.srcnodes[ntype].data[dgl.NID].tolist()
                assert sorted(ids_a) == sorted(b.srcnodes[ntype].data[dgl.NID].tolist())


@case("hetero blocks srcdata/dstdata per type")
def _():
    g = hetero_graph()
    sampler = fdgl.NeighborSampler(
        [3, 2],
        prefetch_node_feats={t: ["feat"] for t in NUM},
        prefetch_labels={"paper": ["label"]},
    )
    loader = dgl.dataloading.DataLoader(g, {"paper": torch.arange(30)}, sampler, batch_size=8)
    theirs = dgl.dataloading.NeighborSampler([3, 2]).sample(g, hetero_seeds())[2][0]
    for input_nodes, output_nodes, blocks in loader:
        check_blocks(g, blocks, output_nodes)
        first, last = blocks[0], blocks[-1]
        # Dicts per node type, as DGL's heterogeneous blocks give them.
        assert first.srcdata[dgl.NID].keys() == theirs.srcdata[dgl.NID].keys() == set(NUM)
        for ntype in g.ntypes:
            assert torch.equal(first.srcdata[dgl.NID][ntype], input_nodes[ntype])
            ids = input_nodes[ntype]
            assert torch.equal(first.srcdata["feat"][ntype], g.nodes[ntype].data["feat"][ids])
        assert torch.equal(last.dstdata["label"]["paper"], output_nodes["paper"])
        assert torch.equal(last.dstdata[dgl.NID]["paper"], output_nodes["paper"])


@pytest.mark.parametrize("name", CASES)
def test_dgl_dropin_compat(name):
    CASES[name]()
