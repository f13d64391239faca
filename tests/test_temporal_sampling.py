"""fastgl.sampling.TemporalNeighborSampler: PyG's temporal NeighborLoader semantics.

Every sample is checked against tests/reference.py (check_temporal_sample: nothing from a tree's
future, counts, 'last' exactly the most recent valid edges, disjoint layout); the distributions
by chi-square (fixed seeds: a p-value threshold of 1e-3 is a fixed pass/fail, not a flake).
"""

import types

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    assert_chi_square_fits,
    assert_same_subgraph,
    check_temporal_sample,
    edge_index_strategy,
    random_edge_index,
    star_edge_index,
    temporal_valid_in_edges,
)

import fastgl
from fastgl import CSCGraph, NeighborSampler, TemporalNeighborSampler


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def sample_and_check(edge_index, num_nodes, seeds, fanouts, seed_time=None, seed=0, **options):
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    sampler = TemporalNeighborSampler(graph, fanouts, **options)
    sub = sampler.sample(seeds, seed_time, generator=gen(seed))
    if seed_time is None:
        seed_time = options["node_time"][seeds.long()]
    check_temporal_sample(
        sub,
        edge_index,
        seeds,
        seed_time,
        fanouts,
        options.get("strategy", "uniform"),
        options.get("replace", False),
        node_time=options.get("node_time"),
        edge_time=options.get("edge_time"),
    )
    return sub


# ---------------------------------------------------------------------------------------------
# No future leaks, on random graphs
# ---------------------------------------------------------------------------------------------


@st.composite
def temporal_case(draw):
    edge_index, num_nodes = draw(edge_index_strategy(max_nodes=30, max_edges=200))
    gen_ = gen(draw(st.integers(0, 2**31 - 1)))
    kind = draw(st.sampled_from(["node", "edge"]))
    time_dtype = draw(st.sampled_from([torch.int64, torch.int32, torch.float32, torch.float64]))
    length = num_nodes if kind == "node" else edge_index.shape[1]
    times = torch.randint(0, 8, (length,), generator=gen_).to(time_dtype)  # many ties
    seeds = torch.tensor(
        draw(st.lists(st.integers(0, num_nodes - 1), max_size=8)) if num_nodes else [],
        dtype=draw(st.sampled_from([torch.int32, torch.int64])),
    )
    seed_time = None
    if kind == "edge" or draw(st.booleans()):
        seed_time = torch.randint(-1, 9, (seeds.numel(),), generator=gen_).to(
            draw(st.sampled_from([torch.int64, torch.float64]))
        )
    return dict(
        edge_index=edge_index,
        num_nodes=num_nodes,
        seeds=seeds,
        fanouts=draw(st.lists(st.sampled_from([-1, 0, 1, 2, 4]), max_size=3)),
        seed_time=seed_time,
        seed=draw(st.integers(0, 2**32)),
        node_time=times if kind == "node" else None,
        edge_time=times if kind == "edge" else None,
        strategy=draw(st.sampled_from(["uniform", "last"])),
        replace=draw(st.booleans()),
    )


@settings(max_examples=120, deadline=None)
@given(temporal_case())
def test_no_sample_reaches_into_its_trees_future(case):
    sample_and_check(**case)


@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("kind", ["node", "edge"])
def test_medium_graph(strategy, kind):
    edge_index = random_edge_index(2000, 30_000, seed=1)
    times = torch.randint(0, 1000, (2000 if kind == "node" else 30_000,), generator=gen(2))
    seeds = torch.randint(0, 2000, (300,), generator=gen(3))
    seed_time = torch.randint(0, 1000, (300,), generator=gen(4))
    sample_and_check(
        edge_index,
        2000,
        seeds,
        [8, 4],
        seed_time=seed_time,
        seed=5,
        strategy=strategy,
        node_time=times if kind == "node" else None,
        edge_time=times if kind == "edge" else None,
    )


# ---------------------------------------------------------------------------------------------
# The strategies
# ---------------------------------------------------------------------------------------------

