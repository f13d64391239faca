"""Neighbor sampling: fastgl.ops.sample_neighbors (one hop), fastgl.sampling.neighbor_sample and
fastgl.sampling.NeighborSampler (multi-hop, batched).

Sampling is random, so most tests check that a sample is *valid* (reference.check_neighbor_sample);
the statistical tests compare draw frequencies with the exact distributions (chi-square, fixed
seeds, so they are deterministic: a p-value threshold of 1e-3 is a fixed pass/fail, not a flake).
"""

import dataclasses
import itertools
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    HUB_DEGREE,
    assert_chi_square_fits,
    assert_same_subgraph,
    available_in_edges,
    check_blocks,
    check_neighbor_sample,
    edge_index_strategy,
    empty_edge_index,
    expected_draws,
    first_occurrence,
    hub_edge_index,
    isolated_edge_index,
    random_edge_index,
    random_weights,
    star_edge_index,
)

import fastgl
from fastgl import CSCGraph, NeighborSampler, SampledSubgraph
from fastgl.nn.functional import aggregate
from fastgl.ops import sample_neighbors
from fastgl.sampling import neighbor_sample


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def sample_and_check(
    edge_index, num_nodes, seeds, fanouts, replace=False, weight=None, seed=0, api="function"
):
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes, edge_weight=weight)
    weighted = weight is not None
    if api == "function":
        sub = neighbor_sample(
            graph, seeds, fanouts, replace=replace, weighted=weighted, generator=gen(seed)
        )
    else:
        sub = NeighborSampler(graph, fanouts, replace=replace, weighted=weighted).sample(
            seeds, generator=gen(seed)
        )
    check_neighbor_sample(
        sub,
        edge_index,
        num_nodes,
        seeds,
        fanouts,
        replace=replace,
        edge_weight=weight if weighted else None,
    )
    return sub


# ---------------------------------------------------------------------------------------------
# Properties on random graphs
# ---------------------------------------------------------------------------------------------


@st.composite
def sampling_case(draw):
    edge_index, num_nodes = draw(edge_index_strategy(max_nodes=40, max_edges=250))
    if num_nodes:
        seeds = draw(st.lists(st.integers(0, num_nodes - 1), max_size=12))
    else:
        seeds = []
    seeds = torch.tensor(seeds, dtype=draw(st.sampled_from([torch.int32, torch.int64])))
    fanouts = draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3, 5, 8]), min_size=0, max_size=3))
    replace = draw(st.booleans())
    weight = None
    if draw(st.booleans()):
        weight = random_weights(
            edge_index.shape[1],
            seed=draw(st.integers(0, 1000)),
            zero_fraction=draw(st.sampled_from([0.0, 0.3, 1.0])),
            dtype=draw(st.sampled_from([torch.float32, torch.float64])),
        )
    return dict(
        edge_index=edge_index,
        num_nodes=num_nodes,
        seeds=seeds,
        fanouts=fanouts,
        replace=replace,
        weight=weight,
        seed=draw(st.integers(0, 2**32)),
        api=draw(st.sampled_from(["function", "sampler"])),
    )


@settings(max_examples=120, deadline=None)
@given(sampling_case())
def test_sample_is_valid(case):
    sample_and_check(**case)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_sample_is_valid_medium_graph(replace, dtype):
    """A graph big enough that the kernels run their pairs in parallel chunks."""
    edge_index = random_edge_index(3000, 30_000, dtype=dtype, seed=7)
    seeds = torch.randint(0, 3000, (400,), generator=gen(1))
    sample_and_check(edge_index, 3000, seeds, [10, 5, 3], replace=replace, seed=3)
    weight = random_weights(30_000, seed=2)
    sample_and_check(edge_index, 3000, seeds, [10, 5], replace=replace, weight=weight, seed=4)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_fanout_minus_one_takes_all_in_edges(replace, weighted):
    edge_index, num_nodes = isolated_edge_index(30, 200, 4, seed=2)
    weight = random_weights(200, seed=5) if weighted else None
    seeds = torch.arange(num_nodes)
    sub = sample_and_check(edge_index, num_nodes, seeds, [-1], replace=replace, weight=weight)
    keep = torch.ones(200, dtype=torch.bool) if weight is None else weight > 0
    assert sorted(sub.eid.tolist()) == torch.nonzero(keep).view(-1).tolist()


def test_without_replacement_fanout_at_least_degree_takes_all():
    edge_index = random_edge_index(20, 100, seed=9)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=20)
    max_degree = int(graph.in_degrees().max())
    sub = neighbor_sample(graph, torch.arange(20), [max_degree], generator=gen(0))
    assert sorted(sub.eid.tolist()) == list(range(100))


def test_with_replacement_draws_fanout_even_above_degree():
    edge_index = star_edge_index(3)
    sub = sample_and_check(edge_index, 4, torch.tensor([0]), [10], replace=True)
    assert sub.num_sampled_edges == [10]
    assert set(sub.eid.tolist()) <= {0, 1, 2}
    assert sub.num_sampled_nodes[1] == len(set(sub.eid.tolist()))


def test_exact_small_example_layout():
    """Hand-checked layout: hop-by-hop first-occurrence order, PyG row/col orientation."""
    # 0 <- 1, 0 <- 2, 1 <- 3, 2 <- 3, 3 <- 4; fanout -1 everywhere (deterministic).
    edge_index = torch.tensor([[1, 2, 3, 3, 4], [0, 0, 1, 2, 3]])
    graph = CSCGraph.from_edge_index(edge_index)
    sub = neighbor_sample(graph, torch.tensor([0]), [-1, -1, -1])
    assert sub.nodes.tolist() == [0, 1, 2, 3, 4]
    assert sub.num_sampled_nodes == [1, 2, 1, 1]
    assert sub.num_sampled_edges == [2, 2, 1]
    assert sub.row.tolist() == [1, 2, 3, 3, 4]
    assert sub.col.tolist() == [0, 0, 1, 2, 3]
    assert sub.eid.tolist() == [0, 1, 2, 3, 4]
    assert torch.equal(sub.edge_index, torch.stack([sub.row, sub.col]))
    blocks = sub.blocks
    assert [(b.num_src_nodes, b.num_dst_nodes, b.num_edges) for b in blocks] == [
        (5, 4, 5),
        (4, 3, 4),
        (3, 1, 2),
    ]


