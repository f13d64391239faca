"""fastgl.ops.random_walk: DeepWalk, node2vec, restart and personalized-PageRank walks.

* every step of every walk, node2vec's rejection trials and exact fallback included, is replayed
  draw for draw by a Python reference of the randomness contract (tests/reference.py
  random_walk_reference, with its own Philox), which is what lets other code reproduce walks;
* each step's distribution is compared by chi-square with the exact transition probabilities,
  enumerated from the user's edge list (tests/reference.py walk_step_probabilities), on a small
  graph where every case of node2vec's bias (and its exact fallback draw) occurs; fixed seeds
  make the p > 1e-3 threshold a fixed pass/fail, not a flake;
* first-order moves and restart decisions are exactly the sample_ranges draws the randomness
  contract names;
* every walk is checked for validity (walk_paths_fault) on hypothesis-drawn graphs, and the two
  schedules, the thread counts and int32/int64 indices give identical walks.
"""

from collections import Counter, defaultdict

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    RESTART_SCALE,
    assert_chi_square_fits,
    edge_index_strategy,
    hop_key,
    philox_bits,
    random_edge_index,
    random_walk_reference,
    random_weights,
    sorted_by_source,
    walk_paths_fault,
    walk_step_probabilities,
)

from fastgl import CSCGraph
from fastgl.ops import random_walk, sample_ranges

SCHEDULES = ("sample", "transit")


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def key_of(seed: int) -> int:
    """The op seed the wrapper draws from ``gen(seed)``."""
    return int(torch.randint(0, 1 << 62, (1,), generator=gen(seed)))


def raw_walk(
    graph,
    starts,
    length,
    *,
    p=1.0,
    q=1.0,
    restart_prob=0.0,
    ppr=False,
    weighted=False,
    schedule="auto",
    seed=0,
    with_eid=False,
):
    """The compiled op on the graph's out-edge CSR: ``(nodes, CSR slots)``, or ``(nodes, edge
    ids)`` ``with_eid``."""
    csr = graph.out_csr()
    return torch.ops.fastgl.random_walk(
        csr.indptr,
        csr.indices,
        csr.weight if weighted else None,
        csr.eid if with_eid else None,
        starts,
        length,
        p,
        q,
        restart_prob,
        ppr,
        schedule,
        seed,
    )


def assert_valid(graph, starts, nodes, slots, restart_prob=0.0, ppr=False, weighted=False):
    csr = graph.out_csr()
    weight = csr.weight if weighted else None
    fault = walk_paths_fault(
        csr.indptr, csr.indices, weight, starts, nodes, slots, restart_prob, ppr
    )
    assert fault is None, fault


def assert_edges_are_the_users(edge_index, nodes, edges):
    """Every edge id a wrapper's walk reports is the user's edge from the node before to the
    node after; -1 exactly where no edge was taken."""
    taken = edges >= 0
    ids = edges[taken]
    assert torch.equal(edge_index[0, ids].to(torch.int64), nodes[:, :-1][taken])
    assert torch.equal(edge_index[1, ids].to(torch.int64), nodes[:, 1:][taken])


# ---------------------------------------------------------------------------------------------
# Distributions: chi-square against the enumerated transition probabilities
# ---------------------------------------------------------------------------------------------

# Node 0's out-neighbors are 1 and 2. From 1 (coming from 0) the walk can return (edge 2, bias
# 1/p), stay among 0's neighbors (edges 3, 7: a multi-edge to 2; edge 6: a self loop, 1 being 0's
# neighbor) or go farther (edges 4, 5: 1/q). Node 6 has no out-edges. Node 7 leads only to 5,
# from which every move has a small bias when p and q are large: the exact fallback draw.
DESIGNED_EDGES = torch.tensor(
    [
        [0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5, 5, 5, 7],
        [1, 2, 0, 2, 3, 4, 1, 2, 0, 5, 1, 6, 1, 0, 2, 3, 7, 5],
    ]
)
DESIGNED_WEIGHTS = torch.tensor(
    [1.0, 2.0, 0.5, 1.5, 3.0, 0.0, 1.0, 0.25, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0, 2.0, 1.0, 0.5, 1.0]
)


def step_counts(nodes: torch.Tensor, edges: torch.Tensor) -> dict[tuple, Counter]:
    """Outcomes ``(next node, edge)`` counted per state ``(start, previous or None, current)``."""
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for path, taken in zip(nodes.tolist(), edges.tolist()):
        for t, edge in enumerate(taken):
            if path[t] < 0:
                break
            previous = path[t - 1] if t > 0 and taken[t - 1] >= 0 else None
            counts[(path[0], previous, path[t])][(path[t + 1], edge)] += 1
    return counts


