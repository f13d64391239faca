"""CUDA kernels against the CPU reference kernels: exactly equal, sample for sample.

Every random draw is a pure function of (key, pair, draw index) (docs/contracts.md,
"Randomness"), so for the same seed the CUDA sampler must return what the CPU sampler returns,
bit for bit, whatever tier (thread per pair, block per transit with the adjacency cached in
shared memory, or the block tier reading an adjacency too big for the 32 KiB cache from global
memory) schedules a pair.
"""

import dataclasses
import re

import pytest
import torch
from reference import (
    assert_same_subgraph,
    check_neighbor_sample,
    id_map_reference,
    random_edge_index,
    random_weights,
    rows_of_every_degree,
)

from benchmarks.device_counts import count_syncs
from fastgl import CSCGraph, NeighborSampler
from fastgl.nn.functional import aggregate
from fastgl.ops import csc_from_coo, id_map, sample_hops, sample_neighbors
from fastgl.sampling import neighbor_sample
from fastgl.sampling.neighbor import _sample_batches

NUM_NODES = 5000
HUB, BIG, EMPTY, HOT = 0, 1, 2, 7
HUB_DEGREE = 100_000  # int32: 400 KB, far over the 32 KiB shared-memory adjacency cache
BIG_DEGREE = 3000  # fits the cache for int32 unweighted (8192 slots), not for int64 + f64 (2048)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _tiered_edge_index(dtype):
    """Random edges plus a hub of degree 100_000, a node of degree 3000, and a node (EMPTY) with
    no in-edges at all."""
    g = _gen(0)
    rest = torch.randint(0, NUM_NODES, (2, 40_000), generator=g)
    rest = rest[:, rest[1] != EMPTY]
    hub_src = torch.randint(0, NUM_NODES, (HUB_DEGREE,), generator=g)
    big_src = torch.randint(0, NUM_NODES, (BIG_DEGREE,), generator=g)
    edge_index = torch.cat(
        [
            rest[:, :10_000],
            torch.stack([hub_src, torch.full_like(hub_src, HUB)]),
            rest[:, 10_000:20_000],
            torch.stack([big_src, torch.full_like(big_src, BIG)]),
            rest[:, 20_000:],
        ],
        1,
    )
    return edge_index.to(dtype)


def _tiered_transits():
    """Pairs for every scheduling tier, interleaved: mostly one or two pairs per transit (thread
    tier), the hub 64 times and BIG 100 times (block tier: >= 32 pairs on one transit, adjacency
    too big / borderline for the cache), HOT 600 times (several 256-pair chunks of one transit)
    and EMPTY 40 times (block tier with nothing to draw)."""
    g = _gen(1)
    parts = [
        torch.randint(0, NUM_NODES, (4000,), generator=g),
        torch.full((64,), HUB),
        torch.full((100,), BIG),
        torch.full((600,), HOT),
        torch.full((40,), EMPTY),
    ]
    transits = torch.cat(parts)
    return transits[torch.randperm(transits.numel(), generator=g)]


_GRAPHS = {}


def _graph(dtype, weight_dtype):
    key = (dtype, weight_dtype)
    if key not in _GRAPHS:
        edge_index = _tiered_edge_index(dtype)
        weight = None
        if weight_dtype is not None:
            weight = random_weights(
                edge_index.shape[1], seed=2, zero_fraction=0.2, dtype=weight_dtype
            )
        cpu = CSCGraph.from_edge_index(edge_index, num_nodes=NUM_NODES, edge_weight=weight)
        _GRAPHS[key] = (edge_index, weight, cpu, cpu.to("cuda"))
    return _GRAPHS[key]


def _assert_equal_on_cpu(cuda_out, cpu_out, what):
    for name, c, r in zip(("ptr", "neighbors", "edge_pos"), cuda_out, cpu_out):
        assert c.is_cuda, f"{what}: {name} is not on the GPU"
        c = c.cpu()
        assert c.dtype == r.dtype, f"{what}: {name} dtype {c.dtype} != {r.dtype}"
        if not torch.equal(c, r):
            n = min(c.numel(), r.numel())
            diff = torch.nonzero(c[:n] != r[:n]).view(-1)
            first = int(diff[0]) if diff.numel() else n
            raise AssertionError(
                f"{what}: {name} differs (sizes {c.numel()} vs {r.numel()}), "
                f"first at {first}: cuda {c[first : first + 5].tolist()} "
                f"cpu {r[first : first + 5].tolist()}"
            )


