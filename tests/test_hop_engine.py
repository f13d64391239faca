"""The device sampling engine of sample_hops (csrc/sampling/hop_engine.h), run on the host.

``fastgl::_sample_hops_staged`` runs the CUDA backend's stages, with their index ranges and
order, on CPU threads (real atomics on the node table). Its samples must equal the CPU kernel's
bit for bit, for every batch and output, on random graphs, at the fanout boundaries, weighted
and with replacement, on hub rows and with fanout -1; and it must raise the CPU kernel's errors.
Each case runs twice: with worst-case buffers (no wait) and with a zero memory budget, where
every hop waits for its exact size and the node table grows between hops.
"""

import re

import pytest
import torch
from hypothesis import given, settings
from reference import random_edge_index, random_weights, rows_of_every_degree
from test_sample_hops import hops_case

from fastgl import CSCGraph
from fastgl.ops import sample_hops

WORST_CASE, WAIT_PER_HOP = 1 << 40, 0


def staged(graph, batches, fanouts, budget, key=5, weighted=False, **options):
    """The engine on the host and the CPU kernel on the same call."""
    sizes = [len(b) for b in batches]
    seeds = torch.tensor([s for b in batches for s in b], dtype=torch.int64)
    args = (
        graph.indptr,
        graph.indices,
        graph.weight if weighted else None,
        graph.eid,
        seeds,
        torch.tensor([0] + sizes).cumsum(0),
        list(fanouts),
    )
    flags = (
        options.get("replace", False),
        options.get("layerwise", False),
        options.get("disjoint", False),
        key,
    )
    engine = torch.ops.fastgl._sample_hops_staged(*args, *flags, budget)
    return engine, sample_hops(*args, *flags)


def assert_same(engine, cpu):
    for name, got, expected in zip(cpu._fields, engine, cpu):
        assert torch.equal(got, expected), f"{name}: {got.tolist()} != {expected.tolist()}"


@pytest.mark.parametrize("budget", [WORST_CASE, WAIT_PER_HOP])
@settings(max_examples=100, deadline=None)
@given(case=hops_case())
def test_engine_equals_cpu_on_random_graphs(case, budget):
    graph, seeds = case.pop("graph"), case.pop("seeds")
    assert_same(*staged(graph, [seeds, seeds[::-1], [], seeds[:3]], budget=budget, **case))


def boundary_graph(fanouts, weighted):
    """Node 3i + k (k = 0, 1, 2) has f - 1, f and f + 1 in-edges for the i-th fanout f, from
    spread-out sources, so a hop reaches rows on both sides of every boundary."""
    src, dst, n = [], [], 3 * len(fanouts)
    for i, f in enumerate(fanouts):
        for k, degree in enumerate((f - 1, f, f + 1)):
            node = 3 * i + k
            src += [(node + 7 * j + 1) % n for j in range(degree)]
            dst += [node] * degree
    edge_index = torch.tensor([src, dst])
    weight = random_weights(len(src), seed=3) if weighted else None
    return CSCGraph.from_edge_index(edge_index, num_nodes=n, edge_weight=weight)


BOUNDARY_FANOUTS = [1, 16, 17, 32, 33]


@pytest.mark.parametrize("budget", [WORST_CASE, WAIT_PER_HOP])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("fanout", BOUNDARY_FANOUTS + [-1])
def test_engine_equals_cpu_at_fanout_boundaries(fanout, replace, weighted, budget):
    graph = boundary_graph(BOUNDARY_FANOUTS, weighted)
    everyone = list(range(graph.num_nodes))
    for layerwise in (False, True):
        assert_same(
            *staged(
                graph,
                [everyone, everyone[::2]],
                [fanout, fanout],
                budget,
                weighted=weighted,
                replace=replace,
                layerwise=layerwise,
            )
        )


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("fanout", [2, 31, 32, 33, 40, 69])
def test_engine_draws_rows_almost_whole_as_the_cpu(fanout, replace, weighted):
    """A pair's lanes draw together (one Floyd draw per lane, its collision decided from the raw
    picks; weighted keys a round of lanes at a time). Rows of every degree up to 70, each drawn
    by 64 batches (64 streams), collide most where the fanout is close to the degree, chains of
    collisions included, and a fanout past a warp gives lanes more than one draw."""
    edge_index = rows_of_every_degree(70)
    weight = random_weights(edge_index.shape[1], seed=6) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=70, edge_weight=weight)
    everyone = list(range(graph.num_nodes))
    assert_same(
        *staged(
            graph, [everyone] * 64, [fanout], WORST_CASE, weighted=weighted, replace=replace, key=21
        )
    )


@pytest.mark.parametrize("replace", [False, True])
def test_engine_counts_weights_near_the_largest_double_as_the_cpu(replace):
    """The lanes count a row's weights together only where no order of additions can overflow
    (every weight at most DBL_MAX / (2 degree)); the odd-degree rows here have larger weights
    with a finite sum, which the row's own scan counts, and must draw as the CPU does."""
    edge_index = rows_of_every_degree(70)
    weight = random_weights(edge_index.shape[1], seed=7, dtype=torch.float64)
    degree = (edge_index[1] + 1).double()
    large = 1.7e308 / (1.5 * degree) * (0.8 + 0.05 * weight)  # above DBL_MAX / (2 degree)
    weight = torch.where((degree % 2 == 1) & (weight > 0), large, weight)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=70, edge_weight=weight)
    everyone = list(range(graph.num_nodes))
    for fanouts in ([5, 5], [40], [-1]):
        engine, cpu = staged(
            graph, [everyone] * 8, fanouts, WORST_CASE, weighted=True, replace=replace
        )
        assert_same(engine, cpu)


