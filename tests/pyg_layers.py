"""Comparing a fastgl layer with PyG's own layer of the same name, for the tests that check
fastgl's layers against ``torch_geometric.nn`` (needs PyG).

Both layers get PyG's ``state_dict`` and run in float64; outputs, parameter gradients and input
gradients must agree to 1e-6.
"""

import torch
import torch_geometric.nn as pyg_nn

import fastgl.nn as fnn

TOL = dict(atol=1e-6, rtol=1e-6)


def layer_pair(make):
    """``make(torch_geometric.nn)`` and ``make(fastgl.nn)`` in float64, with PyG's parameters
    (non-zero biases, so that every parameter shows in the outputs)."""
    torch.manual_seed(0)
    ref, ours = make(pyg_nn).double(), make(fnn).double()
    ours.load_state_dict(ref.state_dict(), strict=True)
    with torch.no_grad():
        for module in (ref, ours):
            for key, p in module.named_parameters():
                if key.endswith("bias"):
                    p.copy_(torch.linspace(-0.5, 0.5, p.numel()).view_as(p))
    return ref, ours


def float_parts(out) -> list:
    """The floating-point tensors of a (nested) output, sparse ones by their values."""
    if isinstance(out, (tuple, list)):
        return [t for part in out for t in float_parts(part)]
    if out.layout == torch.sparse_coo:
        return [out.coalesce().values()] if out.is_floating_point() else []
    if out.layout != torch.strided:
        return [out.values()] if out.is_floating_point() else []
    return [out] if out.is_floating_point() else []


def run_with_gradients(module, forward, inputs):
    """``forward(module, *inputs)``; its float outputs, and the gradients of a fixed weighting
    of them for every parameter and every float input."""
    inputs = [
        t.detach().clone().requires_grad_(True)
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.layout == torch.strided
        else t
        for t in inputs
    ]
    module.zero_grad()
    out = forward(module, *inputs)
    floats = float_parts(out)
    probe = sum(
        (t * torch.cos(torch.arange(t.numel(), dtype=t.dtype)).view_as(t)).sum() for t in floats
    )
    probe.backward()
    grads = {k: p.grad for k, p in module.named_parameters()}
    input_grads = [t.grad for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    return out, floats, grads, input_grads


def assert_same(ref, ours, forward, *inputs, forward_ref=None):
    """PyG's and fastgl's layer agree on ``forward(layer, *inputs)`` (``forward_ref`` for PyG's,
    if it differs): outputs, parameter gradients, input gradients. Returns both outputs."""
    ref_out, ref_floats, ref_grads, ref_in = run_with_gradients(ref, forward_ref or forward, inputs)
    out, floats, grads, in_grads = run_with_gradients(ours, forward, inputs)
    assert len(floats) == len(ref_floats) > 0
    for a, b in zip(floats, ref_floats, strict=True):
        torch.testing.assert_close(a, b, **TOL)
    assert grads.keys() == ref_grads.keys()
    for key, g in grads.items():
        if ref_grads[key] is None:
            assert g is None or not g.any(), key
        else:
            torch.testing.assert_close(g, ref_grads[key], **TOL, msg=key)
    assert len(in_grads) == len(ref_in)
    for a, b in zip(in_grads, ref_in, strict=True):
        torch.testing.assert_close(a, b, **TOL)
    return ref_out, out
