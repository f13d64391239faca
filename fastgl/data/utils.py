"""Small edge-list helpers shared by the dataset readers and generators."""

from __future__ import annotations

import torch
from torch import Tensor


def to_simple_undirected(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Make an edge list undirected and simple: both directions, no self loops, no duplicates.

    Args:
        edge_index: int64 ``[2, E]`` (row 0 = source, row 1 = target); ids in ``[0, num_nodes)``.
        num_nodes: number of nodes ``N``; needed to encode an edge as one int64 key.

    Returns:
        int64 ``[2, E']`` sorted by (source, target); ``(u, v)`` is present iff ``(v, u)`` is.

    Example:
        >>> to_simple_undirected(torch.tensor([[0, 1, 2, 2], [1, 0, 2, 0]]), 3)
        tensor([[0, 0, 1, 2],
                [1, 2, 0, 0]])
    """
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        raise ValueError(
            f"to_simple_undirected: edge_index ids must lie in [0, {num_nodes}), got range "
            f"[{int(edge_index.min())}, {int(edge_index.max())}]"
        )
    both = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    both = both[:, both[0] != both[1]]
    # One int64 key per edge; torch.unique sorts, so the result is ordered by (source, target).
    keys = torch.unique(both[0] * num_nodes + both[1])
    return torch.stack([keys // num_nodes, keys % num_nodes])


def random_split(
    num_nodes: int, train_fraction: float, val_fraction: float, gen: torch.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """Sorted train / val / test ids cut from one random permutation of the nodes (the first
    ``train_fraction``, the next ``val_fraction``, the rest)."""
    perm = torch.randperm(num_nodes, generator=gen)
    num_train = int(train_fraction * num_nodes)
    num_val = int(val_fraction * num_nodes)
    parts = (perm[:num_train], perm[num_train : num_train + num_val], perm[num_train + num_val :])
    return tuple(part.sort().values for part in parts)  # type: ignore[return-value]
