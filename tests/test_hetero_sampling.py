"""HeteroNeighborSampler against a pure-Python reference (all neighbors: deterministic) and
against fastgl's homogeneous sampler (one relation: the same draws), checks that every random
sample is a valid one (layout, edges, counts per relation and transit), chi-square tests of the
draws, the blocks, bad input, and an R-GCN that learns through one relation."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import expected_draws, first_occurrence, id_map_reference
from scipy.stats import chisquare

import fastgl
from fastgl import CSCGraph, HeteroCSCGraph, NeighborSampler
from fastgl.nn import GCNConv, SAGEConv
from fastgl.ops import sample_hops
from fastgl.sampling import HeteroNeighborSampler, HeteroSampledSubgraph, hetero_neighbor_sample

P_MIN = 1e-3  # chi-square p-value threshold (fixed seeds: deterministic)

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
WRITTEN_BY = ("paper", "written_by", "author")
AT = ("paper", "at", "venue")
HOSTS = ("venue", "hosts", "venue")  # no edges
NUM_NODES = {"author": 9, "paper": 8, "venue": 3, "empty": 0}


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _pairs(num_src, num_dst, num_edges, seed):
    g = _gen(seed)
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    dst = torch.randint(0, num_dst, (num_edges,), generator=g)
    return torch.stack([src, dst])


def _edge_index_dict():
    return {
        WRITES: _pairs(9, 8, 30, 0),
        CITES: _pairs(8, 8, 25, 1),
        WRITTEN_BY: _pairs(8, 9, 20, 2),
        AT: _pairs(8, 3, 10, 3),
        HOSTS: torch.zeros(2, 0, dtype=torch.int64),
    }


EDGES = _edge_index_dict()
GRAPH = HeteroCSCGraph.from_edge_index_dict(EDGES, NUM_NODES)


# ---------------------------------------------------------------------------------------------
# The reference: every neighbor (fanout -1) or none (0) along each relation, in pure Python
# ---------------------------------------------------------------------------------------------


def hetero_reference(
    edge_index_dict, num_nodes, seeds, fanouts, layerwise=False, disjoint=False, num_hops=None
):
    """The sample of fanouts -1 / 0 as plain lists: node keys ``(tree, type, id)`` in the order
    they appear (seeds of the node types in order, then each hop's draws: relation by relation,
    transits in order, a transit's in-edges in edge order), then split by type."""
    in_edges = {
        etype: {
            v: [(e, u) for e, (u, w) in enumerate(ei.t().tolist()) if w == v]
            for v in range(num_nodes[etype[2]])
        }
        for etype, ei in edge_index_dict.items()
    }
    seed_keys = [(t, v) for t in num_nodes for v in seeds.get(t, torch.zeros(0)).tolist()]
    keys = [(i if disjoint else 0, t, v) for i, (t, v) in enumerate(seed_keys)]
    mixed, seed_local = id_map_reference([], keys)
    ends, edges = [len(mixed)], []
    if num_hops is None:
        num_hops = len(next(iter(fanouts.values()), []))
    for hop in range(num_hops):
        begin = 0 if layerwise or hop == 0 else ends[hop - 1]
        drawn = [
            (etype, (key[0], etype[0], u), key, e)
            for etype in edge_index_dict
            if fanouts[etype][hop] != 0
            for key in mixed[begin : ends[hop]]
            if key[1] == etype[2]
            for e, u in in_edges[etype][key[2]]
        ]
        mixed, _ = id_map_reference(mixed, [src for _, src, _, _ in drawn])
        edges += [(etype, hop, src, dst, e) for etype, src, dst, e in drawn]
        ends.append(len(mixed))
    local = {}
    for key in mixed:
        local[key] = sum(1 for k in local if k[1] == key[1])
    hop_of = {key: next(h for h, end in enumerate(ends) if i < end) for i, key in enumerate(mixed)}
    return dict(
        nodes={t: [k[2] for k in mixed if k[1] == t] for t in num_nodes},
        batch={t: [k[0] for k in mixed if k[1] == t] for t in num_nodes},
        num_sampled_nodes={
            t: [sum(1 for k in mixed if k[1] == t and hop_of[k] == h) for h in range(len(ends))]
            for t in num_nodes
        },
        seed_index={
            t: [local[mixed[p]] for p, (tt, _) in zip(seed_local, seed_keys) if tt == t]
            for t in num_nodes
        },
        row={r: [local[s] for et, _, s, _, _ in edges if et == r] for r in edge_index_dict},
        col={r: [local[d] for et, _, _, d, _ in edges if et == r] for r in edge_index_dict},
        eid={r: [e for et, _, _, _, e in edges if et == r] for r in edge_index_dict},
        num_sampled_edges={
            r: [sum(1 for et, h, *_ in edges if et == r and h == hop) for hop in range(num_hops)]
            for r in edge_index_dict
        },
    )


def assert_equals_reference(sub, expected, disjoint):
    for field in ("nodes", "seed_index", "row", "col", "eid"):
        got = {k: v.tolist() for k, v in getattr(sub, field).items()}
        assert got == expected[field], field
    assert sub.num_sampled_nodes == expected["num_sampled_nodes"]
    assert sub.num_sampled_edges == expected["num_sampled_edges"]
    if disjoint:
        assert {t: b.tolist() for t, b in sub.batch.items()} == expected["batch"]
    else:
        assert sub.batch is None


# ---------------------------------------------------------------------------------------------
# A validity check for random samples
# ---------------------------------------------------------------------------------------------


def check_hetero_sample(
    sub, edge_index_dict, num_nodes, seeds, fanouts, replace=False, layerwise=False, weights=None
):
    """Asserts that ``sub`` is a valid sample of ``fanouts`` (a dict per relation) around
    ``seeds``: layout per type, every edge exists with its id, each hop's edges come from that
    hop's transits, and each (relation, transit) pair drew what its fanout allows."""
    num_hops = sub.num_layers
    disjoint = sub.batch is not None
    ends = {t: [0] + torch.tensor(c).cumsum(0).tolist() for t, c in sub.num_sampled_nodes.items()}
    for t, nodes in sub.nodes.items():
        assert nodes.dtype == torch.int64 and len(sub.num_sampled_nodes[t]) == num_hops + 1
        assert sum(sub.num_sampled_nodes[t]) == nodes.numel()
        given = seeds.get(t, torch.zeros(0, dtype=torch.int64))
        assert torch.equal(nodes[sub.seed_index[t]], given)
        if not disjoint:
            assert len(set(nodes.tolist())) == nodes.numel(), f"{t} nodes repeat"
            assert nodes[: ends[t][1]].tolist() == first_occurrence(given.tolist())
        else:
            keys = list(zip(sub.batch[t].tolist(), nodes.tolist()))
            assert len(set(keys)) == len(keys), f"{t} nodes repeat within a tree"
    for etype, edge_index in edge_index_dict.items():
        s, _, d = etype
        row, col, eid = sub.row[etype], sub.col[etype], sub.eid[etype]
        assert row.numel() == col.numel() == eid.numel() == sum(sub.num_sampled_edges[etype])
        assert torch.equal(edge_index[0][eid], sub.nodes[s][row]), f"{etype}: wrong sources"
        assert torch.equal(edge_index[1][eid], sub.nodes[d][col]), f"{etype}: wrong targets"
        if weights is not None:
            assert bool((weights[etype][eid] > 0).all()), "a zero-weight edge was drawn"
        if disjoint:
            assert torch.equal(sub.batch[s][row], sub.batch[d][col]), "an edge crosses trees"
        edge_ends = [0] + torch.tensor(sub.num_sampled_edges[etype]).cumsum(0).tolist()
        for hop in range(num_hops):
            part = slice(edge_ends[hop], edge_ends[hop + 1])
            first = 0 if layerwise or hop == 0 else ends[d][hop]
            transits = range(first, ends[d][hop + 1])
            assert bool((row[part] < ends[s][hop + 2]).all()), "a source is from a later hop"
            degree = _available(
                edge_index, num_nodes[d], None if weights is None else weights[etype]
            )
            expected = expected_draws(
                degree[sub.nodes[d][list(transits)]], fanouts[etype][hop], replace
            )
            drawn = torch.bincount(col[part] - first, minlength=len(transits))
            assert drawn.tolist() == expected.tolist(), f"{etype} hop {hop + 1}: draws per transit"
            assert bool((col[part][1:] >= col[part][:-1]).all()), "edges not grouped by transit"
            if not replace:
                pairs = list(zip(col[part].tolist(), eid[part].tolist()))
                assert len(set(pairs)) == len(pairs), "drawn twice without replacement"
    if not disjoint:
        _check_new_nodes_first_occurrence(sub, edge_index_dict, num_hops, ends)


def _available(edge_index, num_dst, weight):
    mask = torch.ones(edge_index.shape[1], dtype=torch.bool) if weight is None else weight > 0
    return torch.bincount(edge_index[1][mask], minlength=num_dst)


def _check_new_nodes_first_occurrence(sub, edge_index_dict, num_hops, ends):
    """The nodes of type ``t`` new at hop ``h`` are the first occurrences among that hop's
    sources of type ``t``, relation by relation in the graph's order."""
    for t, nodes in sub.nodes.items():
        seen = set(nodes[: ends[t][1]].tolist())
        for hop in range(num_hops):
            sources = []
            for etype in edge_index_dict:
                if etype[0] == t:
                    e = [0] + torch.tensor(sub.num_sampled_edges[etype]).cumsum(0).tolist()
                    sources += nodes[sub.row[etype][e[hop] : e[hop + 1]]].tolist()
            new = [v for v in first_occurrence(sources) if v not in seen]
            assert nodes[ends[t][hop + 1] : ends[t][hop + 2]].tolist() == new, (t, hop)
            seen.update(new)


def check_hetero_blocks(sub, edge_index_dict, num_nodes=NUM_NODES):
    """Per layer and relation: global ids, destinations the prefix of their type's sources of
    the layer, hop-wise edges a prefix of the relation's, layer-wise one hop's, and the last
    layer's destinations the seeds."""
    num_layers = sub.num_layers
    assert len(sub.blocks) == len(sub.block_sizes) == num_layers
    for layer, (blocks, sizes) in enumerate(zip(sub.blocks, sub.block_sizes)):
        hops = num_layers - layer
        for t, (num_src, num_dst) in sizes.items():
            assert num_src == sum(sub.num_sampled_nodes[t][: hops + 1])
            assert num_dst == sum(sub.num_sampled_nodes[t][:hops])
        assert list(blocks) == list(edge_index_dict)
        for etype, block in blocks.items():
            s, _, d = etype
            assert (block.num_src_nodes, block.num_dst_nodes) == (sizes[s][0], sizes[d][1])
            assert torch.equal(block.src_nodes, sub.nodes[s][: block.num_src_nodes])
            assert torch.equal(block.dst_nodes, sub.nodes[d][: block.num_dst_nodes])
            counts = sub.num_sampled_edges[etype]
            first = sum(counts[: hops - 1]) if sub.layerwise else 0
            assert torch.equal(block.eid, sub.eid[etype][first : sum(counts[:hops])])
            edge_index = edge_index_dict[etype]
            assert torch.equal(edge_index[0][block.eid], block.src_nodes[block.src])
            assert torch.equal(edge_index[1][block.eid], block.dst_nodes[block.dst])
            per_dst = torch.bincount(block.dst, minlength=block.num_dst_nodes)
            assert torch.equal(block.indptr, torch.cat([per_dst.new_zeros(1), per_dst.cumsum(0)]))
            if s == d:
                degree = torch.bincount(edge_index[1], minlength=num_nodes[d])
                assert torch.equal(block.src_in_degrees, degree[block.src_nodes])
            else:
                assert block.src_in_degrees is None
    if num_layers:
        for t, (_, num_dst) in sub.block_sizes[-1].items():
            assert num_dst == sub.batch_size[t]


# ---------------------------------------------------------------------------------------------
# All neighbors: the exact sample
# ---------------------------------------------------------------------------------------------

SEED_CASES = {
    "one type": {"paper": torch.tensor([3, 1, 3])},
    "several types": {"venue": torch.tensor([2]), "author": torch.tensor([0, 4, 0])},
    "empty entries": {"paper": torch.tensor([], dtype=torch.int64), "author": torch.tensor([5])},
    "no seeds": {},
    "int32, empty type": {
        "paper": torch.tensor([7], dtype=torch.int32),
        "empty": torch.zeros(0, dtype=torch.int64),
    },
}
FANOUT_CASES = {
    "all": [-1, -1],
    "per relation": {
        WRITES: [-1, 0],
        CITES: [0, -1],
        WRITTEN_BY: [-1, -1],
        AT: [-1, -1],
        HOSTS: [0, 0],
    },
    "three hops": [-1, -1, -1],
    "no hop": [],
}


def _per_relation(fanouts, edge_types=tuple(EDGES)):
    if isinstance(fanouts, dict):
        return fanouts
    return {etype: list(fanouts) for etype in edge_types}


@pytest.mark.parametrize("seeds", SEED_CASES.values(), ids=SEED_CASES.keys())
@pytest.mark.parametrize("fanouts", FANOUT_CASES.values(), ids=FANOUT_CASES.keys())
@pytest.mark.parametrize("layerwise", [False, True], ids=["hopwise", "layerwise"])
@pytest.mark.parametrize("disjoint", [False, True], ids=["shared", "disjoint"])
def test_all_neighbors_equal_the_reference(seeds, fanouts, layerwise, disjoint):
    sampler = HeteroNeighborSampler(GRAPH, fanouts, layerwise=layerwise, disjoint=disjoint)
    sub = sampler.sample(seeds, generator=_gen(0))
    int64_seeds = {t: s.to(torch.int64) for t, s in seeds.items()}
    expected = hetero_reference(
        EDGES, NUM_NODES, int64_seeds, _per_relation(fanouts), layerwise, disjoint
    )
    assert_equals_reference(sub, expected, disjoint)
    check_hetero_blocks(sub, EDGES)


@st.composite
def hetero_case(draw):
    """A random heterogeneous graph (node types may have no nodes, relations no edges, several
    relations may join the same types), seeds of some types, and per-relation fanouts."""
    types = [f"t{i}" for i in range(draw(st.integers(1, 3)))]
    num_nodes = {t: draw(st.integers(0, 12)) for t in types}
    num_relations = draw(st.integers(0, 4))
    edges = {}
    for r in range(num_relations):
        src, dst = draw(st.sampled_from(types)), draw(st.sampled_from(types))
        if num_nodes[src] and num_nodes[dst]:
            num_edges, seed = draw(st.integers(0, 40)), draw(st.integers(0, 2**31 - 1))
            edges[(src, f"r{r}", dst)] = _pairs(num_nodes[src], num_nodes[dst], num_edges, seed)
        else:
            edges[(src, f"r{r}", dst)] = torch.zeros(2, 0, dtype=torch.int64)
    seeds = {
        t: torch.tensor(draw(st.lists(st.integers(0, n - 1), max_size=4)), dtype=torch.int64)
        for t, n in num_nodes.items()
        if n and draw(st.booleans())
    }
    num_hops = draw(st.integers(0, 3))
    fanouts = {
        e: draw(st.lists(st.integers(-1, 3), min_size=num_hops, max_size=num_hops)) for e in edges
    }
    return edges, num_nodes, seeds, fanouts, num_hops


@settings(max_examples=40)
@given(case=hetero_case(), layerwise=st.booleans(), disjoint=st.booleans(), seed=st.integers(0, 99))
def test_random_graphs(case, layerwise, disjoint, seed):
    """All neighbors equal the reference; random fanouts give valid samples and blocks."""
    edges, num_nodes, seeds, fanouts, num_hops = case
    graph = HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)
    everything = {e: [-1] * num_hops for e in edges}
    options = dict(layerwise=layerwise, disjoint=disjoint)
    full = HeteroNeighborSampler(graph, [-1] * num_hops, **options).sample(seeds)
    expected = hetero_reference(edges, num_nodes, seeds, everything, num_hops=num_hops, **options)
    assert_equals_reference(full, expected, disjoint)
    check_hetero_blocks(full, edges, num_nodes)
    sampler = HeteroNeighborSampler(graph, fanouts if edges else [2] * num_hops, **options)
    sub = sampler.sample(seeds, _gen(seed))
    check_hetero_sample(sub, edges, num_nodes, seeds, fanouts, layerwise=layerwise)
    check_hetero_blocks(sub, edges, num_nodes)