# A star into node 0 from leaves 1 .. 12, leaf i's node time LEAF_TIME[i-1]; seed time 5 makes
# leaves with time <= 5 valid (7 of them, the boundary time 5 included), the others not.
LEAF_TIME = [3, 9, 5, 0, 7, 1, 6, 5, 2, 8, 4, 5]
STAR_NODE_TIME = torch.tensor([0] + LEAF_TIME)
VALID_LEAVES = [i + 1 for i, t in enumerate(LEAF_TIME) if t <= 5]


@pytest.mark.parametrize("replace", [False, True])
def test_uniform_is_uniform_over_exactly_the_valid_neighbors(replace):
    graph = CSCGraph.from_edge_index(star_edge_index(12))
    sampler = TemporalNeighborSampler(graph, [3], node_time=STAR_NODE_TIME, replace=replace)
    trees = 6000
    sub = sampler.sample(
        torch.zeros(trees, dtype=torch.long), torch.full((trees,), 5), generator=gen(6)
    )
    assert sub.num_sampled_edges == [3 * trees]
    leaves = graph.indices[sub.eid]  # eid: the star's edge k is leaf k + 1's
    counts = torch.bincount(leaves, minlength=13)
    assert set(torch.nonzero(counts).view(-1).tolist()) == set(VALID_LEAVES)
    assert_chi_square_fits(
        counts[VALID_LEAVES], [1] * len(VALID_LEAVES), "uniform over valid leaves"
    )
    if not replace:
        per_tree = leaves.view(trees, 3)
        assert all(len(set(r)) == 3 for r in per_tree.tolist())


def test_uniform_over_valid_edges_by_edge_time():
    """Edge times: the same leaf reached by two edges, one valid and one not."""
    edge_index = torch.tensor([[1, 1, 2, 3, 3, 4], [0, 0, 0, 0, 0, 0]])
    edge_time = torch.tensor([10, 2, 3, 4, 20, 1])  # valid at time 5: edges 1, 2, 3, 5
    graph = CSCGraph.from_edge_index(edge_index)
    sampler = TemporalNeighborSampler(graph, [1], edge_time=edge_time)
    trees = 4000
    sub = sampler.sample(
        torch.zeros(trees, dtype=torch.long), torch.full((trees,), 5), generator=gen(7)
    )
    counts = torch.bincount(sub.eid, minlength=6)
    assert int(counts[0]) == int(counts[4]) == 0
    assert_chi_square_fits(counts[[1, 2, 3, 5]], [1] * 4, "uniform over valid edges")


def test_last_takes_the_most_recent_valid_neighbors():
    graph = CSCGraph.from_edge_index(star_edge_index(12))
    sampler = TemporalNeighborSampler(graph, [3], node_time=STAR_NODE_TIME, strategy="last")
    sub = sampler.sample(torch.tensor([0, 0, 0]), torch.tensor([5, 0, -1]))
    # Valid at 5, by time then edge order: 4(0) 6(1) 9(2) 1(3) 11(4) 3(5) 8(5) 12(5): the last
    # three are the three leaves of time 5, the latest edge (12) counting as the most recent.
    leaves = graph.indices[sub.eid].tolist()
    assert leaves == [3, 8, 12, 4]  # tree 1 at time 0 sees only leaf 4; tree 2 nothing
    assert sub.col.tolist() == [0, 0, 0, 1]
    assert sub.batch.tolist() == [0, 1, 2, 0, 0, 0, 1]
    # Fanout -1 takes every valid neighbor, oldest first, for both strategies.
    for strategy in ("last", "uniform"):
        every = TemporalNeighborSampler(
            graph, [-1], node_time=STAR_NODE_TIME, strategy=strategy
        ).sample(torch.tensor([0]), torch.tensor([5]))
        assert graph.indices[every.eid].tolist() == [4, 6, 9, 1, 11, 3, 8, 12]


