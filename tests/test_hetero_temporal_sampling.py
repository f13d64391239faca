"""HeteroNeighborSampler with node or edge times: PyG's temporal NeighborLoader on HeteroData.

Every sample is rebuilt hop by hop by ``check_temporal_hetero_sample`` below (one tree per seed,
nothing from a tree's future along a timed relation, draws per (relation, transit) as the
fanout and strategy say, the layout per node type); the distributions are checked by
chi-square (fixed seeds: a p-value threshold of 1e-3 is a fixed pass/fail, not a flake), and
the draws against the untimed disjoint sampler and the homogeneous temporal sampler.
"""

import types

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import expected_draws
from scipy.stats import chisquare
from test_hetero_sampling import EDGES, GRAPH, NUM_NODES, check_hetero_blocks, hetero_case

from fastgl import CSCGraph, HeteroCSCGraph, TemporalNeighborSampler
from fastgl.sampling import HeteroNeighborSampler, hetero_neighbor_sample
from fastgl.sampling.neighbor import tree_keys

P_MIN = 1e-3

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
HOSTS = ("venue", "hosts", "paper")


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _empty():
    return torch.zeros(0, dtype=torch.int64)


# ---------------------------------------------------------------------------------------------
# The check: rebuild the sample hop by hop
# ---------------------------------------------------------------------------------------------


class _TimedInEdges:
    """Per relation and target: its in-edges ``(time, edge id, source)``, time ``None`` along
    a relation without times."""

    def __init__(self, edges, node_time, edge_time):
        self.timed = {}
        self.in_edges = {}
        for etype, edge_index in edges.items():
            src_type = etype[0]
            if node_time is not None and src_type in node_time:
                times = node_time[src_type].tolist()
                time_of = lambda e, u, times=times: times[u]  # noqa: E731
            elif edge_time is not None and etype in edge_time:
                times = edge_time[etype].tolist()
                time_of = lambda e, u, times=times: times[e]  # noqa: E731
            else:
                time_of = None
            self.timed[etype] = time_of is not None
            per_target = self.in_edges.setdefault(etype, {})
            for e, (u, v) in enumerate(edge_index.t().tolist()):
                time = None if time_of is None else time_of(e, u)
                per_target.setdefault(v, []).append((time, e))

    def valid(self, etype, target, tree_time):
        """Edge ids a tree of ``tree_time`` may draw: timed, oldest first (ties by edge id)
        among those not newer than the tree; untimed, all in edge order."""
        edges = self.in_edges[etype].get(target, [])
        if not self.timed[etype]:
            return [e for _, e in edges]
        return [e for t, e in sorted(edges) if t <= tree_time]


def tree_times(num_nodes, seeds, seed_time, node_time):
    """The time of every tree (seeds of the node types in the graph's order)."""
    out = []
    for t in num_nodes:
        ids = seeds.get(t, _empty())
        if seed_time is not None and t in seed_time:
            out += seed_time[t].tolist()
        elif ids.numel():
            out += node_time[t][ids.long()].tolist()
    return out