@pytest.mark.parametrize("budget", [WORST_CASE, WAIT_PER_HOP])
@pytest.mark.parametrize("weighted", [False, True])
def test_engine_equals_cpu_on_a_hub_row(weighted, budget):
    """A node with 20,000 in-edges among small rows, drawn from by many seeds and batches."""
    num_nodes, hub = 3000, 17
    edge_index = random_edge_index(num_nodes, 20000, seed=11)
    edge_index = torch.cat(
        [edge_index, torch.stack([torch.arange(20000) % num_nodes, torch.full((20000,), hub)])], 1
    )
    weight = random_weights(edge_index.shape[1], seed=4) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes, edge_weight=weight)
    batches = [[hub, 1, 2, hub], list(range(0, 3000, 97)), [hub]]
    for fanouts in ([25, 10], [-1, 3], [1000]):
        for disjoint in (False, True):
            assert_same(
                *staged(
                    graph, batches, fanouts, budget, weighted=weighted, disjoint=disjoint, key=9
                )
            )


@pytest.mark.parametrize("threads", [1, 3])
def test_engine_does_not_depend_on_the_thread_count(threads):
    graph = CSCGraph.from_edge_index(random_edge_index(2000, 40000, seed=12), num_nodes=2000)
    batches = [list(range(b, 2000, 11))[:150] for b in range(4)]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        assert_same(*staged(graph, batches, [10, 5, 3], WORST_CASE))
    finally:
        torch.set_num_threads(before)


def test_engine_samples_nothing_from_empty_windows():
    graph = CSCGraph.from_edge_index(random_edge_index(20, 100, seed=13), num_nodes=20)
    for batches in ([], [[], []], [[], [3], []]):
        for fanouts in ([], [2, 2]):
            assert_same(*staged(graph, batches, fanouts, WORST_CASE))


def broken(graph, what):
    """A copy of graph's arrays with one defect."""
    indptr, indices, weight = graph.indptr.clone(), graph.indices.clone(), graph.weight
    if what == "indices":
        indices[-5:] = graph.num_nodes + 7  # reached by the last nodes' rows only
    elif what == "indptr":
        indptr = indptr.flip(0)
    elif what == "indptr row":
        indptr[5] = indptr[6] + 1  # one row runs backwards, the ends are fine
    elif what in ("weight", "negative weight", "infinite weight"):
        weight = weight.clone()
        bad = {"weight": float("nan"), "negative weight": -1.0, "infinite weight": float("inf")}
        weight[graph.indptr[4]] = bad[what]
    elif what == "weight sum":  # finite weights whose sum is not, on the longest row
        weight = weight.double()
        longest = int(graph.indptr.diff().argmax())
        weight[graph.indptr[longest] : graph.indptr[longest + 1]] = 1e308
    return CSCGraph(indptr, indices, None, weight, validate=False)


@pytest.mark.parametrize("budget", [WORST_CASE, WAIT_PER_HOP])
@pytest.mark.parametrize(
    "defect, seeds",
    [
        ("indices", list(range(40))),
        ("indptr", [1, 2]),
        ("indptr row", [5, 1]),
        ("weight", [4, 0]),
        ("negative weight", [4, 0]),
        ("infinite weight", [4, 0]),
        ("weight sum", list(range(40))),
        ("seed", [3, 40]),
        ("negative seed", [3, -2]),
        ("seeds", [50, -2, 41]),  # the CPU names the smallest negative seed first
        ("seeds", [3, 41, 50, 7]),  # then the largest
    ],
)
def test_engine_raises_the_cpu_kernels_errors(defect, seeds, budget):
    graph = CSCGraph.from_edge_index(
        random_edge_index(40, 400, seed=14),
        num_nodes=40,
        edge_weight=random_weights(400, seed=5),
    )
    if defect not in ("seed", "negative seed", "seeds"):
        graph = broken(graph, defect)
    with pytest.raises(RuntimeError) as cpu_error:
        torch.ops.fastgl.sample_hops(*call_args(graph, seeds))
    first_line = str(cpu_error.value).splitlines()[0]
    with pytest.raises(RuntimeError, match=f"^{re.escape(first_line)}"):
        torch.ops.fastgl._sample_hops_staged(*call_args(graph, seeds), budget)


def call_args(graph, seeds):
    """sample_hops' arguments for one batch of seeds, fanouts [3, 3, -1]."""
    return (
        graph.indptr,
        graph.indices,
        graph.weight,
        None,
        torch.tensor(seeds),
        torch.tensor([0, len(seeds)]),
        [3, 3, -1],
        False,
        False,
        False,
        21,
    )


def test_the_engine_checks_its_own_inputs():
    graph = CSCGraph.from_edge_index(random_edge_index(30, 200, seed=15), num_nodes=30)
    args = list(call_args(graph, [1, 2]))
    args[5] = torch.tensor([0, 1])
    with pytest.raises(RuntimeError, match="sample_hops: seed_ptr must run from 0 to"):
        torch.ops.fastgl._sample_hops_staged(*args, 0)