def test_hopwise_and_layerwise_differ_as_documented():
    """Hop 2 draws again for the seeds layer-wise (DGL), not hop-wise (PyG)."""
    seeds = {"paper": torch.tensor([0])}
    hopwise = HeteroNeighborSampler(GRAPH, [-1, -1]).sample(seeds)
    layerwise = HeteroNeighborSampler(GRAPH, [-1, -1], layerwise=True).sample(seeds)
    assert hopwise.nodes["paper"].tolist() == layerwise.nodes["paper"].tolist()
    for etype in EDGES:
        first_hop = hopwise.num_sampled_edges[etype][0]
        assert layerwise.num_sampled_edges[etype][0] == first_hop
        # Layer-wise hop 2 repeats hop 1's edges (the seeds draw again) before the new ones.
        col = layerwise.col[etype][first_hop:]
        repeat = layerwise.eid[etype][first_hop : first_hop + first_hop]
        assert torch.equal(repeat, layerwise.eid[etype][:first_hop])
        assert layerwise.num_sampled_edges[etype][1] >= hopwise.num_sampled_edges[etype][1]
        assert col.numel() == layerwise.num_sampled_edges[etype][1]
    # Hop-wise blocks accumulate hops; layer-wise blocks hold one hop each.
    assert hopwise.blocks[0][CITES].num_edges == sum(hopwise.num_sampled_edges[CITES])
    assert layerwise.blocks[0][CITES].num_edges == layerwise.num_sampled_edges[CITES][1]


