"""fastgl.integrations.dgl.NeighborSampler on heterogeneous graphs, against DGL's own sampler.

Draws are random, so the comparisons are of structure and distribution: DGL's block layout per
node and edge type, per-edge-type fanout counts (``min(fanout, in-degree)`` without replacement,
``fanout`` with), every block edge an edge of the graph with the right ``dgl.EID``, prob/mask
and exclusion semantics, chi-square tests of the draws; full-neighbor sampling must give exactly
the edges of DGL's ``MultiLayerFullNeighborSampler``. Runs in the DGL environment; skipped where
DGL is not installed.
"""

import collections

import pytest
import torch

# Not importorskip("dgl"): where DGL is absent a folder named dgl on sys.path could import as
# an empty namespace package; dgl.dataloading cannot.
pytest.importorskip("dgl.dataloading", reason="DGL is not installed (it runs in .venv-dgl)")
stats = pytest.importorskip("scipy.stats")
import dgl  # noqa: E402
import dgl.nn.pytorch as dglnn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from fastgl.integrations.dgl import (  # noqa: E402
    GraphConv,
    MultiLayerFullNeighborSampler,
    NeighborSampler,
    SAGEConv,
)
from fastgl.integrations.dgl import sampler as sampler_module  # noqa: E402
from fastgl.sampling import HeteroNeighborSampler  # noqa: E402

WRITES = ("author", "writes", "paper")
WRITTEN_BY = ("paper", "written-by", "author")
CITES = ("paper", "cites", "paper")
HAS_TOPIC = ("paper", "has-topic", "topic")
ABOUT = ("topic", "about", "paper")
NUM_NODES = {"author": 60, "paper": 120, "topic": 8}


def hetero_graph(idtype=torch.int64, seed=0):
    """Three node types, five relations (one within a type, two reverse pairs); features per
    node type, edge weights on two relations."""
    gen = torch.Generator().manual_seed(seed)

    def edges(src_type, dst_type, count):
        src = torch.randint(0, NUM_NODES[src_type], (count,), generator=gen)
        dst = torch.randint(0, NUM_NODES[dst_type], (count,), generator=gen)
        return src, dst

    a, p = edges("author", "paper", 400)
    c = edges("paper", "paper", 700)
    t, q = edges("topic", "paper", 300)
    g = dgl.heterograph(
        {WRITES: (a, p), WRITTEN_BY: (p, a), CITES: c, HAS_TOPIC: (q, t), ABOUT: (t, q)},
        num_nodes_dict=NUM_NODES,
        idtype=idtype,
    )
    for ntype, n in NUM_NODES.items():
        g.nodes[ntype].data["feat"] = torch.randn(n, 5, generator=gen)
        g.nodes[ntype].data["label"] = torch.randint(0, 3, (n,), generator=gen)
    for etype in (WRITES, CITES):
        g.edges[etype].data["w"] = torch.rand(g.num_edges(etype), generator=gen)
    return g


def seeds_of(idtype=torch.int64):
    return {
        "paper": torch.tensor([3, 17, 99, 40, 0], dtype=idtype),
        "author": torch.tensor([5, 59], dtype=idtype),
    }


