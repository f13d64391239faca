"""Every test in tests/cuda is marked `cuda` and skipped, with the reason, where it cannot run."""

from pathlib import Path

import pytest
import torch

import fastgl

HERE = Path(__file__).resolve().parent


def _why_no_cuda():
    if not torch.cuda.is_available():
        return "needs a GPU: torch.cuda.is_available() is False"
    if not getattr(fastgl._C, "with_cuda", False):
        return "fastgl._C was built without CUDA kernels"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    reason = _why_no_cuda()
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.cuda)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