@pytest.mark.parametrize("fanout", [-1, 0, 3, 25])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weight_dtype", [None, torch.float32, torch.float64])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_sample_neighbors_cuda_equals_cpu(dtype, weight_dtype, replace, fanout):
    _, _, cpu, gpu = _graph(dtype, weight_dtype)
    transits = _tiered_transits()
    for seed in (0, 987654321, -(2**62)):
        expected = sample_neighbors(
            cpu.indptr, cpu.indices, cpu.weight, transits, fanout, replace=replace, seed=seed
        )
        got = sample_neighbors(
            gpu.indptr, gpu.indices, gpu.weight, transits.cuda(), fanout, replace=replace, seed=seed
        )
        torch.cuda.synchronize()
        _assert_equal_on_cpu(
            got,
            expected,
            f"dtype={dtype} weight={weight_dtype} replace={replace} fanout={fanout} seed={seed}",
        )


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_sample_neighbors_cuda_block_tier_only(dtype):
    """All pairs on two transits (only the block tier runs), and no pairs at all."""
    _, _, cpu, gpu = _graph(dtype, None)
    transits = torch.cat([torch.full((300,), HUB), torch.full((257,), BIG)])
    for fanout in (1, 10):
        expected = sample_neighbors(cpu.indptr, cpu.indices, None, transits, fanout, seed=5)
        got = sample_neighbors(gpu.indptr, gpu.indices, None, transits.cuda(), fanout, seed=5)
        _assert_equal_on_cpu(got, expected, f"block tier fanout={fanout}")
    empty = torch.empty(0, dtype=torch.long, device="cuda")
    ptr, nbr, pos = sample_neighbors(gpu.indptr, gpu.indices, None, empty, 4)
    assert ptr.cpu().tolist() == [0] and nbr.numel() == 0 and pos.numel() == 0


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_neighbor_sampler_cuda_equals_cpu(replace, weighted):
    """NeighborSampler on graph.to('cuda') equals the CPU sampler for the same Philox key.

    The key normally comes from the generator of the graph's device (CPU and CUDA generators
    give different keys for the same seed), so both run `_sample_batches` with one explicit key.
    """
    edge_index, weight, cpu, gpu = _graph(torch.int64, torch.float32 if weighted else None)
    batches = [
        torch.tensor([HUB, 3, 3, 4000]),
        torch.randint(0, NUM_NODES, (200,), generator=_gen(3)),
        torch.empty(0, dtype=torch.long),
        torch.tensor([BIG, HOT, EMPTY]),
    ]
    fanouts = [15, 10, 5]
    cpu_sampler = NeighborSampler(cpu, fanouts, replace=replace, weighted=weighted)
    gpu_sampler = NeighborSampler(gpu, fanouts, replace=replace, weighted=weighted)
    for key in (0, 12345, (1 << 62) - 1):
        expected = _sample_batches(cpu_sampler, batches, key)
        got = _sample_batches(gpu_sampler, [b.cuda() for b in batches], key)
        assert len(got) == len(expected)
        for batch, g, e in zip(batches, got, expected):
            assert g.nodes.is_cuda and g.eid.is_cuda
            assert_same_subgraph(g, e)
            check_neighbor_sample(
                g, edge_index, NUM_NODES, batch, fanouts, replace=replace, edge_weight=weight
            )


def _sample_hops_on_both(cpu, gpu, seeds, seed_ptr, fanouts, eid=True, **options):
    """sample_hops on the CPU graph and on its CUDA copy, seeds on each graph's device."""
    return [
        sample_hops(
            g.indptr,
            g.indices,
            g.weight,
            g.eid if eid else None,
            seeds.to(g.device),
            seed_ptr.to(g.device),
            fanouts,
            **options,
        )
        for g in (cpu, gpu)
    ]