def test_only_new_nodes_are_expanded():
    """A node reached again at a later hop is not sampled from a second time."""
    # 0 <- 1, 1 <- 0: hop 1 finds 1, hop 2 finds 0 again (already a seed): no new nodes, and hop
    # 3 has an empty frontier.
    edge_index = torch.tensor([[1, 0], [0, 1]])
    sub = sample_and_check(edge_index, 2, torch.tensor([0]), [-1, -1, -1])
    assert sub.num_sampled_nodes == [1, 1, 0, 0]
    assert sub.num_sampled_edges == [1, 1, 0]


@pytest.mark.parametrize("weighted", [False, True])
def test_graph_without_eid(weighted):
    """A CSCGraph built from raw arrays (eid None): edge ids are CSC slot numbers."""
    g = CSCGraph.from_edge_index(random_edge_index(60, 500, seed=60), num_nodes=60)
    weight = random_weights(500, seed=61) if weighted else None
    raw = CSCGraph(g.indptr, g.indices, weight=weight)
    assert raw.eid is None
    # The equivalent edge list in slot order.
    slot_edges = torch.stack([g.indices, torch.repeat_interleave(torch.arange(60), g.in_degrees())])
    seeds = torch.tensor([0, 59, 30, 0])
    for replace in (False, True):
        sub = neighbor_sample(
            raw, seeds, [5, 3], replace=replace, weighted=weighted, generator=gen(62)
        )
        check_neighbor_sample(
            sub, slot_edges, 60, seeds, [5, 3], replace=replace, edge_weight=weight
        )


# ---------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------


def _random_setup():
    edge_index = random_edge_index(500, 10_000, seed=1)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=500, edge_weight=random_weights(10_000))
    seeds = torch.randint(0, 500, (64,), generator=gen(2))
    return graph, seeds


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_same_generator_seed_same_result(replace, weighted):
    graph, seeds = _random_setup()
    sampler = NeighborSampler(graph, [10, 5], replace=replace, weighted=weighted)
    a = sampler.sample(seeds, generator=gen(123))
    b = sampler.sample(seeds, generator=gen(123))
    assert_same_subgraph(a, b)
    c = sampler.sample(seeds, generator=gen(124))
    # 64 seeds, average in-degree 20, 10 drawn each: identical draws are essentially impossible.
    assert not torch.equal(a.eid, c.eid)


def test_manual_seed_reproduces():
    graph, seeds = _random_setup()
    torch.manual_seed(2024)
    a = neighbor_sample(graph, seeds, [10, 5])
    torch.manual_seed(2024)
    b = neighbor_sample(graph, seeds, [10, 5])
    assert_same_subgraph(a, b)
    c = neighbor_sample(graph, seeds, [10, 5])  # generator state moved on
    assert not torch.equal(a.eid, c.eid)


def test_generator_state_advances():
    graph, seeds = _random_setup()
    g = gen(5)
    a = neighbor_sample(graph, seeds, [10], generator=g)
    b = neighbor_sample(graph, seeds, [10], generator=g)
    assert not torch.equal(a.eid, b.eid)


def test_op_is_pure_function_of_seed_and_position():
    """sample_neighbors: pair p's draws depend on (seed, p) only, not on other pairs or threads."""
    graph, _ = _random_setup()
    transits = torch.randint(0, 500, (3000,), generator=gen(3))
    for weight, replace in (
        (None, False),
        (None, True),
        (graph.weight, False),
        (graph.weight, True),
    ):

        def draw(pairs, seed=99, weight=weight, replace=replace):
            return sample_neighbors(graph.indptr, graph.indices, weight, pairs, 7, replace, seed)

        full, again = draw(transits), draw(transits)
        for x, y in zip(full, again):
            assert torch.equal(x, y)
        # A prefix of the pairs draws exactly what those pairs drew in the full call.
        ptr, nbr, pos = draw(transits[:1000])
        end = int(full[0][1000])
        assert torch.equal(ptr, full[0][:1001])
        assert torch.equal(nbr, full[1][:end]) and torch.equal(pos, full[2][:end])
        # Thread count does not matter.
        threads = torch.get_num_threads()
        try:
            torch.set_num_threads(1)
            single = draw(transits)
        finally:
            torch.set_num_threads(threads)
        for x, y in zip(full, single):
            assert torch.equal(x, y)
        other = draw(transits, seed=100)
        assert not torch.equal(full[2], other[2])


def test_hops_draw_independently():
    """Each hop gets its own key: with identical adjacency at hops 1 and 2, the offsets drawn for
    pair 0 agree only by chance (1/20), not always."""
    # Seed 0 has in-neighbors 1..20; each of them has in-neighbors 21..40 in the same order.
    hop1 = star_edge_index(20)
    leaves = torch.arange(21, 41)
    hop2 = torch.cat([torch.stack([leaves, torch.full_like(leaves, v)]) for v in range(1, 21)], 1)
    graph = CSCGraph.from_edge_index(torch.cat([hop1, hop2], 1))
    equal = 0
    for s in range(200):
        sub = neighbor_sample(graph, torch.tensor([0]), [1, 1], generator=gen(s))
        first, second = sub.nodes[1].item() - 1, sub.nodes[2].item() - 21
        equal += first == second
    assert equal < 40  # expected 10


# ---------------------------------------------------------------------------------------------
# Edge cases
# ---------------------------------------------------------------------------------------------


def test_empty_seeds():
    edge_index = random_edge_index(10, 40)
    sub = sample_and_check(edge_index, 10, torch.empty(0, dtype=torch.long), [3, 2])
    assert sub.nodes.numel() == 0 and sub.eid.numel() == 0
    assert sub.num_sampled_nodes == [0, 0, 0] and sub.num_sampled_edges == [0, 0]
    assert sub.seed_index.numel() == 0


