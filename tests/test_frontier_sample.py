"""fastgl::frontier_sample: Zeng et al.'s frontier sampler on a Dashboard, against a plain Python
replay of its draws, a chi-square check of the pop, the walkers' bookkeeping across cleanups, and
bad input."""

import re
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    assert_chi_square_fits,
    cycle_with_a_side_node,
    edge_index_strategy,
    frontier_sample_reference,
    hub_edge_index,
    random_edge_index,
)

from fastgl import CSCGraph
from fastgl.ops import FrontierTrace, frontier_sample
from fastgl.sampling import FrontierSampler
from fastgl.sampling.neighbor import draw_key


def raw(graph, num_subgraphs, m, budget, eta=2.0, max_entries=0, seed=0, pop="dashboard", unit=0):
    return FrontierTrace(
        *torch.ops.fastgl.frontier_sample(
            graph.indptr, graph.indices, num_subgraphs, m, budget, eta, max_entries, pop, seed, unit
        )
    )


def undirected(edge_index):
    return torch.cat([edge_index, edge_index.flip(0)], 1)


@settings(max_examples=80, deadline=None)
@given(
    edge_index_strategy(max_nodes=30, max_edges=120, allow_empty=False),
    st.integers(0, 4),
    st.data(),
)
def test_samples_replay_the_reference(case, num_subgraphs, data):
    """Draw for draw what the Dashboard of the reference gives, eta (cleanups), caps and entry
    weights (1: the paper's; 0: the mean in-degree) included, on directed graphs with isolated
    nodes and hubs."""
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    m = data.draw(st.integers(1, num_nodes))
    budget = m + data.draw(st.integers(0, 40))
    eta = data.draw(st.sampled_from([1.01, 1.5, 2.0, 8.0]))
    max_entries = data.draw(st.sampled_from([0, 1, 3]))
    seed = data.draw(st.integers(-(2**62), 2**62))
    pop = data.draw(st.sampled_from(["dashboard", "scan"]))
    unit = data.draw(st.sampled_from([0, 1, 2, 5]))
    got = raw(graph, num_subgraphs, m, budget, eta, max_entries, seed, pop, unit)
    expected = frontier_sample_reference(
        graph.indptr, graph.indices, num_subgraphs, m, budget, eta, max_entries, pop, seed, unit
    )
    for g, e, name in zip(got, expected, ("frontier", "popped", "added")):
        assert torch.equal(g, e), name


def test_the_pop_is_proportional_to_the_weights():
    """With every vertex in the first frontier, the first pop takes vertex v with probability
    weight(v) / sum(weights): its in-degree, or min(in-degree, cap) with a cap, whatever each
    Dashboard entry stands for (4 and 5 leave partial last entries: 12 = 4 + 4 + 4 but
    3 < 4, 9 = 5 + 4, 1 < 5)."""
    in_degrees = [12, 1, 3, 6, 0, 9]
    edge_index = torch.cat(
        [
            torch.stack([(v + 1 + torch.arange(d)) % 6, torch.full((d,), v)])
            for v, d in enumerate(in_degrees)
        ],
        1,
    )
    graph = CSCGraph.from_edge_index(edge_index, 6)
    degree = graph.indptr.diff()
    assert degree.tolist() == in_degrees
    for cap, pop, unit in (
        (0, "dashboard", 1),
        (6, "dashboard", 1),
        (0, "dashboard", 4),
        (0, "dashboard", 5),
        (6, "dashboard", 4),
        (0, "scan", 0),
    ):
        trace = raw(graph, 6000, 6, 7, max_entries=cap, seed=11, pop=pop, unit=unit)
        first_pops = Counter(trace.popped[:, 0].tolist())
        weights = degree.clamp(max=cap) if cap else degree
        nodes = [v for v in range(6) if weights[v] > 0]
        assert set(first_pops) <= set(nodes)
        what = f"{pop}, cap {cap}, entry weight {unit}"
        assert_chi_square_fits(
            [first_pops[v] for v in nodes], [float(weights[v]) for v in nodes], what
        )


def test_the_chi_square_check_can_fail():
    """The same check rejects pops counted uniformly (the Dashboard's weights dropped)."""
    with pytest.raises(AssertionError, match="chi-square"):
        assert_chi_square_fits([1000, 1000, 1000], [1.0, 2.0, 6.0], "uniform pops")


