"""sample_ranges on the GPU: the same sample as the CPU kernel, pair for pair (both draw through
RangesView and neighbor_draw.h with the same Philox key and streams), the same draws as
sample_neighbors on the GPU, and the same errors."""

import itertools

import pytest
import torch
from reference import check_range_sample, random_edge_index, random_weights

from fastgl import CSCGraph
from fastgl.ops import sample_neighbors, sample_ranges


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _cases():
    starts = torch.randint(0, 20_000, (30_000,), generator=_gen(1))
    ends = starts + torch.randint(0, 50, (30_000,), generator=_gen(2))
    ends[::97] += 3000  # a few long ranges (takes-all of 3000 slots, draws from wide ranges)
    fanouts = torch.randint(-1, 12, (30_000,), generator=_gen(3))
    # Fanouts past a half warp: the lanes of an unweighted pair take more than one draw each.
    fanouts[::7] = torch.randint(12, 41, (fanouts[::7].numel(),), generator=_gen(8))
    return starts, ends, fanouts


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("weight_dtype", [None, torch.float32, torch.float64])
def test_cuda_equals_cpu(replace, weight_dtype):
    starts, ends, fanouts = _cases()
    weight = None
    if weight_dtype is not None:
        weight = random_weights(int(ends.max()) + 1, seed=4, dtype=weight_dtype)
    for seed in (0, 77, -(2**62)):
        expected = sample_ranges(starts, ends, weight, fanouts, replace, seed)
        got = sample_ranges(
            starts.cuda(),
            ends.cuda(),
            None if weight is None else weight.cuda(),
            fanouts.cuda(),
            replace,
            seed,
        )
        assert got[0].is_cuda and got[1].is_cuda
        assert torch.equal(got[0].cpu(), expected[0])
        assert torch.equal(got[1].cpu(), expected[1])
    check_range_sample(*expected, starts, ends, fanouts, replace, weight)


@pytest.mark.parametrize("replace, weighted", list(itertools.product([False, True], repeat=2)))
def test_cuda_rows_as_ranges_draw_what_sample_neighbors_draws(replace, weighted):
    edge_index = random_edge_index(2000, 60_000, seed=5).cuda()
    weight = random_weights(60_000, seed=6).cuda() if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=2000, edge_weight=weight)
    transits = torch.randint(0, 2000, (5000,), generator=_gen(7)).cuda()
    for fanout in (-1, 3, 25):
        ptr, _, edge_pos = sample_neighbors(
            graph.indptr, graph.indices, graph.weight, transits, fanout, replace, 11
        )
        got_ptr, slots = sample_ranges(
            graph.indptr[transits],
            graph.indptr[transits + 1],
            graph.weight,
            torch.full_like(transits, fanout),
            replace,
            11,
        )
        assert torch.equal(got_ptr, ptr) and torch.equal(slots, edge_pos)


def test_cuda_empty_input():
    empty = torch.empty(0, dtype=torch.int64, device="cuda")
    ptr, slots = sample_ranges(empty, empty, None, empty, False, 0)
    assert ptr.is_cuda and ptr.tolist() == [0] and slots.numel() == 0
    ptr, slots = sample_ranges(empty[:0] + 3, empty + 3, None, empty, True, 0)
    assert ptr.tolist() == [0]
    one = torch.tensor([4], device="cuda")
    ptr, slots = sample_ranges(one, one, None, torch.tensor([5], device="cuda"), True, 0)
    assert ptr.tolist() == [0, 0] and slots.numel() == 0


def test_cuda_bad_input_names_the_first_bad_pair():
    starts = torch.zeros(100_000, dtype=torch.int64)
    ends = torch.full_like(starts, 5)
    ends[[70_000, 30_000, 90_000]] = -1
    fanouts = torch.ones_like(starts)
    for device in ("cpu", "cuda"):
        with pytest.raises(RuntimeError, match=r"ends\[30000\] = -1 is below starts\[30000\] = 0"):
            sample_ranges(starts.to(device), ends.to(device), None, fanouts.to(device), False, 0)
    weight = torch.ones(5, device="cuda")
    weight[2] = float("nan")
    with pytest.raises(RuntimeError, match=r"sample_ranges: weight must be finite.*\(pair 0"):
        sample_ranges(
            starts[:3].cuda(), torch.full((3,), 5).cuda(), weight, fanouts[:3].cuda(), False, 0
        )
    with pytest.raises(RuntimeError, match="sample_ranges: ends is on cpu but starts is on cuda"):
        sample_ranges(starts.cuda(), ends, None, fanouts.cuda(), False, 0)
    with pytest.raises(RuntimeError, match=r"sample_ranges: ends\[0\] = 9 is past the end"):
        sample_ranges(
            torch.tensor([0]).cuda(),
            torch.tensor([9]).cuda(),
            weight,
            torch.tensor([1]).cuda(),
            False,
            0,
        )
    # A failed call leaves the device usable.
    ptr, _ = sample_ranges(
        starts[:3].cuda(), starts[:3].cuda() + 2, None, fanouts[:3].cuda(), False, 0
    )
    assert ptr.tolist() == [0, 1, 2, 3]
