"""What one call of a CUDA op costs the host and the device, beyond its time: the host
synchronizations it makes (through PyTorch, as ``torch.cuda.set_sync_debug_mode`` sees them) and
the kernels it launches (as ``torch.profiler`` records them). Shared by benchmarks.syncs and
benchmarks.sampling."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator

import torch

SYNC_WARNING = "called a synchronizing CUDA operation"


@contextlib.contextmanager
def stderr_to(file) -> Iterator[None]:
    """Points file descriptor 2 at ``file``: PyTorch's C++ warnings are written there directly
    where no Python warning handler is active, which is so for some of them."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def count_syncs(fn: Callable[[], object]) -> int:
    """Host synchronizations made through PyTorch by one call of ``fn`` (after a warm-up call):
    its sync warnings, those that reach Python's warnings and those the C++ handler prints."""
    fn()
    torch.cuda.synchronize()
    with tempfile.TemporaryFile() as log:
        with stderr_to(log), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # every one, none deduplicated
            torch.cuda.set_sync_debug_mode("warn")
            try:
                fn()
            finally:
                torch.cuda.set_sync_debug_mode("default")
        log.seek(0)
        printed = log.read().decode(errors="replace").count(SYNC_WARNING)
    return printed + sum(SYNC_WARNING in str(w.message) for w in caught)


# Device activities that are not kernels: copies and memsets run on copy engines or as driver
# operations, and torch.profiler names them so.
_NOT_KERNELS = ("Memcpy", "Memset")


def split_device_events(names: Iterable[str]) -> dict[str, int]:
    """``{"kernels": k, "copies": c}`` for the names of a profile's device events: memcpy and
    memset activities are copies, everything else a kernel launch.

    Example:
        >>> split_device_events(["void scan_kernel<long>", "Memcpy HtoD (Pinned -> Device)"])
        {'kernels': 1, 'copies': 1}
    """
    names = list(names)
    copies = sum(name.startswith(_NOT_KERNELS) for name in names)
    return {"kernels": len(names) - copies, "copies": copies}


def count_kernels(fn: Callable[[], object]) -> dict[str, int]:
    """Kernel launches and copies of one call of ``fn`` (after a warm-up call), from the device
    events of a ``torch.profiler`` trace of that call."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as trace:
        fn()
        torch.cuda.synchronize()
    return split_device_events(
        event.name for event in trace.events() if event.device_type == DeviceType.CUDA
    )
