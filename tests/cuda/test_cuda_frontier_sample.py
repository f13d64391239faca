"""frontier_sample on the GPU: the same samples as the CPU kernel, draw for draw (a warp probes
32 of the draws the CPU probes one at a time, and both follow dashboard.h's rules), Dashboards
that outgrow their first slot and run again included, and the same errors."""

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    cycle_with_a_side_node,
    edge_index_strategy,
    hub_edge_index,
    random_edge_index,
)

from fastgl import CSCGraph
from fastgl.ops import FrontierTrace, frontier_sample
from fastgl.ops._random import draw_key
from fastgl.sampling import FrontierSampler
from fastgl.sampling.saint import sampled_vertices


def _trace(indptr, indices, num_subgraphs, m, budget, eta=2.0, max_entries=0, seed=0, unit=0):
    return FrontierTrace(
        *torch.ops.fastgl.frontier_sample(
            indptr, indices, num_subgraphs, m, budget, eta, max_entries, "dashboard", seed, unit
        )
    )


def _assert_cuda_equals_cpu(graph, *args, **kwargs):
    expected = _trace(graph.indptr, graph.indices, *args, **kwargs)
    got = _trace(graph.indptr.cuda(), graph.indices.cuda(), *args, **kwargs)
    for g, e, name in zip(got, expected, ("frontier", "popped", "added")):
        assert g.is_cuda
        assert torch.equal(g.cpu(), e), name
    return expected


def _hub_graph(dtype=torch.int64):
    """Undirected, node 0 a hub of 3011 in-edges among 1000 nodes of mean in-degree 12: the
    paper's Dashboard (an entry per unit of degree) starts at eta * m * 12 entries, and a walker
    on the hub needs 3000."""
    edge_index, num_nodes = hub_edge_index(3000, 1000, 3000, seed=5)
    edge_index = torch.cat([edge_index, edge_index.flip(0)], 1).to(dtype)
    return CSCGraph.from_edge_index(edge_index, num_nodes)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize(
    "settings",
    [
        dict(),  # an entry per the mean in-degree: hubs leave partial last entries
        dict(unit=1),  # the paper's Dashboard
        dict(unit=7),
        dict(max_entries=30),  # the paper's cap on skewed graphs
        dict(max_entries=30, unit=1),
        dict(eta=1.01),  # a cleanup almost every pop
        dict(eta=8.0, unit=3),
    ],
)
def test_cuda_equals_cpu(dtype, settings):
    graph = _hub_graph(dtype)
    for seed in (0, 5, -(2**62)):
        _assert_cuda_equals_cpu(graph, 40, 20, 400, seed=seed, **settings)


@settings(max_examples=150, deadline=None)
@given(
    edge_index_strategy(max_nodes=30, max_edges=120, allow_empty=False),
    st.integers(0, 40),
    st.data(),
)
def test_cuda_equals_cpu_on_random_graphs(case, num_subgraphs, data):
    """The CPU tests' replay cases on the GPU: hubs, isolated nodes and sinks, tiny fill marks
    (most probes of a warp then land on the same few entries), partial entries, eta near 1."""
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    m = data.draw(st.integers(1, num_nodes))
    _assert_cuda_equals_cpu(
        graph,
        num_subgraphs,
        m,
        m + data.draw(st.integers(0, 60)),
        eta=data.draw(st.sampled_from([1.01, 1.5, 2.0, 8.0])),
        max_entries=data.draw(st.sampled_from([0, 1, 3])),
        seed=data.draw(st.integers(-(2**62), 2**62)),
        unit=data.draw(st.sampled_from([0, 1, 2, 5, 33])),
    )


@settings(max_examples=150, deadline=None)
@given(edge_index_strategy(max_nodes=20, max_edges=60, allow_empty=False), st.data())
def test_corrupted_graphs_fail_alike(case, data):
    """One entry of indptr or indices overwritten: both backends sample alike, or raise the same
    error (the same first faulty subgraph and node), and neither reads out of bounds."""
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    indptr, indices = graph.indptr.clone(), graph.indices.clone()
    target = indptr if indices.numel() == 0 or data.draw(st.booleans()) else indices
    target[data.draw(st.integers(0, target.numel() - 1))] = data.draw(
        st.integers(-3, max(num_nodes, indices.numel()) + 3)
    )
    m = data.draw(st.integers(1, num_nodes))
    outcomes = []
    for device in ("cpu", "cuda"):
        try:
            trace = _trace(indptr.to(device), indices.to(device), 30, m, m + 20, seed=4)
            outcomes.append(tuple(t.cpu() for t in trace))
        except RuntimeError as error:
            outcomes.append(str(error).splitlines()[0])
    if isinstance(outcomes[0], str):
        assert outcomes[0] == outcomes[1]
    else:
        assert all(torch.equal(g, e) for g, e in zip(outcomes[1], outcomes[0]))