@pytest.mark.parametrize("eta, pop", [(1.01, "dashboard"), (2.0, "dashboard"), (2.0, "scan")])
def test_walkers_move_along_in_edges_from_the_frontier(eta, pop):
    """Replaying the frontier as a multiset of walkers: every pop takes a walker that stands
    there and can move (entries > 0), and moves it to an in-neighbor. eta = 1.01 compacts DB
    almost every move, and the hub (degree about 300, the mean about 15) outgrows it."""
    edge_index, num_nodes = hub_edge_index(hub_degree=300, num_nodes=200, extra_edges=1200, seed=4)
    graph = CSCGraph.from_edge_index(undirected(edge_index), num_nodes)
    trace = raw(graph, 8, 20, 600, eta=eta, seed=5, pop=pop)
    ptr, nbr = graph.indptr.tolist(), graph.indices.tolist()
    for frontier, popped, added in zip(*(t.tolist() for t in trace)):
        assert len(set(frontier)) == len(frontier)
        walkers = Counter(frontier)
        for u, v in zip(popped, added):
            assert walkers[u] > 0 and ptr[u + 1] > ptr[u], (u, walkers)
            assert v in nbr[ptr[u] : ptr[u + 1]]
            walkers[u] -= 1
            walkers[v] += 1
        assert -1 not in popped


def test_moves_stop_when_no_walker_can_move():
    """0 -> 1 is the only edge: a walker on 1 moves to 0, where nothing can pop it."""
    graph = CSCGraph.from_edge_index(torch.tensor([[0], [1]]), 2)
    trace = raw(graph, 50, 1, 4, seed=2)
    for frontier, popped, added in zip(*(t.tolist() for t in trace)):
        if frontier == [1]:
            assert popped == [1, -1, -1] and added == [0, -1, -1]
        else:
            assert popped == added == [-1, -1, -1]
    assert {tuple(f) for f in trace.frontier.tolist()} == {(0,), (1,)}


def test_samples_do_not_depend_on_the_thread_count():
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(500, 3000, seed=6)), 500)
    before = torch.get_num_threads()
    runs = []
    try:
        for threads in (1, 2, 4):
            torch.set_num_threads(threads)
            runs.append(raw(graph, 16, 30, 200, seed=7))
    finally:
        torch.set_num_threads(before)
    assert all(torch.equal(g, e) for run in runs[1:] for g, e in zip(run, runs[0]))


@pytest.mark.parametrize("pop", ["dashboard", "scan"])
@pytest.mark.parametrize("threads", [1, 2])
def test_samplers_in_flight_together_replay_the_reference(pop, threads):
    """A thread moves its samplers together, up to 16 at a time: 40 samplers fill several
    batches, and on a graph with sinks some of them run out of walkers while the others move on;
    each still replays the reference draw for draw."""
    edge_index = random_edge_index(60, 120, seed=3)
    graph = CSCGraph.from_edge_index(edge_index[:, edge_index[1] % 4 != 0], 60)  # sinks: 0, 4, ...
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        got = raw(graph, 40, 3, 40, seed=11, pop=pop)
    finally:
        torch.set_num_threads(before)
    expected = frontier_sample_reference(graph.indptr, graph.indices, 40, 3, 40, 2.0, 0, pop, 11, 0)
    for g, e, name in zip(got, expected, ("frontier", "popped", "added")):
        assert torch.equal(g, e), name
    ended = (got.popped == -1).any(1)
    assert 0 < int(ended.sum()) < 40  # some samplers ran out of walkers, not all


