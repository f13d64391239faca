"""fastgl.sampling's sampler-program API (SamplerProgram, run_program) and its programs.

The strongest check of the engine is equality: a program that states a built-in sampler draws
exactly what the built-in draws from the same generator state (k-hop == neighbor_sample and
sample_hops(layerwise=True), DeepWalk and PPR == random_walk, layer sampling == LayerSampler).
The parts no built-in covers (edge weights from an expression, collective transits, bool masks,
ProgramRandom.choose, pairs without a transit) are checked against sample_ranges over ranges
the test builds itself from the user's edge list, and the weights' effect by chi-square (fixed
seeds: a fixed pass/fail, not a flake). Bad programs get a ValueError/TypeError naming the
program and what it returned.
"""

from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    RESTART_SCALE,
    assert_chi_square_fits,
    assert_same_subgraph,
    edge_index_strategy,
    first_occurrence,
    hub_edge_index,
    multirw_moves_distribution,
    philox_bits,
    random_edge_index,
    random_weights,
)

from fastgl import CSCGraph
from fastgl.ops import frontier_sample, random_walk, sample_hops, sample_ranges
from fastgl.sampling import (
    DeepWalkProgram,
    Draws,
    KHopProgram,
    LayerProgram,
    LayerSampler,
    MultiRWProgram,
    NeighborSampler,
    PPRProgram,
    SamplerProgram,
    StoredWeights,
    neighbor_sample,
    run_program,
)
from fastgl.sampling.neighbor import draw_key, hop_key


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def longs(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int64)


def weighted_graph(num_nodes=300, num_edges=5000, seed=1, dtype=torch.float32):
    edge_index = random_edge_index(num_nodes, num_edges, seed=seed)
    weight = random_weights(num_edges, seed=seed + 1, dtype=dtype)
    return edge_index, weight, CSCGraph.from_edge_index(edge_index, num_nodes, weight)


class OneStep(SamplerProgram):
    """One step from given transits; the draws are the result. The tests' probe program."""

    steps = 1

    def __init__(self, graph, transits, fanout, replace=False, edge_weight=None, **attrs):
        super().__init__(graph)
        self._transits, self._fanout, self.replace = transits, fanout, replace
        self.edge_weight = edge_weight
        for name, value in attrs.items():  # collective, direction, candidate_weight, ...
            setattr(self, name, value)

    def start(self, seeds, rng):
        return {}

    def transits(self, state, step):
        return self._transits

    def fanout(self, step):
        return self._fanout

    def update(self, state, step, draws):
        state["draws"] = draws

    def finish(self, state):
        return state["draws"]


def run_one_step(program, seed=0) -> tuple[Draws, int]:
    """The draws of ``program`` and the Philox key of its step."""
    draws = run_program(program, longs([0]), gen(seed))
    return draws, hop_key(draw_key(gen(seed), torch.device("cpu")), 0)


# ---------------------------------------------------------------------------------------------
# k-hop sampling == the built-in sampler
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fanouts", [[10, 5, 3], [-1, 2], [0, 4], [3]])
def test_k_hop_program_draws_what_neighbor_sample_draws(replace, weighted, fanouts):
    _, _, graph = weighted_graph()
    seeds = torch.randint(0, 300, (40,), generator=gen(3))  # repeats included
    program = KHopProgram(graph, fanouts, replace=replace, weighted=weighted)
    sampler = NeighborSampler(graph, fanouts, replace=replace, weighted=weighted)
    for seed in (0, 1, 12345):
        got = run_program(program, seeds, gen(seed))
        want = neighbor_sample(graph, seeds, fanouts, replace, weighted, generator=gen(seed))
        assert_same_subgraph(got, want)
        assert torch.equal(got.in_degrees, want.in_degrees)
        assert_same_subgraph(got, sampler.sample(seeds, gen(seed)))