# ---------------------------------------------------------------------------------------------
# Random draws: valid samples, the homogeneous sampler's draws, distributions
# ---------------------------------------------------------------------------------------------


def _weights(seed):
    g = _gen(seed)
    out = {}
    for etype, ei in EDGES.items():
        w = torch.rand(ei.shape[1], generator=g, dtype=torch.float64) + 0.1
        w[torch.rand(ei.shape[1], generator=g) < 0.25] = 0
        out[etype] = w
    return out


WEIGHTS = _weights(5)
WEIGHTED_GRAPH = HeteroCSCGraph.from_edge_index_dict(EDGES, NUM_NODES, WEIGHTS)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("layerwise", [False, True])
@pytest.mark.parametrize("disjoint", [False, True])
def test_random_samples_are_valid(replace, weighted, layerwise, disjoint):
    fanouts = {WRITES: [2, 1], CITES: [1, 3], WRITTEN_BY: [3, 0], AT: [1, 1], HOSTS: [2, 2]}
    graph = WEIGHTED_GRAPH if weighted else GRAPH
    sampler = HeteroNeighborSampler(graph, fanouts, replace, weighted, disjoint, layerwise)
    seeds = {"paper": torch.tensor([5, 0, 5, 2]), "author": torch.tensor([1])}
    for seed in range(5):
        sub = sampler.sample(seeds, generator=_gen(seed))
        check_hetero_sample(
            sub,
            EDGES,
            NUM_NODES,
            seeds,
            fanouts,
            replace,
            layerwise,
            WEIGHTS if weighted else None,
        )
        check_hetero_blocks(sub, EDGES)


