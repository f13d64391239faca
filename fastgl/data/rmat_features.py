"""R-MAT graphs with node features, labels and a split: node classification at any scale.

The graph is :func:`~fastgl.data.rmat.rmat_edge_index` of a preset of
:data:`~fastgl.data.rmat.RMAT_PRESETS` (``"products"`` is shaped like ogbn-products: 2,449,029
nodes, 123.7M stored edges). On top of it:

* every node gets a class, balanced (class sizes differ by at most one), independent of the
  graph;
* features are a Gaussian mixture: ``x[v] = signal * centroid[y[v]] + noise``, with standard
  normal centroids ``[C, F]`` and standard normal noise. The class is learnable from a node's
  own features, but not trivially: at the defaults (``F = 100``, ``C = 16``, see
  :data:`DEFAULT_SIGNAL`) a nearest-centroid classifier is right about 85 % of the time on the
  ``"small"`` preset (measured; chance is 6 %), so a model that trains correctly beats one that
  does not by a wide margin. Neighbours carry no extra signal: this is a generator for scale and
  throughput tests, not for comparing architectures;
* a random split: ``train_fraction`` of the nodes (ogbn-products trains on about 8 %), then
  ``val_fraction``, the rest test; each part sorted.

The ``edge_index`` is returned as :func:`rmat_edge_index` draws it, self loops and repeated
edges included (samplers handle both). It is not passed through
:func:`~fastgl.data.utils.to_simple_undirected`: at ``"products"`` scale that sort would cost
tens of seconds and several GB for no benefit to a sampler.

Randomness: edges come from a ``torch.Generator`` seeded with ``seed`` (inside
:func:`rmat_edge_index`), labels, features and split from a second local generator seeded with
``seed`` salted by a constant, so the two streams do not repeat each other's draws. The global RNG
is not touched and the same arguments give the same tensors on every machine. Features are
drawn in float32 whatever the ``dtype``, so other dtypes hold the float32 features converted.

Memory: features are written in place, :data:`CHUNK_ROWS` rows at a time, into the one
``[N, F]`` tensor returned (``"products"``, float32, ``F = 100``: 980 MB); the other
allocations are ``O(N)`` int64 vectors and one chunk. Measured on two CPU cores (float32,
defaults; resident peaks above the 226 MB of an interpreter with torch and fastgl loaded):
``"small"`` (100,000 nodes, 2M edges) takes 0.2 s and peaks at +95 to +155 MB (the result is
75 MB); ``"products"`` takes 16 s and peaks at +3.06 GB (the result is 2.98 GB: a 1.98 GB
``edge_index`` and 0.98 GB of features).

Example:
    >>> ds = rmat_node_classification("tiny", num_features=16, num_classes=4)
    >>> ds.x.shape, ds.num_classes
    (torch.Size([1000, 16]), 4)
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import Tensor

from fastgl.data.dataset import NodeDataset
from fastgl.data.rmat import RMAT_PRESETS, rmat_edge_index
from fastgl.data.utils import random_split

__all__ = ["CHUNK_ROWS", "DEFAULT_SIGNAL", "rmat_node_classification"]

_WHERE = "rmat_node_classification"

#: Feature rows drawn per chunk: part of the definition of the output (the draws are consumed
#: chunk by chunk), so it is a constant, not an argument.
CHUNK_ROWS = 1 << 16

#: Default scale of the class centroids against the unit noise. Two centroids lie about
#: ``signal * sqrt(2 F)`` apart, about 4.2 noise standard deviations at ``F = 100``.
DEFAULT_SIGNAL = 0.3

# Salt for the feature generator's seed (the 64-bit golden ratio), so that its stream differs
# from the one rmat_edge_index draws the edges from with the same seed.
_FEATURE_SEED_SALT = 0x9E3779B97F4A7C15


def rmat_node_classification(
    preset: str | dict[str, Any] = "small",
    *,
    num_features: int = 100,
    num_classes: int = 16,
    train_fraction: float = 0.08,
    val_fraction: float = 0.02,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    signal: float = DEFAULT_SIGNAL,
    **overrides: Any,
) -> NodeDataset:
    """Generate an R-MAT node-classification dataset (see the module docstring).

    Args:
        preset: a name in :data:`~fastgl.data.rmat.RMAT_PRESETS` (``"tiny"``, ``"small"``,
            ``"products"``) or a dict of :func:`~fastgl.data.rmat.rmat_edge_index` arguments.
        num_features: feature dimension ``F``.
        num_classes: number of classes ``C``.
        train_fraction, val_fraction: fractions of the nodes in the train and val splits
            (rounded down); the rest is test.
        seed: seed of the edges (unless a dict ``preset`` names its own ``seed``) and of the
            labels, features and split.
        dtype: floating dtype of the features (float32, float16, bfloat16, float64).
        signal: scale of the class centroids against the unit-variance noise; larger is easier.
        overrides: :func:`rmat_edge_index` arguments replacing the preset's (e.g.
            ``num_nodes=50_000``).

    Returns:
        A :class:`NodeDataset`: ``edge_index`` int64 ``[2, E]`` as drawn by R-MAT (self loops and
        repeats kept), ``x`` ``[N, F]`` in ``dtype``, ``y`` int64 ``[N]`` in ``[0, C)``, sorted
        disjoint split ids covering all nodes.

    Example:
        >>> ds = rmat_node_classification("tiny", seed=3)
        >>> ds.num_nodes, ds.num_edges, ds.num_features, ds.num_classes
        (1000, 10000, 100, 16)
    """
    kwargs = _edge_args(preset, overrides)
    kwargs.setdefault("seed", seed)
    num_nodes = kwargs.get("num_nodes") or (1 << kwargs["scale"])
    _check_args(num_nodes, num_features, num_classes, train_fraction, val_fraction, dtype, signal)

    edge_index = rmat_edge_index(**kwargs)
    gen = torch.Generator().manual_seed((seed + _FEATURE_SEED_SALT) % (1 << 64))
    y = torch.randperm(num_nodes, generator=gen) % num_classes
    x = _mixture_features(y, num_classes, num_features, signal, dtype, gen)
    train_idx, val_idx, test_idx = random_split(num_nodes, train_fraction, val_fraction, gen)

    label = preset if isinstance(preset, str) else f"n{num_nodes}-e{edge_index.size(1)}"
    return NodeDataset(
        edge_index=edge_index,
        x=x,
        y=y,
        train_idx=train_idx,
        val_idx=val_idx,
        test_idx=test_idx,
        num_classes=num_classes,
        name=f"rmat-{label}-s{seed}",
    )


def _edge_args(preset: str | dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The preset's :func:`rmat_edge_index` arguments updated with ``overrides``, checked."""
    if isinstance(preset, dict):
        kwargs = dict(preset)
    elif preset in RMAT_PRESETS:
        kwargs = dict(RMAT_PRESETS[preset])
    else:
        raise ValueError(
            f"{_WHERE}: unknown preset {preset!r}; expected one of {sorted(RMAT_PRESETS)} or a "
            f"dict of rmat_edge_index arguments"
        )
    kwargs.update(overrides)
    known = set(inspect.signature(rmat_edge_index).parameters)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(
            f"{_WHERE}: unknown argument(s) {unknown}; the preset and overrides take "
            f"rmat_edge_index arguments: {sorted(known)}"
        )
    if "scale" not in kwargs:
        raise ValueError(f"{_WHERE}: the preset must give 'scale', got {sorted(kwargs)}")
    return kwargs


