"""FastGL's Match-Reorder (Zhu et al., ASPLOS '24, §4.1, Algorithm 1): reuse the feature rows that
consecutive mini-batches share, and order the batches of a window so they share the most.

* :func:`match` tells, for the next batch's nodes, which rows of the previous batch's feature
  buffer hold them (those are copied on the device) and which must be loaded from the host.
* :func:`match_degree` is the matrix ``M[i, j] = |V_i ∩ V_j| / min(|V_i|, |V_j|)`` of a window's
  node sets, from one compiled pass (:func:`fastgl.ops.overlap_counts`).
* :func:`greedy_order` is Algorithm 1: start with the first batch, then repeatedly take the
  not-yet-placed batch with the highest match degree to the one placed last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from fastgl.ops import match as _match_positions
from fastgl.ops import overlap_counts

MAX_WINDOW = 64  # overlap_counts gives every node one bit per set


@dataclass(frozen=True)
class Match:
    """Where the rows of a batch buffer come from.

    Attributes:
        reuse_rows: rows of the next buffer found in the previous one (int64, next's device).
        reuse_from: their rows in the previous buffer.
        load_rows: rows of the next buffer that must be loaded.
        load_nodes: the node ids of those rows.
    """

    reuse_rows: Tensor
    reuse_from: Tensor
    load_rows: Tensor
    load_nodes: Tensor


def match(prev_nodes: Tensor, next_nodes: Tensor) -> Match:
    """Splits ``next_nodes`` into rows reusable from a buffer of ``prev_nodes`` and rows to load.

    Args:
        prev_nodes: ``[P]`` distinct node ids, the rows of the previous buffer.
        next_nodes: ``[n]`` node ids of the next batch, same device.

    Example:
        >>> m = match(torch.tensor([0, 3, 4, 7]), torch.tensor([4, 10, 0, 12, 3]))
        >>> m.reuse_rows.tolist(), m.reuse_from.tolist(), m.load_nodes.tolist()
        ([0, 2, 4], [2, 0, 1], [10, 12])
    """
    position = _match_positions(prev_nodes, next_nodes)
    found = position >= 0
    rows = torch.arange(next_nodes.numel(), device=next_nodes.device)
    return Match(
        reuse_rows=rows[found],
        reuse_from=position[found],
        load_rows=rows[~found],
        load_nodes=next_nodes[~found].to(torch.int64),
    )


def match_degree(node_sets: Sequence[Tensor]) -> Tensor:
    """The match-degree matrix of up to 64 node sets (each of distinct ids, on one device).

    Returns:
        float64 ``[n, n]`` with ``M[i, j] = |V_i ∩ V_j| / min(|V_i|, |V_j|)`` (0 when a set is
        empty), on the CPU.

    Example:
        >>> match_degree([torch.tensor([1, 2, 3, 4]), torch.tensor([3, 4])])
        tensor([[1., 1.],
                [1., 1.]], dtype=torch.float64)
    """
    if len(node_sets) > MAX_WINDOW:
        raise ValueError(f"match_degree: at most {MAX_WINDOW} node sets, got {len(node_sets)}")
    if not node_sets:
        return torch.zeros(0, 0, dtype=torch.float64)
    device = node_sets[0].device
    sizes = torch.tensor([s.numel() for s in node_sets])
    offsets = torch.cat([sizes.new_zeros(1), sizes.cumsum(0)]).to(device)
    nodes = torch.cat([s.to(torch.int64) for s in node_sets])
    counts = overlap_counts(nodes, offsets).cpu().to(torch.float64)
    smaller = torch.minimum(sizes[:, None], sizes[None, :]).to(torch.float64)
    return torch.where(smaller > 0, counts / smaller.clamp(min=1), torch.zeros_like(counts))


def greedy_order(degree: Tensor) -> list[int]:
    """Algorithm 1 of FastGL (§4.1): batch 0 first, then always the unplaced batch with the highest
    match degree to the batch placed last (ties: the lowest index).

    Example:
        >>> greedy_order(torch.tensor([[1., .2, .9], [.2, 1., .5], [.9, .5, 1.]]))
        [0, 2, 1]
    """
    n = degree.shape[0]
    if n == 0:
        return []
    placed = torch.zeros(n, dtype=torch.bool)
    order = [0]
    placed[0] = True
    for _ in range(n - 1):
        # Placed batches get -inf (the paper zeroes them, which could pick one again when
        # every remaining degree is 0).
        row = degree[order[-1]].masked_fill(placed, float("-inf"))
        nxt = int(torch.argmax(row))  # argmax returns the first maximum
        order.append(nxt)
        placed[nxt] = True
    return order


def reorder(node_sets: Sequence[Tensor]) -> list[int]:
    """The order in which to run a window of batches: :func:`greedy_order` of their
    :func:`match_degree`.

    Example:
        >>> reorder([torch.tensor([0, 1, 2]), torch.tensor([7, 8]), torch.tensor([1, 2, 5])])
        [0, 2, 1]
    """
    return greedy_order(match_degree(node_sets))