def test_seeds_without_in_edges():
    edge_index = star_edge_index(5)  # only node 0 has in-edges
    sub = sample_and_check(edge_index, 6, torch.tensor([3, 1, 5]), [4, 4])
    assert sub.nodes.tolist() == [3, 1, 5]
    assert sub.num_sampled_edges == [0, 0]


@pytest.mark.parametrize("replace", [False, True])
def test_isolated_graph(replace):
    sub = sample_and_check(empty_edge_index(), 7, torch.tensor([6, 0, 6]), [5, -1], replace=replace)
    assert sub.nodes.tolist() == [6, 0]
    assert sub.seed_index.tolist() == [0, 1, 0]
    assert sub.eid.numel() == 0


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_empty_graph(dtype):
    graph = CSCGraph.from_edge_index(empty_edge_index(dtype))
    assert graph.num_nodes == 0
    sub = neighbor_sample(graph, torch.empty(0, dtype=dtype), [3, -1], generator=gen(0))
    check_neighbor_sample(sub, empty_edge_index(dtype), 0, torch.empty(0, dtype=dtype), [3, -1])
    subs = NeighborSampler(graph, [2]).sample_batches([torch.empty(0, dtype=torch.long)] * 3)
    assert len(subs) == 3 and all(s.nodes.numel() == 0 for s in subs)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_hub_of_degree_100000(dtype):
    edge_index, num_nodes = hub_edge_index(dtype=dtype, seed=4)
    hub_eids = set(torch.nonzero(edge_index[1] == 0).view(-1).tolist())
    assert len(hub_eids) >= HUB_DEGREE
    seeds = torch.tensor([0])
    sub = sample_and_check(edge_index, num_nodes, seeds, [10], seed=1)
    assert sub.num_sampled_edges == [10] and len(set(sub.eid.tolist())) == 10
    assert set(sub.eid.tolist()) <= hub_eids
    sub = sample_and_check(edge_index, num_nodes, seeds, [10], replace=True, seed=2)
    assert sub.num_sampled_edges == [10]
    sub = sample_and_check(edge_index, num_nodes, seeds, [-1], seed=3)
    assert set(sub.eid.tolist()) == hub_eids
    # Two hops, weighted, the hub reached at hop 2 as well as being a seed.
    weight = random_weights(edge_index.shape[1], seed=6, dtype=torch.float64)
    sample_and_check(
        edge_index, num_nodes, torch.tensor([0, 5, 9]), [10, 10], weight=weight, seed=4
    )
    sample_and_check(
        edge_index,
        num_nodes,
        torch.tensor([0, 5, 9]),
        [10, 10],
        weight=weight,
        replace=True,
        seed=5,
    )


def test_int32_indices():
    edge_index = random_edge_index(200, 2000, dtype=torch.int32, seed=8)
    graph = CSCGraph.from_edge_index(edge_index)
    assert graph.indices.dtype == torch.int32
    seeds = torch.tensor([1, 50, 199], dtype=torch.int32)
    sub = sample_and_check(edge_index, 200, seeds, [5, 5], seed=1)
    # Same draws as the int64 graph: the index dtype is storage only.
    sub64 = sample_and_check(edge_index.long(), 200, seeds.long(), [5, 5], seed=1)
    assert_same_subgraph(sub, sub64)


def test_duplicate_seeds():
    edge_index = random_edge_index(30, 200, seed=3)
    seeds = torch.tensor([4, 9, 4, 4, 2, 9, 17])
    sub = sample_and_check(edge_index, 30, seeds, [3, 2], seed=5)
    assert sub.nodes[:4].tolist() == [4, 9, 2, 17]
    assert sub.seed_index.tolist() == [0, 1, 0, 0, 2, 1, 3]
    assert sub.batch_size == 4


def test_fanout_zero():
    edge_index = random_edge_index(30, 200, seed=3)
    sub = sample_and_check(edge_index, 30, torch.tensor([1, 2]), [0, 5])
    assert sub.num_sampled_edges == [0, 0] and sub.num_sampled_nodes == [2, 0, 0]
    sub = sample_and_check(edge_index, 30, torch.tensor([1, 2]), [3, 0, 2], replace=True)
    assert sub.num_sampled_edges[1:] == [0, 0]


def test_no_hops():
    edge_index = random_edge_index(10, 30)
    sub = sample_and_check(edge_index, 10, torch.tensor([3, 3, 1]), [])
    assert sub.nodes.tolist() == [3, 1]
    assert sub.blocks == []


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


def star_graph(degree, weight=None):
    return CSCGraph.from_edge_index(star_edge_index(degree), edge_weight=weight)


def draw_offsets(graph, fanout, pairs, replace=False, weighted=False, seed=0):
    """``[pairs, fanout]`` offsets (0 .. degree-1) drawn from node 0's in-edges, a row per pair."""
    transits = torch.zeros(pairs, dtype=torch.long)
    ptr, nbr, pos = sample_neighbors(
        graph.indptr,
        graph.indices,
        graph.weight if weighted else None,
        transits,
        fanout,
        replace=replace,
        seed=seed,
    )
    assert torch.equal(ptr, torch.arange(pairs + 1) * fanout)
    assert torch.equal(graph.indices[pos], nbr)
    return pos.view(pairs, fanout) - int(graph.indptr[0])


def subset_counts(offsets, cells):
    counts = Counter(tuple(sorted(row)) for row in offsets.tolist())
    assert set(counts) <= set(cells), f"unexpected draws {set(counts) - set(cells)}"
    return [counts[c] for c in cells]


def test_uniform_without_replacement_inclusion():
    """Each of d neighbors is in a k-sample with probability k/d."""
    d, k, pairs = 20, 5, 20_000
    offsets = draw_offsets(star_graph(d), k, pairs, seed=1)
    assert all(len(set(row)) == k for row in offsets.tolist())
    assert_chi_square_fits(
        torch.bincount(offsets.view(-1), minlength=d),
        [pairs * k / d] * d,
        "uniform without replacement inclusion",
    )


