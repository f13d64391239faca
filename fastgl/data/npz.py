"""A :class:`NodeDataset` as one numpy ``.npz`` file: :func:`save_npz` and :func:`read_npz`.

The format is a plain ``np.savez`` archive (no pickles; ``np.load(path)`` reads it without
fastgl) holding these arrays:

=================  =========================  ==================================================
key                dtype, shape               meaning
=================  =========================  ==================================================
``edge_index``     int ``[2, E]``             row 0 = source, row 1 = target
``x``              float ``[N, F]``           node features (float16/32/64 kept as they are)
``y``              int ``[N]``                class of each node, in ``[0, num_classes)``
``train_idx``      int ``[*]``                node ids of the training split
``val_idx``        int ``[*]``                node ids of the validation split
``test_idx``       int ``[*]``                node ids of the test split
``num_classes``    int scalar                 number of classes
``name``           str scalar                 dataset name
=================  =========================  ==================================================

:func:`save_npz` writes exactly that (int64 ids; bfloat16 features, which numpy cannot hold, as
float32, which represents every bfloat16 value exactly). :func:`read_npz` is more lenient, to
take files written by other tools (DGL exports in particular):

* ``feat`` / ``label`` are accepted for ``x`` / ``y`` (the canonical key wins when both exist);
* each split may be given as ``<split>_idx`` ids or as a ``<split>_mask`` boolean ``[N]`` (or
  0/1 integer) mask; ``valid_idx`` / ``valid_mask`` (OGB's spelling) work for ``val``;
* ``y`` may be ``[N, 1]`` (OGB's layout) and a float array holding whole numbers;
* ``num_classes`` defaults to ``y.max() + 1`` and ``name`` to the file name without ``.npz``.

Example:
    >>> from fastgl.data import synthetic_node_classification
    >>> ds = synthetic_node_classification(num_nodes=100, avg_degree=4)
    >>> save_npz(ds, "ds.npz")
    >>> read_npz("ds.npz").num_nodes
    100
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from fastgl.data.dataset import NodeDataset

__all__ = ["read_npz", "save_npz"]

#: ``(canonical key, accepted aliases)`` of the per-node arrays.
_ALIASES = {"x": ("x", "feat"), "y": ("y", "label")}
#: ``NodeDataset`` field -> split spellings, tried in order.
_SPLITS = {
    "train_idx": ("train",),
    "val_idx": ("val", "valid"),
    "test_idx": ("test",),
}


def save_npz(dataset: NodeDataset, path: str | Path) -> None:
    """Write ``dataset`` to ``path`` in the format of the module docstring.

    Args:
        dataset: the dataset to save.
        path: file to write, exactly as given (no ``.npz`` is appended); replaced if present.

    Example:
        >>> from fastgl.data import synthetic_node_classification
        >>> save_npz(synthetic_node_classification(num_nodes=50, avg_degree=2), "s.npz")
    """
    if not isinstance(dataset, NodeDataset):
        swapped = isinstance(path, NodeDataset)
        raise TypeError(
            "save_npz(dataset, path): "
            + (
                "the arguments are swapped; pass the dataset first"
                if swapped
                else f"dataset must be a NodeDataset, got {type(dataset).__name__}"
            )
        )
    x = dataset.x.detach().cpu()
    if x.dtype == torch.bfloat16:
        x = x.float()
    arrays = {
        "edge_index": dataset.edge_index.detach().cpu().numpy(),
        "x": x.numpy(),
        "y": dataset.y.detach().cpu().numpy(),
        "train_idx": dataset.train_idx.detach().cpu().numpy(),
        "val_idx": dataset.val_idx.detach().cpu().numpy(),
        "test_idx": dataset.test_idx.detach().cpu().numpy(),
        "num_classes": np.array(dataset.num_classes, dtype=np.int64),
        "name": np.array(dataset.name),
    }
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def read_npz(path: str | Path) -> NodeDataset:
    """Read a :class:`NodeDataset` from an ``.npz`` file (the format of the module docstring).

    Args:
        path: the ``.npz`` file.

    Returns:
        A :class:`NodeDataset` with int64 ``edge_index``, ``y`` and split ids; ``x`` keeps its
        floating dtype (integer features become float32).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a key is missing (the keys present are listed), or an array has the wrong
            shape or dtype, or ids or labels are out of range.

    Example:
        >>> ds = read_npz("cora.npz")  # doctest: +SKIP
        >>> ds.num_nodes, ds.num_classes  # doctest: +SKIP
        (2708, 7)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_npz: no such file: {path}")
    where = f"read_npz: {path}"
    # The archive loads an array when it is indexed: keys the format does not use cost nothing.
    with np.load(path, allow_pickle=False) as arrays:
        x = torch.from_numpy(_pick(arrays, "x", where))
        if x.dim() != 2:
            raise ValueError(f"{where}: x must have shape [N, F], got {tuple(x.shape)}")
        if not x.is_floating_point():
            x = x.float()
        num_nodes = int(x.size(0))
        y = _labels(_pick(arrays, "y", where), num_nodes, where)
        edge_index = _edge_index(arrays, num_nodes, where)
        splits = {field: _split(arrays, field, num_nodes, where) for field in _SPLITS}
        num_classes = _num_classes(arrays, y, where)
        name = _name(arrays["name"], where) if "name" in arrays else path.name.removesuffix(".npz")
    return NodeDataset(
        edge_index=edge_index, x=x, y=y, num_classes=num_classes, name=name, **splits
    )