@pytest.mark.parametrize("layerwise", [False, True])
def test_edge_weight_draws_by_the_given_weights(layerwise):
    """``sample(edge_weight=...)`` draws what a weighted sampler draws with those weights as
    the graph's, whatever ``weighted`` says; zero-weight edges are never drawn."""
    fanouts = {WRITES: [2, 1], CITES: [1, 3], WRITTEN_BY: [3, 0], AT: [1, 1], HOSTS: [2, 2]}
    seeds = {"paper": torch.tensor([5, 0, 5, 2]), "author": torch.tensor([1])}
    weight = WEIGHTED_GRAPH.combined.weight
    plain = HeteroNeighborSampler(GRAPH, fanouts, layerwise=layerwise)
    weighted = HeteroNeighborSampler(WEIGHTED_GRAPH, fanouts, weighted=True, layerwise=layerwise)
    for seed in range(4):
        got = plain.sample(seeds, _gen(seed), edge_weight=weight)
        expected = weighted.sample(seeds, _gen(seed))
        for field in ("nodes", "row", "col", "eid"):
            for key, value in getattr(expected, field).items():
                assert torch.equal(getattr(got, field)[key], value), field
        check_hetero_sample(got, EDGES, NUM_NODES, seeds, fanouts, False, layerwise, WEIGHTS)


