"""CUDA match / overlap_counts against the CPU kernels (exactly equal), and CUDA gather_rows:
device to device, and the zero-copy (UVA) gather from pinned host memory for every word width
the kernel picks (16/8/4/2/1 bytes, from the row size and the base addresses)."""

import pytest
import torch
from reference import gather_rows_reference, match_reference, overlap_counts_reference

from fastgl.ops import gather_rows, match, overlap_counts


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _no_error_left_behind():
    """An illegal memory access would be sticky: any later CUDA work would fail."""
    torch.cuda.synchronize()
    assert torch.arange(4, device="cuda").sum().item() == 6


def _random_sets(seed, num_sets, size, high):
    gen = _gen(seed)
    sets = [
        torch.randperm(high, generator=gen)[: torch.randint(0, size + 1, (1,), generator=gen)]
        for _ in range(num_sets)
    ]
    sizes = torch.tensor([s.numel() for s in sets], dtype=torch.int64)
    nodes = torch.cat(sets) if sets else torch.empty(0, dtype=torch.int64)
    return nodes, torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])


# --- match ------------------------------------------------------------------------------------


@pytest.mark.parametrize("prev_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("next_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize(
    "num_prev, num_next, high",
    [
        (0, 0, 10),
        (0, 50, 10),
        (40, 0, 100),
        (30, 200, 60),
        (50_000, 300_000, 1_000_000),
        (1_000_000, 1_000_000, 2**31 - 1),
    ],
)
def test_match_cuda_equals_cpu(prev_dtype, next_dtype, num_prev, num_next, high):
    gen = _gen(num_prev + num_next)
    prev = torch.unique(torch.randint(0, high, (num_prev,), generator=gen))
    prev = prev[torch.randperm(prev.numel(), generator=gen)].to(prev_dtype)
    pool = torch.cat([prev.long(), torch.randint(0, high, (max(1, num_next // 3),), generator=gen)])
    nxt = pool[torch.randint(0, pool.numel(), (num_next,), generator=gen)].to(next_dtype)
    expected = match(prev, nxt)
    got = match(prev.cuda(), nxt.cuda())
    assert got.is_cuda and got.dtype == torch.int64
    assert torch.equal(got.cpu(), expected)
    if num_next <= 1000:
        assert expected.tolist() == match_reference(prev, nxt)


def test_match_cuda_large_ids_and_non_contiguous():
    prev = torch.tensor([2**62, 2**40, 0, 2**40 + 1, 2**62 - 1], device="cuda")
    nxt = torch.tensor([2**40 + 1, 1, 2**62, 2**62, 2**40 + 2, 0], device="cuda")
    assert match(prev, nxt).tolist() == [3, -1, 0, 0, -1, 2]
    strided_prev = prev.repeat_interleave(2)[::2]
    strided_next = torch.stack([nxt, nxt], 1)[:, 1]
    assert not strided_next.is_contiguous()
    assert match(strided_prev, strided_next).tolist() == [3, -1, 0, 0, -1, 2]


@pytest.mark.parametrize(
    "prev, nxt, message",
    [
        ([1, 2, 1], [3], "match: prev_nodes must hold distinct ids"),
        ([1, -2], [3], "match: node ids must be >= 0"),
        ([1, 2], [3, -1], "match: node ids must be >= 0"),
    ],
)
def test_match_cuda_bad_input(prev, nxt, message):
    with pytest.raises(RuntimeError, match=message):
        match(torch.tensor(prev, device="cuda"), torch.tensor(nxt, device="cuda"))
    _no_error_left_behind()


def test_match_cuda_duplicate_in_large_input():
    prev = torch.randperm(1_000_000, device="cuda")
    prev[900_000] = prev[5]
    with pytest.raises(RuntimeError, match="match: prev_nodes must hold distinct ids"):
        match(prev, torch.arange(10, device="cuda"))
    _no_error_left_behind()


def test_match_devices_mismatched():
    with pytest.raises(RuntimeError, match="match: next_nodes is on cpu but prev_nodes is on cuda"):
        match(torch.tensor([1, 2], device="cuda"), torch.tensor([2]))
    with pytest.raises(
        RuntimeError, match="match: next_nodes is on cuda:0 but prev_nodes is on cpu"
    ):
        match(torch.tensor([1, 2]), torch.tensor([2], device="cuda"))


# --- overlap_counts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "num_sets, size, high",
    [
        (0, 0, 10),
        (1, 30, 40),
        (5, 0, 10),
        (7, 40, 60),
        (64, 30, 100),
        (64, 3000, 50_000),
        (64, 31_250, 200_000),  # about 1M nodes
    ],
)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_overlap_counts_cuda_equals_cpu(num_sets, size, high, dtype):
    nodes, offsets = _random_sets(num_sets + size, num_sets, size, high)
    nodes = nodes.to(dtype)
    expected = overlap_counts(nodes, offsets)
    got = overlap_counts(nodes.cuda(), offsets.cuda())
    assert got.is_cuda and got.dtype == torch.int64 and got.shape == (num_sets, num_sets)
    assert torch.equal(got.cpu(), expected)
    assert torch.equal(overlap_counts(nodes.cuda(), offsets.cuda()), got)  # deterministic
    if nodes.numel() <= 2000:
        assert expected.tolist() == overlap_counts_reference(nodes, offsets)


def test_overlap_counts_cuda_every_bit_and_large_ids():
    """64 sets all holding one node: the count uses bit 63 too."""
    nodes = torch.tensor([7, 2**40] * 64)
    nodes[1::2] += torch.arange(64)
    offsets = torch.arange(0, 129, 2)
    expected = torch.ones(64, 64, dtype=torch.int64) + torch.eye(64, dtype=torch.int64)
    assert torch.equal(overlap_counts(nodes.cuda(), offsets.cuda()).cpu(), expected)
    strided = offsets.cuda().repeat_interleave(2)[::2]
    assert torch.equal(overlap_counts(nodes.cuda(), strided).cpu(), expected)


@pytest.mark.parametrize(
    "nodes, offsets, message",
    [
        ([1, 2, 1], [0, 3], "overlap_counts: every node set must hold distinct ids"),
        ([1, -2], [0, 2], "overlap_counts: node ids must be >= 0"),
        ([1, 2, 3], [0, 2, 1, 3], "overlap_counts: offsets must be non-decreasing"),
        ([1, 2, 3], [1, 3], r"overlap_counts: offsets\[0\] must be 0"),
        ([1, 2, 3], [0, 2], "overlap_counts: offsets must end at the number of nodes"),
        (list(range(65)), list(range(66)), "overlap_counts: offsets must hold 1 to 65 entries"),
    ],
)
def test_overlap_counts_cuda_bad_input(nodes, offsets, message):
    with pytest.raises(RuntimeError, match=message):
        overlap_counts(torch.tensor(nodes, device="cuda"), torch.tensor(offsets, device="cuda"))
    _no_error_left_behind()


def test_overlap_counts_devices_mismatched():
    with pytest.raises(
        RuntimeError, match="overlap_counts: offsets is on cpu but nodes is on cuda"
    ):
        overlap_counts(torch.tensor([1, 2], device="cuda"), torch.tensor([0, 2]))


# --- gather_rows ------------------------------------------------------------------------------


def _rows(n, row_shape, dtype, seed):
    values = torch.randn((n,) + tuple(row_shape), generator=_gen(seed)) * 50
    return values.to(dtype) if dtype.is_floating_point else values.abs().to(dtype)


def _indices(num_x, num_rows, num_out, seed, device):
    gen = _gen(seed)
    index = torch.randint(0, num_x, (num_rows,), generator=gen)
    out_index = torch.randperm(num_out, generator=gen)[:num_rows]
    return index.to(device), out_index.to(device)


# (dtype, row shape): 16, 8, 4, 2 and 1-byte words; 6 bytes (fp16 x 3) and 3 bytes (uint8 x 3)
# force 2- and 1-byte words; 1-D x (labels) and 3-D rows.
ROWS = [
    (torch.float32, (8,)),
    (torch.float32, (3,)),
    (torch.float16, (4,)),
    (torch.bfloat16, (5,)),
    (torch.float16, (3,)),
    (torch.uint8, (3,)),
    (torch.uint8, ()),
    (torch.int64, ()),
    (torch.bfloat16, (2, 3, 4)),
    (torch.float32, (0,)),
]


@pytest.mark.parametrize("dtype, row_shape", ROWS)
@pytest.mark.parametrize("source", ["device", "pinned"])
@pytest.mark.parametrize("mode", ["index", "out_index", "both", "neither"])
def test_gather_rows_cuda(dtype, row_shape, source, mode):
    num_x, num_rows, num_out = 5000, 3000, 4000
    x = _rows(num_x, row_shape, dtype, seed=1)
    x = x.cuda() if source == "device" else x.pin_memory()
    index, out_index = _indices(num_x, num_rows, num_out, 2, "cuda")
    if mode == "index":
        out_index = None
    elif mode == "out_index":
        index = None
    elif mode == "neither":
        index = out_index = None
        num_out = num_x
    out = _rows(num_out, row_shape, dtype, seed=3).cuda()
    expected = gather_rows_reference(x, index, out, out_index)
    assert gather_rows(x, index, out=out, out_index=out_index) is out
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), expected)


def _at_offset(num_bytes, offset_bytes, device, seed):
    """A byte buffer whose first byte sits `offset_bytes` past a 16-byte boundary, and the whole
    allocation (so a test can check the bytes before it are untouched)."""
    flat = torch.randint(0, 256, (16 + num_bytes,), dtype=torch.uint8, generator=_gen(seed))
    flat = flat.cuda() if device == "cuda" else flat.pin_memory()
    skip = (offset_bytes - flat.data_ptr()) % 16
    view = flat[skip : skip + num_bytes]
    assert view.data_ptr() % 16 == offset_bytes % 16
    return view, flat[:skip]


@pytest.mark.parametrize("offset_bytes", [0, 1, 2, 4, 8])
@pytest.mark.parametrize("misaligned", ["x", "out"])
@pytest.mark.parametrize("source", ["device", "pinned"])
def test_gather_rows_cuda_misaligned_base(offset_bytes, misaligned, source):
    """Rows of 16 bytes where only x's, or only out's, base address is 1/2/4/8-byte aligned: the
    copy narrows its words to the worse of the two."""
    x_bytes, _ = _at_offset(
        700 * 16,
        offset_bytes if misaligned == "x" else 0,
        "cuda" if source == "device" else "pinned",
        seed=4,
    )
    out_bytes, before_out = _at_offset(
        600 * 16, offset_bytes if misaligned == "out" else 0, "cuda", seed=5
    )
    x, out = x_bytes.view(700, 16), out_bytes.view(600, 16)
    guard = before_out.clone()
    index, out_index = _indices(700, 500, 600, 5, "cuda")
    expected = gather_rows_reference(x, index, out, out_index)
    gather_rows(x, index, out=out, out_index=out_index)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), expected)
    assert torch.equal(before_out, guard)


def test_gather_rows_cuda_allocates_on_index_device():
    x = torch.arange(12.0).view(4, 3).pin_memory()
    got = gather_rows(x, torch.tensor([3, 0, 3], device="cuda"))
    assert got.is_cuda and torch.equal(got.cpu(), x[[3, 0, 3]])
    labels = torch.arange(100, 110, device="cuda")
    got = gather_rows(labels, torch.tensor([9, 1], dtype=torch.int32, device="cuda"))
    assert got.tolist() == [109, 101]


def test_gather_rows_cuda_large():
    x = _rows(200_000, (33,), torch.float16, seed=6).pin_memory()
    index = torch.randint(0, 200_000, (1_000_000,), generator=_gen(7)).cuda()
    got = gather_rows(x, index)
    assert torch.equal(got.cpu(), x[index.cpu()])


def test_gather_rows_unpinned_host_x_with_cuda_out():
    x = torch.randn(4, 3)
    out = torch.zeros(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match="gather_rows: x is on cpu and not pinned"):
        gather_rows(x, torch.tensor([0, 1], device="cuda"), out=out)


@pytest.mark.parametrize(
    "case", ["index_on_cpu", "out_index_on_cpu", "index_cuda_out_cpu", "x_cuda_out_cpu"]
)
def test_gather_rows_cuda_devices_mismatched(case):
    x = torch.randn(4, 3, device="cuda")
    index, out, out_index = (
        torch.tensor([0, 1], device="cuda"),
        torch.zeros(2, 3, device="cuda"),
        None,
    )
    message = "gather_rows: index is on cpu but out is on cuda"
    if case == "index_on_cpu":
        index = index.cpu()
    elif case == "out_index_on_cpu":
        out_index = torch.tensor([1, 0])
        message = "gather_rows: out_index is on cpu but out is on cuda"
    elif case == "index_cuda_out_cpu":
        # The row ids are checked against out first: they must live where out does.
        out = out.cpu()
        message = "gather_rows: index is on cuda:0 but out is on cpu; move them to the same"
    else:
        index, out = None, torch.zeros(4, 3)  # every row of x, into a host tensor
        message = "gather_rows: out must be on the GPU when index or x is, got cpu"
    with pytest.raises(RuntimeError, match=message):
        gather_rows(x, index, out=out, out_index=out_index)


@pytest.mark.parametrize("source", ["device", "pinned"])
@pytest.mark.parametrize(
    "index, out_index, message",
    [
        ([0, 4], None, "gather_rows: index holds row 4, out of range for 4 rows"),
        ([0, 2**40], None, "gather_rows: index holds row 1099511627776, out of range"),
        ([-1, 2], None, "gather_rows: index holds row -1"),
        ([0, 1], [0, 2], "gather_rows: out_index holds row 2, out of range for 2 rows"),
        ([0, 1], [-5, 0], "gather_rows: out_index holds row -5"),
    ],
)
def test_gather_rows_cuda_out_of_range(source, index, out_index, message):
    x = torch.randn(4, 3)
    x = x.cuda() if source == "device" else x.pin_memory()
    out = torch.zeros(2, 3, device="cuda")
    index = torch.tensor(index, device="cuda")
    out_index = None if out_index is None else torch.tensor(out_index, device="cuda")
    with pytest.raises(RuntimeError, match=message):
        gather_rows(x, index, out=out, out_index=out_index)
    _no_error_left_behind()
    assert not out.any()
