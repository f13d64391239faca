"""Approximate aggregation for fast inference: ES-SpMM (Lin et al., "Accelerating SpMM Kernel with
Cache-First Edge Sampling for Graph Neural Networks", §IV).

Pass ``approx=ESSpMM(width=..., strategy=...)`` to a model's or layer's ``forward`` to run every
neighborhood aggregation over at most ``width`` in-edges per node instead of all of them (see
:func:`fastgl.nn.functional.es_spmm`). Inference only: call it under ``torch.no_grad()`` with the
model in ``eval()`` mode.

Example:
    >>> import torch
    >>> import fastgl
    >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
    >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
    >>> x = torch.randn(4, 8)
    >>> model = fastgl.nn.GraphSAGE(8, 16, num_layers=2, out_channels=3)
    >>> model.eval()
    GraphSAGE(8, 3, num_layers=2)
    >>> with torch.no_grad():
    ...     logits = model(x, graph, approx=ESSpMM(width=16, strategy="fastrand"))
    >>> logits.shape
    torch.Size([4, 3])
"""

from dataclasses import dataclass

from torch import Tensor

from fastgl.graph import Block, CSCGraph

from . import functional

__all__ = ["ESSpMM"]


@dataclass(frozen=True)
class ESSpMM:
    """ES-SpMM's cache-first edge sampling as a model's aggregation.

    Attributes:
        width: in-edges kept per node (the paper's shared-memory width ``S``); nodes with at
            most ``width`` in-edges are aggregated exactly.
        strategy: ``"bucket"`` (the first ``width`` in-edges) or ``"fastrand"`` (spread over the
            neighborhood by ``(j * 577) mod degree``).

    Sum aggregation (GCN, GIN, GAT) sums the kept edges with their weights, as ES-SpMM; mean
    (GraphSAGE) averages the kept edges; max takes their maximum.
    """

    width: int
    strategy: str = "bucket"

    def __post_init__(self) -> None:
        functional.check_es_spmm_options("ESSpMM", self.width, self.strategy)

    def aggregate(
        self,
        structure: CSCGraph | Block,
        x: Tensor,
        edge_weight: Tensor | None = None,
        reduce: str = "sum",
    ) -> Tensor:
        """:func:`fastgl.nn.functional.aggregate`'s contract, over the sampled in-edges."""
        return functional.es_spmm(structure, x, self.width, self.strategy, edge_weight, reduce)


def aggregate(
    structure: CSCGraph | Block,
    x: Tensor,
    edge_weight: Tensor | None = None,
    reduce: str = "sum",
    approx: ESSpMM | None = None,
) -> Tensor:
    """Exact :func:`fastgl.nn.functional.aggregate`, or ``approx``'s approximation when given."""
    if approx is None:
        return functional.aggregate(structure, x, edge_weight, reduce)
    if not isinstance(approx, ESSpMM):
        raise TypeError(f"approx must be a fastgl.nn.ESSpMM or None, got {type(approx).__name__}")
    return approx.aggregate(structure, x, edge_weight, reduce)