def check_temporal_hetero_sample(
    sub,
    edges,
    num_nodes,
    seeds,
    fanouts,
    strategy="uniform",
    replace=False,
    seed_time=None,
    node_time=None,
    edge_time=None,
    layerwise=False,
):
    """Asserts that ``sub`` is a valid temporal sample (``fanouts`` a dict per relation)."""
    times = tree_times(num_nodes, seeds, seed_time, node_time)
    in_edges = _TimedInEdges(edges, node_time, edge_time)
    seed_keys = [(t, int(v)) for t in num_nodes for v in seeds.get(t, _empty()).tolist()]
    keys = {t: [] for t in num_nodes}  # per type: (tree, id) of every node, in order
    position = {}
    for tree, (t, v) in enumerate(seed_keys):
        position[(t, tree, v)] = len(keys[t])
        keys[t].append((tree, v))
    for t in num_nodes:
        assert sub.num_sampled_nodes[t][0] == len(keys[t]), "every seed is a tree of its own"
        assert sub.seed_index[t].tolist() == list(range(len(keys[t])))
    ends = {t: [0, len(keys[t])] for t in num_nodes}
    edge_ends = {e: [0] + torch.tensor(sub.num_sampled_edges[e]).cumsum(0).tolist() for e in edges}
    for hop in range(sub.num_layers):
        for etype in edges:  # the draws, relation by relation
            transit_keys = keys[etype[2]]
            first = 0 if layerwise else ends[etype[2]][hop]
            transits = range(first, ends[etype[2]][hop + 1])
            part = slice(edge_ends[etype][hop], edge_ends[etype][hop + 1])
            drawn = (sub.col[etype][part].tolist(), sub.eid[etype][part].tolist())
            where = f"{etype} hop {hop + 1}"
            for transit, eids in _drawn_per_transit(*drawn, transits, where):
                tree, node = transit_keys[transit]
                valid = in_edges.valid(etype, node, times[tree])
                what = f"{where}: tree {tree} (time {times[tree]}), node {node}"
                timed_last = strategy == "last" and in_edges.timed[etype]
                _check_draw(eids, valid, fanouts[etype][hop], timed_last, replace, what)
        for etype in edges:  # the nodes new at the hop, in first-occurrence order
            src_type = etype[0]
            part = slice(edge_ends[etype][hop], edge_ends[etype][hop + 1])
            for row, col, e in zip(*(getattr(sub, f)[etype][part].tolist() for f in FIELDS)):
                tree = keys[etype[2]][col][0]
                key = (src_type, tree, int(edges[etype][0][e]))
                if key not in position:
                    position[key] = len(keys[src_type])
                    keys[src_type].append(key[1:])
                assert row == position[key], f"{etype} hop {hop + 1}: the row of edge {e}"
        for t in num_nodes:
            ends[t].append(len(keys[t]))
            new = ends[t][-1] - ends[t][-2]
            assert sub.num_sampled_nodes[t][hop + 1] == new, f"{t} hop {hop + 1}: node count"
    for t in num_nodes:
        assert sub.nodes[t].tolist() == [v for _, v in keys[t]], f"{t}: nodes out of order"
        assert sub.batch[t].tolist() == [tree for tree, _ in keys[t]], f"{t}: batch"
    check_hetero_blocks(sub, edges, num_nodes)


FIELDS = ("row", "col", "eid")


def _drawn_per_transit(col, eid, transits, where):
    """``(transit, edge ids it drew)`` for every transit: a relation's edges of one hop are
    grouped by transit in order, and target transits only."""
    assert col == sorted(col), f"{where}: edges not grouped by transit"
    assert all(c in transits for c in col), f"{where}: a target is no transit"
    drawn_by = {}
    for c, e in zip(col, eid):
        drawn_by.setdefault(c, []).append(e)
    return [(transit, drawn_by.get(transit, [])) for transit in transits]


def _check_draw(drawn, valid, fanout, timed_last, replace, what):
    """One (relation, transit) pair drew from its valid in-edges only, as many as the fanout
    says (``timed_last``: exactly the most recent ones, oldest first)."""
    future = sorted(set(drawn) - set(valid))
    assert not future, f"{what}: drew in-edges from its future (or no in-edges): {future}"
    if fanout == 0:
        assert drawn == []
    elif fanout < 0:
        assert drawn == valid, f"{what}: fanout -1 drew {drawn}, not {valid}"
    elif timed_last:
        want = valid[len(valid) - min(fanout, len(valid)) :]
        assert drawn == want, f"{what}: 'last' drew {drawn}, not {want}"
    else:
        count = int(expected_draws(torch.tensor([len(valid)]), fanout, replace)[0])
        assert len(drawn) == count, f"{what}: {len(drawn)} draws, not {count}"
        if not replace:
            assert len(set(drawn)) == len(drawn), f"{what}: an edge drawn twice"


# ---------------------------------------------------------------------------------------------
# No future leaks, on random heterogeneous graphs
# ---------------------------------------------------------------------------------------------