def test_last_ignores_replace_and_is_deterministic():
    edge_index = random_edge_index(200, 3000, seed=8)
    node_time = torch.randint(0, 50, (200,), generator=gen(9))
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=200)
    seeds = torch.randint(0, 200, (40,), generator=gen(10))
    a = TemporalNeighborSampler(graph, [4, 3], node_time=node_time, strategy="last")
    b = TemporalNeighborSampler(graph, [4, 3], node_time=node_time, strategy="last", replace=True)
    assert_same_subgraph(a.sample(seeds, generator=gen(1)), b.sample(seeds, generator=gen(2)))


# ---------------------------------------------------------------------------------------------
# Layout and determinism
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("replace", [False, True])
def test_without_time_limits_it_is_disjoint_neighbor_sampling(replace):
    """Equal times keep every row in edge order and every neighbor valid: the sample is then
    exactly NeighborSampler(disjoint=True)'s for the same generator state (same per-hop keys,
    same streams, same per-pair draws)."""
    edge_index = random_edge_index(300, 5000, seed=11)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=300)
    seeds = torch.randint(0, 300, (50,), generator=gen(12))
    temporal = TemporalNeighborSampler(
        graph, [5, -1, 3], node_time=torch.zeros(300), replace=replace
    ).sample(seeds, generator=gen(13))
    disjoint = NeighborSampler(graph, [5, -1, 3], replace=replace, disjoint=True).sample(
        seeds, generator=gen(13)
    )
    assert_same_subgraph(temporal, disjoint)
    assert torch.equal(temporal.batch, disjoint.batch)
    assert torch.equal(temporal.in_degrees, disjoint.in_degrees)


def test_disjoint_layout():
    """A node reached by two trees appears once per tree, repeated seeds get trees of their
    own, and nodes repeated within a tree are one node."""
    # 1 -> 0, 2 -> 0, 1 -> 2: tree of 0 reaches 1 twice (directly and through 2).
    edge_index = torch.tensor([[1, 2, 1], [0, 0, 2]])
    graph = CSCGraph.from_edge_index(edge_index)
    sampler = TemporalNeighborSampler(graph, [-1, -1], node_time=torch.zeros(3))
    sub = sampler.sample(torch.tensor([0, 0, 2]))
    assert sub.nodes.tolist() == [0, 0, 2, 1, 2, 1, 2, 1]
    assert sub.batch.tolist() == [0, 1, 2, 0, 0, 1, 1, 2]
    assert sub.num_sampled_nodes == [3, 5, 0]
    assert sub.num_sampled_edges == [5, 2]
    assert sub.seed_index.tolist() == [0, 1, 2]
    assert sub.batch_size == 3
    check_temporal_sample(
        sub,
        edge_index,
        torch.tensor([0, 0, 2]),
        torch.zeros(3),
        [-1, -1],
        "uniform",
        False,
        node_time=torch.zeros(3),
    )


def test_same_generator_state_same_sample():
    edge_index = random_edge_index(500, 10_000, seed=14)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=500)
    sampler = TemporalNeighborSampler(
        graph, [10, 5], edge_time=torch.randint(0, 100, (10_000,), generator=gen(15))
    )
    seeds = torch.randint(0, 500, (64,), generator=gen(16))
    seed_time = torch.full((64,), 70)
    a = sampler.sample(seeds, seed_time, generator=gen(123))
    assert_same_subgraph(a, sampler.sample(seeds, seed_time, generator=gen(123)))
    assert not torch.equal(a.eid, sampler.sample(seeds, seed_time, generator=gen(124)).eid)
    torch.manual_seed(7)
    b = sampler.sample(seeds, seed_time)
    torch.manual_seed(7)
    assert_same_subgraph(b, sampler.sample(seeds, seed_time))


def test_empty_seeds_graph_and_hops():
    graph = CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.long), num_nodes=0)
    sub = TemporalNeighborSampler(graph, [3, 2], node_time=torch.empty(0)).sample(
        torch.empty(0, dtype=torch.long)
    )
    assert sub.nodes.numel() == 0 and sub.num_sampled_nodes == [0, 0, 0]
    assert sub.num_sampled_edges == [0, 0] and sub.batch.numel() == 0
    graph = CSCGraph.from_edge_index(torch.tensor([[1], [0]]))
    sub = TemporalNeighborSampler(graph, [], node_time=torch.tensor([0, 0])).sample(
        torch.tensor([0, 1])
    )
    assert sub.nodes.tolist() == [0, 1] and sub.blocks == []