def test_uniform_without_replacement_subsets():
    """Every k-subset equally likely (a stronger check than the marginals)."""
    d, k, pairs = 5, 2, 20_000
    offsets = draw_offsets(star_graph(d), k, pairs, seed=2)
    cells = list(itertools.combinations(range(d), k))
    assert_chi_square_fits(subset_counts(offsets, cells), [1] * len(cells), "uniform k-subsets")


def test_uniform_without_replacement_across_generator_seeds():
    """Through NeighborSampler, one draw per call, with the generator driving the key."""
    d, k, calls = 6, 2, 3000
    graph = star_graph(d)
    sampler = NeighborSampler(graph, [k])
    seeds = torch.tensor([0])
    g = gen(77)
    observed = Counter()
    for _ in range(calls):
        sub = sampler.sample(seeds, generator=g)
        observed[tuple(sorted(sub.eid.tolist()))] += 1
    cells = list(itertools.combinations(range(d), k))
    assert_chi_square_fits(
        [observed[c] for c in cells], [1] * len(cells), "subsets over generator seeds"
    )


def test_uniform_without_replacement_huge_degree():
    """10 of 100_000: spread evenly over the adjacency (coarse bins and low-digit bins)."""
    pairs, k = 3000, 10
    graph = star_graph(HUB_DEGREE)
    offsets = draw_offsets(graph, k, pairs, seed=3)
    assert all(len(set(row)) == k for row in offsets.tolist())
    flat = offsets.view(-1)
    assert_chi_square_fits(
        torch.bincount(flat // (HUB_DEGREE // 10), minlength=10), [1] * 10, "coarse bins"
    )
    assert_chi_square_fits(torch.bincount(flat % 10, minlength=10), [1] * 10, "low-digit bins")
    # The first and last neighbors are reachable (no off-by-one at the ends).
    many = draw_offsets(graph, 2000, 100, seed=4)
    assert int(many.min()) == 0 or int(many.max()) == HUB_DEGREE - 1


def test_uniform_with_replacement():
    d, k, pairs = 7, 4, 10_000
    offsets = draw_offsets(star_graph(d), k, pairs, replace=True, seed=5)
    assert_chi_square_fits(
        torch.bincount(offsets.view(-1), minlength=d), [1] * d, "uniform marginal"
    )
    # Draws within a pair are independent: the joint of the first two is uniform on d*d cells.
    joint = offsets[:, 0] * d + offsets[:, 1]
    assert_chi_square_fits(torch.bincount(joint, minlength=d * d), [1] * (d * d), "uniform joint")
    # With replacement really repeats: some pairs hold a neighbor twice.
    assert any(len(set(row)) < k for row in offsets.tolist())


WEIGHTS = [1.0, 2.0, 3.0, 4.0, 0.0, 10.0]  # degree 6, one zero weight
POSITIVE = [i for i, w in enumerate(WEIGHTS) if w > 0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weighted_with_replacement_marginal(dtype):
    pairs, k = 20_000, 3
    graph = star_graph(len(WEIGHTS), torch.tensor(WEIGHTS, dtype=dtype))
    offsets = draw_offsets(graph, k, pairs, replace=True, weighted=True, seed=6)
    counts = torch.bincount(offsets.view(-1), minlength=len(WEIGHTS))
    assert int(counts[4]) == 0, "zero-weight edge drawn"
    assert_chi_square_fits(
        counts[POSITIVE], [WEIGHTS[i] for i in POSITIVE], "weighted with replacement"
    )


def test_weighted_with_replacement_multisets():
    """k=2 draws are i.i.d.: multiset {a,b} has probability p_a^2 or 2 p_a p_b."""
    pairs = 30_000
    graph = star_graph(len(WEIGHTS), torch.tensor(WEIGHTS))
    offsets = draw_offsets(graph, 2, pairs, replace=True, weighted=True, seed=7)
    total = sum(WEIGHTS)
    p = {i: WEIGHTS[i] / total for i in POSITIVE}
    cells = list(itertools.combinations_with_replacement(POSITIVE, 2))
    expected = [p[a] * p[b] * (1 if a == b else 2) for a, b in cells]
    assert_chi_square_fits(subset_counts(offsets, cells), expected, "weighted multisets")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weighted_without_replacement_first_draw(dtype):
    """k=1: the single draw is proportional to weight."""
    pairs = 20_000
    graph = star_graph(len(WEIGHTS), torch.tensor(WEIGHTS, dtype=dtype))
    offsets = draw_offsets(graph, 1, pairs, weighted=True, seed=8)
    counts = torch.bincount(offsets.view(-1), minlength=len(WEIGHTS))
    assert int(counts[4]) == 0
    assert_chi_square_fits(counts[POSITIVE], [WEIGHTS[i] for i in POSITIVE], "weighted k=1")


def successive_sampling_probabilities(weights, k):
    """Exact probability of each k-subset when drawing k times without replacement, each draw
    proportional to weight among the edges not drawn yet (zero weights never drawn)."""
    positive = [i for i, w in enumerate(weights) if w > 0]
    probs = Counter()
    for sequence in itertools.permutations(positive, k):
        p, remaining = 1.0, sum(weights[i] for i in positive)
        for i in sequence:
            p *= weights[i] / remaining
            remaining -= weights[i]
        probs[tuple(sorted(sequence))] += p
    return probs


@pytest.mark.parametrize("k", [2, 3])
def test_weighted_without_replacement_subsets(k):
    pairs = 30_000
    graph = star_graph(len(WEIGHTS), torch.tensor(WEIGHTS))
    offsets = draw_offsets(graph, k, pairs, weighted=True, seed=9 + k)
    assert all(len(set(row)) == k for row in offsets.tolist())
    exact = successive_sampling_probabilities(WEIGHTS, k)
    cells = sorted(exact)
    observed = subset_counts(offsets, cells)
    assert_chi_square_fits(
        observed, [exact[c] for c in cells], f"weighted without replacement k={k}"
    )
    # Inclusion frequencies against the exact inclusion probabilities.
    inclusion = torch.bincount(offsets.reshape(-1), minlength=len(WEIGHTS)).double() / pairs
    for i in POSITIVE:
        exact_inclusion = sum(p for c, p in exact.items() if i in c)
        assert abs(float(inclusion[i]) - exact_inclusion) < 0.02
    assert float(inclusion[4]) == 0


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("fanout", [-1, 1, 3, 5, 8])
def test_zero_weight_edges_never_drawn(replace, fanout):
    weight = torch.tensor([0.0, 1.0, 0.0, 5.0, 0.0, 0.0, 2.0, 0.0, 1e-6, 0.0])
    graph = star_graph(weight.numel(), weight)
    ptr, nbr, pos = sample_neighbors(
        graph.indptr,
        graph.indices,
        graph.weight,
        torch.zeros(2000, dtype=torch.long),
        fanout,
        replace=replace,
        seed=fanout + 20,
    )
    assert pos.numel() > 0
    assert bool((graph.weight[pos] > 0).all())
    want = expected_draws(torch.tensor([4]), fanout, replace)[0]
    assert torch.equal(ptr[1:] - ptr[:-1], torch.full((2000,), int(want)))
    # All-zero adjacency: nothing to draw, even with replacement.
    zero = star_graph(4, torch.zeros(4))
    ptr, _, _ = sample_neighbors(
        zero.indptr,
        zero.indices,
        zero.weight,
        torch.zeros(5, dtype=torch.long),
        fanout,
        replace=replace,
    )
    assert ptr.tolist() == [0] * 6


def test_weighted_sampler_zero_weights_on_random_graph():
    edge_index = random_edge_index(100, 3000, seed=12)
    weight = random_weights(3000, seed=13, zero_fraction=0.5)
    for replace in (False, True):
        sub = sample_and_check(
            edge_index,
            100,
            torch.arange(0, 100, 3),
            [4, 4],
            replace=replace,
            weight=weight,
            seed=14,
        )
        assert bool((weight[sub.eid] > 0).all())


# ---------------------------------------------------------------------------------------------
# sample_batches
# ---------------------------------------------------------------------------------------------


def test_sample_batches_equals_individual_when_deterministic():
    """With fanout -1 nothing is random, so each batch equals its own sample() exactly."""
    edge_index, num_nodes = isolated_edge_index(60, 150, 5, seed=21)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    sampler = NeighborSampler(graph, [-1, -1])
    batches = [
        torch.tensor([3, 7, 3]),
        torch.tensor([7, 64, 12]),
        torch.empty(0, dtype=torch.long),
        torch.tensor([0], dtype=torch.int32),
        torch.arange(40, 45),
    ]
    results = sampler.sample_batches(batches, generator=gen(0))
    assert len(results) == len(batches)
    for batch, result in zip(batches, results):
        assert_same_subgraph(result, sampler.sample(batch, generator=gen(1)))
        check_neighbor_sample(result, edge_index, num_nodes, batch, [-1, -1])


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_sample_batches_random(replace, weighted):
    edge_index = random_edge_index(80, 800, seed=22)
    weight = random_weights(800, seed=23) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=80, edge_weight=weight)
    sampler = NeighborSampler(graph, [4, 3, 2], replace=replace, weighted=weighted)
    batches = [torch.randint(0, 80, (n,), generator=gen(n)) for n in (10, 1, 0, 25, 10)]
    batches[1] = batches[0][:1].clone()  # a node present in two batches
    results = sampler.sample_batches(batches, generator=gen(24))
    assert len(results) == len(batches)
    for batch, result in zip(batches, results):
        check_neighbor_sample(
            result, edge_index, 80, batch, [4, 3, 2], replace=replace, edge_weight=weight
        )
        # Batch order kept: each result starts with its own seeds.
        assert result.nodes[: result.batch_size].tolist() == first_occurrence(batch.tolist())
    # Never deduplicated across batches: the shared node is in both.
    shared = int(batches[1][0])
    assert shared in results[0].nodes.tolist() and results[1].nodes.tolist()[0] == shared
    # Reproducible.
    again = sampler.sample_batches(batches, generator=gen(24))
    for a, b in zip(results, again):
        assert_same_subgraph(a, b)


def test_sample_batches_identical_batches_are_sampled_separately():
    """Two identical batches each get a full sample of their own (nothing shared or dropped)."""
    graph, seeds = _random_setup()
    edge_index = torch.stack(
        [
            graph.indices[torch.argsort(graph.eid)],
            torch.repeat_interleave(torch.arange(500), graph.in_degrees())[
                torch.argsort(graph.eid)
            ],
        ]
    )
    a, b = NeighborSampler(graph, [5, 5]).sample_batches([seeds, seeds], generator=gen(3))
    for sub in (a, b):
        check_neighbor_sample(sub, edge_index, 500, seeds, [5, 5])
    assert a.nodes[: a.batch_size].tolist() == b.nodes[: b.batch_size].tolist()
    assert not torch.equal(a.eid, b.eid)  # their own random draws


def test_sample_batches_empty_list_and_middle_empty():
    edge_index = random_edge_index(20, 80, seed=25)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=20)
    sampler = NeighborSampler(graph, [3])
    assert sampler.sample_batches([]) == []
    results = sampler.sample_batches(
        [torch.tensor([1]), torch.empty(0, dtype=torch.long), torch.tensor([2, 1])],
        generator=gen(0),
    )
    assert results[1].nodes.numel() == 0 and results[1].eid.numel() == 0
    assert results[1].num_sampled_nodes == [0, 0] and results[1].num_sampled_edges == [0]
    check_neighbor_sample(results[0], edge_index, 20, torch.tensor([1]), [3])
    check_neighbor_sample(results[2], edge_index, 20, torch.tensor([2, 1]), [3])


