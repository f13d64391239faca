"""match, overlap_counts (FastGL's Match-Reorder) and gather_rows against the pure references."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import gather_rows_reference, match_reference, overlap_counts_reference

from fastgl.ops import gather_rows, match, overlap_counts

DTYPES = st.sampled_from([torch.int32, torch.int64])
INT32_MAX = 2**31 - 1
LARGE = 100_000  # keys: several 16384-key hash shards / parallel grains on the CPU


def _high(draw, dtype):
    """Largest id: small ranges (many collisions) up to 2^62 (int64 only)."""
    highs = [5, 60, INT32_MAX] + ([2**40, 2**62] if dtype == torch.int64 else [])
    return draw(st.sampled_from(highs))


def _non_contiguous(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values as a strided view (every other element) or a column of a [n, 2] tensor."""
    if layout == "strided":
        view = t.repeat_interleave(2)[1::2]
    else:
        view = torch.stack([t, torch.zeros_like(t)], 1)[:, 0]
    assert torch.equal(view, t)
    assert view.numel() < 2 or not view.is_contiguous()
    return view


def _with_threads(threads, fn, *args):
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        return fn(*args)
    finally:
        torch.set_num_threads(previous)


# --- match ------------------------------------------------------------------------------------


@st.composite
def prev_and_next(draw):
    prev_dtype, next_dtype = draw(DTYPES), draw(DTYPES)
    high = min(_high(draw, prev_dtype), _high(draw, next_dtype))
    prev = draw(st.lists(st.integers(0, high), unique=True, max_size=60))
    candidates = st.integers(0, high) if not prev else st.sampled_from(prev) | st.integers(0, high)
    nxt = draw(st.lists(candidates, max_size=100))
    return torch.tensor(prev, dtype=prev_dtype), torch.tensor(nxt, dtype=next_dtype)


def check_match(prev: torch.Tensor, nxt: torch.Tensor) -> None:
    position = match(prev, nxt)
    assert position.dtype == torch.int64 and position.shape == nxt.shape
    assert position.tolist() == match_reference(prev, nxt)


@settings(max_examples=120)
@given(prev_and_next())
def test_match_matches_reference(case):
    check_match(*case)


@settings(max_examples=30)
@given(prev_and_next(), st.sampled_from(["strided", "column"]))
def test_match_non_contiguous(case, layout):
    prev, nxt = case
    check_match(_non_contiguous(prev, layout), _non_contiguous(nxt, layout))


def test_match_empty_and_examples():
    empty = torch.empty(0, dtype=torch.int64)
    assert match(empty, empty).tolist() == []
    assert match(torch.tensor([4, 2], dtype=torch.int32), empty).tolist() == []
    assert match(empty, torch.tensor([3, 3, 0])).tolist() == [-1, -1, -1]
    assert match(torch.tensor([5, 3, 9]), torch.tensor([3, 7, 5])).tolist() == [1, -1, 0]
    big = torch.tensor([2**62, 2**40, 0, 2**40 + 1, 2**62 - 1])
    check_match(big, torch.tensor([2**40 + 1, 1, 2**62, 2**62, 2**40 + 2, 0]))


