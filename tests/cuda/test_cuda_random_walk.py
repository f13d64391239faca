"""random_walk on the GPU: the same walks as the CPU kernel, walk for walk, under both schedules
(every step of every backend and schedule runs WalkView::step with the same Philox keys and
streams; weighted and restart draws call log(), whose last bit may differ between host and
device, which would change a draw only within one ulp of a boundary), and the same errors."""

import pytest
import torch
from reference import random_edge_index, random_weights, walk_paths_fault

from benchmarks.device_counts import count_syncs
from fastgl import CSCGraph
from fastgl.ops import random_walk

WALKS = {
    "deepwalk": dict(),
    "node2vec": dict(p=0.25, q=4.0),
    "node2vec fallback": dict(p=100.0, q=50.0),
    "restart": dict(restart_prob=0.1, p=2.0, q=0.5),
    "ppr": dict(restart_prob=0.15, ppr=True),
}


def _graph(dtype=torch.int64, weighted=False):
    # A hub (node 0, thousands of walks at once: the block tier, its row too long to cache)
    # among many small rows.
    edge_index = random_edge_index(5000, 80_000, dtype=dtype, seed=1)
    edge_index[1, :20_000] = 0
    edge_index[0, 20_000:40_000] = 0
    weight = random_weights(80_000, seed=2) if weighted else None
    return CSCGraph.from_edge_index(edge_index, 5200, edge_weight=weight)  # 200 isolated nodes


def _starts(graph):
    """Random starts, and 6000 at a node of two out-edges to rows of 1 to 256 edges: after the
    first (first-order) step, thousands of walks stand at each of those rows (a thousand when the
    weighted second-order tests keep 2000 of them), so the transit schedule's chunks cache the
    rows in shared memory for second-order steps too."""
    csr = graph.out_csr()
    degree = csr.indptr.diff()
    small = (degree >= 1) & (degree <= 256)
    hub_start = next(
        node
        for node in torch.nonzero(degree == 2).view(-1).tolist()
        if bool(small[csr.indices[csr.indptr[node] : csr.indptr[node + 1]].long()].all())
    )
    starts = torch.randint(0, 5200, (40_000,), generator=torch.Generator().manual_seed(3))
    starts[:6000] = hub_start
    return starts


def _reaches_the_row_cache(graph, nodes):
    """Some step after the first has a whole transit chunk (256 walks in transit order; any 511
    walks at one node fill one) at a node of 1 to 256 out-edges, a row the kernel caches weighted
    or not (it caches an unweighted row only for at least as many walks as edges)."""
    degree = graph.out_csr().indptr.diff()
    for t in range(1, nodes.shape[1] - 1):
        column = nodes[:, t]
        walks_at = torch.bincount(column[column >= 0], minlength=len(degree))
        if bool(((walks_at >= 511) & (degree >= 1) & (degree <= 256)).any()):
            return True
    return False


def _walk(graph, starts, walk, weighted, schedule, seed, with_eid=False):
    csr = graph.out_csr()
    return torch.ops.fastgl.random_walk(
        csr.indptr,
        csr.indices,
        csr.weight if weighted else None,
        csr.eid if with_eid else None,
        starts,
        20,
        walk.get("p", 1.0),
        walk.get("q", 1.0),
        walk.get("restart_prob", 0.0),
        walk.get("ppr", False),
        schedule,
        seed,
    )


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("walk", list(WALKS))
def test_cuda_equals_cpu(walk, weighted, dtype):
    graph = _graph(dtype, weighted)
    gpu_graph = graph.to("cuda")
    starts = _starts(graph)
    config = WALKS[walk]
    if weighted and (config.get("p", 1.0) != 1 or config.get("q", 1.0) != 1):
        # The CPU reference rescans the hub's 20,000-edge row on every weighted second-order
        # trial (about 100 s a seed for all 40,000 walks on two cores): 2000 walks from the small
        # row and 1000 random ones still put a block's worth on its neighbors and about a
        # thousand on the hub.
        starts = torch.cat([starts[:2000], starts[-1000:]])
    for seed in (0, 4242, -(2**62)):
        expected = _walk(graph, starts, config, weighted, "sample", seed)
        for schedule in ("sample", "transit", "auto"):
            got = _walk(gpu_graph, starts.cuda(), config, weighted, schedule, seed)
            assert got[0].is_cuda and got[1].is_cuda
            assert torch.equal(got[0].cpu(), expected[0]), (schedule, seed)
            assert torch.equal(got[1].cpu(), expected[1]), (schedule, seed)
    assert _reaches_the_row_cache(graph, expected[0])
    csr = graph.out_csr()
    fault = walk_paths_fault(
        csr.indptr,
        csr.indices,
        csr.weight if weighted else None,
        starts,
        *expected,
        config.get("restart_prob", 0.0),
        config.get("ppr", False),
    )
    assert fault is None, fault