def test_bad_edge_weight():
    sampler = HeteroNeighborSampler(GRAPH, [1])
    seeds = {"paper": torch.tensor([0])}
    num_edges = GRAPH.combined.indices.numel()
    with pytest.raises(ValueError, match="edge_weight must have shape"):
        sampler.sample(seeds, edge_weight=torch.ones(num_edges + 1))
    with pytest.raises(ValueError, match="edge_weight must be a float tensor"):
        sampler.sample(seeds, edge_weight=torch.ones(num_edges, dtype=torch.int64))
    node_time = {t: torch.zeros(n, dtype=torch.int64) for t, n in NUM_NODES.items()}
    temporal = HeteroNeighborSampler(GRAPH, [1], node_time=node_time)
    with pytest.raises(ValueError, match="edge_weight does not go with node_time"):
        temporal.sample(seeds, edge_weight=torch.ones(num_edges))


@pytest.mark.parametrize("layerwise", [False, True])
@pytest.mark.parametrize("disjoint", [False, True])
def test_hop_indptr_is_each_hops_csc_over_its_transits(layerwise, disjoint):
    """A hop's offsets per relation cover its transits (layer-wise: every node before the hop;
    hop-wise: the nodes new at the previous hop) and count its edges per destination."""
    fanouts = {WRITES: [2, 1], CITES: [1, 3], WRITTEN_BY: [3, 0], AT: [1, 1], HOSTS: [2, 2]}
    seeds = {"paper": torch.tensor([5, 0, 2]), "author": torch.tensor([1])}
    sampler = HeteroNeighborSampler(GRAPH, fanouts, disjoint=disjoint, layerwise=layerwise)
    sub = sampler.sample(seeds, _gen(3))
    for etype, per_hop in sub.hop_indptr.items():
        counts = sub.num_sampled_nodes[etype[2]]
        first = 0
        for hop, indptr in enumerate(per_hop):
            last = first + sub.num_sampled_edges[etype][hop]
            begin = 0 if layerwise or hop == 0 else sum(counts[:hop])
            end = sum(counts[: hop + 1])
            if indptr is None:
                assert last == first and (end == begin or fanouts[etype][hop] == 0)
            else:
                assert indptr.numel() == end - begin + 1
                col = sub.col[etype][first:last] - begin
                expected = torch.bincount(col, minlength=end - begin).cumsum(0)
                assert torch.equal(indptr, torch.cat([indptr.new_zeros(1), expected]))
            first = last


def _one_relation(num_nodes=60, num_edges=400):
    edge_index = _pairs(num_nodes, num_nodes, num_edges, 7)
    weight = torch.rand(num_edges, generator=_gen(8)) + 0.05
    rel = ("node", "to", "node")
    hetero = HeteroCSCGraph.from_edge_index_dict(
        {rel: edge_index}, {"node": num_nodes}, {rel: weight}
    )
    return rel, hetero, CSCGraph.from_edge_index(edge_index, num_nodes, weight)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"replace": True},
        {"weighted": True},
        {"disjoint": True},
        {"weighted": True, "replace": True},
    ],
    ids=str,
)
def test_one_relation_draws_what_the_homogeneous_sampler_draws(options):
    """A graph of one node type and one relation is a homogeneous graph: the same generator
    gives the same sample, draw for draw (the same Philox keys and streams)."""
    rel, hetero, graph = _one_relation()
    seeds = torch.tensor([4, 17, 4, 59, 0])
    for seed in range(3):
        got = HeteroNeighborSampler(hetero, [4, 3, 2], **options).sample(
            {"node": seeds}, _gen(seed)
        )
        expected = NeighborSampler(graph, [4, 3, 2], **options).sample(seeds, _gen(seed))
        assert torch.equal(got.nodes["node"], expected.nodes)
        assert torch.equal(got.seed_index["node"], expected.seed_index)
        for field in ("row", "col", "eid"):
            assert torch.equal(getattr(got, field)[rel], getattr(expected, field)), field
        assert got.num_sampled_nodes["node"] == expected.num_sampled_nodes
        assert got.num_sampled_edges[rel] == expected.num_sampled_edges
        assert torch.equal(got.in_degrees[rel], expected.in_degrees)
        if options.get("disjoint"):
            assert torch.equal(got.batch["node"], expected.batch)