def assert_steps_fit(nodes, edges, what, weight=None, **walk):
    """Every observed outcome is possible, and the states seen often enough for chi-square (5
    expected per cell) fit their exact distributions: one test over all of them, so the number
    of states does not multiply the chance of a false alarm."""
    observed_cells, expected_cells, states = [], [], 0
    for (start, previous, current), observed in step_counts(nodes, edges).items():
        expected = walk_step_probabilities(
            DESIGNED_EDGES, start, current, previous, weight=weight, **walk
        )
        assert set(observed) <= set(expected), (start, previous, current, observed, expected)
        total = sum(observed.values())
        if total * min(expected.values()) < 5 or len(expected) < 2:
            continue
        cells = sorted(expected)
        observed_cells += [observed[c] for c in cells]
        expected_cells += [total * expected[c] for c in cells]
        states += 1
    assert states >= 3, "too few states to test"
    assert_chi_square_fits(observed_cells, expected_cells, what, ddof=states - 1)


WALK_CONFIGS = {
    "deepwalk": {},
    "node2vec p=2 q=0.5": {"p": 2.0, "q": 0.5},
    "node2vec p=0.25 q=4": {"p": 0.25, "q": 4.0},
    "node2vec p=100 q=50 (exact fallback)": {"p": 100.0, "q": 50.0},
    "restart": {"restart_prob": 0.3, "p": 2.0, "q": 0.5},
    "ppr": {"restart_prob": 0.3, "ppr": True},
    "ppr node2vec": {"restart_prob": 0.2, "ppr": True, "p": 0.25, "q": 4.0},
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("config", list(WALK_CONFIGS))
def test_steps_follow_the_exact_transition_probabilities(config, weighted):
    graph = CSCGraph.from_edge_index(
        DESIGNED_EDGES, 8, edge_weight=DESIGNED_WEIGHTS if weighted else None
    )
    walk = WALK_CONFIGS[config]
    starts = torch.tensor([0, 7, 2])
    nodes, edges = random_walk(
        graph, starts, 3, walks_per_node=12_000, weighted=weighted, generator=gen(1), **walk
    )
    assert_edges_are_the_users(DESIGNED_EDGES, nodes, edges)
    weight = DESIGNED_WEIGHTS if weighted else None
    assert_steps_fit(nodes, edges, config, weight=weight, **walk)


def test_the_chi_square_check_can_fail():
    """The check above notices a walk whose second-order steps are first-order."""
    graph = CSCGraph.from_edge_index(DESIGNED_EDGES, 8)
    nodes, edges = random_walk(graph, torch.tensor([0]), 2, walks_per_node=12_000, generator=gen(2))
    with pytest.raises(AssertionError, match="chi-square"):
        assert_steps_fit(nodes, edges, "first-order walks judged as node2vec", p=0.25, q=4.0)


# ---------------------------------------------------------------------------------------------
# The randomness contract: first-order moves and restarts are sample_ranges draws
# ---------------------------------------------------------------------------------------------


def sample_ranges_step(graph, current, step, seed, weighted):
    """Step ``step``'s first-order move of every walk as sample_ranges draws it: one range per
    walk (the current node's row; empty for an ended walk), fanout 1, with replacement, key
    hop_key(seed, 2 * step). ``-1`` where the row has nothing to draw."""
    csr = graph.out_csr()
    alive = current >= 0
    at = current.clamp(min=0)
    starts = torch.where(alive, csr.indptr[at], 0)
    ends = torch.where(alive, csr.indptr[at + 1], 0)
    weight = csr.weight if weighted else None
    ptr, slots = sample_ranges(
        starts, ends, weight, torch.ones_like(starts), True, hop_key(seed, 2 * step)
    )
    drawn = torch.full_like(current, -1)
    drawn[ptr.diff() > 0] = slots
    return drawn


def sample_ranges_restarts(num_walks, step, seed, restart_prob):
    """Step ``step``'s restart decisions as sample_ranges draws them: one slot u of [0, 2^53)
    per walk, uniform, key hop_key(seed, 2 * step + 1); the walk restarts when u < r * 2^53."""
    zeros = torch.zeros(num_walks, dtype=torch.int64)
    _, slots = sample_ranges(
        zeros, zeros + RESTART_SCALE, None, zeros + 1, True, hop_key(seed, 2 * step + 1)
    )
    return slots.double() < restart_prob * RESTART_SCALE


@pytest.mark.parametrize("schedule", ["sample", "transit"])
def test_a_restart_is_its_uniform_below_restart_prob(schedule):
    """The threshold exactly: walk w's restart uniform at step 0 is u = draw 0 of stream w under
    hop_key(seed, 1), modulo 2^53; restart_prob = u / 2^53 does not restart it (u < u fails),
    (u + 1) / 2^53 does."""
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), 2)  # never a dead end
    starts = torch.zeros(6, dtype=torch.int64)
    seed = 424242
    for w in range(len(starts)):
        u = philox_bits(hop_key(seed, 1), w, 0) % RESTART_SCALE
        for restart_prob, restarts in ((u / RESTART_SCALE, False), ((u + 1) / RESTART_SCALE, True)):
            nodes, _ = raw_walk(
                graph, starts, 1, restart_prob=restart_prob, schedule=schedule, seed=seed
            )
            assert nodes[w, 1].item() == (-1 if restarts else 1), (w, restart_prob)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("restart_prob, ppr", [(0.0, False), (0.25, False), (0.25, True)])