@pytest.mark.parametrize("walk", ["node2vec", "ppr"])
def test_cuda_edge_ids_equal_cpu(walk):
    """With eid, each step writes the id of the edge it took, on the GPU as on the CPU."""
    graph = _graph()
    starts = _starts(graph)
    expected = _walk(graph, starts, WALKS[walk], False, "sample", 11, with_eid=True)
    for schedule in ("sample", "transit"):
        got = _walk(graph.to("cuda"), starts.cuda(), WALKS[walk], False, schedule, 11, True)
        assert torch.equal(got[0].cpu(), expected[0]) and torch.equal(got[1].cpu(), expected[1])


def test_cuda_wrapper_walks_on_the_graph_device():
    graph = _graph().to("cuda")
    gen = torch.Generator(device="cuda").manual_seed(5)
    nodes, edges = random_walk(graph, torch.arange(100, device="cuda"), 8, p=2.0, generator=gen)
    assert nodes.is_cuda and edges.is_cuda and nodes.shape == (100, 9)
    with pytest.raises(ValueError, match="random_walk: the generator is on cpu"):
        random_walk(graph, torch.arange(3, device="cuda"), 2, generator=torch.Generator())


def test_cuda_empty_input_and_zero_length():
    csr = _graph().to("cuda").out_csr()
    empty = torch.empty(0, dtype=torch.int64, device="cuda")
    for schedule in ("sample", "transit"):
        args = (csr.indptr, csr.indices, None, csr.eid)
        nodes, slots = torch.ops.fastgl.random_walk(
            *args, empty, 5, 1.0, 1.0, 0.0, False, schedule, 0
        )
        assert nodes.is_cuda and nodes.shape == (0, 6) and slots.shape == (0, 5)
        starts = torch.tensor([3, 4], device="cuda")
        nodes, slots = torch.ops.fastgl.random_walk(
            *args, starts, 0, 1.0, 1.0, 0.0, False, schedule, 0
        )
        assert nodes.tolist() == [[3], [4]] and slots.shape == (2, 0)