def test_blocks_of_a_three_layer_sample():
    edge_index = random_edge_index(100, 1500, seed=30)
    sub = sample_and_check(edge_index, 100, torch.tensor([5, 17, 42]), [6, 4, 2], seed=31)
    blocks = sub.blocks
    assert len(blocks) == 3
    check_blocks(sub, edge_index)
    assert blocks[-1].dst_nodes.tolist() == [5, 17, 42]
    assert blocks[0].num_src_nodes == sub.nodes.numel()
    assert [b.num_edges for b in blocks] == [sum(sub.num_sampled_edges[:h]) for h in (3, 2, 1)]
    in_degrees = torch.bincount(edge_index[1], minlength=100)
    assert torch.equal(sub.in_degrees, in_degrees[sub.nodes])
    for b in blocks:
        assert torch.equal(b.src_in_degrees, in_degrees[b.src_nodes])
        assert b.indptr is not None  # checked against dst by check_blocks
    # The sampler's own offsets, not ones derived again from col.
    assert sub.indptr is not None
    assert all(b.indptr.data_ptr() == sub.indptr.data_ptr() for b in blocks)


def test_blocks_is_an_attribute_like_a_loader_batchs():
    sub = sample_and_check(random_edge_index(50, 400, seed=32), 50, torch.tensor([1, 2]), [3, 2])
    assert isinstance(sub.blocks, list)
    assert sub.blocks is sub.blocks  # built once