def test_exported():
    assert fastgl.sampling.TemporalNeighborSampler is TemporalNeighborSampler
    assert "TemporalNeighborSampler" in fastgl.__all__
    assert "TemporalNeighborSampler" in fastgl.sampling.__all__


def test_the_reference_check_can_fail():
    graph = CSCGraph.from_edge_index(star_edge_index(12))
    sub = TemporalNeighborSampler(graph, [2], node_time=STAR_NODE_TIME, strategy="last").sample(
        torch.tensor([0]), torch.tensor([5])
    )
    args = (star_edge_index(12), torch.tensor([0]), torch.tensor([5]), [2])
    check_temporal_sample(sub, *args, "last", False, node_time=STAR_NODE_TIME)
    with pytest.raises(AssertionError, match="future"):  # leaf 2 has time 9
        check_temporal_sample(sub, *args, "last", False, node_time=STAR_NODE_TIME + 10)
    with pytest.raises(AssertionError, match="'last' drew"):
        check_temporal_sample(sub, *args, "last", False, node_time=STAR_NODE_TIME.flip(0))
    assert temporal_valid_in_edges(star_edge_index(3), 0, 1, node_time=torch.tensor([0, 1, 2, 1]))
    assert temporal_valid_in_edges(
        star_edge_index(3), 0, 1, node_time=torch.tensor([0, 1, 2, 1])
    ) == [0, 2]


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def small():
    graph = CSCGraph.from_edge_index(random_edge_index(10, 40, seed=17), num_nodes=10)
    return graph, torch.arange(10)


@pytest.mark.parametrize(
    "options, error, match",
    [
        (dict(), ValueError, "give exactly one of node_time and edge_time.*got neither"),
        (
            dict(node_time=torch.zeros(10), edge_time=torch.zeros(40)),
            ValueError,
            "give exactly one of node_time and edge_time.*got both",
        ),
        (dict(node_time=torch.zeros(9)), ValueError, "node_time has 9 entries but there are 10"),
        (dict(edge_time=torch.zeros(10)), ValueError, "edge_time has 10 entries but there are 40"),
        (dict(node_time=torch.zeros(10, 1)), ValueError, "node_time must be a 1-D tensor"),
        (
            dict(node_time=torch.zeros(10, dtype=torch.bool)),
            ValueError,
            "node_time must be a 1-D tensor of real",
        ),
        (dict(node_time=[0] * 10), TypeError, "node_time must be a tensor, got list"),
        (
            dict(node_time=torch.tensor([0.0, float("nan")] + [0.0] * 8)),
            ValueError,
            "node_time has a NaN",
        ),
        (
            dict(node_time=torch.zeros(10), strategy="latest"),
            ValueError,
            "strategy must be 'uniform' or 'last', got 'latest'",
        ),
        (dict(node_time=torch.zeros(10), replace=1), TypeError, "replace must be a bool"),
    ],
)
def test_bad_sampler_arguments(small, options, error, match):
    graph, _ = small
    with pytest.raises(error, match=f"TemporalNeighborSampler: {match}"):
        TemporalNeighborSampler(graph, [2], **options)


def test_bad_graph_and_fanouts(small):
    graph, node_time = small
    with pytest.raises(TypeError, match="TemporalNeighborSampler: graph must be a fastgl"):
        TemporalNeighborSampler(graph.indptr, [2], node_time=node_time)
    with pytest.raises(ValueError, match="TemporalNeighborSampler: fanouts must be -1"):
        TemporalNeighborSampler(graph, [2, -3], node_time=node_time)
    with pytest.raises(TypeError, match="TemporalNeighborSampler: fanouts must be a list"):
        TemporalNeighborSampler(graph, 2, node_time=node_time)