def check_blocks(g, blocks, seeds):
    """DGL's conventions per node and edge type: global NID/EID in the graph's idtype,
    destinations the prefix of the sources, layers chained, the last one writing the seeds,
    every edge an edge of the graph."""
    assert len(blocks) >= 1
    for ntype in g.ntypes:
        expected = seeds.get(ntype, torch.zeros(0, dtype=g.idtype))
        assert torch.equal(blocks[-1].dstnodes[ntype].data[dgl.NID], expected.to(g.idtype))
    for i, block in enumerate(blocks):
        assert block.idtype == g.idtype
        assert block.srctypes == block.dsttypes == g.ntypes
        assert block.canonical_etypes == g.canonical_etypes
        for ntype in g.ntypes:
            src = block.srcnodes[ntype].data[dgl.NID]
            dst = block.dstnodes[ntype].data[dgl.NID]
            assert src.dtype == dst.dtype == g.idtype
            assert torch.equal(src[: block.num_dst_nodes(ntype)], dst)
            assert src.unique().numel() == src.numel()
            assert bool((src >= 0).all()) and bool((src < g.num_nodes(ntype)).all())
            if i + 1 < len(blocks):
                assert torch.equal(blocks[i + 1].srcnodes[ntype].data[dgl.NID], dst)
        for etype in g.canonical_etypes:
            src_type, _, dst_type = etype
            eid = block.edges[etype].data[dgl.EID]
            assert eid.dtype == g.idtype
            u, v = block.edges(etype=etype)
            gu, gv = g.find_edges(eid, etype=etype)
            assert torch.equal(block.srcnodes[src_type].data[dgl.NID][u.long()], gu)
            assert torch.equal(block.dstnodes[dst_type].data[dgl.NID][v.long()], gv)


def in_degrees_along(g, block, etype):
    """Per destination of ``block``, its in-degree along ``etype`` in the whole graph."""
    dst = block.dstnodes[etype[2]].data[dgl.NID].long()
    return g.in_degrees(etype=etype).long()[dst]


# ---------------------------------------------------------------------------------------------
# Structure and counts


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_blocks_follow_dgl_conventions_with_per_etype_fanouts(idtype):
    g = hetero_graph(idtype)
    seeds = seeds_of(idtype)
    # Names and canonical triples mixed, as DGL takes them; -1 all, 0 none.
    layer0 = {"writes": 2, WRITTEN_BY: 3, "cites": -1, "has-topic": 1, ABOUT: 0}
    layer1 = {WRITES: 4, "written-by": 1, CITES: 2, HAS_TOPIC: 0, "about": 5}
    input_nodes, output_nodes, blocks = NeighborSampler([layer0, layer1]).sample(g, seeds)
    check_blocks(g, blocks, seeds)
    assert output_nodes is not None and set(output_nodes) == set(seeds)
    assert set(input_nodes) == set(g.ntypes)
    for ntype in g.ntypes:
        assert torch.equal(input_nodes[ntype], blocks[0].srcnodes[ntype].data[dgl.NID])
    for block, layer in zip(blocks, (layer0, layer1)):
        for key, fanout in layer.items():
            etype = g.to_canonical_etype(key)
            got = block.in_degrees(etype=etype).long()
            degrees = in_degrees_along(g, block, etype)
            expected = degrees if fanout == -1 else degrees.clamp(max=fanout)
            assert torch.equal(got, expected), etype
            eid = block.edges[etype].data[dgl.EID]
            assert eid.unique().numel() == eid.numel()  # without replacement


