"""torch.library entry points across torch 2.2 .. 2.13 (names changed in 2.4)."""

from typing import Callable

import torch


def register_fake(qualname: str) -> Callable:
    """Decorator registering a fake (meta) kernel, so the op traces under torch.compile."""
    if hasattr(torch.library, "register_fake"):
        return torch.library.register_fake(qualname)
    return torch.library.impl_abstract(qualname)


def new_dynamic_size() -> "torch.SymInt":
    """A data-dependent output length inside a fake kernel."""
    get_ctx = getattr(torch.library, "get_ctx", None)
    if get_ctx is None:  # torch 2.2
        from torch._library.abstract_impl import get_ctx
    return get_ctx().new_dynamic_size()