def test_one_relation_layerwise_draws_what_sample_hops_draws():
    rel, hetero, graph = _one_relation()
    seeds = torch.tensor([4, 17, 4, 59, 0])
    key = 123456789
    got = HeteroNeighborSampler(hetero, [3, 2], layerwise=True)._sample({"node": seeds}, key)
    window = torch.tensor([0, seeds.numel()])
    out = sample_hops(
        graph.indptr,
        graph.indices,
        None,
        graph.eid,
        seeds,
        window,
        [3, 2],
        layerwise=True,
        seed=key,
    )
    assert torch.equal(got.nodes["node"], out.nodes)
    assert torch.equal(got.row[rel], out.row) and torch.equal(got.col[rel], out.col)
    assert torch.equal(got.eid[rel], out.edge_ids)
    assert got.num_sampled_edges[rel] == out.edge_counts[0].tolist()


def test_draws_within_a_relation_are_uniform():
    """A paper with 10 authors and 4 citing papers draws 3 authors and 2 papers, 3000 times
    (disjoint trees: independent streams); every neighbor is drawn equally often."""
    writes = torch.stack([torch.arange(10), torch.zeros(10, dtype=torch.int64)])
    cites = torch.stack([torch.arange(1, 5), torch.zeros(4, dtype=torch.int64)])
    graph = HeteroCSCGraph.from_edge_index_dict(
        {WRITES: writes, CITES: cites}, {"author": 10, "paper": 5}
    )
    trees = 3000
    sampler = HeteroNeighborSampler(graph, {WRITES: [3], CITES: [2]}, disjoint=True)
    sub = sampler.sample({"paper": torch.zeros(trees, dtype=torch.int64)}, _gen(1))
    for etype, fanout, degree in ((WRITES, 3, 10), (CITES, 2, 4)):
        assert sub.eid[etype].numel() == trees * fanout  # min(fanout, degree) per pair
        observed = torch.bincount(sub.eid[etype], minlength=degree).double()
        expected = torch.full((degree,), trees * fanout / degree, dtype=torch.float64)
        p = chisquare(observed.numpy(), expected.numpy()).pvalue
        assert p > P_MIN, f"{etype}: chi-square p = {p:.2e}, observed {observed.tolist()}"


def test_weighted_draws_follow_the_weights():
    weights = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 0.0])
    writes = torch.stack([torch.arange(6), torch.zeros(6, dtype=torch.int64)])
    graph = HeteroCSCGraph.from_edge_index_dict(
        {WRITES: writes}, {"author": 6, "paper": 1}, {WRITES: weights}
    )
    sampler = HeteroNeighborSampler(graph, [2], replace=True, weighted=True, disjoint=True)
    sub = sampler.sample({"paper": torch.zeros(2000, dtype=torch.int64)}, _gen(2))
    observed = torch.bincount(sub.eid[WRITES], minlength=6).double()
    assert observed[0] == 0 and observed[5] == 0
    expected = weights[1:5].double() / weights.sum() * 4000
    p = chisquare(observed[1:5].numpy(), expected.numpy()).pvalue
    assert p > P_MIN, f"chi-square p = {p:.2e}, observed {observed.tolist()}"


def test_a_generator_seed_reproduces_the_sample():
    sampler = HeteroNeighborSampler(GRAPH, [2, 2])
    seeds = {"paper": torch.tensor([1, 6]), "author": torch.tensor([3])}
    first = sampler.sample(seeds, _gen(11))
    again = sampler.sample(seeds, _gen(11))
    other = sampler.sample(seeds, _gen(12))
    for field in ("nodes", "row", "col", "eid"):
        a, b = getattr(first, field), getattr(again, field)
        assert all(torch.equal(a[k], b[k]) for k in a), field
    assert any(not torch.equal(first.eid[e], other.eid[e]) for e in EDGES)
    torch.manual_seed(3)
    default = sampler.sample(seeds)
    torch.manual_seed(3)
    repeated = sampler.sample(seeds)
    assert all(torch.equal(default.eid[e], repeated.eid[e]) for e in EDGES)


def test_hetero_neighbor_sample_is_the_sampler():
    seeds = {"paper": torch.tensor([2])}
    sub = hetero_neighbor_sample(GRAPH, seeds, [2, 1], generator=_gen(4))
    expected = HeteroNeighborSampler(GRAPH, [2, 1]).sample(seeds, _gen(4))
    assert isinstance(sub, HeteroSampledSubgraph)
    assert all(torch.equal(sub.eid[e], expected.eid[e]) for e in EDGES)