def test_same_structure_as_dgls_sampler():
    g = hetero_graph()
    seeds = seeds_of()
    fanouts = [{"writes": 3, "written-by": 2, "cites": 4, "has-topic": 1, "about": 2}, 3]
    ours = NeighborSampler(fanouts).sample(g, seeds)
    theirs = dgl.dataloading.NeighborSampler(fanouts).sample(g, seeds)
    assert len(ours[2]) == len(theirs[2]) == 2
    assert set(ours[0]) == set(theirs[0])  # input nodes of the same node types
    last_ours, last_theirs = ours[2][-1], theirs[2][-1]
    assert last_ours.ntypes == last_theirs.ntypes
    assert last_ours.canonical_etypes == last_theirs.canonical_etypes
    for ntype in g.ntypes:  # the seeds' layer: the same destinations, in order
        assert torch.equal(
            last_ours.dstnodes[ntype].data[dgl.NID], last_theirs.dstnodes[ntype].data[dgl.NID]
        )
    for etype in g.canonical_etypes:  # min(fanout, in-degree) per seed: the same counts
        assert torch.equal(
            last_ours.in_degrees(etype=etype), last_theirs.in_degrees(etype=etype)
        ), etype
        assert last_ours.edges[etype].data[dgl.EID].dtype == (
            last_theirs.edges[etype].data[dgl.EID].dtype
        )


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_full_neighbor_sampling_gives_dgls_edges(idtype):
    g = hetero_graph(idtype)
    seeds = seeds_of(idtype)
    ours = MultiLayerFullNeighborSampler(2).sample(g, seeds)
    theirs = dgl.dataloading.MultiLayerFullNeighborSampler(2).sample(g, seeds)
    check_blocks(g, ours[2], seeds)
    for ntype in g.ntypes:
        assert sorted(ours[0][ntype].tolist()) == sorted(theirs[0][ntype].tolist())
    for a, b in zip(ours[2], theirs[2]):  # new sources may come in another order than DGL's
        for ntype in g.ntypes:
            for side in ("srcnodes", "dstnodes"):
                ids_a = getattr(a, side)[ntype].data[dgl.NID]
                ids_b = getattr(b, side)[ntype].data[dgl.NID]
                assert sorted(ids_a.tolist()) == sorted(ids_b.tolist())
        for etype in g.canonical_etypes:
            eid_a = a.edges[etype].data[dgl.EID]
            eid_b = b.edges[etype].data[dgl.EID]
            assert sorted(eid_a.tolist()) == sorted(eid_b.tolist()), etype


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("prob", [None, "w"])
def test_draws_are_fastgls_layerwise_hetero_sample(replace, prob):
    # The drop-in draws what HeteroNeighborSampler(layerwise=True) draws for the same torch
    # seed (same pairs, same Philox streams), kept per node type.
    g = hetero_graph()
    seeds = seeds_of()
    layers = [{"writes": 2, "written-by": 3, "cites": -1, "has-topic": 0, "about": 1}, 4, 3]
    sampler = NeighborSampler(layers, replace=replace, prob=prob)
    torch.manual_seed(3)
    blocks = sampler.sample(g, seeds)[2]
    hop_fanouts = sampler_module._hop_fanouts(g, sampler.fanouts)
    graph = sampler._hetero.graph  # the cached HeteroCSCGraph of g
    reference = HeteroNeighborSampler(
        graph, hop_fanouts, replace=replace, weighted=prob is not None, layerwise=True
    )
    torch.manual_seed(3)
    sub = reference.sample({t: ids.long() for t, ids in seeds.items()})
    for ntype in g.ntypes:
        assert torch.equal(blocks[0].srcnodes[ntype].data[dgl.NID], sub.nodes[ntype])
    for block, relation_blocks in zip(blocks, sub.blocks):
        for etype in g.canonical_etypes:
            expected = relation_blocks[etype]
            assert torch.equal(block.edges[etype].data[dgl.EID], expected.eid), etype
            u, v = block.edges(etype=etype)
            assert torch.equal(u, expected.src) and torch.equal(v, expected.dst)


def test_replacement_draws_exactly_fanout_like_dgl():
    g = hetero_graph()
    seeds = seeds_of()
    ours = NeighborSampler([7], replace=True).sample(g, seeds)[2][0]
    theirs = dgl.dataloading.NeighborSampler([7], replace=True).sample(g, seeds)[2][0]
    for etype in g.canonical_etypes:
        degrees = in_degrees_along(g, ours, etype)
        expected = torch.where(degrees > 0, 7, 0)
        assert torch.equal(ours.in_degrees(etype=etype).long(), expected)
        assert torch.equal(theirs.in_degrees(etype=etype).long(), expected)
    repeated = torch.cat([ours.edges[etype].data[dgl.EID] for etype in g.canonical_etypes])
    assert repeated.unique().numel() < repeated.numel()  # repeats happen


