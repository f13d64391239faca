"""NextDoor's transit grouping and tiers (csrc/sampling/transit_schedule.h), which the CUDA
sampling engine schedules its pairs with, checked against a Python reference on the CPU."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import transit_schedule_reference


def schedule(transits, min_block_pairs, chunk_size):
    return torch.ops.fastgl._transit_schedule(
        torch.tensor(transits, dtype=torch.int64), min_block_pairs, chunk_size
    )


@settings(max_examples=150)
@given(st.lists(st.integers(0, 12), max_size=200), st.integers(1, 40), st.integers(1, 16))
def test_matches_reference(transits, min_block_pairs, chunk_size):
    order, seg_transit, seg_start, thread_tier, block_segment, block_chunk = schedule(
        transits, min_block_pairs, chunk_size
    )
    exp_order, exp_segments, exp_starts, exp_thread, exp_items = transit_schedule_reference(
        transits, min_block_pairs, chunk_size
    )
    assert order.tolist() == exp_order
    assert seg_transit.tolist() == exp_segments
    assert seg_start.tolist() == exp_starts
    assert thread_tier.tolist() == exp_thread
    assert list(zip(block_segment.tolist(), block_chunk.tolist())) == exp_items


def test_every_pair_is_scheduled_exactly_once():
    """The two tiers together cover each pair once: thread tier by position, block tier by chunk."""
    gen = torch.Generator().manual_seed(0)
    transits = torch.cat([torch.full((700,), 3), torch.randint(0, 50, (300,), generator=gen)])
    order, _, seg_start, thread_tier, block_segment, block_chunk = (
        torch.ops.fastgl._transit_schedule(transits, 32, 256)
    )
    covered = thread_tier.tolist()
    for segment, chunk in zip(block_segment.tolist(), block_chunk.tolist()):
        first = seg_start[segment].item() + chunk * 256
        covered += range(first, min(first + 256, seg_start[segment + 1].item()))
    assert sorted(covered) == list(range(transits.numel()))
    assert block_chunk.tolist().count(2) == 1  # 700 pairs on transit 3: chunks 0, 1, 2


def test_empty_and_bad_input():
    outputs = schedule([], 32, 256)
    assert [t.numel() for t in outputs] == [0, 0, 1, 0, 0, 0]
    with pytest.raises(RuntimeError, match="_transit_schedule: min_block_pairs"):
        schedule([1, 2], 0, 256)
    with pytest.raises(RuntimeError, match="_transit_schedule: transits must be"):
        torch.ops.fastgl._transit_schedule(torch.tensor([1, 2], dtype=torch.int32), 32, 256)