def test_dashboards_that_outgrow_their_slot_run_again_alike():
    """The first slots hold twice the first DB, 2 * 2 * 20 * 12 = 960 entries; the paper's
    Dashboard gives a walker on the hub 3011, so each sampler that reaches it outgrows its slot
    and runs again, from its start, in bigger ones, and still draws what the CPU does: after two
    moves about half of them have (the others end in their first slots), after 280 all have."""
    for budget, reached in ((22, range(1, 60)), (300, [60])):
        trace = _assert_cuda_equals_cpu(_hub_graph(), 60, 20, budget, seed=3, unit=1)
        assert int((trace.added == 0).any(1).sum()) in reached


def test_probes_past_a_warp_of_draws():
    """On a ring (in-degree 1) an entry of weight 1024 keeps its walker with probability 1/1024:
    most of a warp's 32 draws probe partial entries and reject them, including lane 31's, whose
    keep-or-not draw is the next warp's first, and most rounds find no walker at all."""
    ring = torch.tensor([[(i + 1) % 30 for i in range(30)], list(range(30))])
    _assert_cuda_equals_cpu(CSCGraph.from_edge_index(ring, 30), 4, 3, 13, seed=11, unit=1024)


def test_more_samplers_than_resident_blocks():
    """Thousands of samplers: each thread block runs many, one after the other, in one slot."""
    graph = CSCGraph.from_edge_index(random_edge_index(5000, 40_000, seed=2), 5000)
    _assert_cuda_equals_cpu(graph, 5000, 8, 40, seed=9)


def test_moves_stop_when_no_walker_can_move():
    """0 -> 1 is the only edge: walkers on 0 cannot move, and the moves left are -1."""
    graph = CSCGraph.from_edge_index(torch.tensor([[0], [1]]), 2)
    trace = _assert_cuda_equals_cpu(graph, 50, 1, 4, seed=2)
    assert bool((trace.popped == -1).any())


def test_the_wrapper_and_sampler_run_on_the_gpu():
    graph = CSCGraph.from_edge_index(random_edge_index(300, 2000, seed=4), 300).to("cuda")
    sampler = FrontierSampler(graph, frontier_size=10, budget=60)
    subs = sampler.sample(6, generator=torch.Generator("cuda").manual_seed(1))
    key = draw_key(torch.Generator("cuda").manual_seed(1), graph.device)
    cpu = graph.to("cpu")
    trace = _trace(cpu.indptr, cpu.indices, 6, 10, 60, seed=key)
    for sub, frontier, added in zip(subs, trace.frontier, trace.added):
        assert sub.nodes.is_cuda
        assert torch.equal(sub.nodes.cpu(), sampled_vertices(frontier, added))
        nodes = sub.nodes.cpu()
        row, col, eid, _ = cpu.induced_subgraphs(nodes, torch.tensor([0, nodes.numel()]))
        assert torch.equal(sub.eid.cpu().sort().values, eid.sort().values)
    traced = frontier_sample(graph, 2, 5, 20, generator=torch.Generator("cuda").manual_seed(2))
    assert all(t.is_cuda for t in traced)


@pytest.mark.parametrize("fault", ["neighbor", "row", "ends"])
def test_the_same_first_fault_as_the_cpu(fault):
    indptr, indices = cycle_with_a_side_node()
    if fault == "neighbor":
        indices[31] = 99
    elif fault == "row":
        indptr[31] = 30
    else:
        indptr[-1] -= 1
    messages = []
    for device in ("cpu", "cuda"):
        with pytest.raises(RuntimeError, match="frontier_sample: ") as error:
            _trace(indptr.to(device), indices.to(device), 64, 1, 3, seed=1)
        messages.append(str(error.value).splitlines()[0])
    assert messages[0] == messages[1]
    if fault != "ends":
        assert re.search(r"subgraph \d+\)", messages[1])


def test_scan_is_cpu_only():
    graph = CSCGraph.from_edge_index(random_edge_index(50, 200, seed=1), 50).to("cuda")
    with pytest.raises(RuntimeError, match="frontier_sample: pop 'scan' .* runs on the CPU only"):
        torch.ops.fastgl.frontier_sample(graph.indptr, graph.indices, 2, 3, 9, 2.0, 0, "scan", 0, 0)


def test_the_subgraph_benchmark_runs_the_dashboards_on_the_gpu(tmp_path):
    """``--device cuda``: the Dashboards' rows on the GPU, the scan's (the baseline) on the CPU,
    each subgraph between the first frontier's 20 vertices and the budget's 60."""
    from benchmarks import subgraph

    payload = subgraph.main(
        "--graphs rmat-tiny --frontier-size 20 --budgets 60 --subgraphs 40 --repeat 1 --modes "
        f"--thread-counts 1 --device cuda --out {tmp_path / 'gpu.json'}".split()
    )
    rows = {row["pop"]: row for row in payload["rows"]}
    assert {pop: row["device"] for pop, row in rows.items()} == {
        "dashboard": "cuda",
        "paper": "cuda",
        "scan": "cpu",
    }
    assert all(40 * 20 <= row["vertices"] <= 40 * 60 for row in rows.values())
    assert payload["environment"]["device"].startswith("cuda")