def test_one_node_type_with_several_edge_types_takes_a_seed_tensor():
    gen = torch.Generator().manual_seed(2)
    edges = {
        ("user", rel, "user"): tuple(torch.randint(0, 50, (300,), generator=gen) for _ in "uv")
        for rel in ("follows", "likes")
    }
    g = dgl.heterograph(edges, num_nodes_dict={"user": 50})
    seeds = torch.tensor([4, 8, 15])
    input_nodes, output_nodes, blocks = NeighborSampler([{"follows": 2, "likes": 3}]).sample(
        g, seeds
    )
    theirs = dgl.dataloading.NeighborSampler([{"follows": 2, "likes": 3}]).sample(g, seeds)
    assert isinstance(input_nodes, torch.Tensor) and isinstance(theirs[0], torch.Tensor)
    assert torch.equal(output_nodes, seeds)
    check_blocks(g, blocks, {"user": seeds})
    for etype in g.canonical_etypes:
        assert torch.equal(blocks[0].in_degrees(etype=etype), theirs[2][0].in_degrees(etype=etype))


def test_homogeneous_graph_takes_dicts_as_dgl_does():
    gen = torch.Generator().manual_seed(5)
    g = dgl.graph(tuple(torch.randint(0, 40, (200,), generator=gen) for _ in "uv"), num_nodes=40)
    seeds = {"_N": torch.tensor([1, 2, 3])}
    input_nodes, output_nodes, blocks = NeighborSampler([{"_E": 2}]).sample(
        g, seeds, exclude_eids={"_E": torch.arange(100)}
    )
    assert isinstance(input_nodes, torch.Tensor) and output_nodes.keys() == {"_N"}
    assert blocks[0].srctypes == g.ntypes and blocks[0].etypes == g.etypes
    assert bool((blocks[0].edata[dgl.EID] >= 100).all())


def test_no_layers_gives_the_seeds():
    # sample_blocks: DGL's BlockSampler.sample itself needs a block to put lazy features on.
    g = hetero_graph()
    input_nodes, output_nodes, blocks = NeighborSampler([]).sample_blocks(g, seeds_of())
    assert blocks == [] and input_nodes.keys() == seeds_of().keys()
    for ntype, ids in seeds_of().items():
        assert torch.equal(input_nodes[ntype], ids)


def test_same_seed_same_sample():
    g = hetero_graph()
    sampler = NeighborSampler([3, 3])
    samples = []
    for _ in range(2):
        torch.manual_seed(11)
        samples.append(sampler.sample(g, seeds_of())[2])
    for a, b in zip(*samples):
        for etype in g.canonical_etypes:
            assert torch.equal(a.edges[etype].data[dgl.EID], b.edges[etype].data[dgl.EID])


# ---------------------------------------------------------------------------------------------
# Distributions: uniform, prob, mask


def star_hetero():
    """Paper 0 has 12 in-edges from authors (edge id = author) and 6 cites from papers 1..6
    (edge id = paper - 1)."""
    authors = torch.arange(12)
    papers = torch.arange(1, 7)
    return dgl.heterograph(
        {
            WRITES: (authors, torch.zeros_like(authors)),
            CITES: (papers, torch.zeros_like(papers)),
        },
        num_nodes_dict={"author": 12, "paper": 7},
    )


def draw_counts(sampler, g, rounds, seed):
    counts = {etype: collections.Counter() for etype in g.canonical_etypes}
    torch.manual_seed(seed)
    for _ in range(rounds):
        block = sampler.sample(g, {"paper": torch.tensor([0])})[2][0]
        for etype in g.canonical_etypes:
            counts[etype].update(block.edges[etype].data[dgl.EID].tolist())
    return counts


def test_uniform_draws_are_uniform_per_edge_type():
    g = star_hetero()
    counts = draw_counts(NeighborSampler([{"writes": 4, "cites": 2}]), g, 600, 0)
    assert stats.chisquare([counts[WRITES][e] for e in range(12)]).pvalue > 1e-3
    assert stats.chisquare([counts[CITES][e] for e in range(6)]).pvalue > 1e-3
    assert sum(counts[WRITES].values()) == 2400 and sum(counts[CITES].values()) == 1200