def test_first_order_steps_are_sample_ranges_draws(weighted, restart_prob, ppr):
    edge_index = random_edge_index(200, 1500, seed=3)  # nodes without out-edges included
    weight = random_weights(1500, seed=4) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, 230, edge_weight=weight)
    starts = torch.randint(0, 230, (3000,), generator=gen(5))
    for seed in (0, 987654321, -(2**62)):
        nodes, slots = raw_walk(
            graph, starts, 6, restart_prob=restart_prob, ppr=ppr, weighted=weighted, seed=seed
        )
        for t in range(6):
            current = nodes[:, t]
            moved = sample_ranges_step(graph, current, t, seed, weighted)
            if restart_prob > 0:
                restarts = sample_ranges_restarts(len(starts), t, seed, restart_prob)
                moved[restarts] = -1
            assert torch.equal(slots[:, t], moved), f"step {t}, seed {seed}"


@pytest.mark.parametrize("weighted", [None, torch.float32, torch.float64])
@pytest.mark.parametrize("config", list(WALK_CONFIGS))
def test_walks_replay_the_randomness_contract(config, weighted):
    """Walk for walk what the contract's keys, streams and draw indices give: node2vec's trial k
    on stream (k << 40) | w accepted by its next draw (1; 2 when weighted), the enumeration
    after 16 rejections (the fallback config reaches it in most second-order steps), restarts
    before moves."""
    weight = None if weighted is None else random_weights(600, seed=31, zero_fraction=0.3)
    graph = CSCGraph.from_edge_index(
        random_edge_index(80, 600, seed=30),
        90,  # nodes without out-edges included
        edge_weight=None if weight is None else weight.to(weighted),
    )
    csr = graph.out_csr()
    starts = torch.randint(0, 90, (150,), generator=gen(32))
    walk = WALK_CONFIGS[config]
    for seed in (7, -(2**62)):
        expected = random_walk_reference(
            csr.indptr, csr.indices, csr.weight, starts, 8, seed, **walk
        )
        for schedule in SCHEDULES:
            nodes, slots = raw_walk(
                graph, starts, 8, weighted=weight is not None, schedule=schedule, seed=seed, **walk
            )
            assert torch.equal(slots, expected[1]), (schedule, seed)
            assert torch.equal(nodes, expected[0]), (schedule, seed)


@pytest.mark.parametrize("weighted", [False, True])
def test_rows_of_one_edge_walk_as_their_trials_would(weighted):
    """A row of one edge is taken without node2vec's trials: the walks are the ones the trials
    (replayed by the reference, which runs them) give. A star's leaves each have one edge, back
    to the hub they came from, which p = 4 accepts a trial in sixteen: many trials, and the
    enumerated draw, would run there."""
    leaves = torch.arange(1, 30)
    edge_index = torch.cat(
        [torch.stack([torch.zeros_like(leaves), leaves]), torch.stack([leaves, 0 * leaves])], 1
    )
    weight = random_weights(edge_index.shape[1], seed=3, zero_fraction=0.0) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, 30, edge_weight=weight)
    csr = graph.out_csr()
    starts = torch.randint(0, 30, (100,), generator=gen(4))
    walk = dict(p=4.0, q=0.25)
    expected = random_walk_reference(csr.indptr, csr.indices, csr.weight, starts, 9, 5, **walk)
    for schedule in SCHEDULES:
        got = raw_walk(graph, starts, 9, weighted=weighted, schedule=schedule, seed=5, **walk)
        assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1]), schedule


TRANSIT_CHUNK = 256  # walks per chunk of the transit schedule (a CUDA thread block's)