@pytest.mark.parametrize("schedule", ["sample", "transit"])
def test_cuda_bad_input_names_the_first_bad_walk(schedule):
    indptr = torch.arange(11)
    indices = (torch.arange(10) + 1) % 10
    indices[9] = 99  # node 9's row holds an id out of range
    starts = torch.zeros(60_000, dtype=torch.int64)
    starts[30_000], starts[50_000] = 8, 9
    for device in ("cpu", "cuda"):
        with pytest.raises(RuntimeError, match=r"node 9 hold an id out of .*\(walk 30000\)"):
            torch.ops.fastgl.random_walk(
                indptr.to(device),
                indices.to(device),
                None,
                None,
                starts.to(device),
                3,
                1.0,
                1.0,
                0.0,
                False,
                schedule,
                0,
            )
    # Offsets that end early or start late: every row reads fine, only the ends are wrong.
    for bad_ends in ([0, 1, 1], [1, 1, 2]):
        with pytest.raises(RuntimeError, match="random_walk: indptr is not a valid CSR"):
            torch.ops.fastgl.random_walk(
                torch.tensor(bad_ends, device="cuda"),
                torch.tensor([1, 0], device="cuda"),
                None,
                None,
                torch.tensor([0], device="cuda"),
                2,
                1.0,
                1.0,
                0.0,
                False,
                schedule,
                0,
            )
    # Node 1's row descends; the others have two edges (one-edge rows need no search) and q != 1
    # (with q = 1 no trial searches), as in tests/test_random_walk.py.
    unsorted_indptr = torch.tensor([0, 2, 7, 9, 11, 13, 15], device="cuda")
    unsorted = torch.tensor([1, 3, 5, 4, 3, 2, 0, 3, 4, 4, 5, 0, 5, 0, 2], device="cuda")
    with pytest.raises(RuntimeError, match="random_walk: indices must ascend"):
        torch.ops.fastgl.random_walk(
            unsorted_indptr,
            unsorted,
            None,
            None,
            torch.ones(50, dtype=torch.int64, device="cuda"),
            4,
            2.0,
            4.0,
            0.0,
            False,
            schedule,
            0,
        )
    with pytest.raises(RuntimeError, match="random_walk: starts is on cpu but indptr is on cuda"):
        torch.ops.fastgl.random_walk(
            indptr.cuda(), indices.cuda(), None, None, starts, 3, 1.0, 1.0, 0.0, False, schedule, 0
        )
    # A failed call leaves the device usable.
    nodes, _ = torch.ops.fastgl.random_walk(
        indptr.cuda(),
        indices.cuda(),
        None,
        None,
        starts[:2].cuda(),
        3,
        1.0,
        1.0,
        0.0,
        False,
        schedule,
        0,
    )
    assert nodes.tolist() == [[0, 1, 2, 3], [0, 1, 2, 3]]


@pytest.mark.parametrize("schedule", ["sample", "transit"])
def test_cuda_bad_starts_are_named_as_on_the_cpu(schedule):
    """The kernels check the starts as they walk (a fault, no wait before walking); the error
    names the extreme bad id, as the CPU's does."""
    csr = _graph().out_csr()
    for bad, message in [
        (6000, "starts id 6000 out of range for a graph of 5200"),
        (-4, "starts id -4 is negative"),
    ]:
        starts = torch.arange(3000)
        starts[1234] = bad
        for device in ("cpu", "cuda"):
            with pytest.raises(RuntimeError, match=f"random_walk: {message}"):
                torch.ops.fastgl.random_walk(
                    csr.indptr.to(device),
                    csr.indices.to(device),
                    None,
                    None,
                    starts.to(device),
                    5,
                    2.0,
                    0.5,
                    0.0,
                    False,
                    schedule,
                    0,
                )


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("schedule", ["sample", "transit", "auto"])
def test_cuda_random_walk_synchronizes_once_whatever_the_length(schedule, weighted):
    """One read of the fault word per call, for 1 step or 80, node2vec or not, with edge ids:
    the transit schedule sorts on the device and sizes nothing on the host."""
    graph = _graph(weighted=weighted).to("cuda")
    starts = _starts(graph.to("cpu")).cuda()
    csr = graph.out_csr()
    for length in (1, 80):
        for walk in ("deepwalk", "node2vec"):
            config = WALKS[walk]

            def call(length=length, config=config):
                return torch.ops.fastgl.random_walk(
                    csr.indptr,
                    csr.indices,
                    csr.weight if weighted else None,
                    csr.eid,
                    starts,
                    length,
                    config.get("p", 1.0),
                    config.get("q", 1.0),
                    0.0,
                    False,
                    schedule,
                    3,
                )

            assert count_syncs(call) == 1, (length, walk)