@st.composite
def temporal_hetero_case(draw):
    """A random heterogeneous graph (:func:`hetero_case`) with node times on some node types
    or edge times on some relations (many ties), and seed times for some seed types."""
    edges, num_nodes, seeds, fanouts, num_hops = draw(hetero_case())
    g = _gen(draw(st.integers(0, 2**31 - 1)))
    dtype = draw(st.sampled_from([torch.int64, torch.int32, torch.float32, torch.float64]))
    node_time = edge_time = None
    if draw(st.booleans()):
        node_time = {
            t: torch.randint(0, 8, (n,), generator=g).to(dtype)
            for t, n in num_nodes.items()
            if draw(st.booleans())
        }
    else:
        edge_time = {
            e: torch.randint(0, 8, (ei.shape[1],), generator=g).to(dtype)
            for e, ei in edges.items()
            if draw(st.booleans())
        }
    seed_time = {}
    for t, ids in seeds.items():
        if node_time is None or t not in node_time or draw(st.booleans()):
            time_dtype = draw(st.sampled_from([torch.int64, torch.float64, torch.int32]))
            seed_time[t] = torch.randint(-1, 9, (ids.numel(),), generator=g).to(time_dtype)
    return dict(
        edges=edges,
        num_nodes=num_nodes,
        seeds=seeds,
        fanouts=fanouts if edges else {},
        num_hops=num_hops,
        seed_time=seed_time if seed_time or draw(st.booleans()) else None,
        node_time=node_time,
        edge_time=edge_time,
        strategy=draw(st.sampled_from(["uniform", "last"])),
        replace=draw(st.booleans()),
        layerwise=draw(st.booleans()),
    )


@settings(max_examples=100, deadline=None)
@given(case=temporal_hetero_case(), seed=st.integers(0, 2**32))
def test_no_sample_reaches_into_its_trees_future(case, seed):
    graph = HeteroCSCGraph.from_edge_index_dict(case["edges"], case["num_nodes"])
    fanouts = case["fanouts"] or [2] * case["num_hops"]
    options = {k: case[k] for k in ("node_time", "edge_time", "strategy", "layerwise")}
    sampler = HeteroNeighborSampler(graph, fanouts, case["replace"], **options)
    sub = sampler.sample(case["seeds"], _gen(seed), seed_time=case["seed_time"])
    check_temporal_hetero_sample(
        sub,
        case["edges"],
        case["num_nodes"],
        case["seeds"],
        case["fanouts"],
        case["strategy"],
        case["replace"],
        case["seed_time"],
        case["node_time"],
        case["edge_time"],
        case["layerwise"],
    )


@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("kind", ["node", "edge"])
def test_medium_graph(strategy, kind):
    g = _gen(1)
    num_nodes = {"author": 800, "paper": 1200, "venue": 30}

    def pairs(src, dst, count):
        return torch.stack(
            [
                torch.randint(0, num_nodes[src], (count,), generator=g),
                torch.randint(0, num_nodes[dst], (count,), generator=g),
            ]
        )

    edges = {
        WRITES: pairs("author", "paper", 6000),
        CITES: pairs("paper", "paper", 9000),
        HOSTS: pairs("venue", "paper", 1200),
        ("paper", "written_by", "author"): pairs("paper", "author", 6000),
    }
    graph = HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)
    node_time = edge_time = None
    if kind == "node":  # venues untimed
        node_time = {t: torch.randint(0, 500, (num_nodes[t],), generator=g) for t in num_nodes}
        del node_time["venue"]
    else:  # HOSTS untimed
        edge_time = {e: torch.rand(ei.shape[1], generator=g) * 500 for e, ei in edges.items()}
        del edge_time[HOSTS]
    seeds = {"paper": torch.randint(0, 1200, (200,), generator=g), "author": torch.arange(40)}
    seed_time = {t: torch.randint(0, 500, (s.numel(),), generator=g) for t, s in seeds.items()}
    fanouts = [6, 3]
    options = dict(node_time=node_time, edge_time=edge_time, strategy=strategy)
    sub = HeteroNeighborSampler(graph, fanouts, **options).sample(
        seeds, _gen(2), seed_time=seed_time
    )
    per_relation = {e: fanouts for e in edges}
    check_temporal_hetero_sample(
        sub, edges, num_nodes, seeds, per_relation, strategy, False, seed_time, node_time, edge_time
    )


# ---------------------------------------------------------------------------------------------
# The strategies
# ---------------------------------------------------------------------------------------------

# Paper 0 is written by authors 0 .. 11 of node times AUTHOR_TIME, cited by papers 1 .. 6 of
# node times PAPER_TIME[1:], and hosted by venues 0 .. 4 (no times). Seed time 5: the authors
# and papers of time <= 5 are valid (the boundary time 5 included), every venue is.
AUTHOR_TIME = torch.tensor([3, 9, 5, 0, 7, 1, 6, 5, 2, 8, 4, 5])
PAPER_TIME = torch.tensor([5, 6, 2, 5, 9, 0, 4])
VALID = {WRITES: [0, 2, 3, 5, 7, 8, 10, 11], CITES: [1, 2, 4, 5], HOSTS: [0, 1, 2, 3, 4]}