def _chunks_at_one_node(column: torch.Tensor, degree: torch.Tensor) -> set[int]:
    """Degrees of the rows whose walks fill a whole chunk of the transit order (walks stably
    sorted by current node) at a step: the chunks that may cache their row."""
    order = torch.sort(column, stable=True).indices
    at = column[order]
    full = len(at) // TRANSIT_CHUNK * TRANSIT_CHUNK
    chunks = at[:full].view(-1, TRANSIT_CHUNK)
    uniform = (chunks[:, 0] == chunks[:, -1]) & (chunks[:, 0] >= 0)
    return {int(degree[node]) for node in chunks[uniform, 0]}


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("config", ["deepwalk", "node2vec p=0.25 q=4", "ppr node2vec"])
def test_transit_chunks_at_one_node_walk_from_the_cached_row(config, weighted, dtype):
    """The transit schedule runs the CUDA kernel's decomposition: chunks of 256 walks in transit
    order, and a chunk whose walks all stand at one node steps from a copy of that node's row
    when the row fits the cache (and, unweighted, has no more edges than the chunk has walks).
    Walks started together fill such chunks at rows of every kind: a small row (cached), a row of
    300 edges (cached only when weighted), a hub of 5000 (never cached); the walks are still the
    reference's."""
    small = random_edge_index(60, 400, seed=40)
    medium = torch.stack([torch.full((300,), 1), torch.randint(0, 60, (300,), generator=gen(41))])
    hub = torch.stack([torch.zeros(5000, dtype=torch.int64), torch.randint(0, 60, (5000,))])
    edge_index = torch.cat([small[:, small[0] > 1], medium, hub], 1).to(dtype)
    weight = random_weights(edge_index.shape[1], seed=42) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, 60, edge_weight=weight)
    csr = graph.out_csr()
    degree = csr.indptr.diff()
    starts = torch.cat([torch.full((600,), node) for node in (0, 1, 2)])
    assert {5000, 300, int(degree[2])} <= _chunks_at_one_node(starts, degree)
    assert degree[2] <= TRANSIT_CHUNK
    walk = WALK_CONFIGS[config]
    expected = random_walk_reference(csr.indptr, csr.indices, csr.weight, starts, 6, 9, **walk)
    got = raw_walk(graph, starts, 6, weighted=weighted, schedule="transit", seed=9, **walk)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def _funnel_edges():
    """Walks from node 0 stand together again and again: 0 -> 1; 1 -> 0 and 1 -> 2 .. 41; each
    of 2 .. 41 -> 42 only; 42 -> 0, 1 and 2 .. 41. Every walk is at 1 (41 out-edges) after one
    step, and nearly every one at 42 (42 out-edges) after three, each with its own previous
    node."""
    spread = torch.arange(2, 42)
    pairs = (
        [(0, 1), (1, 0)]
        + [(1, int(i)) for i in spread]
        + [(int(i), 42) for i in spread]
        + [(42, 0), (42, 1)]
        + [(42, int(i)) for i in spread]
    )
    return torch.tensor(pairs).t()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("config", ["node2vec p=0.25 q=4", "node2vec p=2 q=0.5", "restart"])
def test_transit_chunks_at_one_node_take_second_order_steps_from_the_cached_row(config, weighted):
    """Second-order steps from a cached row: chunks of the transit order stand at one node after
    one and after three steps, where node2vec weighs the row's edges by each walk's own previous
    node. The walks are still the reference's."""
    edge_index = _funnel_edges()
    weight = random_weights(edge_index.shape[1], seed=43, zero_fraction=0) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, 43, edge_weight=weight)
    csr = graph.out_csr()
    degree = csr.indptr.diff()
    starts = torch.zeros(3 * TRANSIT_CHUNK, dtype=torch.int64)
    walk = WALK_CONFIGS[config]
    expected = random_walk_reference(csr.indptr, csr.indices, csr.weight, starts, 7, 4, **walk)
    for step, node in ((1, 1), (3, 42)):
        assert int(degree[node]) in _chunks_at_one_node(expected[0][:, step], degree), step
    got = raw_walk(graph, starts, 7, weighted=weighted, schedule="transit", seed=4, **walk)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_node2vec_first_steps_are_first_order():
    """A node2vec walk's first step, and its first step after a teleport, draw what a
    first-order walk draws."""
    graph = CSCGraph.from_edge_index(random_edge_index(100, 800, seed=6), 110)
    starts = torch.randint(0, 110, (2000,), generator=gen(7))
    first_order, _ = raw_walk(graph, starts, 1, seed=5)
    second_order, slots = raw_walk(graph, starts, 1, p=0.25, q=4.0, seed=5)
    assert torch.equal(second_order, first_order)
    nodes, slots = raw_walk(graph, starts, 8, p=0.25, q=4.0, restart_prob=0.3, ppr=True, seed=5)
    for t in range(1, 8):
        after_teleport = (slots[:, t - 1] < 0) & (nodes[:, t] >= 0)
        drawn = sample_ranges_step(graph, nodes[:, t], t, 5, False)
        stays = ~sample_ranges_restarts(len(starts), t, 5, 0.3)
        check = after_teleport & stays
        assert check.any()
        assert torch.equal(slots[check, t], drawn[check])


def test_p_and_q_of_one_are_the_first_order_walk():
    graph = CSCGraph.from_edge_index(random_edge_index(100, 800, seed=8), 100)
    starts = torch.arange(100)
    nodes, slots = raw_walk(graph, starts, 10, p=1.0, q=1.0, seed=9)
    for t in range(10):
        assert torch.equal(slots[:, t], sample_ranges_step(graph, nodes[:, t], t, 9, False))
    other, _ = raw_walk(graph, starts, 10, p=1.5, q=1.0, seed=9)
    assert not torch.equal(other, nodes)  # the bias does change walks


# ---------------------------------------------------------------------------------------------
# Properties on random graphs
# ---------------------------------------------------------------------------------------------