def _pick(arrays: Mapping[str, np.ndarray], key: str, where: str) -> np.ndarray:
    """The array stored under ``key`` or its first present alias."""
    for candidate in _ALIASES[key]:
        if candidate in arrays:
            return arrays[candidate]
    raise ValueError(
        f"{where}: missing key {key!r} (or its alias {_ALIASES[key][1]!r}); keys present: "
        f"{sorted(arrays)}"
    )


def _labels(y: np.ndarray, num_nodes: int, where: str) -> Tensor:
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.shape != (num_nodes,):
        raise ValueError(f"{where}: y must have shape [{num_nodes}], got {list(y.shape)}")
    if y.dtype.kind == "f":
        if not np.all(y == np.round(y)):
            raise ValueError(f"{where}: y must hold whole numbers, got non-integer labels")
    elif y.dtype.kind not in "iub":
        raise ValueError(f"{where}: y must be an integer array, got dtype {y.dtype}")
    y = torch.from_numpy(y.astype(np.int64, copy=False))
    if y.numel() and int(y.min()) < 0:
        raise ValueError(f"{where}: labels must be >= 0, got {int(y.min())}")
    return y


def _edge_index(arrays: Mapping[str, np.ndarray], num_nodes: int, where: str) -> Tensor:
    if "edge_index" not in arrays:
        raise ValueError(f"{where}: missing key 'edge_index'; keys present: {sorted(arrays)}")
    edges = arrays["edge_index"]
    if edges.ndim != 2 or edges.shape[0] != 2 or edges.dtype.kind not in "iu":
        raise ValueError(
            f"{where}: edge_index must be an integer array of shape [2, E], got "
            f"{edges.dtype} {list(edges.shape)}"
        )
    edge_index = torch.from_numpy(edges.astype(np.int64, copy=False))
    _check_ids(edge_index, num_nodes, "edge_index", where)
    return edge_index


def _split(arrays: Mapping[str, np.ndarray], field: str, num_nodes: int, where: str) -> Tensor:
    """Ids of one split, from ``<split>_idx`` or else from the boolean ``<split>_mask``."""
    for stem in _SPLITS[field]:
        key = f"{stem}_idx"
        if key in arrays:
            ids = arrays[key]
            if ids.ndim != 1 or ids.dtype.kind not in "iu":
                raise ValueError(
                    f"{where}: {key} must be a 1-D integer array, got {ids.dtype} {list(ids.shape)}"
                )
            idx = torch.from_numpy(ids.astype(np.int64, copy=False))
            _check_ids(idx, num_nodes, key, where)
            return idx
    for stem in _SPLITS[field]:
        key = f"{stem}_mask"
        if key in arrays:
            return _mask_to_ids(arrays[key], num_nodes, key, where)
    wanted = " or ".join(f"{stem}_{kind}" for stem in _SPLITS[field] for kind in ("idx", "mask"))
    raise ValueError(f"{where}: missing key {wanted}; keys present: {sorted(arrays)}")


def _mask_to_ids(mask: np.ndarray, num_nodes: int, key: str, where: str) -> Tensor:
    if mask.shape != (num_nodes,):
        raise ValueError(f"{where}: {key} must have shape [{num_nodes}], got {list(mask.shape)}")
    if mask.dtype != np.bool_:
        if mask.dtype.kind not in "iu" or not np.isin(mask, (0, 1)).all():
            raise ValueError(
                f"{where}: {key} must be a boolean (or 0/1) mask, got dtype {mask.dtype}"
            )
        mask = mask.astype(np.bool_)
    return torch.from_numpy(np.flatnonzero(mask).astype(np.int64, copy=False))


def _num_classes(arrays: Mapping[str, np.ndarray], y: Tensor, where: str) -> int:
    observed = int(y.max()) + 1 if y.numel() else 1
    if "num_classes" not in arrays:
        return observed
    stored = arrays["num_classes"]
    if stored.size != 1 or stored.dtype.kind not in "iu":
        raise ValueError(
            f"{where}: num_classes must be an integer scalar, got {stored.dtype} "
            f"{list(stored.shape)}"
        )
    num_classes = int(stored.reshape(()))
    if num_classes < observed:
        raise ValueError(f"{where}: num_classes is {num_classes} but y holds label {observed - 1}")
    return num_classes


def _name(stored: np.ndarray, where: str) -> str:
    if stored.size != 1 or stored.dtype.kind not in "US":
        raise ValueError(
            f"{where}: name must be a string scalar, got {stored.dtype} {list(stored.shape)}"
        )
    value = stored.reshape(()).item()
    return value.decode() if isinstance(value, bytes) else value


def _check_ids(ids: Tensor, num_nodes: int, key: str, where: str) -> None:
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_nodes):
        raise ValueError(
            f"{where}: {key} ids must lie in [0, {num_nodes}), got range "
            f"[{int(ids.min())}, {int(ids.max())}]"
        )