def _check_args(
    num_nodes: int,
    num_features: int,
    num_classes: int,
    train_fraction: float,
    val_fraction: float,
    dtype: torch.dtype,
    signal: float,
) -> None:
    """Raise ``ValueError`` naming the first argument out of range."""
    if num_features < 1:
        raise ValueError(f"{_WHERE}: num_features must be >= 1, got {num_features}")
    if not 1 <= num_classes <= num_nodes:
        raise ValueError(
            f"{_WHERE}: num_classes must lie in [1, num_nodes = {num_nodes}], got {num_classes}"
        )
    if min(train_fraction, val_fraction) < 0 or train_fraction + val_fraction > 1:
        raise ValueError(
            f"{_WHERE}: train_fraction and val_fraction must be >= 0 and sum to <= 1, got "
            f"{train_fraction} and {val_fraction}"
        )
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"{_WHERE}: dtype must be a floating torch.dtype, got {dtype!r}")
    if not signal >= 0:
        raise ValueError(f"{_WHERE}: signal must be >= 0, got {signal}")


def _mixture_features(
    y: Tensor,
    num_classes: int,
    num_features: int,
    signal: float,
    dtype: torch.dtype,
    gen: torch.Generator,
) -> Tensor:
    """``[N, F]`` features ``signal * centroid[y] + N(0, 1)`` in ``dtype``, drawn chunk by chunk."""
    centroids = torch.randn(num_classes, num_features, generator=gen).mul_(signal)
    x = torch.empty(y.numel(), num_features, dtype=dtype)
    buffer = None if dtype == torch.float32 else torch.empty(CHUNK_ROWS, num_features)
    for start in range(0, y.numel(), CHUNK_ROWS):
        end = min(start + CHUNK_ROWS, y.numel())
        # float32 features are drawn straight into the result; other dtypes via one chunk buffer.
        chunk = x[start:end] if buffer is None else buffer[: end - start]
        torch.randn(end - start, num_features, generator=gen, out=chunk)
        chunk.add_(centroids.index_select(0, y[start:end]))
        if buffer is not None:
            x[start:end].copy_(chunk)
    return x