@st.composite
def walk_case(draw):
    edge_index, num_nodes = draw(edge_index_strategy(max_nodes=30, max_edges=150))
    if draw(st.booleans()):  # the out-CSR's slots are then the edge ids: no eid array
        edge_index = sorted_by_source(edge_index)
    weighted = draw(st.booleans())
    weight = None
    if weighted:
        weight = random_weights(
            edge_index.shape[1],
            seed=draw(st.integers(0, 1000)),
            zero_fraction=draw(st.sampled_from([0.0, 0.4, 1.0])),
            dtype=draw(st.sampled_from([torch.float32, torch.float64])),
        )
    graph = CSCGraph.from_edge_index(edge_index, num_nodes, edge_weight=weight)
    num_starts = draw(st.integers(0, 12)) if num_nodes else 0
    starts = torch.randint(
        0, max(num_nodes, 1), (num_starts,), generator=gen(draw(st.integers(0, 99)))
    )
    walk = dict(
        p=draw(st.sampled_from([1.0, 0.25, 2.0, 100.0])),
        q=draw(st.sampled_from([1.0, 0.5, 4.0, 0.01])),
        restart_prob=draw(st.sampled_from([0.0, 0.2, 1.0])),
        ppr=draw(st.booleans()),
        weighted=weighted,
    )
    return edge_index, graph, starts.to(draw(st.sampled_from([torch.int32, torch.int64]))), walk


@settings(max_examples=120, deadline=None)
@given(walk_case(), st.integers(0, 7), st.integers(1, 3), st.integers(0, 2**31))
def test_walks_are_valid_and_the_same_under_every_schedule(case, length, per_node, seed):
    edge_index, graph, starts, walk = case
    runs = [
        random_walk(
            graph, starts, length, walks_per_node=per_node, schedule=s, generator=gen(seed), **walk
        )
        for s in ("auto",) + SCHEDULES
    ]
    nodes, edges = runs[0]
    for other in runs[1:]:
        assert torch.equal(other[0], nodes) and torch.equal(other[1], edges)
    tiled = starts.repeat(per_node)
    assert nodes.shape == (len(tiled), length + 1) and edges.shape == (len(tiled), length)
    assert nodes.dtype == edges.dtype == torch.int64
    assert_edges_are_the_users(edge_index, nodes, edges)
    raw_nodes, slots = raw_walk(graph, tiled, length, seed=key_of(seed), **walk)
    assert torch.equal(raw_nodes, nodes)  # the wrapper's seed is the generator's one key
    assert torch.equal(torch.where(slots >= 0, edges, -1), edges)
    assert_valid(graph, tiled, nodes, slots, walk["restart_prob"], walk["ppr"], walk["weighted"])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_walks_do_not_depend_on_the_thread_count(threads, schedule):
    graph = CSCGraph.from_edge_index(
        random_edge_index(3000, 30_000, seed=10), edge_weight=random_weights(30_000, seed=11)
    )
    starts = torch.randint(0, 3000, (5000,), generator=gen(12))
    walk = dict(p=0.5, q=2.0, restart_prob=0.05, ppr=True, weighted=True, with_eid=True)
    expected = raw_walk(graph, starts, 12, seed=13, **walk)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = raw_walk(graph, starts, 12, schedule=schedule, seed=13, **walk)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_int32_indices_walk_as_int64():
    edge_index = random_edge_index(500, 4000, seed=14)
    starts = torch.randint(0, 500, (800,), generator=gen(15))
    walks = [
        random_walk(
            CSCGraph.from_edge_index(edge_index.to(dtype)),
            starts.to(dtype),
            9,
            p=2.0,
            q=0.5,
            generator=gen(16),
        )
        for dtype in (torch.int32, torch.int64)
    ]
    assert torch.equal(walks[0][0], walks[1][0]) and torch.equal(walks[0][1], walks[1][1])


def test_a_generator_seed_reproduces_the_walks():
    graph = CSCGraph.from_edge_index(random_edge_index(200, 2000, seed=17))
    starts = torch.arange(200)
    first = random_walk(graph, starts, 10, p=4.0, generator=gen(18))
    again = random_walk(graph, starts, 10, p=4.0, generator=gen(18))
    other = random_walk(graph, starts, 10, p=4.0, generator=gen(19))
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    assert not torch.equal(first[0], other[0])
    torch.manual_seed(20)
    default = random_walk(graph, starts, 10)
    torch.manual_seed(20)
    assert torch.equal(random_walk(graph, starts, 10)[0], default[0])