def test_blocks_of_edges_not_grouped_by_target_carry_no_offsets():
    """A hand-made subgraph whose edges are not in target order gets blocks without indptr
    (aggregation then sorts them itself), and still aggregates right."""
    sub = SampledSubgraph(
        nodes=torch.tensor([4, 9, 2]),
        row=torch.tensor([2, 1, 2]),
        col=torch.tensor([1, 0, 0]),
        eid=torch.tensor([0, 1, 2]),
        num_sampled_nodes=[2, 1],
        num_sampled_edges=[3],
        seed_index=torch.tensor([0, 1]),
    )
    (block,) = sub.blocks
    assert block.indptr is None
    x = torch.tensor([[1.0], [10.0], [100.0]])
    assert aggregate(block, x).tolist() == [[110.0], [100.0]]
    in_order = dataclasses.replace(sub, row=torch.tensor([1, 2, 2]), col=torch.tensor([0, 0, 1]))
    (block,) = in_order.blocks
    assert block.indptr.tolist() == [0, 2, 3]
    assert aggregate(block, x).tolist() == [[110.0], [100.0]]


def test_blocks_of_hops_that_do_not_target_the_hop_before_carry_no_offsets():
    """Sorted targets are not enough: hop 2's edge here targets a seed, so block 1 (hop 1's
    edges only) cannot take a prefix of one offsets array."""
    sub = SampledSubgraph(
        nodes=torch.tensor([0, 1, 2]),
        row=torch.tensor([1, 2]),
        col=torch.tensor([0, 0]),
        eid=torch.tensor([0, 1]),
        num_sampled_nodes=[1, 1, 1],
        num_sampled_edges=[1, 1],
        seed_index=torch.tensor([0]),
    )
    blocks = sub.blocks
    assert all(block.indptr is None for block in blocks)
    assert aggregate(blocks[1], torch.tensor([[1.0], [10.0]])).tolist() == [[10.0]]


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def small_graph():
    return CSCGraph.from_edge_index(
        random_edge_index(10, 40, seed=0), num_nodes=10, edge_weight=None
    )


@pytest.mark.parametrize(
    "seeds, fanouts, kwargs, match",
    [
        (
            torch.tensor([3, 10]),
            [2],
            {},
            "neighbor_sample: seed id 10 out of range for a graph of 10",
        ),
        (torch.tensor([-1, 3]), [2], {}, "neighbor_sample: seed id -1 out of range"),
        (torch.tensor([3]), [2, -2], {}, "neighbor_sample: fanouts must be -1 .* got -2"),
        (torch.tensor([3.0]), [2], {}, "neighbor_sample: seeds must be a 1-D int32/int64"),
        (torch.tensor([[3]]), [2], {}, "neighbor_sample: seeds must be a 1-D"),
        (torch.tensor(3), [2], {}, "neighbor_sample: seeds must be a 1-D"),
        (torch.tensor([3]), [2], dict(weighted=True), "neighbor_sample: weighted=True needs"),
    ],
)
def test_bad_input(small_graph, seeds, fanouts, kwargs, match):
    with pytest.raises(ValueError, match=match):
        neighbor_sample(small_graph, seeds, fanouts, **kwargs)
    with pytest.raises(ValueError, match=match):
        NeighborSampler(small_graph, fanouts, **kwargs).sample_batches([torch.tensor([1]), seeds])


@pytest.mark.parametrize(
    "fanouts, error, match",
    [
        (5, TypeError, r"fanouts must be a list of ints, one per hop \(e.g. \[15, 10\]\), got int"),
        ("10", TypeError, "fanouts must be a list of ints, .* got str"),
        ([2.5], TypeError, "fanouts must be ints, got 2.5"),
        ([3, True], TypeError, "fanouts must be ints, got True"),
    ],
)
def test_bad_fanouts(small_graph, fanouts, error, match):
    with pytest.raises(error, match=f"neighbor_sample: {match}"):
        NeighborSampler(small_graph, fanouts)


def test_fanouts_take_any_sequence_of_ints_and_zero_draws_nothing(small_graph):
    assert NeighborSampler(small_graph, (3, 2)).fanouts == [3, 2]
    assert NeighborSampler(small_graph, torch.tensor([3, -1])).fanouts == [3, -1]
    sub = NeighborSampler(small_graph, [0]).sample(torch.tensor([1, 2]))
    assert sub.num_sampled_edges == [0] and sub.nodes.tolist() == [1, 2]