def _star():
    def into_paper_0(num):
        return torch.stack([torch.arange(num), torch.zeros(num, dtype=torch.int64)])

    edges = {WRITES: into_paper_0(12), CITES: into_paper_0(7)[:, 1:], HOSTS: into_paper_0(5)}
    num_nodes = {"author": 12, "paper": 7, "venue": 5}
    return edges, HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)


STAR_NODE_TIME = {"author": AUTHOR_TIME, "paper": PAPER_TIME}


def _assert_uniform(counts, valid, what):
    invalid = [i for i in range(counts.numel()) if i not in valid]
    assert counts[invalid].sum() == 0, f"{what}: drew invalid edges {counts.tolist()}"
    observed = counts[valid].double()
    expected = torch.full_like(observed, float(observed.sum()) / len(valid))
    p = chisquare(observed.numpy(), expected.numpy()).pvalue
    assert p > P_MIN, f"{what}: chi-square p = {p:.2e}; observed {observed.tolist()}"


@pytest.mark.parametrize("replace", [False, True])
def test_uniform_is_uniform_over_exactly_the_valid_neighbors_per_relation(replace):
    edges, graph = _star()
    trees = 5000
    fanouts = {WRITES: [3], CITES: [2], HOSTS: [2]}
    sampler = HeteroNeighborSampler(graph, fanouts, replace, node_time=STAR_NODE_TIME)
    seeds = {"paper": torch.zeros(trees, dtype=torch.int64)}
    sub = sampler.sample(seeds, _gen(3), seed_time={"paper": torch.full((trees,), 5)})
    for etype, fanout in ((WRITES, 3), (CITES, 2), (HOSTS, 2)):
        eid = sub.eid[etype]
        assert eid.numel() == trees * fanout
        counts = torch.bincount(eid, minlength=edges[etype].shape[1])
        _assert_uniform(counts, VALID[etype], str(etype))
        if not replace:
            per_tree = eid.view(trees, fanout).tolist()
            assert all(len(set(r)) == fanout for r in per_tree), f"{etype}: drawn twice"


def test_uniform_over_valid_edges_by_edge_time():
    """Edge times on one relation (author 1 writes paper 0 twice, once too late); the other
    relations are untimed and draw from all their edges."""
    edges = {
        WRITES: torch.tensor([[1, 1, 2, 3, 3, 4], [0, 0, 0, 0, 0, 0]]),
        CITES: torch.tensor([[1, 2, 3], [0, 0, 0]]),
    }
    graph = HeteroCSCGraph.from_edge_index_dict(edges, {"author": 5, "paper": 4})
    edge_time = {WRITES: torch.tensor([10.0, 2.0, 3.0, 4.0, 20.0, 1.0])}  # valid at 5: 1 2 3 5
    sampler = HeteroNeighborSampler(graph, [1], edge_time=edge_time)
    trees = 4000
    seeds = {"paper": torch.zeros(trees, dtype=torch.int64)}
    sub = sampler.sample(seeds, _gen(4), seed_time={"paper": torch.full((trees,), 5.0)})
    _assert_uniform(torch.bincount(sub.eid[WRITES], minlength=6), [1, 2, 3, 5], "writes")
    _assert_uniform(torch.bincount(sub.eid[CITES], minlength=3), [0, 1, 2], "cites")