def test_non_contiguous_inputs_walk_as_contiguous_ones():
    graph = CSCGraph.from_edge_index(random_edge_index(50, 400, seed=21))
    csr = graph.out_csr()
    starts = torch.randint(0, 50, (60,), generator=gen(22))
    expected = raw_walk(graph, starts, 5, p=0.5, seed=3)

    def strided(t):
        return torch.stack([t, t], -1)[..., 0]

    got = torch.ops.fastgl.random_walk(
        strided(csr.indptr),
        strided(csr.indices),
        None,
        None,
        strided(starts),
        5,
        0.5,
        1.0,
        0.0,
        False,
        "transit",
        3,
    )
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_the_path_check_can_fail():
    """walk_paths_fault notices a wrong target, an early stop, a teleport without ppr and a
    walk that goes on after its end."""
    graph = CSCGraph.from_edge_index(random_edge_index(40, 300, seed=26), 40)
    starts = torch.arange(40)
    nodes, slots = raw_walk(graph, starts, 4, seed=1)
    assert_valid(graph, starts, nodes, slots)
    walking = int(torch.nonzero((slots >= 0).all(1))[0])
    csr = graph.out_csr()
    wrong_target = nodes.clone()
    wrong_target[walking, -1] = (wrong_target[walking, -1] + 1) % 40
    early_stop = nodes.clone(), slots.clone()
    early_stop[0][walking, 2:] = -1
    early_stop[1][walking, 1:] = -1
    teleport = nodes.clone(), slots.clone()
    teleport[0][walking, 3:], teleport[1][walking, 2:] = -1, -1
    teleport[0][walking, 2], teleport[1][walking, 1] = starts[walking], -1
    ended = nodes.clone(), slots.clone()
    ended[0][walking, 2:], ended[1][walking, 1:] = -1, -1
    ended[0][walking, 3] = 0
    for bad_nodes, bad_slots, fault in [
        (wrong_target, slots, "does not go to its slot's target"),
        (*early_stop, "stops where it could move on"),
        (*teleport, "a teleport that is not ppr's"),
        (*ended, "an ended walk goes on"),
    ]:
        got = walk_paths_fault(
            csr.indptr, csr.indices, None, starts, bad_nodes, bad_slots, 0.0, False
        )
        assert got is not None and fault in got, got


# ---------------------------------------------------------------------------------------------
# Edge cases: padding, dead ends, teleports, empty input
# ---------------------------------------------------------------------------------------------


def test_dead_ends_pad_and_ppr_teleports():
    # 0 -> 1 -> 2, node 2 and node 3 without out-edges.
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]), 4)
    starts = torch.tensor([0, 3, 2])
    nodes, edges = random_walk(graph, starts, 4, generator=gen(0))
    assert nodes.tolist() == [[0, 1, 2, -1, -1], [3, -1, -1, -1, -1], [2, -1, -1, -1, -1]]
    assert edges.tolist() == [[0, 1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, -1]]
    nodes, edges = random_walk(graph, starts, 5, ppr=True, generator=gen(0))
    assert nodes.tolist() == [
        [0, 1, 2, 0, 1, 2],  # the dead end teleports to the start
        [3, -1, -1, -1, -1, -1],  # a start without out-edges pads
        [2, -1, -1, -1, -1, -1],
    ]
    assert edges.tolist() == [[0, 1, -1, 0, 1], [-1] * 5, [-1] * 5]


def test_restart_prob_one_stops_or_teleports_at_once():
    graph = CSCGraph.from_edge_index(random_edge_index(20, 100, seed=23), 20)
    starts = torch.arange(20)
    nodes, edges = random_walk(graph, starts, 3, restart_prob=1.0, generator=gen(1))
    assert torch.equal(nodes[:, 0], starts) and bool((nodes[:, 1:] == -1).all())
    nodes, edges = random_walk(graph, starts, 3, restart_prob=1.0, ppr=True, generator=gen(1))
    assert torch.equal(nodes, starts[:, None].expand(20, 4)) and bool((edges == -1).all())


def test_zero_weight_rows_are_dead_ends_when_weighted():
    edge_index = torch.tensor([[0, 0, 1], [1, 2, 0]])
    graph = CSCGraph.from_edge_index(edge_index, edge_weight=torch.tensor([0.0, 1.0, 0.0]))
    nodes, edges = random_walk(graph, torch.tensor([0, 1]), 2, weighted=True, generator=gen(2))
    assert nodes.tolist() == [[0, 2, -1], [1, -1, -1]]
    assert edges.tolist() == [[1, -1], [-1, -1]]
    nodes, _ = random_walk(graph, torch.tensor([1]), 2, generator=gen(2))
    assert nodes.tolist() == [[1, 0, nodes[0, 2].item()]] and nodes[0, 2] in (1, 2)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_empty_input_and_zero_length(schedule):
    graph = CSCGraph.from_edge_index(random_edge_index(10, 30, seed=24))
    for starts in (torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int32)):
        nodes, edges = random_walk(graph, starts, 4, schedule=schedule, walks_per_node=3)
        assert nodes.shape == (0, 5) and edges.shape == (0, 4) and nodes.dtype == torch.int64
    nodes, edges = random_walk(graph, torch.tensor([3, 4]), 0, schedule=schedule)
    assert nodes.tolist() == [[3], [4]] and edges.shape == (2, 0)
    empty = CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.int64), 0)
    nodes, edges = random_walk(empty, torch.empty(0, dtype=torch.int64), 3, p=2.0)
    assert nodes.shape == (0, 4) and edges.shape == (0, 3)
    isolated = CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.int64), 3)
    nodes, edges = random_walk(isolated, torch.tensor([0, 2]), 2, ppr=True, schedule=schedule)
    assert nodes.tolist() == [[0, -1, -1], [2, -1, -1]] and bool((edges == -1).all())