def test_bad_seed_type(small_graph):
    with pytest.raises((TypeError, ValueError), match="neighbor_sample"):
        neighbor_sample(small_graph, [1, 2], [2])


def test_seed_on_other_device(small_graph):
    with pytest.raises(
        ValueError, match="neighbor_sample: seeds must be on the graph's device cpu, got meta"
    ):
        neighbor_sample(small_graph, torch.tensor([1], device="meta"), [2])


@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="a generator on another device needs CUDA"
)
def test_generator_on_wrong_device(small_graph):
    with pytest.raises(ValueError, match="neighbor_sample: the generator is on"):
        neighbor_sample(
            small_graph,
            torch.tensor([1]),
            [2],
            generator=torch.Generator(device="cuda").manual_seed(0),
        )


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(transits=torch.tensor([0, 10])), "sample_neighbors: transits id 10 out of range"),
        (dict(transits=torch.tensor([-3, 1])), "sample_neighbors: transits id -3 is negative"),
        (dict(transits=torch.tensor([1], dtype=torch.int32)), "sample_neighbors: transits must be"),
        (dict(transits=torch.tensor([[1]])), "sample_neighbors: transits must be 1-D"),
        (dict(indptr="int32"), "sample_neighbors: indptr must be Long"),
        (dict(indptr="2d"), "sample_neighbors: indptr must be 1-D"),
        (dict(indptr=torch.empty(0, dtype=torch.long)), "sample_neighbors: indptr must have"),
        (dict(indices="float"), "sample_neighbors: indices must be int32 or int64"),
        (dict(fanout=-2), "sample_neighbors: fanout must be -1"),
        (dict(weight=torch.ones(3)), "sample_neighbors: weight has 3 entries but the graph has 40"),
        (dict(weight=torch.ones(40, dtype=torch.int64)), "sample_neighbors: weight must be float"),
        (dict(weight=torch.ones(40, 1)), "sample_neighbors: weight must be 1-D"),
    ],
)
def test_op_bad_input(small_graph, change, match):
    args = dict(
        indptr=small_graph.indptr,
        indices=small_graph.indices,
        transits=torch.tensor([1, 2]),
        fanout=2,
        weight=None,
    )
    args.update(change)
    derived = {
        "int32": lambda: small_graph.indptr.int(),
        "2d": lambda: small_graph.indptr.view(1, -1),
        "float": lambda: small_graph.indices.float(),
    }
    for name in ("indptr", "indices"):
        if isinstance(args[name], str):
            args[name] = derived[args[name]]()
    with pytest.raises(RuntimeError, match=match):
        sample_neighbors(
            args["indptr"], args["indices"], args["weight"], args["transits"], args["fanout"]
        )


def test_op_output_layout():
    """sample_neighbors on its own: ptr, neighbors == indices[edge_pos], slots within the
    transit's adjacency, fanout -1 returns every slot in order."""
    edge_index, num_nodes = isolated_edge_index(50, 400, 3, seed=40)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    transits = torch.randint(0, num_nodes, (300,), generator=gen(41))
    degree = graph.in_degrees()[transits]
    for fanout, replace in ((4, False), (4, True), (0, False), (-1, False), (-1, True)):
        ptr, nbr, pos = sample_neighbors(
            graph.indptr, graph.indices, None, transits, fanout, replace=replace, seed=5
        )
        assert ptr.dtype == nbr.dtype == pos.dtype == torch.int64
        assert torch.equal(ptr[1:] - ptr[:-1], expected_draws(degree, fanout, replace))
        assert torch.equal(graph.indices[pos], nbr)
        owner = torch.repeat_interleave(transits, ptr[1:] - ptr[:-1])
        assert bool((pos >= graph.indptr[owner]).all() and (pos < graph.indptr[owner + 1]).all())
        if fanout == -1:
            expected = torch.cat(
                [
                    torch.arange(int(graph.indptr[t]), int(graph.indptr[t + 1]))
                    for t in transits.tolist()
                ]
            )
            assert torch.equal(pos, expected)
    # No pairs at all.
    ptr, nbr, pos = sample_neighbors(
        graph.indptr, graph.indices, None, torch.empty(0, dtype=torch.long), 3
    )
    assert ptr.tolist() == [0] and nbr.numel() == 0 and pos.numel() == 0


def test_available_in_edges_reference_sanity():
    """The reference's own helper against a hand count (guards the checks above)."""
    edge_index = torch.tensor([[0, 1, 2, 2], [1, 1, 0, 3]])
    assert available_in_edges(edge_index, 5).tolist() == [1, 2, 0, 1, 0]
    assert available_in_edges(edge_index, 5, torch.tensor([1.0, 0.0, 1.0, 1.0])).tolist() == [
        1,
        1,
        0,
        1,
        0,
    ]


# ---------------------------------------------------------------------------------------------
# The checks themselves can fail (guards against a vacuous reference)
# ---------------------------------------------------------------------------------------------


def _permute_nodes(sub, a, b):
    """Swaps local nodes a and b, remapping row/col/seed_index so everything stays consistent
    except the first-occurrence order."""
    perm = torch.arange(sub.nodes.numel())
    perm[a], perm[b] = b, a
    return dataclasses.replace(
        sub,
        nodes=sub.nodes[perm],
        row=perm[sub.row],
        col=perm[sub.col],
        seed_index=perm[sub.seed_index],
    )