def test_last_takes_the_most_recent_valid_neighbors():
    edges, graph = _star()
    fanouts = {WRITES: [3], CITES: [10], HOSTS: [2]}
    sampler = HeteroNeighborSampler(graph, fanouts, node_time=STAR_NODE_TIME, strategy="last")
    seeds = {"paper": torch.tensor([0, 0, 0])}
    sub = sampler.sample(seeds, _gen(0), seed_time={"paper": torch.tensor([5, 0, -1])})
    # Authors valid at 5, by time then edge order: 3(0) 5(1) 8(2) 0(3) 10(4) 2(5) 7(5) 11(5):
    # the last three are those of time 5, the latest edge (11) counting as the most recent.
    # At time 0 only author 3; at -1 none.
    assert sub.eid[WRITES].tolist() == [2, 7, 11, 3]
    assert sub.col[WRITES].tolist() == [0, 0, 0, 1]
    # Fanout 10 > the 4 valid citing papers (edge e from paper e + 1): all of them, oldest
    # first, papers 5(0) 2(2) 6(4) 3(5); at time 0 only paper 5.
    assert sub.eid[CITES].tolist() == [4, 1, 5, 2, 4]
    assert sub.batch["paper"].tolist() == [0, 1, 2, 0, 0, 0, 0, 1]
    # Venues have no times: every tree draws 2 of the 5, at random, whatever the strategy.
    hosts = sub.eid[HOSTS].view(3, 2).tolist()
    assert all(len(set(pair)) == 2 for pair in hosts)
    again = sampler.sample(seeds, _gen(1), seed_time={"paper": torch.tensor([5, 0, -1])})
    assert torch.equal(again.eid[WRITES], sub.eid[WRITES])  # 'last' is deterministic
    assert torch.equal(again.eid[CITES], sub.eid[CITES])
    check_temporal_hetero_sample(
        sub,
        edges,
        {"author": 12, "paper": 7, "venue": 5},
        seeds,
        fanouts,
        "last",
        seed_time={"paper": torch.tensor([5, 0, -1])},
        node_time=STAR_NODE_TIME,
    )


def test_last_ignores_replace():
    edges, graph = _star()
    seeds = {"paper": torch.tensor([0, 0])}
    seed_time = {"paper": torch.tensor([5, 3])}
    fanouts = {WRITES: [3], CITES: [2], HOSTS: [0]}
    subs = [
        HeteroNeighborSampler(
            graph, fanouts, replace, node_time=STAR_NODE_TIME, strategy="last"
        ).sample(seeds, _gen(seed), seed_time=seed_time)
        for replace, seed in ((False, 1), (True, 2))
    ]
    for etype in (WRITES, CITES):
        assert torch.equal(subs[0].eid[etype], subs[1].eid[etype])


# ---------------------------------------------------------------------------------------------
# The draws of the other samplers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"replace": True}, {"layerwise": True}, {"strategy": "last"}],
    ids=str,
)
@pytest.mark.parametrize("kind", ["node", "edge"])
def test_with_all_times_equal_it_is_disjoint_sampling(kind, options):
    """Equal times keep every row in edge order and every neighbor valid: the sample is then
    exactly the untimed disjoint sample for the same generator state (same per-hop keys, same
    pairs, same draws); 'last' then takes each row's last edges."""
    fanouts = {e: [3, 2] for e in EDGES}
    seeds = {"paper": torch.tensor([5, 0, 5, 2]), "author": torch.tensor([1, 8])}
    if kind == "node":
        times = dict(node_time={t: torch.zeros(n) for t, n in NUM_NODES.items()})
        seed_time = None  # the seeds' own times
    else:
        zeros = {e: torch.zeros(ei.shape[1], dtype=torch.int64) for e, ei in EDGES.items()}
        times = dict(edge_time=zeros)
        seed_time = {t: torch.zeros(s.numel(), dtype=torch.int64) for t, s in seeds.items()}
    strategy = options.get("strategy", "uniform")
    untimed_options = {k: v for k, v in options.items() if k != "strategy"}
    temporal = HeteroNeighborSampler(GRAPH, fanouts, **options, **times)
    assert temporal.disjoint and temporal.temporal
    for seed in range(3):
        got = temporal.sample(seeds, _gen(seed), seed_time=seed_time)
        if strategy == "last":
            layerwise = options.get("layerwise", False)
            check_temporal_hetero_sample(
                got,
                EDGES,
                NUM_NODES,
                seeds,
                fanouts,
                "last",
                False,
                seed_time,
                **times,
                layerwise=layerwise,
            )
            continue
        expected = HeteroNeighborSampler(GRAPH, fanouts, disjoint=True, **untimed_options).sample(
            seeds, _gen(seed)
        )
        for field in ("nodes", "row", "col", "eid", "seed_index", "in_degrees", "batch"):
            got_field, expected_field = getattr(got, field), getattr(expected, field)
            for key, value in expected_field.items():
                assert torch.equal(got_field[key], value), f"{field}[{key}]"
        assert got.num_sampled_nodes == expected.num_sampled_nodes
        assert got.num_sampled_edges == expected.num_sampled_edges