def test_every_type_and_relation_has_an_entry():
    sub = HeteroNeighborSampler(GRAPH, [1]).sample({"venue": torch.tensor([0])}, _gen(0))
    assert list(sub.nodes) == list(NUM_NODES) and list(sub.row) == list(EDGES)
    assert sub.nodes["empty"].numel() == 0 and sub.num_sampled_nodes["empty"] == [0, 0]
    assert sub.eid[HOSTS].numel() == 0 and sub.num_sampled_edges[HOSTS] == [0]
    assert sub.batch_size == {"author": 0, "paper": 0, "venue": 1, "empty": 0}
    assert torch.equal(sub.edge_index[AT], torch.stack([sub.row[AT], sub.col[AT]]))
    with pytest.raises(AttributeError):
        sub.nodes = {}  # frozen


def test_graph_without_relations_gives_the_seeds():
    graph = HeteroCSCGraph.from_edge_index_dict({}, {"a": 4})
    sub = HeteroNeighborSampler(graph, [3, 3]).sample({"a": torch.tensor([2, 2, 0])})
    assert sub.nodes["a"].tolist() == [2, 0] and sub.num_sampled_nodes["a"] == [2, 0, 0]
    assert sub.seed_index["a"].tolist() == [0, 0, 1]
    assert [layer for layer in sub.blocks] == [{}, {}]
    assert HeteroNeighborSampler(graph, {}).num_hops == 0


# ---------------------------------------------------------------------------------------------
# Blocks in conv layers
# ---------------------------------------------------------------------------------------------


def test_blocks_run_one_conv_per_relation():
    torch.manual_seed(0)
    x = {t: torch.randn(n, 6) for t, n in NUM_NODES.items()}
    sub = HeteroNeighborSampler(GRAPH, [3, 2]).sample({"paper": torch.tensor([0, 4])}, _gen(0))
    h = {t: x[t][sub.nodes[t]] for t in NUM_NODES}
    for blocks, sizes in zip(sub.blocks, sub.block_sizes):
        out = {t: torch.zeros(num_dst, 5) for t, (_, num_dst) in sizes.items()}
        for (s, _, d), block in blocks.items():
            conv = SAGEConv((h[s].shape[1], h[d].shape[1]), 5)
            out[d] = out[d] + conv((h[s], h[d][: block.num_dst_nodes]), block)
        gcn = GCNConv(h["paper"].shape[1], 5)
        out["paper"] = out["paper"] + gcn(h["paper"], blocks[CITES])
        h = out
    assert h["paper"].shape == (2, 5)


def test_a_block_between_two_types_moves_its_destination_ids():
    sub = HeteroNeighborSampler(GRAPH, [2]).sample({"paper": torch.tensor([3])}, _gen(0))
    block = sub.blocks[0][WRITES].to("cpu")
    assert torch.equal(block.dst_nodes, sub.nodes["paper"][:1])
    assert block.src_nodes.numel() == block.num_src_nodes


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fanouts, error, match",
    [
        ({WRITES: [1, 2]}, ValueError, r"no entry for relations \[\('paper', 'cites', 'paper'\)"),
        (
            {e: [1, 2] for e in EDGES} | {WRITES: [1]},
            ValueError,
            r"same number of hops, got \{\('author', 'writes', 'paper'\): 1, .*: 2",
        ),
        (
            {e: [1] for e in EDGES} | {("paper", "reads", "author"): [1]},
            ValueError,
            r"fanouts has edge types \[\('paper', 'reads', 'author'\)\] that the graph lacks",
        ),
        ([2, -2], ValueError, "-1 .all. or >= 0"),
        (3, TypeError, "fanouts must be a list of ints"),
        ({e: [1.5] for e in EDGES}, TypeError, "fanouts must be ints"),
    ],
)
def test_bad_fanouts(fanouts, error, match):
    with pytest.raises(error, match=match):
        HeteroNeighborSampler(GRAPH, fanouts)


@pytest.mark.parametrize(
    "seeds, error, match",
    [
        (
            {"book": torch.tensor([0])},
            ValueError,
            r"seeds has node types \['book'\] that the graph lacks",
        ),
        (
            {"paper": torch.tensor([8])},
            ValueError,
            r"seeds\['paper'\] has 'paper' id 8, out of range for 8 'paper' nodes",
        ),
        ({"venue": torch.tensor([-1])}, ValueError, r"'venue' id -1"),
        ({"empty": torch.tensor([0])}, ValueError, r"out of range for 0 'empty' nodes"),
        ({"paper": torch.tensor([[0]])}, ValueError, "1-D int32/int64"),
        ({"paper": torch.tensor([0.0])}, ValueError, "1-D int32/int64"),
        ({"paper": [0]}, TypeError, r"seeds\['paper'\] must be a tensor"),
        (torch.tensor([0]), TypeError, "seeds must be a dict"),
    ],
)
def test_bad_seeds(seeds, error, match):
    with pytest.raises(error, match=match):
        HeteroNeighborSampler(GRAPH, [1]).sample(seeds)