def test_large_dashboards_sample_one_at_a_time_alike():
    """A replay of the path where a thread keeps one sampler in flight at a time: the paper's
    Dashboard (an entry per unit of degree) over a graph of mean in-degree 70 starts at
    eta * m * 70 = 8 * 50 * 70 = 28000 entries of 40 bytes, past the 1 MiB a thread's samplers in
    flight may start with. One thread, so that it runs 20 batches of one sampler."""
    graph = CSCGraph.from_edge_index(random_edge_index(100, 7000, seed=4), 100)
    assert graph.indices.numel() == 7000
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        got = raw(graph, 20, 50, 90, eta=8.0, seed=3, unit=1)
    finally:
        torch.set_num_threads(before)
    expected = frontier_sample_reference(
        graph.indptr, graph.indices, 20, 50, 90, 8.0, 0, "dashboard", 3, 1
    )
    for g, e, name in zip(got, expected, ("frontier", "popped", "added")):
        assert torch.equal(g, e), name


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fault", ["neighbor", "row"])
def test_the_first_faulty_sampler_is_named_whatever_its_batch(fault, threads):
    """Node 30's one in-neighbor id out of range (a sampler faults when it pops node 30), or its
    row read backwards (when a move adds node 30): the faulty samplers fault mid-batch while the
    others move on, in batches of 16 on each thread. The error names the smallest: the valid
    graph's trace has it past the first batch (sampler 20: the second batch of the first thread
    at either thread count), by a move, while another thread's first batch faults too (38, 45);
    the samplers before it run clean. (The backwards row also changes node 31's, which no
    sampler before 20 starts on.)"""
    indptr, indices = cycle_with_a_side_node()
    valid = raw(SimpleNamespace(indptr=indptr, indices=indices), 64, 1, 3, seed=1, pop="scan")
    # The samplers that read node 30's row, or its in-neighbor, in the valid graph.
    at_30 = "popped" if fault == "neighbor" else "added"
    faulty = [s for s in range(64) if 30 in getattr(valid, at_30)[s].tolist()]
    assert faulty[0] >= 16 and faulty[-1] >= 32 and int(valid.frontier[faulty[0], 0]) != 30
    assert 31 not in valid.frontier[: faulty[0]].flatten().tolist()
    if fault == "neighbor":
        indices = indices.clone()
        indices[31] = 99
        message = "indices of node 30 hold an id out of range"
    else:
        indptr = indptr.clone()
        indptr[31] = 30  # node 30's row runs backwards
        message = r"indptr is not a valid CSC offset array.*\(node 30, subgraph"
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        with pytest.raises(RuntimeError, match=message) as error:
            torch.ops.fastgl.frontier_sample(indptr, indices, 64, 1, 3, 2.0, 0, "scan", 1)
        first = int(re.search(r"subgraph (\d+)\)", str(error.value)).group(1))
        assert first == faulty[0]
        torch.ops.fastgl.frontier_sample(indptr, indices, first, 1, 3, 2.0, 0, "scan", 1)
    finally:
        torch.set_num_threads(before)


def test_wrapper_seeds_from_the_generator():
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(50, 200, seed=8)), 50)
    a = frontier_sample(graph, 3, 5, 20, generator=torch.Generator().manual_seed(1))
    b = frontier_sample(graph, 3, 5, 20, generator=torch.Generator().manual_seed(1))
    c = frontier_sample(graph, 3, 5, 20, generator=torch.Generator().manual_seed(2))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a.added, c.added)
    assert a.frontier.shape == (3, 5) and a.popped.shape == a.added.shape == (3, 15)


def test_empty_and_moveless_calls():
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(10, 30, seed=9)), 10)
    trace = raw(graph, 0, 3, 9)
    assert [t.shape for t in trace] == [(0, 3), (0, 6), (0, 6)]
    trace = raw(graph, 2, 10, 10)
    assert trace.popped.shape == (2, 0)
    assert sorted(trace.frontier[0].tolist()) == list(range(10))


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(num_subgraphs=-1), "num_subgraphs must be >= 0, got -1"),
        (dict(m=0), "frontier_size must be >= 1, got 0"),
        (dict(m=11), "frontier_size 11 exceeds the graph's 10 nodes"),
        (dict(budget=2), r"budget must be >= frontier_size \(3\), got 2"),
        (dict(eta=1.0), r"eta must be in \(1, 64\], got 1"),
        (dict(max_entries=-2), r"max_entries must be >= 0 \(0: no cap\), got -2"),
        (dict(pop="heap"), "pop must be 'dashboard' or 'scan', got 'heap'"),
        (dict(unit=-1), r"entry_weight must be in \[0, 1024\] \(0: the mean in-degree\), got -1"),
        (
            dict(unit=1025),
            r"entry_weight must be in \[0, 1024\] \(0: the mean in-degree\), got 1025",
        ),
    ],
)
def test_bad_arguments_are_rejected(args, match):
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(10, 30, seed=9)), 10)
    call = dict(num_subgraphs=2, m=3, budget=8, eta=2.0, max_entries=0, pop="dashboard") | args
    with pytest.raises(RuntimeError, match="frontier_sample: " + match):
        raw(graph, **call)