@settings(max_examples=80, deadline=None)
@given(
    graph_case=edge_index_strategy(max_nodes=30, max_edges=150),
    fanouts=st.lists(st.sampled_from([-1, 0, 1, 2, 5]), max_size=3),
    replace=st.booleans(),
    weighted=st.booleans(),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_k_hop_program_equals_neighbor_sample_on_random_graphs(
    graph_case, fanouts, replace, weighted, seed, data
):
    """Empty graphs, isolated nodes, int32 indices, hot targets, zero weights."""
    edge_index, num_nodes = graph_case
    weight = random_weights(edge_index.shape[1], seed=seed % 1000) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes, weight)
    ids = st.integers(0, max(num_nodes - 1, 0))
    seeds = longs(data.draw(st.lists(ids, max_size=8 if num_nodes else 0)))
    got = run_program(KHopProgram(graph, fanouts, replace, weighted), seeds, gen(seed))
    want = neighbor_sample(graph, seeds, fanouts, replace, weighted, generator=gen(seed))
    assert_same_subgraph(got, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_layerwise_k_hop_program_draws_what_sample_hops_draws(weighted):
    """DGL's semantics: every node so far draws at every hop (sample_hops(layerwise=True))."""
    _, _, graph = weighted_graph()
    seeds = longs([5, 17, 5, 230])
    program = KHopProgram(graph, [4, 3, 2], weighted=weighted, layerwise=True)
    got = run_program(program, seeds, gen(7))
    key = draw_key(gen(7), graph.device)
    want = sample_hops(
        graph.indptr,
        graph.indices,
        graph.weight if weighted else None,
        graph.eid,
        seeds,
        longs([0, 4]),
        [4, 3, 2],
        layerwise=True,
        seed=key,
    )
    assert torch.equal(got.nodes, want.nodes)
    assert torch.equal(got.row, want.row) and torch.equal(got.col, want.col)
    assert torch.equal(got.eid, want.edge_ids)
    assert got.num_sampled_nodes == want.node_counts[0].tolist()
    assert got.num_sampled_edges == want.edge_counts[0].tolist()


def test_k_hop_program_runs_again_and_again():
    """The program keeps no run's state: two runs from one generator state are the same."""
    _, _, graph = weighted_graph()
    program = KHopProgram(graph, [5, 5])
    first = run_program(program, longs([1, 2, 3]), gen(0))
    run_program(program, longs([9]), gen(1))
    assert_same_subgraph(first, run_program(program, longs([1, 2, 3]), gen(0)))


# ---------------------------------------------------------------------------------------------
# DeepWalk and PPR == fastgl.ops.random_walk
# ---------------------------------------------------------------------------------------------


def walk_graph(weighted: bool) -> CSCGraph:
    """Random out-edges among 200 nodes, 20 nodes without out-edges (dead ends) and, weighted,
    some zero weights (rows that cannot be drawn from)."""
    edge_index = random_edge_index(200, 1500, seed=4)
    edge_index = torch.cat(
        [edge_index, torch.stack([longs(range(200)), longs(range(200, 400))])], 1
    )
    edge_index = edge_index[:, edge_index[0] < 180]  # nodes 180..399 have no out-edges
    weight = random_weights(edge_index.shape[1], seed=5, zero_fraction=0.3) if weighted else None
    return CSCGraph.from_edge_index(edge_index, 400, weight)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("restart_prob", [0.0, 0.25, 1.0])
@pytest.mark.parametrize("walks_per_node", [1, 3])
def test_deepwalk_program_walks_what_random_walk_walks(weighted, restart_prob, walks_per_node):
    graph = walk_graph(weighted)
    starts = torch.randint(0, 400, (150,), generator=gen(6))
    program = DeepWalkProgram(graph, 12, restart_prob, weighted, walks_per_node)
    for seed in (0, 99):
        nodes, edges = run_program(program, starts, gen(seed))
        want_nodes, want_edges = random_walk(
            graph,
            starts,
            12,
            restart_prob=restart_prob,
            weighted=weighted,
            walks_per_node=walks_per_node,
            generator=gen(seed),
        )
        assert torch.equal(nodes, want_nodes)
        assert torch.equal(edges, want_edges)
    assert bool((nodes[:, 1:] < 0).any()), "the walks should meet dead ends"


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("restart_prob", [0.0, 0.2, 1.0])
def test_ppr_program_walks_what_random_walk_walks(weighted, restart_prob):
    graph = walk_graph(weighted)
    starts = torch.randint(0, 400, (150,), generator=gen(7))
    program = PPRProgram(graph, 15, restart_prob, weighted, walks_per_node=2)
    nodes, edges = run_program(program, starts, gen(3))
    want_nodes, want_edges = random_walk(
        graph,
        starts,
        15,
        restart_prob=restart_prob,
        ppr=True,
        weighted=weighted,
        walks_per_node=2,
        generator=gen(3),
    )
    assert torch.equal(nodes, want_nodes)
    assert torch.equal(edges, want_edges)
    teleported = (nodes[:, 1:] == nodes[:, :1]) & (edges == -1)
    assert bool(teleported.any()), "the walks should teleport"


@settings(max_examples=60, deadline=None)
@given(
    graph_case=edge_index_strategy(max_nodes=30, max_edges=120),
    length=st.integers(0, 6),
    restart_prob=st.sampled_from([0.0, 0.3, 1.0]),
    ppr=st.booleans(),
    weighted=st.booleans(),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_walk_programs_equal_random_walk_on_random_graphs(
    graph_case, length, restart_prob, ppr, weighted, seed, data
):
    edge_index, num_nodes = graph_case
    weight = random_weights(edge_index.shape[1], seed=seed % 1000) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes, weight)
    ids = st.integers(0, max(num_nodes - 1, 0))
    starts = longs(data.draw(st.lists(ids, max_size=10 if num_nodes else 0)))
    program = (PPRProgram if ppr else DeepWalkProgram)(graph, length, restart_prob, weighted)
    nodes, edges = run_program(program, starts, gen(seed))
    want = random_walk(
        graph,
        starts,
        length,
        restart_prob=restart_prob,
        ppr=ppr,
        weighted=weighted,
        generator=gen(seed),
    )
    assert torch.equal(nodes, want[0]) and torch.equal(edges, want[1])


def test_bad_walk_programs():
    graph = walk_graph(False)
    for bad, match in (
        (dict(length=-1), r"DeepWalkProgram: length must be an int >= 0, got -1"),
        (dict(length=2.0), r"length must be an int >= 0, got 2.0"),
        (dict(walks_per_node=0), r"walks_per_node must be an int >= 1, got 0"),
        (dict(restart_prob=1.5), r"restart_prob must lie in \[0, 1\], got 1.5"),
        (dict(restart_prob=float("nan")), r"restart_prob must lie in \[0, 1\], got nan"),
    ):
        with pytest.raises(ValueError, match=match):
            DeepWalkProgram(graph, **{"length": 3, **bad})
    with pytest.raises(ValueError, match=r"StoredWeights: the graph has no edge weights"):
        PPRProgram(graph, 3, 0.1, weighted=True)


# ---------------------------------------------------------------------------------------------
# Layer sampling == LayerSampler
# ---------------------------------------------------------------------------------------------


def assert_same_layer_sample(got, want) -> None:
    assert torch.equal(got.nodes, want.nodes)
    assert torch.equal(got.seed_index, want.seed_index)
    assert got.num_sampled_nodes == want.num_sampled_nodes
    assert got.num_sampled_edges == want.num_sampled_edges
    assert len(got.blocks) == len(want.blocks)
    for a, b in zip(got.blocks, want.blocks):
        for name in ("src", "dst", "eid", "src_nodes", "weight", "indptr", "src_in_degrees"):
            assert torch.equal(getattr(a, name), getattr(b, name)), name
        assert (a.num_src_nodes, a.num_dst_nodes) == (b.num_src_nodes, b.num_dst_nodes)


@pytest.mark.parametrize("layer_sizes", [[30, 30], [5, -1, 8], [-1], [1000]])
def test_layer_program_draws_what_layer_sampler_draws(layer_sizes):
    """Self-loops (which link a node to itself only), repeated seeds, a union smaller than
    the layer size, the exact layer (-1)."""
    edge_index = random_edge_index(300, 3000, seed=8)
    edge_index = torch.cat([edge_index, torch.stack([longs(range(0, 300, 7))] * 2)], 1)
    graph = CSCGraph.from_edge_index(edge_index, 300)
    seeds = torch.randint(0, 300, (25,), generator=gen(2))
    program, sampler = LayerProgram(graph, layer_sizes), LayerSampler(graph, layer_sizes)
    for seed in (0, 5):
        got = run_program(program, seeds, gen(seed))
        assert_same_layer_sample(got, sampler.sample(seeds, gen(seed)))


@settings(max_examples=40, deadline=None)
@given(
    graph_case=edge_index_strategy(max_nodes=30, max_edges=150),
    layer_sizes=st.lists(st.sampled_from([-1, 1, 3, 10]), min_size=1, max_size=3),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_layer_program_equals_layer_sampler_on_random_graphs(graph_case, layer_sizes, seed, data):
    edge_index, num_nodes = graph_case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    ids = st.integers(0, max(num_nodes - 1, 0))
    seeds = longs(data.draw(st.lists(ids, min_size=1, max_size=8))) if num_nodes else longs([])
    got = run_program(LayerProgram(graph, layer_sizes), seeds, gen(seed))
    assert_same_layer_sample(got, LayerSampler(graph, layer_sizes).sample(seeds, gen(seed)))


# ---------------------------------------------------------------------------------------------
# MultiRW: the frontier sampler's distribution
# ---------------------------------------------------------------------------------------------

# In-rows of a 5-node graph: in-degrees 3, 1, 2, 4 and 0 (node 4's walker never moves).
MULTIRW_EDGES = longs([[1, 2, 3, 0, 0, 3, 0, 1, 2, 4], [0, 0, 0, 1, 2, 2, 3, 3, 3, 3]])


def move_counts(trace, moves: int) -> Counter:
    """How often each sequence of the first ``moves`` (popped, added) pairs came out."""
    pairs = torch.stack([trace.popped[:, :moves], trace.added[:, :moves]], 2)
    return Counter(tuple(map(tuple, sample)) for sample in pairs.tolist())


def assert_moves_fit(counts: Counter, exact: dict, what: str) -> None:
    assert set(counts) <= set(exact), f"{what}: impossible moves {set(counts) - set(exact)}"
    outcomes = sorted(exact)
    assert_chi_square_fits([counts[o] for o in outcomes], [exact[o] for o in outcomes], what)


@pytest.mark.parametrize("max_entries", [None, 2])
def test_multirw_program_and_frontier_sample_share_the_exact_distribution(max_entries):
    """NextDoor's MultiRW on the program API and the compiled frontier sampler (Dashboard and
    scan pops) draw the first two moves of every walker-on-every-node frontier from the exact
    distribution (enumerated: a walker picked in proportion to its capped in-degree, then a
    uniform in-edge), by chi-square over every (pop, add, pop, add) outcome."""
    graph = CSCGraph.from_edge_index(MULTIRW_EDGES, 5)
    samples, moves = 30_000, 2
    exact = multirw_moves_distribution(
        graph.indptr, graph.indices, range(5), moves, max_entries or 0
    )
    program = MultiRWProgram(graph, 5, 5 + moves, max_entries=max_entries)
    trace = run_program(program, torch.arange(5).repeat(samples), gen(1))
    assert torch.equal(trace.frontier, torch.arange(5).repeat(samples, 1))
    assert_moves_fit(move_counts(trace, moves), exact, f"program, cap {max_entries}")
    for pop in ("dashboard", "scan"):
        compiled = frontier_sample(
            graph, samples, 5, 5 + moves, max_entries=max_entries, pop=pop, generator=gen(2)
        )
        assert_moves_fit(move_counts(compiled, moves), exact, f"{pop}, cap {max_entries}")


def test_the_multirw_distribution_check_can_fail():
    """The same check rejects the capped walk's moves as the uncapped walk's."""
    graph = CSCGraph.from_edge_index(MULTIRW_EDGES, 5)
    exact = multirw_moves_distribution(graph.indptr, graph.indices, range(5), 2)
    capped = MultiRWProgram(graph, 5, 7, max_entries=1)
    trace = run_program(capped, torch.arange(5).repeat(30_000), gen(3))
    with pytest.raises(AssertionError, match="chi-square"):
        assert_moves_fit(move_counts(trace, 2), exact, "uniform picks")


@pytest.mark.parametrize("max_entries", [None, 30])
def test_multirw_walkers_move_along_in_edges_until_none_can(max_entries):
    """Replayed as the samples' walkers: every move picks a walker that stands there and has
    in-edges, moves it to an in-neighbor, and moves are -1 from the first step at which no
    walker can move (the roots include vertices without in-edges, and a repeated root)."""
    edge_index, num_nodes = hub_edge_index(hub_degree=300, num_nodes=200, extra_edges=600, seed=4)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    degree = graph.in_degrees().tolist()
    stuck = [v for v in range(num_nodes) if degree[v] == 0][:3]
    roots = longs([0, 0, 5, 7] + [stuck[0], stuck[1], stuck[2], stuck[0]] + list(range(10, 14)))
    trace = run_program(MultiRWProgram(graph, 4, 204, max_entries), roots, gen(6))
    ptr, nbr = graph.indptr.tolist(), graph.indices.tolist()
    assert trace.popped[1].eq(-1).all() and trace.added[1].eq(-1).all()  # the stuck sample
    for s in (0, 2):
        walkers = Counter(roots[4 * s : 4 * s + 4].tolist())
        for u, v in zip(trace.popped[s].tolist(), trace.added[s].tolist()):
            if u < 0:
                assert all(degree[w] == 0 for w in walkers.elements()) and v < 0
                continue
            assert walkers[u] > 0 and v in nbr[ptr[u] : ptr[u + 1]]
            walkers[u] -= 1
            walkers[v] += 1


def test_multirw_moves_stop_once_no_walker_can_move():
    """Two walkers on 0, whose one in-neighbor 1 has none: each moves once, then the moves are
    -1."""
    graph = CSCGraph.from_edge_index(longs([[1, 0], [0, 2]]), 3)
    trace = run_program(MultiRWProgram(graph, 2, 6), longs([0, 0]), gen(0))
    assert trace.popped.tolist() == [[0, 0, -1, -1]]
    assert trace.added.tolist() == [[1, 1, -1, -1]]


def test_bad_multirw_programs():
    graph = CSCGraph.from_edge_index(MULTIRW_EDGES, 5)
    for args, match in (
        ((0, 3), r"MultiRWProgram: frontier_size must be an int >= 1, got 0"),
        ((3, 2), r"budget must be an int >= 3, got 2"),
        ((2, 3, 0), r"max_entries must be an int >= 1, got 0"),
        ((2.0, 3), r"frontier_size must be an int >= 1, got 2.0"),
    ):
        with pytest.raises(ValueError, match=match):
            MultiRWProgram(graph, *args)
    with pytest.raises(
        ValueError, match=r"seeds must hold frontier_size = 2 roots per sample, got 3"
    ):
        run_program(MultiRWProgram(graph, 2, 4), longs([0, 1, 2]))


# ---------------------------------------------------------------------------------------------
# The engine: edge weights, collective transits, pairs without a transit, choose
# ---------------------------------------------------------------------------------------------


def degree_weight(graph):
    degree = graph.in_degrees()

    def weigh(transit, candidate, edge, step):
        return degree[candidate].to(torch.float64) + 0.5 * (transit % 3)

    return weigh


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("fanout", [-1, 1, 3])
def test_edge_weight_is_evaluated_over_every_candidate_and_drawn_by_sample_ranges(replace, fanout):
    """The expression's weights, laid out by the test from the user's edge list, drawn by
    sample_ranges: the same draws, with the drawn edges' ids and neighbors."""
    edge_index, _, graph = weighted_graph(num_nodes=60, num_edges=800)
    transits = longs([3, 59, 3, 0, 17])
    weigh = degree_weight(graph)
    draws, key = run_one_step(OneStep(graph, transits, fanout, replace, weigh))
    degree = graph.in_degrees()
    candidates = [[e for e in range(800) if edge_index[1, e] == t] for t in transits.tolist()]
    flat = longs([e for row in candidates for e in row])
    weights = degree[edge_index[0, flat]].double() + 0.5 * (
        transits.repeat_interleave(longs([len(r) for r in candidates])) % 3
    )
    bounds = longs([0] + [len(r) for r in candidates]).cumsum(0)
    ptr, picked = sample_ranges(
        bounds[:-1], bounds[1:], weights, torch.full((5,), fanout), replace, key
    )
    assert torch.equal(draws.ptr, ptr)
    assert torch.equal(draws.edges, flat[picked])
    assert torch.equal(draws.nodes, edge_index[0, flat[picked]])
    assert torch.equal(draws.pair, torch.repeat_interleave(torch.arange(5), ptr.diff()))


def test_edge_weight_draws_proportionally_to_the_expression():
    """Chi-square: one transit with 4 in-edges weighted 1 : 2 : 3 : 4 by the expression."""
    edge_index = torch.tensor([[1, 2, 3, 4], [0, 0, 0, 0]])
    graph = CSCGraph.from_edge_index(edge_index, 5)
    counts = Counter()
    for seed in range(2000):
        draws, _ = run_one_step(
            OneStep(graph, longs([0]), 1, edge_weight=lambda t, c, e, s: c.double()), seed
        )
        counts[int(draws.nodes[0])] += 1
    assert_chi_square_fits([counts[v] for v in (1, 2, 3, 4)], [1, 2, 3, 4], "edge_weight")


def test_weights_by_edge_id_match_the_built_in_weighted_draw():
    """StoredWeights names edges by their id in the user's edge list (not the CSC slot)."""
    edge_index, weight, graph = weighted_graph(dtype=torch.float64)
    weigh = StoredWeights(graph)
    assert torch.equal(weigh(None, None, torch.arange(5000), 0), weight)
    with pytest.raises(ValueError, match="StoredWeights: the graph has no edge weights"):
        StoredWeights(CSCGraph.from_edge_index(edge_index, 300))


def test_an_edge_weight_of_none_draws_uniformly():
    """Returning None at a step draws what a program without edge_weight draws."""
    _, _, graph = weighted_graph()
    transits = torch.arange(0, 300, 7)
    uniform, _ = run_one_step(OneStep(graph, transits, 3))
    skipped, _ = run_one_step(OneStep(graph, transits, 3, edge_weight=lambda *_: None))
    for a, b in zip(uniform[:4], skipped[:4]):  # ptr, pair, nodes, edges
        assert torch.equal(a, b)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_pair_without_transit_keeps_its_index_and_draws_nothing(weighted):
    """Transit -1 (e.g. a finished walk): no draws, and the other pairs draw from their own
    streams, as if it were there."""
    _, _, graph = weighted_graph()
    weigh = degree_weight(graph) if weighted else None
    full, _ = run_one_step(OneStep(graph, longs([4, 8, 15, 16]), 2, edge_weight=weigh))
    holes, _ = run_one_step(OneStep(graph, longs([4, -1, 15, -1]), 2, edge_weight=weigh))
    assert holes.ptr.diff().tolist() == [2, 0, 2, 0]
    keep = (full.pair == 0) | (full.pair == 2)
    assert torch.equal(holes.edges, full.edges[keep])
    assert torch.equal(holes.pair, full.pair[keep])


def collective_reference(edge_index, transits_per_sample, direction="in"):
    """Per sample, from the user's edge list: the candidates (its transits, then the nodes
    their edges reach in first-occurrence order, transit by transit in edge-list order, which
    is the CSC's and, for a transit's out-edges, ascending target) and those edges as
    (transit position, candidate position, edge id)."""
    src, dst = edge_index.tolist()
    source, target = (src, dst) if direction == "in" else (dst, src)
    samples = []
    for transits in transits_per_sample:
        edges = []
        for t in transits:
            row = [e for e in range(len(src)) if target[e] == t]
            edges += sorted(row, key=lambda e: source[e]) if direction == "out" else row
        candidates = first_occurrence(transits + [source[e] for e in edges])
        at = {v: i for i, v in enumerate(candidates)}
        samples.append((candidates, [(at[target[e]], at[source[e]], e) for e in edges]))
    return samples


def reach_weight(neighborhood, step):
    """A candidate weight from the whole neighborhood: its edges into the transits, plus 0.5
    for a transit (so the test's reference can compute it from the edge list too)."""
    nodes = neighborhood.nodes
    weight = torch.zeros(nodes.numel(), dtype=torch.float64)
    weight.index_add_(
        0,
        neighborhood.edge_candidate,
        torch.ones(neighborhood.edge_ids.numel(), dtype=torch.float64),
    )
    return weight + 0.5 * torch.isin(torch.arange(nodes.numel()), neighborhood.edge_transit)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("direction", ["in", "out"])
def test_collective_samples_draw_from_their_combined_neighborhood(weighted, replace, direction):
    """Sample p's candidates are its transits and the nodes their edges reach, each once
    (NextDoor's combined neighborhood); it draws fanout of them from its own range."""
    edge_index, _, graph = weighted_graph(num_nodes=50, num_edges=600)
    per_sample = [[1, 2, 3, 2], [], [40, 7]]  # a repeated transit counts once; sample 1: none
    nodes = longs([t for sample in per_sample for t in sample])
    ptr = longs([0, 4, 4, 6])
    program = OneStep(
        graph,
        (nodes, ptr),
        6,
        replace,
        collective=True,
        direction=direction,
        candidate_weight=reach_weight if weighted else None,
    )
    draws, key = run_one_step(program, seed=5)
    reference = collective_reference(edge_index, per_sample, direction)
    hood = draws.neighborhood
    assert hood.nodes.tolist() == [v for candidates, _ in reference for v in candidates]
    assert (
        hood.ptr.tolist() == [0] + torch.tensor([len(c) for c, _ in reference]).cumsum(0).tolist()
    )
    offsets = hood.ptr.tolist()
    edges = [(t + o, c + o, e) for (_, sample), o in zip(reference, offsets) for t, c, e in sample]
    got = list(
        zip(hood.edge_transit.tolist(), hood.edge_candidate.tolist(), hood.edge_ids.tolist())
    )
    assert got == edges
    weights = None
    if weighted:
        weights = torch.zeros(len(hood.nodes), dtype=torch.float64)
        for _, c, _ in edges:
            weights[c] += 1
        for t in {t for t, _, _ in edges}:
            weights[t] += 0.5
    want_ptr, picked = sample_ranges(
        hood.ptr[:-1], hood.ptr[1:], weights, torch.full((3,), 6), replace, key
    )
    assert torch.equal(draws.ptr, want_ptr) and draws.ptr.diff().tolist()[1] == 0
    assert torch.equal(draws.candidate, picked)
    assert torch.equal(draws.nodes, hood.nodes[picked])
    assert bool((draws.edges == -1).all())


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("collective", [False, True])
def test_a_bool_weight_draws_uniformly_among_the_kept_candidates(replace, collective):
    """A mask keeps candidates: the draws are sample_ranges' uniform ones over the kept
    candidates alone (the test compacts them itself), not weighted draws with 1.0 and 0.0."""
    edge_index, _, graph = weighted_graph(num_nodes=60, num_edges=800)
    transits = [3, 59, 0, 17]
    if collective:
        program = OneStep(
            graph,
            (longs(transits), longs([0, 2, 4])),
            5,
            replace,
            collective=True,
            candidate_weight=lambda hood, step: hood.nodes % 2 == 0,
        )
        per_pair = [
            candidates
            for candidates, _ in collective_reference(edge_index, [transits[:2], transits[2:]])
        ]
        offered = [[v for v in pair if v % 2 == 0] for pair in per_pair]
    else:
        program = OneStep(graph, longs(transits), 5, replace, lambda t, c, e, s: c % 2 == 0)
        rows = [[e for e in range(800) if edge_index[1, e] == t] for t in transits]
        offered = [[e for e in row if edge_index[0, e] % 2 == 0] for row in rows]
    draws, key = run_one_step(program)
    bounds = longs([0] + [len(pair) for pair in offered]).cumsum(0)
    ptr, picked = sample_ranges(
        bounds[:-1], bounds[1:], None, torch.full((len(offered),), 5), replace, key
    )
    flat = longs([x for pair in offered for x in pair])
    assert torch.equal(draws.ptr, ptr)
    if collective:
        assert torch.equal(draws.nodes, flat[picked])
    else:
        assert torch.equal(draws.edges, flat[picked])
    assert bool((draws.nodes % 2 == 0).all()) and draws.nodes.numel() > 0


def drawn_in_a_run(draw):
    """What ``draw(rng)`` returns inside a run (3 keys per step, generator ``gen(3)``), and that
    run's key of step 4's draw 2."""

    class Drawer(OneStep):
        keys_per_step = 3

        def start(self, seeds, rng):
            return {"drawn": draw(rng)}

        def finish(self, state):
            return state["drawn"]

    _, _, graph = weighted_graph()
    drawn = run_program(Drawer(graph, longs([]), 0), longs([0]), gen(3))
    return drawn, hop_key(draw_key(gen(3), torch.device("cpu")), 4 * 3 + 2)


def test_choose_is_sample_ranges_over_the_weights_per_pair():
    """ProgramRandom.choose: key (step, draw), stream = pair, one draw from [0, len(weights))."""
    weights = torch.tensor([0.2, 0.0, 0.8])
    choices, key = drawn_in_a_run(lambda rng: rng.choose(weights, 500, step=4, draw=2))
    zeros = torch.zeros(500, dtype=torch.int64)
    _, want = sample_ranges(zeros, zeros + 3, weights, zeros + 1, True, key)
    assert torch.equal(choices, want)
    assert set(choices.tolist()) == {0, 2}


def test_choose_per_row_is_choose_with_each_pairs_own_weights():
    """ProgramRandom.choose_per_row: row p's draw is choose's for pair p over that row (same key
    and stream), -1 for a row of zeros, and each row's own weights decide."""
    weights = torch.tensor([0.2, 0.0, 0.8], dtype=torch.float64)
    per_row, _ = drawn_in_a_run(lambda rng: rng.choose_per_row(weights.expand(500, 3), 4, 2))
    shared, _ = drawn_in_a_run(lambda rng: rng.choose(weights, 500, step=4, draw=2))
    assert torch.equal(per_row, shared)
    rows = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    chosen, _ = drawn_in_a_run(lambda rng: rng.choose_per_row(rows.repeat(100, 1), 4, 2))
    assert chosen.view(100, 4).eq(longs([2, -1, 0, 1])).all()
    # half precision is drawn as float64: the same choices for weights it holds exactly
    half, _ = drawn_in_a_run(lambda rng: rng.choose_per_row(rows.repeat(100, 1).half(), 4, 2))
    assert torch.equal(half, chosen)
    exact = torch.tensor([1.0, 0.0, 3.0])
    by_half, _ = drawn_in_a_run(lambda rng: rng.choose(exact.half(), 300, step=4, draw=2))
    by_double, _ = drawn_in_a_run(lambda rng: rng.choose(exact.double(), 300, step=4, draw=2))
    assert torch.equal(by_half, by_double)
    counts = Counter(per_row.tolist())
    assert_chi_square_fits([counts[0], counts[2]], [0.2, 0.8], "choose_per_row")


def test_uniform_is_a_slot_of_two_to_the_53_per_pair():
    """ProgramRandom.uniform: key (step, draw), stream = pair, one draw from [0, 2^53), scaled
    into [0, 1); its mean and spread are a uniform's."""
    u, key = drawn_in_a_run(lambda rng: rng.uniform(20_000, step=4, draw=2))
    zeros = torch.zeros(20_000, dtype=torch.int64)
    _, slots = sample_ranges(zeros, zeros + RESTART_SCALE, None, zeros + 1, True, key)
    assert u.dtype == torch.float64 and torch.equal(u, slots.double() / RESTART_SCALE)
    # the same bits as a plain-Python Philox replay of draw 0 of stream p
    assert [u[p].item() for p in range(5)] == [
        (philox_bits(key, p, 0) % RESTART_SCALE) / RESTART_SCALE for p in range(5)
    ]
    assert bool(((u >= 0) & (u < 1)).all())
    # mean 1/2 and variance 1/12, each within about 5 standard errors
    assert abs(u.mean().item() - 0.5) < 0.01 and abs(u.var().item() - 1 / 12) < 0.003


def test_steps_draw_with_their_own_keys():
    """Step s of a program with k keys per step draws with hop_key(key, s * k)."""

    class TwoSteps(OneStep):
        steps, keys_per_step = 2, 2

        def start(self, seeds, rng):
            return {"all": []}

        def update(self, state, step, draws):
            state["all"].append(draws)

        def finish(self, state):
            return state["all"]

    _, _, graph = weighted_graph()
    transits = torch.arange(100)
    steps = run_program(TwoSteps(graph, transits, 2), longs([0]), gen(9))
    key = draw_key(gen(9), torch.device("cpu"))
    for step, draws in enumerate(steps):
        starts, ends = graph.indptr[transits], graph.indptr[transits + 1]
        _, slots = sample_ranges(
            starts, ends, None, torch.full((100,), 2), False, hop_key(key, 2 * step)
        )
        assert torch.equal(draws.edges, graph.eid[slots])


# ---------------------------------------------------------------------------------------------
# Bad programs: errors that name the program and what it returned
# ---------------------------------------------------------------------------------------------


def bad_step(graph, **changes):
    arguments = dict(transits=longs([1, 2]), fanout=2, edge_weight=None)
    arguments.update(changes)
    return OneStep(graph, **arguments)


@pytest.mark.parametrize(
    "changes, error, match",
    [
        (
            dict(edge_weight=lambda t, c, e, s: torch.ones(3)),
            ValueError,
            r"OneStep\).*edge_weight\(\.\.\., step=0\) must return one weight per candidate, shape "
            r"\(\d+,\); got shape \(3,\)",
        ),
        (
            dict(edge_weight=lambda t, c, e, s: torch.ones(len(c), 1)),
            ValueError,
            r"one weight per candidate.*got shape \(\d+, 1\)",
        ),
        (
            dict(edge_weight=lambda t, c, e, s: -torch.ones(len(c))),
            ValueError,
            r"OneStep\).*must return finite weights >= 0, got -1.0",
        ),
        (
            dict(edge_weight=lambda t, c, e, s: torch.full((len(c),), float("nan"))),
            ValueError,
            r"finite weights >= 0, got nan",
        ),
        (
            dict(edge_weight=lambda t, c, e, s: [1.0] * len(c)),
            TypeError,
            r"OneStep\).*must return a tensor or None, got list",
        ),
        (
            dict(edge_weight=lambda t, c, e, s: torch.ones(len(c), dtype=torch.complex64)),
            ValueError,
            r"must return real weights",
        ),
        (dict(edge_weight="degree"), TypeError, r"edge_weight must be None or a callable"),
        (
            dict(fanout=-2),
            ValueError,
            r"run_program\(OneStep\): fanout\(0\) must be -1 \(every candidate\) or >= 0, got -2",
        ),
        (dict(fanout=2.5), TypeError, r"OneStep\): fanout\(0\) must return an int, got 2.5"),
        (dict(fanout=True), TypeError, r"fanout\(0\) must return an int, got True"),
        (
            dict(transits=longs([1, 300])),
            ValueError,
            r"OneStep\): transits\(state, 0\) returned node 300; expected ids in \[0, 300\) or -1",
        ),
        (dict(transits=longs([-2])), ValueError, r"returned node -2"),
        (
            dict(transits=torch.tensor([1.0])),
            ValueError,
            r"transits\(state, 0\) must be a 1-D int32/int64 tensor",
        ),
        (dict(transits=[1, 2]), TypeError, r"transits\(state, 0\) must be a tensor, got list"),
        (
            dict(collective=True),
            TypeError,
            r"collective program's transits\(state, 0\) must return \(nodes, ptr\), got Tensor",
        ),
        (
            dict(collective=True, transits=(longs([1, 2]), longs([0, 3]))),
            ValueError,
            r"transits\(state, 0\)'s ptr must run from 0 to transits = 2, got 0 to 3",
        ),
        (
            dict(collective=True, transits=(longs([1, 2]), longs([0, 2, 1, 2]))),
            ValueError,
            r"ptr must never decrease",
        ),
        (
            dict(collective=True, transits=(longs([1, -1]), longs([0, 2]))),
            ValueError,
            r"transits\(state, 0\) returned node -1; expected ids in \[0, 300\)$",
        ),
        (
            dict(collective=True, transits=(longs([1]), longs([0, 1])), edge_weight=torch.ones),
            ValueError,
            r"OneStep\): a collective program weighs its draws with candidate_weight, not "
            r"edge_weight",
        ),
        (
            dict(candidate_weight=reach_weight),
            ValueError,
            r"an individual program weighs its draws with edge_weight, not candidate_weight",
        ),
        (
            dict(
                collective=True,
                transits=(longs([1, 2]), longs([0, 2])),
                candidate_weight=lambda hood, step: torch.ones(hood.nodes.numel() + 1),
            ),
            ValueError,
            r"OneStep\): candidate_weight\(\.\.\., step=0\) must return one weight per "
            r"candidate, shape \(\d+,\); got shape \(\d+,\)",
        ),
        (
            dict(collective=True, transits=(longs([1]), longs([0, 1])), candidate_weight=3),
            TypeError,
            r"candidate_weight must be None or a callable \(neighborhood, step\), got int",
        ),
        (
            dict(direction="both"),
            ValueError,
            r"direction must be one of \('in', 'out'\), got 'both'",
        ),
        (dict(steps=-1), ValueError, r"OneStep\): steps must be an int >= 0, got -1"),
        (dict(keys_per_step=0), ValueError, r"keys_per_step must be an int >= 1, got 0"),
    ],
)
def test_bad_programs_are_named_in_the_error(changes, error, match):
    _, _, graph = weighted_graph()
    with pytest.raises(error, match=match):
        run_program(bad_step(graph, **changes), longs([0]))


def test_bad_choose_calls_are_rejected():
    class Chooser(OneStep):
        def __init__(self, graph, weights, draw, keys_per_step=2):
            super().__init__(graph, longs([]), 0, keys_per_step=keys_per_step)
            self.weights, self.draw = weights, draw

        def start(self, seeds, rng):
            rng.choose(self.weights, 3, 0, self.draw)

    _, _, graph = weighted_graph()
    with pytest.raises(ValueError, match=r"Chooser\): choose\(draw=1\) needs 1 <= draw < "):
        run_program(Chooser(graph, torch.ones(2), 1, keys_per_step=1), longs([0]))
    with pytest.raises(ValueError, match=r"choose\(draw=0\)"):
        run_program(Chooser(graph, torch.ones(2), 0), longs([0]))
    with pytest.raises(ValueError, match=r"one of them > 0; got \[0.0, 0.0\]"):
        run_program(Chooser(graph, torch.zeros(2), 1), longs([0]))
    with pytest.raises(ValueError, match=r"choose needs finite weights >= 0 with a finite sum"):
        run_program(Chooser(graph, torch.tensor([3e38, 3e38]), 1), longs([0]))
    with pytest.raises(ValueError, match=r"1-D floating-point weight tensor, got torch.int64"):
        run_program(Chooser(graph, longs([1, 2]), 1), longs([0]))


def test_bad_choose_per_row_calls_are_rejected():
    class Chooser(OneStep):
        keys_per_step = 2

        def __init__(self, graph, weights, draw=1):
            super().__init__(graph, longs([]), 0)
            self.weights, self.draw = weights, draw

        def start(self, seeds, rng):
            rng.choose_per_row(self.weights, 0, self.draw)

    _, _, graph = weighted_graph()
    for weights, draw, match in (
        (torch.ones(2, 2), 0, r"Chooser\): choose_per_row\(draw=0\) needs 1 <= draw < "),
        (torch.ones(4), 1, r"2-D floating-point weight tensor, got torch.float32 of shape \(4,\)"),
        (longs([[1, 2]]), 1, r"2-D floating-point weight tensor, got torch.int64"),
        (torch.tensor([[1.0, -1.0]]), 1, r"choose_per_row needs finite weights >= 0"),
        (torch.tensor([[1.0, float("nan")]]), 1, r"choose_per_row needs finite weights >= 0"),
        (torch.tensor([[3e38, 3e38]]), 1, r"needs finite weights >= 0 with a finite sum per draw"),
    ):
        with pytest.raises(ValueError, match=match):
            run_program(Chooser(graph, weights, draw), longs([0]))


def test_bad_uniform_draws_are_rejected():
    class Uniforms(OneStep):
        def start(self, seeds, rng):
            rng.uniform(3, 0, draw=1)

    _, _, graph = weighted_graph()
    with pytest.raises(ValueError, match=r"Uniforms\): uniform\(draw=1\) needs 1 <= draw < "):
        run_program(Uniforms(graph, longs([]), 0), longs([0]))


def test_bad_run_arguments():
    _, _, graph = weighted_graph()
    with pytest.raises(TypeError, match="run_program: program must be a SamplerProgram, got"):
        run_program(NeighborSampler(graph, [2]), longs([0]))
    with pytest.raises(ValueError, match=r"run_program\(KHopProgram\): seed id 300 out of range"):
        run_program(KHopProgram(graph, [2]), longs([300]))
    with pytest.raises(TypeError, match=r"KHopProgram: fanouts must be ints"):
        KHopProgram(graph, [2.5])
    with pytest.raises(ValueError, match=r"StoredWeights: the graph has no edge weights"):
        KHopProgram(CSCGraph.from_edge_index(longs([[0], [1]])), [2], weighted=True)

    class Incomplete(SamplerProgram):
        steps = 1

    with pytest.raises(TypeError, match="abstract"):
        Incomplete(graph)
