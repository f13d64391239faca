"""Outputs large enough to be populated in bulk before the kernels write them (common/prefault):
the results stay exact, and the kernels no longer take one page fault per output page."""

import contextlib
import ctypes
import mmap
import os
import platform
import sys

import pytest
import torch

from fastgl import CSCGraph
from fastgl.ops import aggregate, edge_softmax, gather_rows

# 100,000 x 128 float32 = 51 MB: above glibc's largest mmap threshold (32 MB), so every such
# output is a fresh mapping whose pages are not resident yet.
NUM_ROWS, DIM = 100_000, 128
MADV_POPULATE_WRITE = 23
PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())


def populate_write_supported() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    page = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if page in (None, ctypes.c_void_p(-1).value):
        return False
    try:
        return libc.madvise(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE),
                            MADV_POPULATE_WRITE) == 0
    finally:
        libc.munmap(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE))


class PerfEventAttr(ctypes.Structure):
    """The first 64 bytes of Linux's perf_event_attr (PERF_ATTR_SIZE_VER0)."""
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("bp_addr", ctypes.c_uint64)]


def user_page_fault_counter():
    """A file descriptor counting this thread's minor page faults, or None. Only faults raised by
    the thread's own accesses reach this counter; pages a system call (madvise) populates do
    not: that is the difference this test looks for."""
    if PERF_EVENT_OPEN is None or not sys.platform.startswith("linux"):
        return None
    exclude_kernel_and_hypervisor = (1 << 5) | (1 << 6)
    attr = PerfEventAttr(type=1, size=ctypes.sizeof(PerfEventAttr), config=5,  # SW, FAULTS_MIN
                         flags=exclude_kernel_and_hypervisor)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(PERF_EVENT_OPEN, ctypes.byref(attr), 0, -1, -1, 0)
    return fd if fd >= 0 else None


@contextlib.contextmanager
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def two_in_edges_per_row():
    gen = torch.Generator().manual_seed(0)
    indptr = torch.arange(0, 2 * NUM_ROWS + 1, 2)
    indices = torch.randint(0, NUM_ROWS, (2 * NUM_ROWS,), generator=gen)
    weight = torch.rand(2 * NUM_ROWS, generator=gen)
    x = torch.randn(NUM_ROWS, DIM, generator=gen)
    return indptr, indices, weight, x


def test_large_sum_and_max_match_reference(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    messages = (weight.unsqueeze(1) * x[indices]).view(NUM_ROWS, 2, DIM)
    out = torch.ops.fastgl.spmm(indptr, indices, weight, x)
    torch.testing.assert_close(out, messages.sum(1))
    out_max, arg = torch.ops.fastgl.spmm_max(indptr, indices, weight, x)
    best, slot = messages.max(1)
    assert torch.equal(out_max, best)
    # arg is the winning edge's position; random floats leave no ties to break.
    assert torch.equal(arg, indptr[:-1].unsqueeze(1) + slot)


def test_large_max_backward_matches_reference(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    graph = CSCGraph(indptr, indices)
    x = x.clone().requires_grad_()
    grad = torch.randn(NUM_ROWS, DIM, generator=torch.Generator().manual_seed(1))
    aggregate(graph, x, weight, reduce="max").backward(grad)
    x_ref = x.detach().clone().requires_grad_()
    (weight.unsqueeze(1) * x_ref[indices]).view(NUM_ROWS, 2, DIM).amax(1).backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad)


def test_large_edge_softmax_matches_reference(two_in_edges_per_row):
    indptr, indices, _, _ = two_in_edges_per_row
    heads = 8  # [E, 8] float32: 6.4 MB, above the 4 MB from which outputs are populated
    scores = torch.randn(indices.numel(), heads, generator=torch.Generator().manual_seed(2))
    out = edge_softmax(CSCGraph(indptr, indices), scores)
    expected = scores.view(NUM_ROWS, 2, heads).softmax(1).view(-1, heads)
    torch.testing.assert_close(out, expected)


def test_large_gather_matches_indexing(two_in_edges_per_row):
    _, indices, _, x = two_in_edges_per_row
    rows = indices[:NUM_ROWS]
    out = torch.empty(NUM_ROWS, DIM)
    gather_rows(x, rows, out=out)
    assert torch.equal(out, x[rows])


def test_large_gather_into_part_of_out(two_in_edges_per_row):
    _, indices, _, x = two_in_edges_per_row
    rows = indices[:NUM_ROWS // 2]
    out = torch.full((NUM_ROWS, DIM), 7.0)
    gather_rows(x, rows, out=out)  # writes the first half, leaves the rest alone
    assert torch.equal(out[:NUM_ROWS // 2], x[rows])
    assert bool((out[NUM_ROWS // 2:] == 7.0).all())
    scattered = torch.full((NUM_ROWS, DIM), 7.0)
    targets = torch.randperm(NUM_ROWS, generator=torch.Generator().manual_seed(3))[:NUM_ROWS // 2]
    gather_rows(x, rows, out=scattered, out_index=targets)
    expected = torch.full((NUM_ROWS, DIM), 7.0)
    expected[targets] = x[rows]
    assert torch.equal(scattered, expected)


@pytest.mark.skipif(not populate_write_supported(),
                    reason="needs Linux >= 5.14 (madvise MADV_POPULATE_WRITE)")
def test_large_output_is_populated_in_bulk(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    counter = user_page_fault_counter()
    if counter is None:
        pytest.skip("perf_event_open refused (kernel.perf_event_paranoid) or unknown platform")
    output_pages = NUM_ROWS * DIM * x.element_size() // mmap.PAGESIZE
    try:
        with one_thread():  # the counter follows the calling thread only
            before = int.from_bytes(os.read(counter, 8), sys.byteorder)
            out = torch.ops.fastgl.spmm(indptr, indices, weight, x)
            faults = int.from_bytes(os.read(counter, 8), sys.byteorder) - before
    finally:
        os.close(counter)
    # Faulting on demand costs one fault per output page (12,500 here); populated in bulk, the
    # kernel's writes take none of them.
    assert faults < output_pages // 4, (faults, output_pages)
    assert out.shape == (NUM_ROWS, DIM)