@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("kind", ["node", "edge"])
@pytest.mark.parametrize("replace", [False, True])
def test_one_relation_draws_what_the_temporal_sampler_draws(kind, strategy, replace):
    """One node type and one relation: the heterogeneous temporal sample is the homogeneous
    TemporalNeighborSampler's, draw for draw (the same sorted rows, keys and streams)."""
    g = _gen(5)
    edge_index = torch.randint(0, 80, (2, 700), generator=g)
    rel = ("node", "to", "node")
    hetero = HeteroCSCGraph.from_edge_index_dict({rel: edge_index}, {"node": 80})
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=80)
    seeds = torch.randint(0, 80, (30,), generator=g)
    seed_time = torch.randint(0, 60, (30,), generator=g)
    if kind == "node":
        node_time = torch.randint(0, 60, (80,), generator=g)
        homogeneous_time = dict(node_time=node_time)
        hetero_time = dict(node_time={"node": node_time})
    else:
        edge_time = torch.randint(0, 60, (700,), generator=g)
        homogeneous_time = dict(edge_time=edge_time)
        hetero_time = dict(edge_time={rel: edge_time})
    options = dict(strategy=strategy, replace=replace)
    expected = TemporalNeighborSampler(graph, [4, 3], **options, **homogeneous_time).sample(
        seeds, seed_time, generator=_gen(6)
    )
    got = HeteroNeighborSampler(hetero, [4, 3], **options, **hetero_time).sample(
        {"node": seeds}, _gen(6), seed_time={"node": seed_time}
    )
    assert torch.equal(got.nodes["node"], expected.nodes)
    assert torch.equal(got.batch["node"], expected.batch)
    for field in FIELDS:
        assert torch.equal(getattr(got, field)[rel], getattr(expected, field)), field
    assert got.num_sampled_nodes["node"] == expected.num_sampled_nodes
    assert got.num_sampled_edges[rel] == expected.num_sampled_edges


# ---------------------------------------------------------------------------------------------
# PyG's semantics and the API
# ---------------------------------------------------------------------------------------------


def test_untimed_seed_types_take_seed_times_and_untimed_neighbors_are_free():
    """PyG's test_temporal_neighbor_loader_single_link, as facts: seeds of the untimed type
    'a' at times 0 .. 9 reach b_i (time i) but never c_i (time i + 1)."""
    link = torch.arange(10).repeat(2, 1)
    edges = {("a", "to", "b"): link, ("b", "to", "a"): link, ("a", "to", "c"): link}
    edges[("c", "to", "a")] = link
    graph = HeteroCSCGraph.from_edge_index_dict(edges, {"a": 10, "b": 10, "c": 10})
    node_time = {"b": torch.arange(0, 10), "c": torch.arange(1, 11)}
    sampler = HeteroNeighborSampler(graph, [-1], node_time=node_time)
    seeds = {"a": torch.arange(10)}
    sub = sampler.sample(seeds, seed_time={"a": torch.arange(0, 10)})
    assert {t: n.numel() for t, n in sub.nodes.items()} == {"a": 10, "b": 10, "c": 0}
    with pytest.raises(ValueError, match=r"seeds of type 'a' need seed_time\['a'\].*'a' has no"):
        sampler.sample(seeds)
    # Two hops: b_i draws a_i (untimed, so whatever the time), its tree's seed: no new node.
    two = HeteroNeighborSampler(graph, [-1, -1], node_time=node_time).sample(
        seeds, seed_time={"a": torch.arange(0, 10)}
    )
    assert two.num_sampled_nodes == {"a": [10, 0, 0], "b": [0, 10, 0], "c": [0, 0, 0]}
    assert two.num_sampled_edges[("a", "to", "b")] == [0, 10]


def test_seed_types_fall_back_to_their_node_times():
    edges, graph = _star()
    sampler = HeteroNeighborSampler(graph, [-1], node_time=STAR_NODE_TIME)
    seeds = {"paper": torch.tensor([0]), "author": torch.tensor([1])}
    own = sampler.sample(seeds, _gen(0))  # paper 0 at its time 5 (author 1 has no in-edges)
    assert own.num_sampled_edges[WRITES] == [len(VALID[WRITES])]
    given = sampler.sample(seeds, _gen(0), seed_time={"paper": torch.tensor([5])})
    for etype in edges:
        assert torch.equal(own.eid[etype], given.eid[etype])