def test_prob_per_edge_type_and_uniform_where_an_edge_type_lacks_it():
    g = star_hetero()
    p = torch.tensor([0.0, 1, 2, 3, 4, 0, 0, 1, 2, 3, 4, 0])
    g.edges[WRITES].data["p"] = p  # cites has no "p": drawn uniformly, as in DGL
    ours = draw_counts(NeighborSampler([2], prob="p", replace=True), g, 1500, 1)
    theirs = draw_counts(dgl.dataloading.NeighborSampler([2], prob="p", replace=True), g, 300, 1)
    for counts in (ours, theirs):
        assert all(counts[WRITES][e] == 0 for e in (0, 5, 6, 11))
        assert set(counts[CITES]) == set(range(6))
    positive = [e for e in range(12) if p[e] > 0]
    expected = [3000 * float(p[e]) / float(p.sum()) for e in positive]
    observed = [ours[WRITES][e] for e in positive]
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    assert stats.chisquare([ours[CITES][e] for e in range(6)]).pvalue > 1e-3


@pytest.mark.parametrize("fanout", [3, -1])
def test_mask_keeps_masked_edges_out_per_edge_type(fanout):
    g = hetero_graph()
    g.edges[CITES].data["keep"] = torch.arange(g.num_edges(CITES)) % 3 != 0
    g.edges[WRITES].data["keep"] = torch.arange(g.num_edges(WRITES)) % 2 == 0
    seeds = {"paper": torch.arange(0, 120, 2)}
    ours = NeighborSampler([fanout, fanout], mask="keep").sample(g, seeds)[2]
    theirs = dgl.dataloading.NeighborSampler([fanout], mask="keep").sample(g, seeds)[2][0]
    check_blocks(g, ours, seeds)
    for block in ours:
        for etype in (CITES, WRITES):
            assert bool(g.edges[etype].data["keep"][block.edges[etype].data[dgl.EID].long()].all())
    last = ours[-1]
    for etype in g.canonical_etypes:  # masked-out edges count as absent, as in DGL
        assert torch.equal(last.in_degrees(etype=etype), theirs.in_degrees(etype=etype)), etype


def test_graph_is_built_once_and_rebuilt_when_prob_changes(monkeypatch):
    calls = []
    build = sampler_module._build_hetero
    monkeypatch.setattr(sampler_module, "_build_hetero", lambda *a: calls.append(1) or build(*a))
    g = hetero_graph()
    sampler = NeighborSampler([3, 3], prob="w")
    for start in range(0, 100, 10):
        sampler.sample(g, {"paper": torch.arange(start, start + 10)})
    assert len(calls) == 1
    g.edges[CITES].data["w"][:] = 0  # in place: no cites edge may be drawn any more
    block = sampler.sample(g, {"paper": torch.arange(50)})[2][-1]
    assert block.num_edges(CITES) == 0 and block.num_edges(WRITES) > 0
    assert len(calls) == 2
    NeighborSampler([3]).sample(hetero_graph(), {"paper": torch.arange(3)})  # another sampler
    sampler.sample(hetero_graph(), {"paper": torch.arange(3)})  # another graph
    assert len(calls) == 4


# ---------------------------------------------------------------------------------------------
# Exclusion


def test_exclude_eids_per_edge_type_equals_dgls():
    g = hetero_graph()
    seeds = {"paper": torch.arange(120), "author": torch.arange(60)}
    # Canonical keys: DGL's sample_neighbors ignores keys by name (fastgl takes both).
    exclude = {
        WRITES: torch.arange(0, 400, 3),
        CITES: torch.tensor([5, 6, 7, 700, 10_000, -1]),  # ids of no edge exclude nothing
    }
    ours = MultiLayerFullNeighborSampler(1).sample(g, seeds, exclude_eids=exclude)[2][0]
    theirs = dgl.dataloading.MultiLayerFullNeighborSampler(1).sample(
        g, seeds, exclude_eids=exclude
    )[2][0]
    for etype in g.canonical_etypes:
        eid_ours = sorted(ours.edges[etype].data[dgl.EID].tolist())
        assert eid_ours == sorted(theirs.edges[etype].data[dgl.EID].tolist()), etype
    assert not set(range(0, 400, 3)) & set(ours.edges[WRITES].data[dgl.EID].tolist())
    # Excluding is per batch: the next sample sees every edge again.
    again = MultiLayerFullNeighborSampler(1).sample(g, seeds)[2][0]
    assert again.num_edges(WRITES) == g.num_edges(WRITES)