@settings(max_examples=3)
@given(st.integers(0, 2**31 - 1), st.sampled_from([10**6, 2**40]))
def test_match_large_random(seed, high):
    gen = torch.Generator().manual_seed(seed)
    prev = torch.unique(torch.randint(0, high, (LARGE,), generator=gen))
    prev = prev[torch.randperm(prev.numel(), generator=gen)]
    nxt = torch.cat(
        [
            prev[torch.randint(0, prev.numel(), (LARGE,), generator=gen)],
            torch.randint(0, high, (LARGE // 2,), generator=gen),
        ]
    )
    nxt = nxt[torch.randperm(nxt.numel(), generator=gen)]
    check_match(prev, nxt)


# --- overlap_counts ---------------------------------------------------------------------------


@st.composite
def node_sets(draw, max_sets=64, max_size=25):
    """(nodes, offsets): up to 64 sets of distinct ids, some empty, drawn from a shared pool so
    that they overlap."""
    dtype = draw(DTYPES)
    high = _high(draw, dtype)
    pool = draw(st.lists(st.integers(0, high), unique=True, min_size=1, max_size=40))
    num_sets = draw(st.integers(0, max_sets))
    sets = [
        draw(st.lists(st.sampled_from(pool) | st.integers(0, high), unique=True, max_size=max_size))
        for _ in range(num_sets)
    ]
    nodes = [v for s in sets for v in s]
    offsets = [0]
    for s in sets:
        offsets.append(offsets[-1] + len(s))
    return torch.tensor(nodes, dtype=dtype), torch.tensor(offsets, dtype=torch.int64)


def check_overlap(nodes: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    counts = overlap_counts(nodes, offsets)
    num_sets = offsets.numel() - 1
    assert counts.dtype == torch.int64 and counts.shape == (num_sets, num_sets)
    assert counts.tolist() == overlap_counts_reference(nodes, offsets)
    return counts


@settings(max_examples=100)
@given(node_sets())
def test_overlap_counts_matches_reference(case):
    check_overlap(*case)


@settings(max_examples=20)
@given(node_sets(max_sets=8), st.sampled_from(["strided", "column"]))
def test_overlap_counts_non_contiguous(case, layout):
    nodes, offsets = case
    check_overlap(_non_contiguous(nodes, layout), _non_contiguous(offsets, layout))


def test_overlap_counts_examples():
    assert overlap_counts(torch.tensor([1, 2, 3, 2, 3, 4]), torch.tensor([0, 3, 6])).tolist() == [
        [3, 2],
        [2, 3],
    ]
    empty = torch.empty(0, dtype=torch.int64)
    assert overlap_counts(empty, torch.tensor([0])).shape == (0, 0)
    assert overlap_counts(empty, torch.zeros(4, dtype=torch.int64)).tolist() == [[0] * 3] * 3
    # 64 sets, all holding node 7 (bit 63 included), plus large ids.
    nodes = torch.tensor([7, 2**40] * 64)
    nodes[1::2] += torch.arange(64)
    offsets = torch.arange(0, 129, 2)
    expected = torch.ones(64, 64, dtype=torch.int64) + torch.eye(64, dtype=torch.int64)
    assert torch.equal(check_overlap(nodes, offsets), expected)


def _membership_counts(nodes: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Vectorized second reference for large inputs: a dense set x node membership matrix M,
    counts = M M^T (exact: float64 holds these integers)."""
    _, local = torch.unique(nodes, return_inverse=True)
    set_of = torch.repeat_interleave(torch.arange(offsets.numel() - 1), offsets.diff())
    member = torch.zeros(offsets.numel() - 1, int(local.max()) + 1, dtype=torch.float64)
    member[set_of, local] = 1
    return (member @ member.T).round().to(torch.int64)


def _large_sets(seed, num_sets=64, size=3000, high=200_000):
    gen = torch.Generator().manual_seed(seed)
    sets = [
        torch.randperm(high, generator=gen)[: torch.randint(0, size, (1,), generator=gen)]
        for _ in range(num_sets)
    ]
    sizes = torch.tensor([s.numel() for s in sets])
    return torch.cat(sets), torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])


@settings(max_examples=3)
@given(st.integers(0, 2**31 - 1))
def test_overlap_counts_large_random(seed):
    nodes, offsets = _large_sets(seed)
    assert nodes.numel() > 3 * 16384
    counts = overlap_counts(nodes, offsets)
    assert torch.equal(counts, _membership_counts(nodes, offsets))


def test_overlap_counts_large_random_against_python_reference():
    nodes, offsets = _large_sets(5, num_sets=12, size=20_000, high=60_000)
    check_overlap(nodes, offsets)


# --- thread count -----------------------------------------------------------------------------


def test_match_does_not_depend_on_thread_count():
    gen = torch.Generator().manual_seed(3)
    prev = torch.randperm(500_000, generator=gen)[:120_000]
    nxt = torch.randint(0, 500_000, (200_000,), generator=gen)
    one = _with_threads(1, match, prev, nxt)
    for threads in (2, 4):
        assert torch.equal(_with_threads(threads, match, prev, nxt), one)
    assert one.tolist() == match_reference(prev, nxt)


def test_overlap_counts_does_not_depend_on_thread_count():
    nodes, offsets = _large_sets(9, num_sets=64, size=6000, high=150_000)
    one = _with_threads(1, overlap_counts, nodes, offsets)
    for threads in (2, 4):
        assert torch.equal(_with_threads(threads, overlap_counts, nodes, offsets), one)
    assert torch.equal(one, _membership_counts(nodes, offsets))


# --- gather_rows ------------------------------------------------------------------------------

ROW_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.uint8, torch.bool]
ROW_SHAPES = [(), (1,), (3,), (7,), (2, 5), (0,), (4, 3, 2)]


def _random_rows(n, row_shape, dtype, gen):
    values = torch.randn((n,) + row_shape, generator=gen) * 50
    return values.to(dtype) if dtype.is_floating_point else values.abs().to(dtype)


@st.composite
def gather_case(draw, max_rows=30):
    """(x, index, out, out_index) with each index present or not; out_index never repeats."""
    dtype = draw(st.sampled_from(ROW_DTYPES))
    row_shape = draw(st.sampled_from(ROW_SHAPES))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    num_x = draw(st.integers(0, max_rows))
    mode = draw(st.sampled_from(["index", "out_index", "both", "neither"]))
    idx_dtype, out_idx_dtype = draw(DTYPES), draw(DTYPES)
    index = out_index = None
    if mode in ("index", "both") and num_x > 0:
        num_rows = draw(st.integers(0, 2 * max_rows))
        index = torch.randint(0, num_x, (num_rows,), generator=gen, dtype=idx_dtype)
    elif mode in ("index", "both"):
        num_rows, index = 0, torch.empty(0, dtype=idx_dtype)
    elif mode == "out_index":
        num_rows = draw(st.integers(0, num_x))
    else:
        num_rows = num_x
    num_out = num_rows + draw(st.integers(0, 5))
    if mode in ("out_index", "both"):
        out_index = torch.randperm(num_out, generator=gen)[:num_rows].to(out_idx_dtype)
    x = _random_rows(num_x, row_shape, dtype, gen)
    out = _random_rows(num_out, row_shape, dtype, gen)
    return x, index, out, out_index


def check_gather(x, index, out, out_index):
    expected = gather_rows_reference(x, index, out, out_index)
    result = gather_rows(x, index, out=out, out_index=out_index)
    assert result is out
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert torch.equal(out, expected)


@settings(max_examples=150)
@given(gather_case())
def test_gather_rows_matches_reference(case):
    check_gather(*case)


@settings(max_examples=20)
@given(gather_case(), st.sampled_from(["strided", "column"]))
def test_gather_rows_non_contiguous_indices(case, layout):
    x, index, out, out_index = case
    index = None if index is None else _non_contiguous(index, layout)
    out_index = None if out_index is None else _non_contiguous(out_index, layout)
    check_gather(x, index, out, out_index)


def test_gather_rows_without_out_allocates():
    x = torch.arange(6.0).view(3, 2)
    assert gather_rows(x, torch.tensor([2, 0])).tolist() == [[4.0, 5.0], [0.0, 1.0]]
    labels = torch.tensor([10, 11, 12, 13])
    got = gather_rows(labels, torch.tensor([3, 3, 0], dtype=torch.int32))
    assert got.tolist() == [13, 13, 10] and got.dtype == labels.dtype
    empty = gather_rows(torch.randn(4, 2, 3), torch.empty(0, dtype=torch.long))
    assert empty.shape == (0, 2, 3)
    with pytest.raises(ValueError, match="gather_rows: give index or out"):
        gather_rows(x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_gather_rows_large(dtype):
    """Many rows (several parallel grains) and wide rows (a few rows per grain)."""
    gen = torch.Generator().manual_seed(4)
    for num_x, row_shape in [(LARGE, (3,)), (3000, (512,))]:
        x = _random_rows(num_x, row_shape, dtype, gen)
        index = torch.randint(0, num_x, (2 * num_x,), generator=gen)
        out_index = torch.randperm(3 * num_x, generator=gen)[: 2 * num_x]
        out = torch.zeros((3 * num_x,) + row_shape, dtype=dtype)
        check_gather(x, index, out, out_index)
        assert torch.equal(gather_rows(x, index), x[index])


# --- bad input --------------------------------------------------------------------------------

L = torch.long


@pytest.mark.parametrize(
    "prev, nxt, message",
    [
        (torch.tensor([1, 2, 1]), torch.tensor([3]), "match: prev_nodes must hold distinct ids"),
        (torch.tensor([7, 7]), torch.empty(0, dtype=L), "match: prev_nodes must hold distinct ids"),
        (torch.tensor([1, -2]), torch.tensor([3]), "match: node ids must be >= 0"),
        (torch.tensor([-1]), torch.tensor([3]), "match: node ids must be >= 0"),
        (torch.tensor([1, 2]), torch.tensor([3, -1]), "match: node ids must be >= 0"),
        (torch.tensor([1.0]), torch.tensor([3]), "match: prev_nodes must be int32 or int64"),
        (torch.tensor([1]), torch.tensor([True]), "match: next_nodes must be int32 or int64"),
        (torch.tensor([[1, 2]]), torch.tensor([3]), "match: prev_nodes must be 1-D"),
        (torch.tensor([1]), torch.tensor(3), "match: next_nodes must be 1-D"),
    ],
)
def test_match_bad_input(prev, nxt, message):
    with pytest.raises(RuntimeError, match=message):
        match(prev, nxt)


def test_match_duplicate_detected_in_large_input():
    prev = torch.randperm(300_000)
    prev[250_000] = prev[10]
    with pytest.raises(RuntimeError, match="match: prev_nodes must hold distinct ids"):
        _with_threads(2, match, prev, torch.arange(10))


def _offsets(*values):
    return torch.tensor(values, dtype=torch.int64)


@pytest.mark.parametrize(
    "nodes, offsets, message",
    [
        (
            torch.tensor([1, 2, 1]),
            _offsets(0, 3),
            "overlap_counts: every node set must hold distinct",
        ),
        (torch.tensor([1, 2, 3, 3]), _offsets(0, 2, 4), "every node set must hold distinct ids"),
        (torch.tensor([1, -2]), _offsets(0, 2), "overlap_counts: node ids must be >= 0"),
        (torch.arange(65), torch.arange(66), "overlap_counts: offsets must hold 1 to 65 entries"),
        (torch.arange(3), torch.empty(0, dtype=L), "overlap_counts: offsets must hold 1 to 65"),
        (torch.arange(3), _offsets(1, 3), r"overlap_counts: offsets\[0\] must be 0, got 1"),
        (torch.arange(3), _offsets(0, 2, 1, 3), "overlap_counts: offsets must be non-decreasing"),
        (torch.arange(3), _offsets(0, 2), r"offsets must end at the number of nodes \(3\), got 2"),
        (torch.arange(3), _offsets(0, 4), r"offsets must end at the number of nodes \(3\), got 4"),
        (
            torch.arange(3),
            torch.tensor([0, 3], dtype=torch.int32),
            "overlap_counts: offsets must be",
        ),
        (torch.arange(3), _offsets(0, 3).view(1, 2), "overlap_counts: offsets must be 1-D"),
        (torch.tensor([1.0, 2.0]), _offsets(0, 2), "overlap_counts: nodes must be int32 or int64"),
    ],
)
def test_overlap_counts_bad_input(nodes, offsets, message):
    with pytest.raises(RuntimeError, match=message):
        overlap_counts(nodes, offsets)


def test_overlap_counts_node_in_several_sets_is_fine_but_twice_in_one_is_not():
    assert overlap_counts(torch.tensor([4, 4, 4]), _offsets(0, 1, 2, 3)).tolist() == [[1] * 3] * 3
    nodes = torch.randperm(200_000)
    nodes[150_000] = nodes[120_000]  # both in the last set, far apart
    with pytest.raises(RuntimeError, match="every node set must hold distinct ids"):
        _with_threads(2, overlap_counts, nodes, _offsets(0, 100_000, 200_000))


X = torch.arange(12.0).view(4, 3)


@pytest.mark.parametrize(
    "x, index, out, out_index, message",
    [
        (
            X,
            torch.tensor([0]),
            torch.zeros(1, 3, dtype=torch.float64),
            None,
            r"gather_rows: out must have the dtype of x \(Float\), got Double",
        ),
        (X, torch.tensor([0]), torch.zeros(1, 4), None, "gather_rows: out must have the row shape"),
        (
            X,
            torch.tensor([0]),
            torch.zeros(1, 3, 1),
            None,
            "gather_rows: out must have the row shape",
        ),
        (X, torch.tensor([0]), torch.zeros(1), None, "gather_rows: out must have the row shape"),
        (
            X.t(),
            torch.tensor([0]),
            torch.zeros(1, 4),
            None,
            "gather_rows: x and out must be contiguous",
        ),
        (X[:, :2], torch.tensor([0]), torch.zeros(1, 2), None, "x and out must be contiguous"),
        (X, torch.tensor([0]), torch.zeros(3, 2).t(), None, "x and out must be contiguous"),
        (
            X,
            torch.tensor([0, 4]),
            torch.zeros(2, 3),
            None,
            "gather_rows: index holds row 4, out of range for 4 rows",
        ),
        (
            X,
            torch.tensor([0, -1]),
            torch.zeros(2, 3),
            None,
            "gather_rows: index holds row -1, out of range for 4 rows",
        ),
        (
            X,
            torch.tensor([0, 1]),
            torch.zeros(2, 3),
            torch.tensor([0, 2]),
            "gather_rows: out_index holds row 2, out of range for 2 rows",
        ),
        (X, None, torch.zeros(5, 3), torch.tensor([-3]), "out_index holds row -3"),
        (
            X,
            torch.tensor([0, 1]),
            torch.zeros(5, 3),
            torch.tensor([0, 1, 2]),
            "gather_rows: index and out_index must have the same length, got 2 and 3",
        ),
        (X, None, torch.zeros(9, 3), torch.arange(5), "without index, x must have at least 5 rows"),
        (X, None, torch.zeros(3, 3), None, "gather_rows: out must have at least 4 rows, got 3"),
        (X, torch.tensor([0, 1, 2]), torch.zeros(2, 3), None, "out must have at least 3 rows"),
        (torch.tensor(1.0), None, torch.zeros(1), None, "x must have at least one dimension"),
        (X, torch.tensor([0]), torch.tensor(1.0), None, "out must have at least one dimension"),
        (
            X,
            torch.tensor([0.0]),
            torch.zeros(1, 3),
            None,
            "gather_rows: index must be int32 or int64",
        ),
        (X, torch.tensor([[0]]), torch.zeros(1, 3), None, "gather_rows: index must be 1-D"),
        (X, None, torch.zeros(1, 3), torch.tensor([True]), "out_index must be int32 or int64"),
    ],
)
def test_gather_rows_bad_input(x, index, out, out_index, message):
    before = out.clone()
    with pytest.raises(RuntimeError, match=message):
        gather_rows(x, index, out=out, out_index=out_index)
    assert torch.equal(out, before)  # checked before anything is written


def test_gather_rows_rejects_out_sharing_memory_with_x():
    x = torch.randn(4, 3)
    with pytest.raises(RuntimeError, match="gather_rows: out shares memory with x"):
        gather_rows(x, torch.tensor([1, 0]), out=x[2:])


@pytest.mark.parametrize("side", ["index", "out_index"])
def test_gather_rows_rejects_row_ids_sharing_memory_with_out(side):
    # int64 rows written over the row ids still to be read: a crash before this was refused.
    x = torch.tensor([0, 2**40])
    out = torch.tensor([1, 0])
    index = out if side == "index" else torch.tensor([1, 0])
    out_index = out if side == "out_index" else torch.tensor([1, 0])
    with pytest.raises(RuntimeError, match=f"gather_rows: out shares memory with {side}"):
        gather_rows(x, index, out=out, out_index=out_index)
