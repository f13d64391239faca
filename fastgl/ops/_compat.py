"""torch entry points across torch 2.2 .. 2.13 (torch.library's names changed in 2.4,
torch.compiler.is_compiling arrived in 2.3)."""

from collections.abc import Callable

import torch


def register_fake(qualname: str) -> Callable:
    """Decorator registering a fake (meta) kernel, so the op traces under torch.compile."""
    if hasattr(torch.library, "register_fake"):
        return torch.library.register_fake(qualname)
    # _stacklevel=2: the module checked against the C++ pystub is register_fake's caller
    # (fastgl.ops._ops), as torch>=2.4's register_fake sees it, not this module.
    return torch.library.impl_abstract(qualname, _stacklevel=2)


def register_autograd(qualname: str, backward: Callable, setup_context: Callable) -> None:
    """Makes the op ``qualname`` differentiable: ``setup_context(ctx, inputs, output)`` saves
    what ``backward(ctx, *grads)`` needs, and ``backward`` returns one gradient (or ``None``)
    per input, as for ``torch.library.register_autograd``."""
    if hasattr(torch.library, "register_autograd"):
        torch.library.register_autograd(qualname, backward, setup_context=setup_context)
    else:
        register_autograd_kernel(qualname, backward, setup_context)


# A kernel registered from Python lasts as long as its Library object: these live for the process.
_AUTOGRAD_LIBRARIES: list[torch.library.Library] = []


def register_autograd_kernel(qualname: str, backward: Callable, setup_context: Callable) -> None:
    """What ``register_autograd`` does, for torch < 2.4: an ``autograd.Function`` made of the same
    two functions, registered as the op's Autograd kernel."""
    namespace, name = qualname.split("::")
    op = getattr(getattr(torch.ops, namespace), name).default

    def forward(*inputs):
        with torch._C._AutoDispatchBelowAutograd():  # on to the op's own kernel, not back here
            return op(*inputs)

    function = type(
        f"{name}_autograd",
        (torch.autograd.Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
        },
    )
    library = torch.library.Library(namespace, "IMPL")
    library.impl(name, function.apply, "Autograd")
    _AUTOGRAD_LIBRARIES.append(library)


def new_dynamic_size() -> "torch.SymInt":
    """A data-dependent output length inside a fake kernel."""
    return torch.library.get_ctx().new_dynamic_size()  # torch.library.get_ctx: torch >= 2.2


def is_compiling() -> bool:
    """Whether this code is being traced by ``torch.compile``, where reading a value back to
    Python would break the graph."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling()
    return torch._dynamo.is_compiling()  # torch < 2.3
