"""The in-memory container every fastgl dataset reader and generator returns."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class NodeDataset:
    """A graph with node features, node labels and a train/val/test split.

    Attributes:
        edge_index: int64 ``[2, E]``; edge ``e`` goes ``edge_index[0, e] -> edge_index[1, e]``
            (row 0 = source, row 1 = target), the layout ``CSCGraph.from_edge_index`` takes.
        x: float32 ``[N, F]`` node features.
        y: int64 ``[N]`` class of each node, in ``[0, num_classes)``.
        train_idx, val_idx, test_idx: int64 ``[*]`` node ids of each split.
        num_classes: number of classes.
        name: a short human-readable name (used in logs and result files).

    Example:
        >>> from fastgl.data import synthetic_node_classification
        >>> ds = synthetic_node_classification(num_nodes=100, avg_degree=4)
        >>> ds.num_nodes, ds.x.shape[1]
        (100, 64)
    """

    edge_index: Tensor
    x: Tensor
    y: Tensor
    train_idx: Tensor
    val_idx: Tensor
    test_idx: Tensor
    num_classes: int
    name: str

    def __post_init__(self) -> None:
        _check_dataset(self)

    @property
    def num_nodes(self) -> int:
        """Number of nodes ``N`` (rows of ``x``)."""
        return int(self.x.size(0))

    @property
    def num_edges(self) -> int:
        """Number of directed edges ``E`` (an undirected edge counts twice)."""
        return int(self.edge_index.size(1))

    @property
    def num_features(self) -> int:
        """Feature dimension ``F``."""
        return int(self.x.size(1))

    def __repr__(self) -> str:
        return (
            f"NodeDataset(name={self.name!r}, num_nodes={self.num_nodes}, "
            f"num_edges={self.num_edges}, num_features={self.num_features}, "
            f"num_classes={self.num_classes}, train/val/test="
            f"{self.train_idx.numel()}/{self.val_idx.numel()}/{self.test_idx.numel()})"
        )


def _check_dataset(ds: NodeDataset) -> None:
    """Raise ``ValueError`` naming the field when ``ds`` breaks the documented layout."""
    where = f"NodeDataset({ds.name!r})"
    if ds.edge_index.dim() != 2 or ds.edge_index.size(0) != 2:
        raise ValueError(
            f"{where}: edge_index must have shape [2, E], got {tuple(ds.edge_index.shape)}"
        )
    if ds.x.dim() != 2:
        raise ValueError(f"{where}: x must have shape [N, F], got {tuple(ds.x.shape)}")
    if ds.y.shape != (ds.x.size(0),):
        raise ValueError(f"{where}: y must have shape [{ds.x.size(0)}], got {tuple(ds.y.shape)}")
    for field in ("edge_index", "y", "train_idx", "val_idx", "test_idx"):
        dtype = getattr(ds, field).dtype
        if dtype != torch.int64:
            raise ValueError(f"{where}: {field} must be int64, got {dtype}")
    if not ds.x.is_floating_point():
        raise ValueError(f"{where}: x must be floating point, got {ds.x.dtype}")
    if ds.num_classes < 1:
        raise ValueError(f"{where}: num_classes must be >= 1, got {ds.num_classes}")