def test_wrapper_rejects_a_cap_or_entry_weight_below_one():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), 2)
    with pytest.raises(ValueError, match="frontier_sample: max_entries must be >= 1 or None"):
        frontier_sample(graph, 1, 1, 3, max_entries=0)
    for bad in (0, 1025):
        with pytest.raises(ValueError, match=r"entry_weight must be in \[1, 1024\] or None"):
            frontier_sample(graph, 1, 1, 3, entry_weight=bad)


def test_wrapper_passes_the_entry_weight():
    """None is the op's automatic weight (the mean in-degree), an int goes through as given."""
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(40, 300, seed=2)), 40)
    for weight, passed in ((None, 0), (1, 1), (3, 3)):
        got = frontier_sample(
            graph, 3, 5, 30, entry_weight=weight, generator=torch.Generator().manual_seed(4)
        )
        seed = draw_key(torch.Generator().manual_seed(4), torch.device("cpu"))
        want = raw(graph, 3, 5, 30, seed=seed, unit=passed)
        assert all(torch.equal(g, w) for g, w in zip(got, want)), weight


def test_bad_structures_read_are_errors():
    """A row read backwards, and a neighbor id out of range, name the node and the subgraph;
    indptr's ends are checked once."""
    indptr, indices = torch.tensor([0, 2, 1, 3]), torch.tensor([1, 2, 0])
    with pytest.raises(RuntimeError, match=r"frontier_sample: .*node 1, subgraph 0\)"):
        torch.ops.fastgl.frontier_sample(indptr, indices, 4, 3, 5, 2.0, 0, "dashboard", 0)
    with pytest.raises(RuntimeError, match="frontier_sample: indptr is not a valid CSC offset"):
        torch.ops.fastgl.frontier_sample(
            torch.tensor([1, 2, 3]), torch.tensor([0, 1, 0]), 1, 1, 2, 2.0, 0, "scan", 0
        )
    indptr, indices = torch.tensor([0, 1, 2]), torch.tensor([1, 7])
    with pytest.raises(
        RuntimeError,
        match="frontier_sample: indices of node 1 hold an id out of range for a graph of 2 nodes",
    ):
        torch.ops.fastgl.frontier_sample(indptr, indices, 3, 2, 6, 2.0, 0, "scan", 0)


def test_sampler_subgraphs_are_induced_on_the_visited_vertices():
    """FrontierSampler: the first frontier, then each vertex a move reached, once (at most
    budget), and exactly the graph's edges among them, as one hop whose seeds are all."""
    edge_index = undirected(random_edge_index(120, 500, seed=10))
    edge_index = torch.cat([edge_index, torch.tensor([[3, 3], [3, 7]])], 1)  # a loop, a one-way
    graph = CSCGraph.from_edge_index(edge_index, 125)  # 5 isolated nodes
    sampler = FrontierSampler(graph, frontier_size=15, budget=60)
    subs = sampler.sample(5, generator=torch.Generator().manual_seed(3))
    trace = frontier_sample(graph, 5, 15, 60, generator=torch.Generator().manual_seed(3))
    for sub, frontier, added in zip(subs, trace.frontier, trace.added):
        visited = frontier.tolist() + added[added >= 0].tolist()
        assert sub.nodes.tolist() == list(dict.fromkeys(visited))
        assert sub.nodes.numel() <= 60
        members = set(sub.nodes.tolist())
        inside = [
            e for e, (s, t) in enumerate(edge_index.t().tolist()) if s in members and t in members
        ]
        assert sorted(sub.eid.tolist()) == inside
        assert torch.equal(sub.nodes[sub.row], edge_index[0, sub.eid])
        assert torch.equal(sub.nodes[sub.col], edge_index[1, sub.eid])
        assert sub.num_sampled_nodes == [sub.nodes.numel(), 0]
        assert sub.num_sampled_edges == [sub.eid.numel()]
        block = sub.blocks[0]
        assert block.num_src_nodes == block.num_dst_nodes == sub.nodes.numel()


def test_sampler_is_deterministic_for_a_seed():
    graph = CSCGraph.from_edge_index(undirected(random_edge_index(80, 300, seed=12)), 80)
    sampler = FrontierSampler(graph, frontier_size=8, budget=30, max_entries=4)
    a, b = (sampler.sample(3, torch.Generator().manual_seed(4)) for _ in range(2))
    assert all(torch.equal(x.nodes, y.nodes) and torch.equal(x.eid, y.eid) for x, y in zip(a, b))