@pytest.mark.parametrize("layerwise,disjoint", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("weight_dtype", [None, torch.float64])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_sample_hops_cuda_equals_cpu(dtype, weight_dtype, layerwise, disjoint):
    """The fused op, every output, for a window with repeated, hub, empty and isolated seeds."""
    _, _, cpu, gpu = _graph(dtype, weight_dtype)
    batches = [
        torch.tensor([HUB, 3, 3, 4000]),
        torch.randint(0, NUM_NODES, (300,), generator=_gen(5)),
        torch.empty(0, dtype=torch.long),
        torch.tensor([BIG, HOT, EMPTY]),
    ]
    seeds = torch.cat(batches)
    seed_ptr = torch.tensor([0] + [b.numel() for b in batches]).cumsum(0)
    fanouts = [3, 2] if layerwise else [15, 10, 5]
    for eid in (True, False):
        for replace in (False, True):
            outs = _sample_hops_on_both(
                cpu,
                gpu,
                seeds,
                seed_ptr,
                fanouts,
                eid=eid,
                replace=replace,
                layerwise=layerwise,
                disjoint=disjoint,
                seed=-12345,
            )
            for name, r, c in zip(outs[0]._fields, *outs):
                # The counts come back on the host, read with the call's one synchronization.
                on_host = name in ("node_counts", "edge_counts")
                assert c.is_cuda != on_host and torch.equal(c.cpu(), r), (name, replace, eid)


@pytest.mark.parametrize("weighted", [False, True])
def test_sample_hops_cuda_draws_rows_almost_whole_as_the_cpu(weighted):
    """A pair's lanes draw together: groups of 2 to 32 lanes, several groups to a warp, lanes
    with more than one draw (fanout 40), and Floyd's collisions decided per lane (rows of every
    degree up to 70, drawn by 64 batches)."""
    edge_index = rows_of_every_degree(70)
    weight = random_weights(edge_index.shape[1], seed=8) if weighted else None
    cpu = CSCGraph.from_edge_index(edge_index, num_nodes=70, edge_weight=weight)
    gpu = cpu.to("cuda")
    seeds = torch.arange(70).repeat(64)
    seed_ptr = torch.arange(0, 64 * 70 + 1, 70)
    for fanouts in ([2, 2], [16, 5], [33], [40, 1], [69]):
        for replace in (False, True):
            options = {"replace": replace, "seed": 77}
            outs = _sample_hops_on_both(cpu, gpu, seeds, seed_ptr, fanouts, **options)
            for name, r, c in zip(outs[0]._fields, *outs):
                assert torch.equal(c.cpu(), r), (name, fanouts, replace)


def test_sample_hops_cuda_bad_input_raises_not_crashes():
    _, _, _, gpu = _graph(torch.int64, None)
    seeds, seed_ptr = torch.tensor([HUB], device="cuda"), torch.tensor([0, 1], device="cuda")
    broken = gpu.indices.clone().fill_(NUM_NODES + 3)
    with pytest.raises(RuntimeError, match="sample_hops: indices id"):
        sample_hops(gpu.indptr, broken, None, None, seeds, seed_ptr, [2, 2])
    with pytest.raises(RuntimeError, match="sample_hops: indptr is not a valid CSC"):
        sample_hops(gpu.indptr.flip(0), gpu.indices, None, None, seeds, seed_ptr, [2])
    with pytest.raises(RuntimeError, match="sample_hops: seeds id 5000 out of range for a graph"):
        sample_hops(gpu.indptr, gpu.indices, None, None, seeds + NUM_NODES, seed_ptr, [2])
    with pytest.raises(RuntimeError, match="sample_hops: seeds id -1 is negative"):
        sample_hops(gpu.indptr, gpu.indices, None, None, seeds - 1, seed_ptr, [2])
    with pytest.raises(RuntimeError, match="sample_hops: 1 transits drawing up to"):
        sample_hops(gpu.indptr, gpu.indices, None, None, seeds, seed_ptr, [2**62], replace=True)
    with pytest.raises(RuntimeError, match="sample_hops: 1 transits drawing up to"):
        sample_hops(gpu.indptr, gpu.indices, None, None, seeds, seed_ptr, [-1, 2**62], replace=True)
    torch.cuda.synchronize()  # no asynchronous error left behind


def test_sample_hops_cuda_takes_seed_ptr_on_the_host():
    """seed_ptr is read on the host: on the CPU it costs no read-back, on the device one."""
    _, _, _, gpu = _graph(torch.int64, None)
    seeds = torch.randint(0, NUM_NODES, (50,), generator=_gen(6)).cuda()
    seed_ptr = torch.tensor([0, 20, 50])
    args = (gpu.indptr, gpu.indices, None, None, seeds)
    on_host = sample_hops(*args, seed_ptr, [5, 5], seed=3)
    on_device = sample_hops(*args, seed_ptr.cuda(), [5, 5], seed=3)
    for name, a, b in zip(on_host._fields, on_host, on_device):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("layerwise,disjoint", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("weighted", [False, True])
def test_sample_hops_cuda_synchronizes_once_per_call(weighted, layerwise, disjoint):
    """Bounded fanouts: the whole call waits once, for its counts and fault word; a fanout of -1
    adds one wait for that hop's size (DGL's pattern)."""
    _, _, _, gpu = _graph(torch.int64, torch.float32 if weighted else None)
    seeds = torch.randint(0, NUM_NODES, (1024,), generator=_gen(7)).cuda()
    seed_ptr = torch.tensor([0, 512, 1024])

    def call(fanouts):
        return lambda: sample_hops(
            gpu.indptr,
            gpu.indices,
            gpu.weight,
            None,
            seeds,
            seed_ptr,
            fanouts,
            layerwise=layerwise,
            disjoint=disjoint,
            seed=11,
        )

    assert count_syncs(call([3, 2] if layerwise else [15, 10, 5])) == 1
    assert count_syncs(call([3, -1] if layerwise else [15, -1, 5])) == 2


def test_neighbor_sampler_cuda_synchronizes_once_per_window():
    """The sampler's Python side reads nothing from the device: its key comes from the CUDA
    generator's host state, seed_ptr is built on the host, the counts come back on the host."""
    _, _, _, gpu = _graph(torch.int64, None)
    sampler = NeighborSampler(gpu, [15, 10, 5])
    batches = list(torch.randint(0, NUM_NODES, (8, 1024), generator=_gen(8)).cuda().unbind())
    assert count_syncs(lambda: sampler.sample(batches[0])) == 1
    assert count_syncs(lambda: sampler.sample_batches(batches)) == 1


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_aggregating_over_fresh_sampled_blocks_reads_nothing_back(reduce):
    """The sampler's blocks carry the CSC offsets sample_hops made, and sample_hops records
    them and the blocks' sources as checked: a forward pass over a fresh sample synchronizes
    nowhere, and equals the CPU's over the same blocks."""
    _, _, _, gpu = _graph(torch.int64, None)
    sampler = NeighborSampler(gpu, [15, 10, 5])
    x = torch.randn(NUM_NODES, 16, device="cuda")
    seeds = torch.randint(0, NUM_NODES, (2, 1024), generator=_gen(9)).cuda()

    def forward(sub):
        h = x.index_select(0, sub.nodes)
        return [aggregate(b, h[: b.num_src_nodes], reduce=reduce) for b in sub.blocks]

    forward(sampler.sample(seeds[0]))  # the kernels' first use, on another sample
    sub = sampler.sample(seeds[1])
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        outs = forward(sub)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    h = x.index_select(0, sub.nodes).cpu()
    for block, out in zip(sub.blocks, outs):
        want = aggregate(block.to("cpu"), h[: block.num_src_nodes], reduce=reduce)
        torch.testing.assert_close(out.cpu(), want)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_forward_and_backward_over_a_fresh_sampled_block_synchronize_once(reduce):
    """The backward pass transposes the block (csc_from_coo of its edges by source): the
    block's sources are known checked, the targets are counted without a read-back and the
    transposed arrays are recorded as checked, so only the check of the expanded rows reads the
    device. Each call aggregates over a fresh copy of the block, whose transpose is not cached
    yet. The gradients equal the CPU's."""
    _, _, _, gpu = _graph(torch.int64, None)
    seeds = torch.randint(0, NUM_NODES, (1024,), generator=_gen(10)).cuda()
    block = NeighborSampler(gpu, [15, 10, 5]).sample(seeds).blocks[-1]
    h = torch.randn(block.num_src_nodes, 16, generator=_gen(11))
    weight = torch.rand(block.num_edges, generator=_gen(12))

    def forward_backward(structure, h, weight):
        h, weight = h.detach().requires_grad_(), weight.detach().requires_grad_()
        aggregate(structure, h, weight, reduce=reduce).square().sum().backward()
        return h.grad, weight.grad

    h_gpu, weight_gpu = h.cuda(), weight.cuda()
    assert count_syncs(lambda: forward_backward(dataclasses.replace(block), h_gpu, weight_gpu)) == 1
    got = forward_backward(dataclasses.replace(block), h_gpu, weight_gpu)
    want = forward_backward(block.to("cpu"), h, weight)
    torch.testing.assert_close(got[0].cpu(), want[0])
    torch.testing.assert_close(got[1].cpu(), want[1])


def test_a_changed_sampled_block_is_checked_again():
    _, _, _, gpu = _graph(torch.int64, None)
    sub = NeighborSampler(gpu, [5, 5]).sample(torch.arange(0, NUM_NODES, 10, device="cuda"))
    block = sub.blocks[0]
    block.indptr[1] = block.num_edges + 1
    with pytest.raises(ValueError, match=r"^Block: indptr must never decrease"):
        aggregate(block, torch.randn(block.num_src_nodes, 4, device="cuda"))


def test_neighbor_sampler_cuda_generator():
    edge_index, _, _, gpu = _graph(torch.int64, None)
    seeds = torch.randint(0, NUM_NODES, (300,), generator=_gen(4)).cuda()
    a = neighbor_sample(
        gpu, seeds, [10, 5], generator=torch.Generator(device="cuda").manual_seed(1)
    )
    b = neighbor_sample(
        gpu, seeds, [10, 5], generator=torch.Generator(device="cuda").manual_seed(1)
    )
    c = neighbor_sample(
        gpu, seeds, [10, 5], generator=torch.Generator(device="cuda").manual_seed(2)
    )
    assert_same_subgraph(a, b)
    assert not torch.equal(a.eid, c.eid)
    check_neighbor_sample(a, edge_index, NUM_NODES, seeds, [10, 5])
    torch.cuda.manual_seed(7)
    d = neighbor_sample(gpu, seeds, [10, 5])
    torch.cuda.manual_seed(7)
    e = neighbor_sample(gpu, seeds, [10, 5])
    assert_same_subgraph(d, e)


def test_wrong_device_inputs_raise():
    _, _, cpu, gpu = _graph(torch.int64, None)
    with pytest.raises(
        ValueError, match="neighbor_sample: seeds must be on the graph's device cuda.*, got cpu"
    ):
        neighbor_sample(gpu, torch.tensor([1, 2]), [3])
    with pytest.raises(
        ValueError, match="neighbor_sample: seeds must be on the graph's device cpu, got cuda"
    ):
        neighbor_sample(cpu, torch.tensor([1, 2], device="cuda"), [3])
    with pytest.raises(ValueError, match="neighbor_sample: the generator is on cpu"):
        neighbor_sample(gpu, torch.tensor([1, 2], device="cuda"), [3], generator=_gen(0))
    with pytest.raises(ValueError, match="neighbor_sample: the generator is on cuda"):
        neighbor_sample(
            cpu, torch.tensor([1, 2]), [3], generator=torch.Generator(device="cuda").manual_seed(0)
        )
    with pytest.raises(RuntimeError, match="sample_neighbors: transits is on cpu"):
        sample_neighbors(gpu.indptr, gpu.indices, None, torch.tensor([1]), 3)
    with pytest.raises(RuntimeError, match="sample_neighbors: indices is on"):
        sample_neighbors(gpu.indptr, cpu.indices, None, torch.tensor([1], device="cuda"), 3)
    with pytest.raises(RuntimeError, match="id_map: ids is on"):
        id_map(torch.tensor([1], device="cuda"), torch.tensor([2]))
    with pytest.raises(ValueError, match="CSCGraph: indices is on"):
        CSCGraph(gpu.indptr, cpu.indices)


def test_cuda_bad_input_raises_not_crashes():
    _, _, _, gpu = _graph(torch.int64, None)
    with pytest.raises(RuntimeError, match="sample_neighbors: transits id 5000 out of range"):
        sample_neighbors(
            gpu.indptr, gpu.indices, None, torch.tensor([1, NUM_NODES], device="cuda"), 3
        )
    with pytest.raises(ValueError, match="neighbor_sample: seed id -1 out of range"):
        neighbor_sample(gpu, torch.tensor([-1], device="cuda"), [3])
    with pytest.raises(RuntimeError, match="id_map: .*negative"):
        id_map(torch.tensor([1], device="cuda"), torch.tensor([2, -4], device="cuda"))
    with pytest.raises(RuntimeError, match="id_map: prefix must hold distinct ids"):
        id_map(torch.tensor([1, 5, 1], device="cuda"), torch.tensor([2], device="cuda"))
    torch.cuda.synchronize()  # no asynchronous error left behind


@pytest.mark.parametrize("ids_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("size", [0, 1, 1000, 1_000_000])
def test_id_map_cuda_equals_cpu(size, ids_dtype):
    g = _gen(size)
    high = max(size, 1) * 2
    prefix = torch.randperm(high, generator=g)[: size // 4]
    ids = torch.randint(0, high, (size,), generator=g).to(ids_dtype)
    expected = id_map(prefix, ids)
    got = id_map(prefix.cuda(), ids.cuda())
    for name, x, y in zip(("unique", "local"), got, expected):
        assert x.is_cuda and x.dtype == torch.int64
        assert torch.equal(x.cpu(), y), f"id_map {name} differs for size {size}"
    if size <= 1000:
        ref_unique, ref_local = id_map_reference(prefix, ids)
        assert got[0].cpu().tolist() == ref_unique and got[1].cpu().tolist() == ref_local


def test_id_map_cuda_many_repeats_first_occurrence():
    """Heavy contention on few keys: the first occurrence still decides the order."""
    ids = torch.randint(0, 50, (2_000_000,), generator=_gen(9))
    ids[:3] = torch.tensor([49, 0, 49])
    got = id_map(torch.empty(0, dtype=torch.long, device="cuda"), ids.cuda())
    expected = id_map(torch.empty(0, dtype=torch.long), ids)
    assert torch.equal(got[0].cpu(), expected[0]) and torch.equal(got[1].cpu(), expected[1])
    assert got[0].cpu().tolist()[:2] == [49, 0]


@pytest.mark.parametrize("ids_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("num_prefix, num_ids", [(0, 0), (5, 0), (0, 7), (300, 10_000)])
def test_id_map_cuda_synchronizes_once(num_prefix, num_ids, ids_dtype):
    """One read-back brings the error flags and the number of new ids together."""
    prefix = torch.randperm(20_000, generator=_gen(3))[:num_prefix].cuda()
    ids = torch.randint(0, 20_000, (num_ids,), generator=_gen(4)).to(ids_dtype).cuda()
    assert count_syncs(lambda: id_map(prefix, ids)) == 1


NEGATIVE_ID = "id_map: ids and prefix must be >= 0, got a negative id"
REPEATED_PREFIX = "id_map: prefix must hold distinct ids, got a repeated id"


@pytest.mark.parametrize(
    "prefix, ids, error",
    [
        ([-1], [], NEGATIVE_ID),
        ([4, 4], [], REPEATED_PREFIX),
        ([7], [3, -1, 3, 7, -5, 2], NEGATIVE_ID),
        ([1, 5, 1], [2, 5, 9], REPEATED_PREFIX),
    ],
)
def test_id_map_cuda_raises_what_the_cpu_raises(prefix, ids, error):
    """The errors come from the flags the one read-back brings, with or without ids to map;
    the passes after the insert skip a negative id, which has no slot."""
    prefix, ids = torch.tensor(prefix), torch.tensor(ids, dtype=torch.int64)
    for device in ("cpu", "cuda"):
        with pytest.raises(RuntimeError, match=re.escape(error)):
            id_map(prefix.to(device), ids.to(device))
    torch.cuda.synchronize()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_csc_from_coo_cuda_equals_cpu(dtype):
    for edge_index, num_nodes in (
        (_tiered_edge_index(dtype), NUM_NODES),
        (random_edge_index(100, 1000, dtype=dtype, seed=5), 120),
        (torch.empty(2, 0, dtype=dtype), 0),
        (torch.empty(2, 0, dtype=dtype), 7),
    ):
        expected = csc_from_coo(edge_index[0], edge_index[1], num_nodes)
        got = csc_from_coo(edge_index[0].cuda(), edge_index[1].cuda(), num_nodes)
        for name, x, y in zip(("indptr", "indices", "perm"), got, expected):
            assert x.is_cuda and x.dtype == y.dtype, name
            assert torch.equal(x.cpu(), y), f"csc_from_coo {name} differs ({num_nodes} nodes)"
        graph = CSCGraph.from_edge_index(edge_index.cuda(), num_nodes=num_nodes)
        assert graph.device.type == "cuda"
        assert torch.equal(graph.eid.cpu(), expected[2])


def test_graph_round_trip_and_pinned_copy():
    _, _, cpu, gpu = _graph(torch.int32, torch.float64)
    back = gpu.to("cpu")
    for name in ("indptr", "indices", "eid", "weight"):
        assert getattr(gpu, name).is_cuda
        assert torch.equal(getattr(back, name), getattr(cpu, name))
    pinned = cpu.pin_memory()
    again = pinned.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    assert torch.equal(again.indices.cpu(), cpu.indices)