def test_reproducible_and_exported():
    edges, graph = _star()
    sampler = HeteroNeighborSampler(graph, [2, 2], node_time=STAR_NODE_TIME)
    seeds = {"paper": torch.zeros(20, dtype=torch.int64)}
    seed_time = {"paper": torch.full((20,), 6)}
    a = sampler.sample(seeds, _gen(9), seed_time=seed_time)
    b = sampler.sample(seeds, _gen(9), seed_time=seed_time)
    c = sampler.sample(seeds, _gen(10), seed_time=seed_time)
    assert all(torch.equal(a.eid[e], b.eid[e]) for e in edges)
    assert any(not torch.equal(a.eid[e], c.eid[e]) for e in edges)
    d = hetero_neighbor_sample(
        graph, seeds, [2, 2], generator=_gen(9), node_time=STAR_NODE_TIME, seed_time=seed_time
    )
    assert all(torch.equal(a.eid[e], d.eid[e]) for e in edges)
    assert not HeteroNeighborSampler(graph, [2]).temporal


def test_empty_seeds_and_no_hops():
    edges, graph = _star()
    sampler = HeteroNeighborSampler(graph, [3, 3], edge_time={WRITES: torch.zeros(12)})
    sub = sampler.sample({})
    assert sub.num_sampled_nodes == {"author": [0, 0, 0], "paper": [0, 0, 0], "venue": [0, 0, 0]}
    assert all(b.numel() == 0 for b in sub.batch.values())
    none = HeteroNeighborSampler(graph, [], node_time=STAR_NODE_TIME).sample(
        {"paper": torch.tensor([0, 0])}
    )
    assert none.nodes["paper"].tolist() == [0, 0] and none.batch["paper"].tolist() == [0, 1]
    no_relations = HeteroCSCGraph.from_edge_index_dict({}, {"a": 3})
    sub = HeteroNeighborSampler(no_relations, [2], node_time={"a": torch.ones(3)}).sample(
        {"a": torch.tensor([2])}
    )
    assert sub.nodes["a"].tolist() == [2]


def test_the_check_can_fail():
    edges, graph = _star()
    sampler = HeteroNeighborSampler(graph, [-1], node_time=STAR_NODE_TIME, strategy="last")
    seeds, seed_time = {"paper": torch.tensor([0])}, {"paper": torch.tensor([5])}
    sub = sampler.sample(seeds, seed_time=seed_time)
    fanouts = {e: [-1] for e in edges}
    args = (sub, edges, {"author": 12, "paper": 7, "venue": 5}, seeds, fanouts, "last")
    check_temporal_hetero_sample(*args, seed_time=seed_time, node_time=STAR_NODE_TIME)
    later = {"author": AUTHOR_TIME + 1, "paper": PAPER_TIME}
    with pytest.raises(AssertionError, match="from its future"):
        check_temporal_hetero_sample(*args, seed_time=seed_time, node_time=later)
    reordered = {"author": AUTHOR_TIME.flip(0), "paper": PAPER_TIME}
    with pytest.raises(AssertionError):
        check_temporal_hetero_sample(*args, seed_time=seed_time, node_time=reordered)


