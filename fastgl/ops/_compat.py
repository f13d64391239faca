"""torch.library entry points across torch 2.2 .. 2.13 (names changed in 2.4)."""

from typing import Callable

import torch


def register_fake(qualname: str) -> Callable:
    """Decorator registering a fake (meta) kernel, so the op traces under torch.compile."""
    if hasattr(torch.library, "register_fake"):
        return torch.library.register_fake(qualname)
    # _stacklevel=2: the module checked against the C++ pystub is register_fake's caller
    # (fastgl.ops._ops), as torch>=2.4's register_fake sees it, not this module.
    return torch.library.impl_abstract(qualname, _stacklevel=2)


def new_dynamic_size() -> "torch.SymInt":
    """A data-dependent output length inside a fake kernel."""
    return torch.library.get_ctx().new_dynamic_size()  # torch.library.get_ctx: torch >= 2.2