def test_walks_per_node_tiles_the_starts():
    graph = CSCGraph.from_edge_index(random_edge_index(30, 200, seed=25))
    starts = torch.tensor([4, 9, 4])
    nodes, _ = random_walk(graph, starts, 6, walks_per_node=4, generator=gen(3))
    assert nodes[:, 0].tolist() == [4, 9, 4] * 4
    tiled, _ = random_walk(graph, starts.repeat(4), 6, generator=gen(3))
    assert torch.equal(tiled, nodes)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def _graph_for_errors():
    return CSCGraph.from_edge_index(
        torch.tensor([[0, 1, 2], [1, 2, 0]]), edge_weight=torch.tensor([1.0, 2.0, 3.0])
    )


@pytest.mark.parametrize(
    "change, error, match",
    [
        (dict(length=-1), RuntimeError, "random_walk: length must be >= 0"),
        (dict(p=0.0), RuntimeError, "random_walk: p must be finite and > 0"),
        (dict(p=-2.0), RuntimeError, "random_walk: p must be finite and > 0"),
        (dict(q=float("nan")), RuntimeError, "random_walk: q must be finite and > 0"),
        (dict(q=float("inf")), RuntimeError, "random_walk: q must be finite and > 0"),
        (dict(p=1e-310), RuntimeError, r"random_walk: p must be .*1/p finite"),
        (dict(restart_prob=-0.1), RuntimeError, r"random_walk: restart_prob must lie in \[0, 1\]"),
        (dict(restart_prob=1.5), RuntimeError, "random_walk: restart_prob must lie in"),
        (dict(starts=torch.tensor([0, 3])), RuntimeError, "random_walk: starts id 3 out of range"),
        (dict(starts=torch.tensor([-1])), RuntimeError, "random_walk: starts id -1 is negative"),
        (dict(starts=torch.tensor([0.0])), RuntimeError, "random_walk: starts must be int32 or"),
        (dict(starts=torch.tensor([[0]])), ValueError, "random_walk: starts must be 1-D"),
        (dict(starts=[0, 1]), TypeError, "random_walk: starts must be a tensor"),
        (dict(walks_per_node=0), ValueError, "random_walk: walks_per_node must be >= 1"),
        (dict(walks_per_node=1.5), TypeError, "random_walk: walks_per_node must be an int"),
        (dict(schedule="bogus"), RuntimeError, "random_walk: schedule must be 'auto', 'sample'"),
        (dict(generator=3), TypeError, "random_walk: generator must be a torch.Generator"),
    ],
)
@pytest.mark.parametrize("length", [0, 3])
def test_bad_input_is_rejected(change, error, match, length):
    """At length 0 the entry checks the starts, which otherwise the walks check as they read
    them (so that a GPU call need not wait for a check before it walks)."""
    args = dict(starts=torch.tensor([0, 1]), length=length, generator=gen(0))
    args.update(change)
    with pytest.raises(error, match=match):
        random_walk(_graph_for_errors(), **args)


def test_weighted_needs_weights():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="random_walk: weighted=True needs a graph with weights"):
        random_walk(graph, torch.tensor([0]), 2, weighted=True)


def test_negative_weights_are_an_error():
    """A graph built without validation (or weights changed afterwards) is checked where walked."""
    indptr, indices = torch.tensor([0, 1, 2]), torch.tensor([1, 0])
    graph = CSCGraph(indptr, indices, weight=torch.tensor([1.0, -1.0]), validate=False)
    with pytest.raises(RuntimeError, match=r"random_walk: weight must be .*\(node 0, walk 0\)"):
        random_walk(graph, torch.tensor([0]), 3, weighted=True)


def _raw(
    indptr, indices, weight=None, starts=(0,), length=3, p=1.0, q=1.0, schedule="sample", eid=None
):
    return torch.ops.fastgl.random_walk(
        torch.tensor(indptr),
        torch.tensor(indices),
        weight,
        eid,
        torch.tensor(starts),
        length,
        p,
        q,
        0.0,
        False,
        schedule,
        0,
    )