@pytest.mark.parametrize(
    "seeds, seed_time, error, match",
    [
        (torch.tensor([1, 10]), None, ValueError, "seed id 10 out of range for a graph of 10"),
        (torch.tensor([1.0]), None, ValueError, "seeds must be a 1-D int32/int64 tensor"),
        ([1, 2], None, TypeError, "seeds must be a tensor"),
        (
            torch.tensor([1, 2]),
            torch.tensor([3]),
            ValueError,
            "seed_time has 1 entries but there are 2 seeds",
        ),
        (torch.tensor([1]), torch.tensor([[3]]), ValueError, "seed_time must be a 1-D tensor"),
        (torch.tensor([1]), torch.tensor([float("nan")]), ValueError, "seed_time has a NaN"),
        (torch.tensor([1]), 3, TypeError, "seed_time must be a tensor"),
    ],
)
def test_bad_sample_arguments(small, seeds, seed_time, error, match):
    graph, node_time = small
    sampler = TemporalNeighborSampler(graph, [2], node_time=node_time)
    with pytest.raises(error, match=f"TemporalNeighborSampler: {match}"):
        sampler.sample(seeds, seed_time)


def test_edge_time_needs_seed_time(small):
    graph, _ = small
    sampler = TemporalNeighborSampler(graph, [2], edge_time=torch.zeros(40))
    with pytest.raises(ValueError, match="TemporalNeighborSampler: seed_time is required"):
        sampler.sample(torch.tensor([1]))
    sampler.sample(torch.tensor([1]), torch.tensor([0]))


def test_other_devices(small):
    graph, node_time = small
    with pytest.raises(ValueError, match="TemporalNeighborSampler: node_time is on meta but"):
        TemporalNeighborSampler(graph, [2], node_time=node_time.to("meta"))
    sampler = TemporalNeighborSampler(graph, [2], node_time=node_time)
    with pytest.raises(
        ValueError,
        match="TemporalNeighborSampler: seeds must be on the graph's device cpu, got meta",
    ):
        sampler.sample(torch.tensor([1], device="meta"))
    with pytest.raises(ValueError, match="TemporalNeighborSampler: seed_time is on meta"):
        sampler.sample(torch.tensor([1]), torch.tensor([1], device="meta"))
    # Anything but a torch.Generator (a generator of another device type: tests/cuda).
    not_a_generator = types.SimpleNamespace(device=torch.device("cpu"))
    with pytest.raises(TypeError, match="TemporalNeighborSampler: generator must be a torch.Gen"):
        sampler.sample(torch.tensor([1]), generator=not_a_generator)


def test_hop_key_is_sample_hops_hop_key():
    """The samplers' per-hop keys (neighbor.hop_key) are sample_hops' (the test reference's
    copy of csrc/sampling/sample_hops.h's hop_key), across the int64 wrap-around."""
    from reference import hop_key as reference_hop_key

    from fastgl.sampling.neighbor import hop_key

    for key in (0, 1, 12345, (1 << 62) - 1, (1 << 63) - 1):
        for hop in range(6):
            assert hop_key(key, hop) == reference_hop_key(key, hop)


@pytest.mark.parametrize(
    "node_dtype, seed_dtype", [(torch.int64, torch.float32), (torch.float32, torch.int64)]
)
def test_times_of_two_dtypes_compare_exactly(node_dtype, seed_dtype):
    # float32 holds 24 significant bits: compared in float32, 1600000001 rounds to 1600000000
    # (and 16777219 to 16777220), which would admit a neighbor one tick in its seed's future.
    big = 1_600_000_000 if node_dtype == torch.int64 else 16_777_220
    graph = CSCGraph.from_edge_index(torch.tensor([[0], [1]]))
    node_time = torch.tensor([big + 1, big], dtype=torch.int64).to(node_dtype)
    seed_time = torch.tensor([big if node_dtype == torch.int64 else 16_777_219]).to(seed_dtype)
    sampler = TemporalNeighborSampler(graph, [-1], node_time=node_time)
    assert sampler.sample(torch.tensor([1]), seed_time=seed_time).nodes.tolist() == [1]
    later = seed_time + (128 if node_dtype == torch.int64 else 1)  # the next float32 / int
    assert sampler.sample(torch.tensor([1]), seed_time=later).nodes.tolist() == [1, 0]
