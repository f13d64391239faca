"""Counting the minor page faults a piece of code raises (Linux perf_event_open), for the tests
of kernels that should not fault their memory in page by page."""

import contextlib
import ctypes
import os
import platform
import sys

import pytest
import torch

PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())


class PerfEventAttr(ctypes.Structure):
    """The first 64 bytes of Linux's perf_event_attr (PERF_ATTR_SIZE_VER0)."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("bp_addr", ctypes.c_uint64),
    ]


def open_fault_counter():
    """A file descriptor counting this thread's minor page faults, or None. Only faults raised by
    the thread's own accesses reach this counter; pages a system call (madvise) populates do
    not."""
    if PERF_EVENT_OPEN is None or not sys.platform.startswith("linux"):
        return None
    exclude_kernel_and_hypervisor = (1 << 5) | (1 << 6)
    attr = PerfEventAttr(
        type=1,
        size=ctypes.sizeof(PerfEventAttr),
        config=5,  # SW, FAULTS_MIN
        flags=exclude_kernel_and_hypervisor,
    )
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(PERF_EVENT_OPEN, ctypes.byref(attr), 0, -1, -1, 0)
    return fd if fd >= 0 else None


def read_counter(counter: int) -> int:
    return int.from_bytes(os.read(counter, 8), sys.byteorder)


@contextlib.contextmanager
def counting_page_faults():
    """Yields a function that returns the minor page faults raised since the block began. torch
    runs on one thread meanwhile, as the counter follows the calling thread only. Skips the test
    where the counter cannot be opened (kernel.perf_event_paranoid, not Linux)."""
    counter = open_fault_counter()
    if counter is None:
        pytest.skip("perf_event_open refused (kernel.perf_event_paranoid) or unknown platform")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    start = read_counter(counter)
    try:
        yield lambda: read_counter(counter) - start
    finally:
        torch.set_num_threads(threads)
        os.close(counter)