@pytest.mark.parametrize("prob", [None, "w"])
def test_excluded_edges_are_never_drawn(prob):
    g = hetero_graph()
    sampler = NeighborSampler([5, 5], prob=prob)
    excluded = {WRITES: torch.arange(0, 400, 2), "cites": torch.arange(350)}
    for i in range(10):
        seeds = {"paper": torch.arange(i * 12, (i + 1) * 12)}
        blocks = sampler.sample(g, seeds, exclude_eids=excluded)[2]
        check_blocks(g, blocks, seeds)
        for block in blocks:
            assert bool((block.edges[WRITES].data[dgl.EID] % 2 == 1).all())
            assert bool((block.edges[CITES].data[dgl.EID] >= 350).all())
    full = NeighborSampler([-1], prob=prob).sample(g, {"paper": torch.arange(120)})[2][0]
    w = g.edges[WRITES].data["w"] if prob else torch.ones(g.num_edges(WRITES))
    assert full.num_edges(WRITES) == int((w > 0).sum())


@pytest.mark.parametrize("exclude", ["self", "reverse_types", "reverse_id"])
def test_edge_prediction_excludes_seed_edges_and_their_reverses(exclude):
    g = hetero_graph()
    # reverse_types: edge e of writes is edge e of written-by; reverse_id: on one edge type
    # holding both directions.
    if exclude == "reverse_id":
        src, dst = g.edges(etype=CITES)
        num = src.numel()
        g = dgl.heterograph(
            {CITES: (torch.cat([src, dst]), torch.cat([dst, src])), WRITES: g.edges(etype=WRITES)},
            num_nodes_dict={"author": 60, "paper": 120},
        )
        reverse_eids = {CITES: torch.cat([torch.arange(num, 2 * num), torch.arange(num)])}
        seed_edges = {CITES: torch.arange(num)}
    else:
        reverse_eids = None
        seed_edges = {"writes": torch.arange(g.num_edges(WRITES))}
    num_seed_edges = next(iter(seed_edges.values())).numel()
    reverse_etypes = {"writes": "written-by", "written-by": "writes"}
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        NeighborSampler([-1, 4]),
        exclude=exclude,
        reverse_eids=reverse_eids,
        reverse_etypes=reverse_etypes if exclude == "reverse_types" else None,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1),
    )
    loader = dgl.dataloading.DataLoader(g, seed_edges, sampler, batch_size=50, shuffle=True)
    batches = 0
    for _input_nodes, pair_graph, neg_graph, blocks in loader:
        seed_type = next(iter(seed_edges))
        seed_type = g.to_canonical_etype(seed_type)
        seeds = pair_graph.edges[seed_type].data[dgl.EID]
        excluded = {seed_type: set(seeds.tolist())}
        if exclude == "reverse_types":
            excluded[WRITTEN_BY] = set(seeds.tolist())
        if exclude == "reverse_id":
            excluded[seed_type] |= set(reverse_eids[CITES][seeds].tolist())
        for block in blocks:
            for etype, ids in excluded.items():
                assert not ids & set(block.edges[etype].data[dgl.EID].tolist())
        check_blocks(g, blocks, {t: blocks[-1].dstnodes[t].data[dgl.NID] for t in g.ntypes})
        assert neg_graph.num_edges(seed_type) == pair_graph.num_edges(seed_type)
        batches += 1
    assert batches == -(-num_seed_edges // 50)


# ---------------------------------------------------------------------------------------------
# DataLoader, features, training


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_prefetches_features_per_type(workers):
    g = hetero_graph()
    sampler = NeighborSampler(
        [3, 3],
        prefetch_node_feats={"paper": ["feat"], "author": ["feat"]},
        prefetch_labels={"paper": ["label"]},
        prefetch_edge_feats={"writes": ["w"], CITES: ["w"]},
    )
    loader = dgl.dataloading.DataLoader(
        g, {"paper": torch.arange(100)}, sampler, batch_size=16, shuffle=True, num_workers=workers
    )
    seen = []
    for input_nodes, output_nodes, blocks in loader:
        check_blocks(g, blocks, output_nodes)
        for ntype in ("paper", "author"):
            assert torch.equal(
                blocks[0].srcnodes[ntype].data["feat"],
                g.nodes[ntype].data["feat"][input_nodes[ntype].long()],
            )
        assert torch.equal(
            blocks[-1].dstnodes["paper"].data["label"],
            g.nodes["paper"].data["label"][output_nodes["paper"]],
        )
        for block in blocks:
            for etype in (WRITES, CITES):
                eid = block.edges[etype].data[dgl.EID].long()
                assert torch.equal(block.edges[etype].data["w"], g.edges[etype].data["w"][eid])
        seen.append(output_nodes["paper"])
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(100))


