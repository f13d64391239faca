"""id_map (FastGL's Fused-Map) against the pure Python reference."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import id_map_reference

from fastgl.ops import id_map

DTYPES = st.sampled_from([torch.int32, torch.int64])


def check(prefix: torch.Tensor, ids: torch.Tensor) -> None:
    unique, local = id_map(prefix, ids)
    ref_unique, ref_local = id_map_reference(prefix, ids)
    assert unique.dtype == torch.int64 and local.dtype == torch.int64
    assert unique.tolist() == ref_unique
    assert local.tolist() == ref_local
    assert local.shape == ids.shape
    if ids.numel():
        assert torch.equal(unique[local], ids.to(torch.int64))


@st.composite
def prefix_and_ids(draw, max_id=200):
    """A prefix of distinct ids and ids with repeats that partly overlap it."""
    high = draw(st.sampled_from([5, 50, max_id, 2**31 - 1]))
    prefix = draw(st.lists(st.integers(0, high), unique=True, max_size=40))
    pool = prefix + draw(st.lists(st.integers(0, high), max_size=20))
    if pool:
        ids = draw(st.lists(st.sampled_from(pool) | st.integers(0, high), max_size=120))
    else:
        ids = draw(st.lists(st.integers(0, high), max_size=120))
    return prefix, ids


@settings(max_examples=150, deadline=None)
@given(prefix_and_ids(), DTYPES, DTYPES)
def test_matches_reference(case, prefix_dtype, ids_dtype):
    prefix, ids = case
    check(torch.tensor(prefix, dtype=prefix_dtype), torch.tensor(ids, dtype=ids_dtype))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=80), DTYPES)
def test_empty_prefix(ids, dtype):
    ids = torch.tensor(ids, dtype=dtype)
    unique, local = id_map(torch.empty(0, dtype=torch.int64), ids)
    check(torch.empty(0, dtype=dtype), ids)
    # With no prefix, unique is the first-occurrence deduplication of ids.
    expected = []
    for v in ids.tolist():
        if v not in expected:
            expected.append(v)
    assert unique.tolist() == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=50), DTYPES)
def test_empty_ids(prefix, dtype):
    prefix = torch.tensor(prefix, dtype=dtype)
    unique, local = id_map(prefix, torch.empty(0, dtype=dtype))
    assert torch.equal(unique, prefix.to(torch.int64))
    assert local.numel() == 0 and local.dtype == torch.int64


def test_both_empty():
    unique, local = id_map(torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int32))
    assert unique.numel() == 0 and local.numel() == 0


def test_docstring_example():
    unique, local = id_map(torch.tensor([5, 3]), torch.tensor([3, 7, 7, 5]))
    assert unique.tolist() == [5, 3, 7]
    assert local.tolist() == [1, 2, 2, 0]


@settings(max_examples=30, deadline=None)
@given(prefix_and_ids(), st.sampled_from(["strided", "transposed"]))
def test_non_contiguous(case, layout):
    prefix, ids = case
    prefix, ids = torch.tensor(prefix, dtype=torch.int64), torch.tensor(ids, dtype=torch.int64)
    if layout == "strided":
        prefix_view, ids_view = prefix.repeat_interleave(2)[::2], ids.repeat_interleave(3)[1::3]
    else:  # a column of a [n, 2] tensor
        prefix_view = torch.stack([torch.zeros_like(prefix), prefix], 1)[:, 1]
        ids_view = torch.stack([ids, torch.zeros_like(ids)], 1)[:, 0]
    assert torch.equal(prefix_view, prefix) and torch.equal(ids_view, ids)
    if ids.numel() > 1:
        assert not ids_view.is_contiguous()
    check(prefix_view, ids_view)


def test_large_ids_and_dense_ranges():
    """Ids up to 2^62 (hashing must not collide them) and a dense range (no clustering)."""
    big = torch.tensor([2**62, 2**62 + 1, 2**40, 0, 2**62, 2**40 + 7, 1])
    check(torch.tensor([2**40 + 7]), big)
    dense = torch.arange(100_000).flip(0).repeat(2)
    check(torch.arange(0, 100_000, 3), dense)
    check(
        torch.tensor([2**31 - 1], dtype=torch.int32),
        torch.tensor([0, 2**31 - 1, 5, 0], dtype=torch.int32),
    )


def test_large_random():
    gen = torch.Generator().manual_seed(0)
    prefix = torch.randperm(1_000_000, generator=gen)[:50_000]
    ids = torch.randint(0, 1_000_000, (300_000,), generator=gen)
    check(prefix, ids)


def test_all_ids_in_prefix():
    prefix = torch.tensor([9, 4, 7, 1])
    unique, local = id_map(prefix, torch.tensor([1, 1, 9, 7, 4]))
    assert torch.equal(unique, prefix)
    assert local.tolist() == [3, 3, 0, 2, 1]


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix, ids, match",
    [
        (torch.tensor([1, 2]), torch.tensor([3, -1, 4]), "id_map: .*negative"),
        (torch.tensor([1, -5]), torch.tensor([3]), "id_map: .*negative"),
        (torch.tensor([-1]), torch.empty(0, dtype=torch.long), "id_map: .*negative"),
        (torch.tensor([1, 2, 1]), torch.tensor([3]), "id_map: prefix must hold distinct ids"),
        (
            torch.tensor([4, 4]),
            torch.empty(0, dtype=torch.long),
            "id_map: prefix must hold distinct",
        ),
        (torch.tensor([1.0, 2.0]), torch.tensor([3]), "id_map: prefix must be int32 or int64"),
        (torch.tensor([1, 2]), torch.tensor([3.0]), "id_map: ids must be int32 or int64"),
        (torch.tensor([1, 2]), torch.tensor([True]), "id_map: ids must be int32 or int64"),
        (torch.tensor([[1, 2]]), torch.tensor([3]), "id_map: prefix must be 1-D"),
        (torch.tensor([1, 2]), torch.tensor([[3, 4]]), "id_map: ids must be 1-D"),
        (torch.tensor([1, 2]), torch.tensor(3), "id_map: ids must be 1-D"),
    ],
)
def test_bad_input(prefix, ids, match):
    with pytest.raises(RuntimeError, match=match):
        id_map(prefix, ids)


@pytest.mark.parametrize("threads", [1, 3, 4])
def test_result_does_not_depend_on_thread_count(threads):
    """Large inputs are split into hash shards, one per thread; the output must not change."""
    gen = torch.Generator().manual_seed(1)
    prefix = torch.randperm(400_000, generator=gen)[:70_000]
    ids = torch.randint(0, 400_000, (250_000,), generator=gen)
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        unique, local = id_map(prefix, ids)
    finally:
        torch.set_num_threads(previous)
    expected_unique, expected_local = id_map_reference(prefix, ids)
    assert unique.tolist() == expected_unique
    assert local.tolist() == expected_local


def test_duplicate_prefix_detected_in_large_input():
    prefix = torch.arange(200_000)
    prefix[150_000] = 3
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(4)
        with pytest.raises(RuntimeError, match="id_map: prefix must hold distinct ids"):
            id_map(prefix, torch.arange(10))
    finally:
        torch.set_num_threads(previous)
