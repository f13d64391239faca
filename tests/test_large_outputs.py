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

from fastgl.ops import gather_rows

# 100,000 x 128 float32 = 51 MB: above glibc's largest mmap threshold (32 MB), so every such
# output is a fresh mapping whose pages are not resident yet.
NUM_ROWS, DIM = 100_000, 128
MADV_POPULATE_WRITE = 23
PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())


def populate_write_supported() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    page = mmap.mmap(-1, mmap.PAGESIZE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return libc.madvise(ctypes.c_void_p(address), ctypes.c_size_t(mmap.PAGESIZE),
                        MADV_POPULATE_WRITE) == 0


class PerfEventAttr(ctypes.Structure):
    """The first 64 bytes of Linux's perf_event_attr (PERF_ATTR_SIZE_VER0)."""
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("bp_addr", ctypes.c_uint64)]


def user_page_fault_counter():
    """A file descriptor counting this thread's minor page faults taken in user mode, or None.
    Pages the kernel populates on a system call's behalf (madvise) are not counted: that is the
    difference this test looks for."""
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


def test_large_gather_matches_indexing(two_in_edges_per_row):
    _, indices, _, x = two_in_edges_per_row
    rows = indices[:NUM_ROWS]
    out = torch.empty(NUM_ROWS, DIM)
    gather_rows(x, rows, out=out)
    assert torch.equal(out, x[rows])


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