@pytest.mark.parametrize("conv", ["graph", "sage"])
def test_rgcn_training_step_with_hetero_graph_conv(conv):
    """An R-GCN-style model (dgl.nn.HeteroGraphConv around fastgl's drop-in layers, one per
    edge type) trains on the blocks: its forward equals the same model on DGL's own layers, and
    it learns to imitate a teacher of its own architecture (so the labels are learnable from
    what the blocks carry)."""
    g = hetero_graph()
    feat = {t: g.nodes[t].data["feat"] for t in g.ntypes}
    layer_cls, dgl_cls, kwargs = {
        "graph": (GraphConv, dglnn.GraphConv, dict(allow_zero_in_degree=True)),
        "sage": (SAGEConv, dglnn.SAGEConv, dict(aggregator_type="mean")),
    }[conv]

    def make(cls, seed):
        torch.manual_seed(seed)

        def layer(i, o):
            mods = {etype: cls(i, o, **kwargs) for etype in g.etypes}
            return dglnn.HeteroGraphConv(mods, aggregate="sum")

        return torch.nn.ModuleList([layer(5, 16), layer(16, 3)])

    ours, theirs, teacher = make(layer_cls, 0), make(dgl_cls, 0), make(dgl_cls, 1)
    theirs.load_state_dict(ours.state_dict())

    def forward(model, blocks, inputs):
        h = inputs
        for i, (layer, block) in enumerate(zip(model, blocks)):
            h = layer(block, h)
            if i + 1 < len(model):
                h = {t: x.relu() for t, x in h.items()}
        return h["paper"]

    fanouts = {"writes": 5, "written-by": 5, "cites": 5, "has-topic": 2, "about": 2}
    loader = dgl.dataloading.DataLoader(
        g, {"paper": torch.arange(120)}, NeighborSampler([fanouts] * 2), batch_size=40
    )
    input_nodes, _output_nodes, blocks = next(iter(loader))
    inputs = {t: feat[t][ids.long()] for t, ids in input_nodes.items()}
    with torch.no_grad():
        torch.testing.assert_close(
            forward(ours, blocks, inputs), forward(theirs, blocks, inputs), atol=1e-5, rtol=1e-5
        )
        label = forward(teacher, blocks, inputs).argmax(1)
    optimizer = torch.optim.Adam(ours.parameters(), lr=0.02)
    losses = []
    for _step in range(60):
        loss = F.cross_entropy(forward(ours, blocks, inputs), label)
        optimizer.zero_grad()
        loss.backward()
        for etype in ("writes", "cites", "about"):  # every relation into papers learns
            assert all(p.grad is not None for p in ours[1].mods[etype].parameters())
        optimizer.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_inputs_get_clear_errors():
    g = hetero_graph()
    seeds = {"paper": torch.tensor([1, 2])}
    with pytest.raises(ValueError, match="seed_nodes must be a dict"):
        NeighborSampler([2]).sample(g, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"node types \['venue'\] that the graph lacks"):
        NeighborSampler([2]).sample(g, {"venue": torch.tensor([0])})
    with pytest.raises(ValueError, match="empty dict"):
        NeighborSampler([2]).sample(g, {})
    with pytest.raises(ValueError, match="duplicate"):
        NeighborSampler([2]).sample(g, {"paper": torch.tensor([4, 4])})
    with pytest.raises((ValueError, RuntimeError), match="120"):
        NeighborSampler([2]).sample(g, {"paper": torch.tensor([1, 120])})
    with pytest.raises(ValueError, match="1-D integer"):
        NeighborSampler([2]).sample(g, {"paper": torch.tensor([1.0])})
    with pytest.raises(ValueError, match=r"no fanout for edge types \[\('topic'"):
        NeighborSampler([{"writes": 1, "written-by": 1, "cites": 1, "has-topic": 1}]).sample(
            g, seeds
        )
    with pytest.raises(ValueError, match="'likes', which the graph lacks"):
        NeighborSampler([{"likes": 1}]).sample(g, seeds)
    with pytest.raises(ValueError, match="twice"):
        layer = {e: 1 for e in g.etypes} | {WRITES: 2}
        NeighborSampler([layer]).sample(g, seeds)
    with pytest.raises(TypeError, match=r"fanouts\[0\]\['cites'\] must be an int"):
        NeighborSampler([{"cites": 1.5}])
    with pytest.raises(ValueError, match="-1 \\(all\\) or >= 0"):
        NeighborSampler([{"cites": -2}])
    with pytest.raises(TypeError, match="edge types"):
        NeighborSampler([{3: 1}])
    with pytest.raises(TypeError, match="one entry per GNN layer"):
        NeighborSampler({"cites": 1})
    with pytest.raises(ValueError, match="exclude_eids must be a dict"):
        NeighborSampler([2]).sample(g, seeds, exclude_eids=torch.tensor([0]))
    with pytest.raises(ValueError, match="no edge type of the graph has the edge feature 'p'"):
        NeighborSampler([2], prob="p").sample(g, seeds)
    g.edges[CITES].data["neg"] = -torch.ones(g.num_edges(CITES))
    with pytest.raises(ValueError, match="'neg' of edge type .*cites.* non-negative"):
        NeighborSampler([2], prob="neg").sample(g, seeds)
    g.edges[CITES].data["wide"] = torch.ones(g.num_edges(CITES), 2)
    with pytest.raises(ValueError, match=r"must have shape \[700\]"):
        NeighborSampler([2], mask="wide").sample(g, seeds)
    ambiguous = dgl.heterograph({("a", "r", "b"): ([0], [0]), ("b", "r", "a"): ([0], [0])})
    with pytest.raises(ValueError, match="ambiguous"):
        NeighborSampler([{"r": 1}]).sample(ambiguous, {"a": torch.tensor([0])})
    with pytest.raises(ValueError, match="ambiguous"):
        NeighborSampler([1]).sample(
            ambiguous, {"a": torch.tensor([0])}, exclude_eids={"r": torch.tensor([0])}
        )


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("mode", ["gpu_graph", "uva"])
def test_gpu_graph_and_uva(mode):
    g = hetero_graph()
    graph = g.to("cuda") if mode == "gpu_graph" else g
    loader = dgl.dataloading.DataLoader(
        graph,
        {"paper": torch.arange(64, device="cuda")},
        NeighborSampler([3, 3]),
        batch_size=16,
        device="cuda",
        use_uva=mode == "uva",
    )
    for _input_nodes, output_nodes, blocks in loader:
        assert all(b.device.type == "cuda" for b in blocks)
        check_blocks(g, [b.to("cpu") for b in blocks], {"paper": output_nodes["paper"].cpu()})