def test_reference_check_detects_invalid_samples():
    edge_index = random_edge_index(40, 400, seed=50)
    seeds = torch.tensor([1, 2, 3])
    fanouts = [4, 3]
    sub = sample_and_check(edge_index, 40, seeds, fanouts, seed=51)
    hop1 = sub.num_sampled_nodes[0]
    assert sub.num_sampled_nodes[1] >= 2 and sub.num_sampled_edges[0] >= 2
    first_edge_of_seed0 = sub.eid[0:1]
    corrupted = {
        "eids shuffled": dataclasses.replace(sub, eid=sub.eid.flip(0)),
        "edge dropped": dataclasses.replace(
            sub,
            row=sub.row[1:],
            col=sub.col[1:],
            eid=sub.eid[1:],
            num_sampled_edges=[sub.num_sampled_edges[0] - 1] + sub.num_sampled_edges[1:],
        ),
        "edge drawn twice": dataclasses.replace(
            sub,
            eid=torch.cat([first_edge_of_seed0, sub.eid[:-1]]),
            row=torch.cat([sub.row[:1], sub.row[:-1]]),
            col=torch.cat([sub.col[:1], sub.col[:-1]]),
        ),
        "new nodes out of first-occurrence order": _permute_nodes(sub, hop1, hop1 + 1),
        "seeds out of order": _permute_nodes(sub, 0, 1),
        "wrong node counts": dataclasses.replace(
            sub,
            num_sampled_nodes=[hop1 + 1, sub.num_sampled_nodes[1] - 1] + sub.num_sampled_nodes[2:],
        ),
        "wrong seed_index": dataclasses.replace(sub, seed_index=sub.seed_index.flip(0)),
    }
    for what, bad in corrupted.items():
        with pytest.raises(AssertionError):
            check_neighbor_sample(bad, edge_index, 40, seeds, fanouts)
            pytest.fail(f"check_neighbor_sample accepted a sample with {what}")  # pragma: no cover
    # With replacement allowed, the repeated edge alone is fine; the count check still fires.
    with pytest.raises(AssertionError):
        check_neighbor_sample(sub, edge_index, 40, seeds, [5, 3])


def test_chi_square_helper_rejects_a_biased_sample():
    with pytest.raises(AssertionError, match="chi-square"):
        assert_chi_square_fits([1200, 800], [1, 1], "biased coin")
    assert_chi_square_fits([1010, 990], [1, 1], "fair coin")


@pytest.mark.parametrize(
    "indptr",
    [[0, 5, 2, 3], [0, 1, 2, 9], [-1, 1, 2, 3]],
    ids=["decreasing", "past-the-end", "negative"],
)
def test_sample_neighbors_rejects_malformed_indptr(indptr):
    """The low-level op checks the slice of every transit it reads: an error, never a bad read."""
    indices = torch.tensor([0, 1, 2])
    with pytest.raises(RuntimeError, match="sample_neighbors: indptr is not a valid CSC"):
        fastgl.ops.sample_neighbors(torch.tensor(indptr), indices, None, torch.tensor([0, 1, 2]), 2)


# --- disjoint sampling (PyG's disjoint=True) --------------------------------------------------


@pytest.mark.parametrize("fanouts", [[3, 2], [-1], [0, 4]])
def test_disjoint_trees_are_independent_samples(fanouts):
    edge_index = torch.randint(0, 60, (2, 500), generator=torch.Generator().manual_seed(5))
    graph = CSCGraph.from_edge_index(edge_index, 60)
    seeds = torch.tensor([7, 7, 30, 2])
    sub = NeighborSampler(graph, fanouts, disjoint=True).sample(seeds)
    assert torch.equal(sub.nodes[:4], seeds) and torch.equal(sub.seed_index, torch.arange(4))
    assert torch.equal(sub.batch[:4], torch.arange(4))
    assert torch.equal(sub.batch[sub.row], sub.batch[sub.col])  # no edge crosses trees
    assert torch.equal(edge_index[:, sub.eid], sub.nodes[torch.stack([sub.row, sub.col])])
    assert sum(sub.num_sampled_nodes) == sub.nodes.numel()
    for tree, seed in enumerate(seeds.tolist()):
        # Each tree alone is a valid (non-disjoint) sample of its seed: distinct nodes, and the
        # fanout-capped in-degree at every hop.
        mine = sub.batch == tree
        assert sub.nodes[mine].unique().numel() == int(mine.sum())
        alone = NeighborSampler(graph, fanouts).sample(torch.tensor([seed]))
        hop1_edges = (sub.batch[sub.col] == tree) & (sub.col < 4)
        assert int(hop1_edges.sum()) == alone.num_sampled_edges[0]


def test_disjoint_matches_plain_sampling_for_one_seed():
    # With one seed there is one tree: the same draws, the same nodes, batch all zero.
    edge_index = torch.randint(0, 40, (2, 300), generator=torch.Generator().manual_seed(6))
    graph = CSCGraph.from_edge_index(edge_index, 40)
    key_gen = [torch.Generator().manual_seed(9) for _ in range(2)]
    plain = NeighborSampler(graph, [4, 3]).sample(torch.tensor([11]), key_gen[0])
    disjoint = NeighborSampler(graph, [4, 3], disjoint=True).sample(torch.tensor([11]), key_gen[1])
    assert_same_subgraph(plain, disjoint)
    assert torch.equal(disjoint.batch, torch.zeros_like(disjoint.nodes))


def test_generator_must_be_a_torch_generator(small_graph):
    with pytest.raises(TypeError, match="neighbor_sample: generator must be a torch.Generator"):
        fastgl.sampling.neighbor_sample(small_graph, torch.tensor([0]), [1], generator=5)


def test_the_device_engines_seed_faults_read_as_the_cpu_check():
    """On CUDA the op reports a bad seed (no read-back up front); the sampler raises it as the
    ValueError the CPU path's check raises, and lets every other error through."""
    from fastgl.sampling.neighbor import raise_seed_fault

    for seed, problem in (("-3", "is negative"), ("9", "out of range for a graph of 5 nodes")):
        fault = RuntimeError(f"sample_hops: seeds id {seed} {problem}")
        expected = f"^neighbor_sample: seed id {seed} out of range for a graph of 5 nodes$"
        with pytest.raises(ValueError, match=expected):
            raise_seed_fault(fault, 5)
    raise_seed_fault(RuntimeError("sample_hops: indices id 9 out of range"), 5)
    with pytest.raises(ValueError, match="seed id 2 out of range"):
        NeighborSampler(CSCGraph.from_edge_index(torch.tensor([[0], [1]])), [1]).sample(
            torch.tensor([2])
        )