@pytest.mark.parametrize("length", [0, 4])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_bad_start_is_named_before_the_graph_is_read(schedule, length):
    """Among many good walks, a start out of range is the error, named as other ops name an id
    out of range (the extreme one), even when the graph is bad too (its offsets end early)."""
    good = list(range(3)) * 200
    for starts, message in [
        (good + [7, 3], "starts id 7 out of range for a graph of 3 nodes"),
        (good + [-2, -5], "starts id -5 is negative"),
    ]:
        for indptr in ([0, 1, 2, 3], [0, 1, 2, 2]):
            with pytest.raises(RuntimeError, match=f"random_walk: {message}"):
                _raw(indptr, [1, 2, 0], starts=starts, length=length, schedule=schedule)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_edge_ids_are_the_eid_of_the_slots_taken(schedule):
    """With ``eid`` the op writes each step's edge id where it would write the CSR slot; the
    walks are the same (node2vec's previous node and ppr's teleports included)."""
    graph = CSCGraph.from_edge_index(random_edge_index(40, 300, seed=5))
    starts = torch.randint(0, 40, (200,), generator=gen(6))
    walk = dict(p=0.5, q=2.0, restart_prob=0.2, ppr=True, schedule=schedule, seed=7)
    nodes, slots = raw_walk(graph, starts, 12, **walk)
    nodes_with_ids, edges = raw_walk(graph, starts, 12, with_eid=True, **walk)
    assert torch.equal(nodes_with_ids, nodes)
    eid = graph.out_csr().eid
    assert eid is not None  # a random edge list: its ids are not the slots
    assert bool((slots == -1).any()) and bool((slots >= 0).any())
    assert torch.equal(edges, torch.where(slots >= 0, eid[slots.clamp(min=0)], -1))


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_bad_structures_read_by_the_walks_are_errors(schedule):
    # A row that runs backwards, offsets that do not end at len(indices), an id out of range.
    with pytest.raises(RuntimeError, match=r"random_walk: indptr is not a valid CSR .*node 1"):
        _raw([0, 2, 1, 3], [1, 2, 0], starts=(1,), schedule=schedule)
    with pytest.raises(RuntimeError, match="random_walk: indptr is not a valid CSR"):
        _raw([0, 1, 2, 2], [1, 2, 0], schedule=schedule)
    with pytest.raises(RuntimeError, match=r"random_walk: indices of node 0 hold an id out of"):
        _raw([0, 1, 1], [7], schedule=schedule)
    nan = torch.tensor([1.0, float("nan")])
    with pytest.raises(RuntimeError, match=r"random_walk: weight must be finite.*\(node 1"):
        _raw([0, 1, 2], [1, 0], nan, schedule=schedule)
    with pytest.raises(RuntimeError, match="random_walk: weight has 1 entries but the graph has 2"):
        _raw([0, 1, 2], [1, 0], torch.ones(1), schedule=schedule)
    with pytest.raises(RuntimeError, match="random_walk: eid has 1 entries but the graph has 2"):
        _raw([0, 1, 2], [1, 0], eid=torch.tensor([0]), schedule=schedule)
    with pytest.raises(RuntimeError, match="random_walk: eid must be Long, got Int"):
        _raw([0, 1, 2], [1, 0], eid=torch.tensor([0, 1], dtype=torch.int32), schedule=schedule)
    # Node 1's out-edge has a negative id: the walk's second step takes it.
    with pytest.raises(
        RuntimeError,
        match="random_walk: eid must be non-negative, but an edge walk 0 took has a negative id",
    ):
        _raw([0, 1, 2], [1, 0], eid=torch.tensor([5, -3]), schedule=schedule)
    # Rows the walks never read are not checked: node 2's backwards row is never visited.
    nodes, _ = _raw([0, 1, 2, 1, 2], [1, 0], starts=(0,), schedule=schedule)
    assert nodes.tolist() == [[0, 1, 0, 1]]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_an_unsorted_row_is_an_error_for_node2vec(schedule):
    """Node 1's row descends: node2vec's neighbor test (a binary search in the previous node's
    row) notices, whatever candidate it searches for. First-order walks never search it, nor do
    node2vec walks with q = 1, whose neighbors and non-neighbors weigh alike (the order of a row
    cannot change their walks). The other rows have two edges each: a row of one edge would need
    no trials, and no search."""
    indptr = [0, 2, 7, 9, 11, 13, 15]
    indices = [1, 3, 5, 4, 3, 2, 0, 3, 4, 4, 5, 0, 5, 0, 2]  # row 1 descending
    with pytest.raises(RuntimeError, match=r"random_walk: indices must ascend .*node 1 does not"):
        _raw(indptr, indices, starts=(1,) * 50, length=4, p=2.0, q=4.0, schedule=schedule)
    for walk in ({}, {"p": 2.0}):
        nodes, _ = _raw(indptr, indices, starts=(1,) * 50, length=4, schedule=schedule, **walk)
        assert bool((nodes >= 0).all())


@pytest.mark.parametrize("p", [1.0, 2.0])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_first_bad_walk_is_named(schedule, p):
    """Faults are found while walking; the smallest bad walk is named whatever the thread
    count and schedule (walk 3000 reaches node 9's bad target at its second step, walk 5000 at
    its first), for first-order walks and for node2vec's, which the CPU's sample schedule runs
    differently (in lockstep groups and in lanes). Node 9 has two out-edges, both bad, so that
    node2vec's second step from it is a trial."""
    indptr = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11])
    indices = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 98, 99])  # a path 0 -> ... -> 9
    starts = torch.zeros(6000, dtype=torch.int64)
    starts[3000], starts[5000] = 8, 9
    for threads in (1, 2):
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            with pytest.raises(RuntimeError, match=r"node 9 hold an id out of .*\(walk 3000\)"):
                torch.ops.fastgl.random_walk(
                    indptr, indices, None, None, starts, 3, p, 1.0, 0.0, False, schedule, 0
                )
        finally:
            torch.set_num_threads(before)