def test_tree_keys_refuse_to_overflow():
    seeds = torch.tensor([0, 1, 2])
    assert tree_keys("x", seeds, 1 << 61).tolist() == [0, (1 << 61) + 1, (1 << 62) + 2]
    with pytest.raises(ValueError, match="x: 3 seeds with 3074457345618258603 nodes each"):
        tree_keys("x", seeds, (1 << 63) // 3 + 1)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

W = "hetero_neighbor_sample: "


@pytest.mark.parametrize(
    "options, error, match",
    [
        (
            dict(node_time={"author": torch.zeros(9)}, edge_time={WRITES: torch.zeros(30)}),
            ValueError,
            "give node_time or edge_time, not both",
        ),
        (
            dict(node_time={"book": torch.zeros(3)}),
            ValueError,
            r"node_time has node types \['book'\] that the graph lacks",
        ),
        (
            dict(edge_time={("paper", "reads", "author"): torch.zeros(3)}),
            ValueError,
            r"edge_time has edge types \[\('paper', 'reads', 'author'\)\] that the graph lacks",
        ),
        (
            dict(node_time={"author": torch.zeros(8)}),
            ValueError,
            r"node_time\['author'\] has 8 entries but there are 9 nodes",
        ),
        (
            dict(edge_time={WRITES: torch.zeros(29)}),
            ValueError,
            r"edge_time\[\('author', 'writes', 'paper'\)\] has 29 entries but there are 30 edges",
        ),
        (
            dict(node_time={"paper": torch.tensor([0.0, float("nan")] + [0.0] * 6)}),
            ValueError,
            r"node_time\['paper'\] has a NaN entry",
        ),
        (
            dict(node_time={"paper": torch.zeros(8, 1)}),
            ValueError,
            r"node_time\['paper'\] must be a 1-D tensor of real",
        ),
        (
            dict(node_time={"paper": torch.zeros(8, dtype=torch.bool)}),
            ValueError,
            r"node_time\['paper'\] must be a 1-D tensor of real",
        ),
        (dict(node_time={"paper": [0] * 8}), TypeError, r"node_time\['paper'\] must be a tensor"),
        (
            dict(node_time=torch.zeros(8)),
            TypeError,
            r"node_time must be a dict \{node_type: times\}, got Tensor",
        ),
        (
            dict(node_time={"paper": torch.zeros(8)}, weighted=True),
            ValueError,
            "weighted=True does not go with node_time",
        ),
        (
            dict(node_time={"paper": torch.zeros(8)}, strategy="latest"),
            ValueError,
            "strategy must be 'uniform' or 'last', got 'latest'",
        ),
        (dict(strategy="last"), ValueError, "strategy='last' needs node_time or edge_time"),
        (
            dict(node_time={"paper": torch.zeros(8, device="meta")}),
            ValueError,
            r"node_time\['paper'\] is on meta but the graph is on cpu",
        ),
    ],
)
def test_bad_sampler_arguments(options, error, match):
    graph = GRAPH
    if options.get("weighted"):
        from test_hetero_sampling import WEIGHTED_GRAPH as graph
    with pytest.raises(error, match=W + match):
        HeteroNeighborSampler(graph, [2], **options)


@pytest.mark.parametrize(
    "seed_time, error, match",
    [
        ({"book": torch.zeros(1)}, ValueError, r"seed_time has node types \['book'\]"),
        (
            {"paper": torch.zeros(3)},
            ValueError,
            r"seed_time\['paper'\] has 3 entries but there are 2 seeds of type 'paper'",
        ),
        (
            {"author": torch.zeros(1)},
            ValueError,
            r"seed_time\['author'\] has 1 entries but there are 0 seeds of type 'author'",
        ),
        (
            {"paper": torch.tensor([0.0, float("nan")])},
            ValueError,
            r"seed_time\['paper'\] has a NaN",
        ),
        ({"paper": torch.zeros(2, 1)}, ValueError, r"seed_time\['paper'\] must be a 1-D"),
        (torch.zeros(2), TypeError, "seed_time must be a dict"),
        (
            {"paper": torch.zeros(2, device="meta")},
            ValueError,
            r"seed_time\['paper'\] is on meta",
        ),
    ],
)
def test_bad_seed_times(seed_time, error, match):
    sampler = HeteroNeighborSampler(GRAPH, [2], node_time={"paper": torch.zeros(8)})
    with pytest.raises(error, match=W + match):
        sampler.sample({"paper": torch.tensor([1, 2])}, seed_time=seed_time)


def test_seed_times_needed_and_refused():
    edge_timed = HeteroNeighborSampler(GRAPH, [2], edge_time={CITES: torch.zeros(25)})
    with pytest.raises(ValueError, match=W + "seeds of type 'paper' need seed_time.*edge times"):
        edge_timed.sample({"paper": torch.tensor([1])})
    edge_timed.sample({"paper": torch.tensor([1])}, seed_time={"paper": torch.tensor([0])})
    with pytest.raises(ValueError, match=W + "seed_time is for temporal sampling"):
        HeteroNeighborSampler(GRAPH, [2]).sample(
            {"paper": torch.tensor([1])}, seed_time={"paper": torch.tensor([0])}
        )
    not_a_generator = types.SimpleNamespace(device=torch.device("cpu"))
    with pytest.raises(TypeError, match=W + "generator must be a torch.Generator"):
        edge_timed.sample({"paper": torch.tensor([1])}, not_a_generator)