def test_weighted_needs_weights_on_every_relation():
    with pytest.raises(ValueError, match=r"weighted=True needs edge weights for every relation"):
        HeteroNeighborSampler(GRAPH, [1], weighted=True)
    with pytest.raises(TypeError, match="graph must be a HeteroCSCGraph"):
        HeteroNeighborSampler(CSCGraph.from_edge_index(torch.tensor([[0], [1]])), [1])


# ---------------------------------------------------------------------------------------------
# R-GCN on sampled blocks: the label is learnable only through one relation
# ---------------------------------------------------------------------------------------------

NUM_CLASSES = 4
EPOCHS = 5


def _labelled_graph():
    """Items carry a class; each is tagged by 2 tags of its class (tag t has class t // 5, and
    its features say so); users buy random items and follow random users. Items' and users'
    features are noise: an item's class is learnable only through ("tag", "labels", "item")."""
    g = _gen(0)
    num_users, num_items, num_tags = 300, 400, 5 * NUM_CLASSES
    label = torch.randint(0, NUM_CLASSES, (num_items,), generator=g)
    item = torch.arange(num_items).repeat(2)
    tag = label.repeat(2) * 5 + torch.randint(0, 5, (2 * num_items,), generator=g)
    buys = torch.stack(
        [
            torch.randint(0, num_users, (1500,), generator=g),
            torch.randint(0, num_items, (1500,), generator=g),
        ]
    )
    edges = {
        ("tag", "labels", "item"): torch.stack([tag, item]),
        ("user", "buys", "item"): buys,
        ("item", "bought_by", "user"): buys.flip(0),
        ("user", "follows", "user"): torch.randint(0, num_users, (2, 900), generator=g),
    }
    num_nodes = {"user": num_users, "item": num_items, "tag": num_tags}
    x = {t: torch.randn(n, 8, generator=g) for t, n in num_nodes.items()}
    x["tag"][:, :NUM_CLASSES] += 2.0 * torch.eye(NUM_CLASSES)[torch.arange(num_tags) // 5]
    return HeteroCSCGraph.from_edge_index_dict(edges, num_nodes), x, label


class RGCN(torch.nn.Module):
    """R-GCN: ``h_i' = W_0 h_i + sum_r mean_{j in N_r(i)} W_r h_j`` per layer, one fastgl
    SAGEConv (without its root weight) per relation and one root Linear per node type."""

    def __init__(self, node_types, edge_types, channels, num_layers=2):
        super().__init__()
        dims = channels + [NUM_CLASSES]
        self.roots = torch.nn.ModuleList(
            torch.nn.ModuleDict({t: torch.nn.Linear(dims[i], dims[i + 1]) for t in node_types})
            for i in range(num_layers)
        )
        self.convs = torch.nn.ModuleList(
            torch.nn.ModuleDict(
                {
                    "__".join(e): SAGEConv(dims[i], dims[i + 1], root_weight=False)
                    for e in edge_types
                }
            )
            for i in range(num_layers)
        )

    def forward(self, x, sub, skip=()):
        h = {t: x[t][nodes] for t, nodes in sub.nodes.items()}
        for i, (blocks, sizes) in enumerate(zip(sub.blocks, sub.block_sizes)):
            out = {t: self.roots[i][t](h[t][:num_dst]) for t, (_, num_dst) in sizes.items()}
            for (s, rel, d), block in blocks.items():
                if (s, rel, d) not in skip:
                    conv = self.convs[i]["__".join((s, rel, d))]
                    out[d] = out[d] + conv((h[s], h[d][: block.num_dst_nodes]), block)
            h = out if i == len(sub.blocks) - 1 else {t: o.relu() for t, o in out.items()}
        return h


def _train_and_test(skip=()):
    torch.manual_seed(0)
    graph, x, label = _labelled_graph()
    model = RGCN(graph.node_types, graph.edge_types, [8, 16])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    sampler = HeteroNeighborSampler(graph, [4, 4])
    train, test = torch.arange(300), torch.arange(300, 400)
    generator = _gen(1)
    for _ in range(EPOCHS):
        for batch in train[torch.randperm(300, generator=generator)].split(50):
            sub = sampler.sample({"item": batch}, generator)
            loss = torch.nn.functional.cross_entropy(model(x, sub, skip)["item"], label[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        sub = sampler.sample({"item": test}, generator)
        prediction = model(x, sub, skip)["item"].argmax(1)
    return float((prediction == label[test]).float().mean())


def test_rgcn_learns_through_the_relation_that_carries_the_label():
    accuracy = _train_and_test()
    assert accuracy >= 0.9, f"test accuracy {accuracy:.2f} (chance: {1 / NUM_CLASSES:.2f})"
    # Without that relation the rest of the graph carries no signal: about chance.
    blind = _train_and_test(skip={("tag", "labels", "item")})
    assert blind <= 0.45, f"test accuracy {blind:.2f} without the label's relation"


def test_fastgl_exports_the_hetero_api():
    assert fastgl.HeteroCSCGraph is HeteroCSCGraph
    assert fastgl.sampling.HeteroNeighborSampler is HeteroNeighborSampler
