"""The structures every fastgl op reads: :class:`CSCGraph`, a whole graph, and :class:`Block`,
one message-flow graph of a sample (docs/contracts.md, Graph orientation and Sample and block
layout)."""

from dataclasses import dataclass, replace
from typing import Optional, Tuple, Union

import torch

from .ops import csc_from_coo

Tensor = torch.Tensor
_INDEX_DTYPES = (torch.int32, torch.int64)


class CSCGraph:
    """A graph stored as CSC over *incoming* edges.

    The in-edges of node ``v`` occupy slots ``indptr[v] .. indptr[v+1]``; ``indices[k]`` is the
    source of slot ``k``, ``eid[k]`` its position in the user's original edge list (``None`` means
    slot order is the original order) and ``weight[k]`` its weight (optional).

    Args:
        indptr: ``[N+1]`` int32/int64 offsets (stored as int64).
        indices: ``[E]`` int32/int64 source ids; int32 halves memory on large graphs.
        eid: ``[E]`` int64 original edge ids, or ``None``.
        weight: ``[E]`` float32/float64 non-negative edge weights, or ``None``.
        validate: check the structure (one pass over the arrays); turn off only for arrays that
            fastgl itself produced.

    Example:
        >>> g = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]))
        >>> g.num_nodes, g.num_edges
        (3, 3)
    """

    def __init__(
        self,
        indptr: Tensor,
        indices: Tensor,
        eid: Optional[Tensor] = None,
        weight: Optional[Tensor] = None,
        validate: bool = True,
    ) -> None:
        if validate:
            _validate(indptr, indices, eid, weight)
        self.indptr = indptr.to(torch.int64)
        self.indices = indices
        self.eid = eid
        self.weight = weight

    @classmethod
    def from_edge_index(
        cls,
        edge_index: Tensor,
        num_nodes: Optional[int] = None,
        edge_weight: Optional[Tensor] = None,
    ) -> "CSCGraph":
        """Builds the CSC of a PyG-style ``edge_index`` (row 0 = source, row 1 = target).

        A compiled counting sort (stable: a node's in-edges keep their input order). ``eid``
        records each slot's column in ``edge_index``; ``num_nodes`` defaults to ``max id + 1``.
        """
        if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.shape[0] != 2:
            shape = tuple(edge_index.shape) if isinstance(edge_index, Tensor) else type(edge_index)
            raise ValueError(
                f"CSCGraph.from_edge_index: edge_index must have shape [2, E], got {shape}"
            )
        if edge_index.dtype not in _INDEX_DTYPES:
            raise ValueError(
                "CSCGraph.from_edge_index: edge_index must be int32 or int64, "
                f"got {edge_index.dtype}"
            )
        if num_nodes is None:
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0
        indptr, indices, perm = csc_from_coo(edge_index[0], edge_index[1], num_nodes)
        weight = None
        if edge_weight is not None:
            _check_weight(
                "CSCGraph.from_edge_index", edge_weight, edge_index.shape[1], edge_index.device
            )
            weight = edge_weight[perm]
        return cls(indptr, indices, perm, weight, validate=False)

    @property
    def num_nodes(self) -> int:
        return self.indptr.numel() - 1

    @property
    def num_edges(self) -> int:
        return self.indices.numel()

    @property
    def device(self) -> torch.device:
        return self.indptr.device

    def in_degrees(self) -> Tensor:
        """``[N]`` int64 number of in-edges of every node."""
        return self.indptr[1:] - self.indptr[:-1]

    def edge_ids(self) -> Tensor:
        """``[E]`` original edge id of every CSC slot (``eid``, or the slot number)."""
        if self.eid is not None:
            return self.eid
        return torch.arange(self.num_edges, device=self.device)

    def induced_edges(self, nodes: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        """Every edge between the distinct ``nodes``: ``(row, col, eid)`` with ``row``/``col`` the
        local (position in ``nodes``) source/target and ``eid`` the original edge id, grouped by
        target in the order of ``nodes``.

        Example:
            >>> row, col, eid = graph.induced_edges(sub.nodes)   # PyG's induced subgraph
        """
        starts, ends = self.indptr[nodes], self.indptr[nodes + 1]
        degrees = ends - starts
        num_candidates = int(degrees.sum())
        target = torch.repeat_interleave(
            torch.arange(nodes.numel(), device=self.device), degrees, output_size=num_candidates
        )
        # Slot of every candidate in-edge: its target's first slot plus its rank among them.
        first = torch.cumsum(degrees, 0) - degrees
        slots = starts[target] + torch.arange(num_candidates, device=self.device) - first[target]
        sources = self.indices[slots].to(torch.int64)
        if num_candidates == 0:
            return sources, target, sources
        sorted_nodes, order = torch.sort(nodes)
        pos = torch.searchsorted(sorted_nodes, sources).clamp(max=nodes.numel() - 1)
        inside = sorted_nodes[pos] == sources
        return order[pos[inside]], target[inside], self.edge_ids()[slots[inside]]

    def to(self, device: Union[str, torch.device], non_blocking: bool = False) -> "CSCGraph":
        """A copy on ``device`` (fastgl ops then run there)."""
        move = lambda t: None if t is None else t.to(device, non_blocking=non_blocking)  # noqa: E731
        return CSCGraph(
            move(self.indptr), move(self.indices), move(self.eid), move(self.weight), validate=False
        )

    def pin_memory(self) -> "CSCGraph":
        """A copy in page-locked host memory, for fast asynchronous copies to the GPU."""
        pin = lambda t: None if t is None else t.pin_memory()  # noqa: E731
        return CSCGraph(
            pin(self.indptr), pin(self.indices), pin(self.eid), pin(self.weight), validate=False
        )

    def __repr__(self) -> str:
        extras = "".join(
            f", {name}" for name in ("eid", "weight") if getattr(self, name) is not None
        )
        return (
            f"CSCGraph(num_nodes={self.num_nodes}, num_edges={self.num_edges}, "
            f"indices={self.indices.dtype}{extras}, device={self.device})"
        )


def sorted_target_offsets(targets: Tensor, num_targets: int) -> Optional[Tensor]:
    """``[num_targets + 1]`` CSC offsets of an edge list grouped by target in order (target
    ``v``'s edges at ``offsets[v] .. offsets[v+1]``), or ``None`` when ``targets`` is not
    sorted."""
    if targets.numel() > 1 and not bool((targets[1:] >= targets[:-1]).all()):
        return None
    counts = torch.bincount(targets, minlength=num_targets)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


@dataclass
class Block:
    """One message-flow graph (MFG) of a sampled subgraph.

    Destination nodes are the first ``num_dst_nodes`` source nodes. Edge ``e`` runs from local
    source ``src[e]`` to local destination ``dst[e]``; ``eid[e]`` is its global edge id.
    ``src_nodes`` holds the global ids of the source nodes; ``src_in_degrees``, when known, their
    in-degrees in the whole graph sampled from (a sampler's blocks carry them: GCN normalization
    uses them for the sources whose in-edges the block does not hold). ``indptr``, when known, is
    the CSC offsets ``[num_dst_nodes + 1]`` of edges grouped by destination in order (``dst``
    sorted, destination ``v``'s in-edges at ``indptr[v] .. indptr[v+1]``); a sampler's blocks
    carry it, so that aggregation need not rebuild it from ``dst``. It must describe ``dst``:
    a block whose edges are reordered or replaced (``dataclasses.replace(block, src=...,
    dst=...)``) must drop it (``indptr=None``) or give the new one.
    """

    src: Tensor
    dst: Tensor
    eid: Tensor
    src_nodes: Tensor
    num_src_nodes: int
    num_dst_nodes: int
    src_in_degrees: Optional[Tensor] = None
    indptr: Optional[Tensor] = None

    def to(self, device: Union[str, torch.device]) -> "Block":
        """This block with its tensors on ``device``."""
        tensors = {
            name: getattr(self, name).to(device) for name in ("src", "dst", "eid", "src_nodes")
        }
        optional = {
            name: None if getattr(self, name) is None else getattr(self, name).to(device)
            for name in ("src_in_degrees", "indptr")
        }
        return replace(self, **tensors, **optional)

    @property
    def dst_nodes(self) -> Tensor:
        """Global ids of the destination nodes (a prefix of ``src_nodes``)."""
        return self.src_nodes[: self.num_dst_nodes]

    @property
    def num_edges(self) -> int:
        return self.src.numel()


def _check_weight(where: str, weight: Tensor, num_edges: int, device: torch.device) -> None:
    if weight.dim() != 1 or weight.numel() != num_edges:
        raise ValueError(
            f"{where}: weight must have shape [{num_edges}], got {tuple(weight.shape)}"
        )
    if weight.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{where}: weight must be float32 or float64, got {weight.dtype}")
    if weight.device != device:
        raise ValueError(f"{where}: weight is on {weight.device} but the graph is on {device}")
    if num_edges and not bool(torch.isfinite(weight).all() and (weight >= 0).all()):
        raise ValueError(f"{where}: weights must be finite and >= 0")


def _validate(
    indptr: Tensor, indices: Tensor, eid: Optional[Tensor], weight: Optional[Tensor]
) -> None:
    where = "CSCGraph"
    for name, t in (("indptr", indptr), ("indices", indices)):
        if not isinstance(t, Tensor) or t.dim() != 1:
            raise ValueError(f"{where}: {name} must be a 1-D tensor")
        if t.dtype not in _INDEX_DTYPES:
            raise ValueError(f"{where}: {name} must be int32 or int64, got {t.dtype}")
    if indices.device != indptr.device:
        raise ValueError(
            f"{where}: indices is on {indices.device} but indptr is on {indptr.device}"
        )
    if indptr.numel() == 0:
        raise ValueError(f"{where}: indptr must have num_nodes + 1 >= 1 entries, got 0")
    if int(indptr[0]) != 0:
        raise ValueError(f"{where}: indptr must start at 0, got {int(indptr[0])}")
    steps = indptr[1:] - indptr[:-1]
    if steps.numel() and int(steps.min()) < 0:
        bad = int(torch.nonzero(steps < 0)[0])
        raise ValueError(
            f"{where}: indptr must never decrease, but indptr[{bad + 1}] = "
            f"{int(indptr[bad + 1])} < indptr[{bad}] = {int(indptr[bad])}"
        )
    if int(indptr[-1]) != indices.numel():
        raise ValueError(
            f"{where}: indptr must end at len(indices) = {indices.numel()}, got {int(indptr[-1])}"
        )
    num_nodes = indptr.numel() - 1
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= num_nodes):
        bad = int(indices.max()) if int(indices.max()) >= num_nodes else int(indices.min())
        raise ValueError(
            f"{where}: indices has id {bad}, out of range for a graph of {num_nodes} nodes"
        )
    if eid is not None:
        if eid.dim() != 1 or eid.numel() != indices.numel() or eid.dtype != torch.int64:
            raise ValueError(
                f"{where}: eid must be int64 of shape [{indices.numel()}], got "
                f"{eid.dtype} {tuple(eid.shape)}"
            )
        if eid.device != indptr.device:
            raise ValueError(f"{where}: eid is on {eid.device} but indptr is on {indptr.device}")
    if weight is not None:
        _check_weight(where, weight, indices.numel(), indptr.device)
