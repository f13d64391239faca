"""The structures every fastgl op reads: :class:`CSCGraph`, a whole graph, and :class:`Block`,
one message-flow graph of a sample (docs/contracts.md, Graph orientation and Sample and block
layout). Both are a :class:`Structure`, the interface aggregation reads; the checks and the
offset expansion they share are here too."""

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import torch
from torch import Tensor

from .ops import csc_from_coo, induced_subgraphs
from .ops._compat import is_compiling

_INDEX_DTYPES = (torch.int32, torch.int64)
_STORED_WEIGHT_DTYPES = (torch.float32, torch.float64)


class Structure(ABC):
    """Edges from ``num_src`` sources to ``num_dst`` destinations, as aggregation reads them.

    Every edge has a place in the structure's own edge order (a CSCGraph's CSC slots, a Block's
    edge list); per-edge data given to :mod:`fastgl.nn.functional` is in that order (the layers
    take it in the user's order, see ``original_order``). Destinations are the first
    ``num_dst`` sources (the identity on a square graph).

    Besides the methods below, a structure has ``weight`` (``[E]`` per-edge weights in its own
    order, or ``None``) and ``src_in_degrees`` (``[num_src]`` in-degrees of the sources in the
    whole graph, or ``None`` when not known).
    """

    weight: Tensor | None
    src_in_degrees: Tensor | None

    @property
    @abstractmethod
    def device(self) -> torch.device: ...

    @property
    @abstractmethod
    def num_src(self) -> int: ...

    @property
    @abstractmethod
    def num_dst(self) -> int: ...

    @property
    @abstractmethod
    def num_edges(self) -> int: ...

    @abstractmethod
    def csc(self) -> tuple[Tensor, Tensor, Tensor | None]:
        """``(indptr, indices, perm)``: the in-edges of destination ``v`` are the slots
        ``indptr[v] .. indptr[v+1]`` and ``indices[k]`` is the source of slot ``k``; ``perm[k]``
        is the edge (in the structure's own order) in slot ``k``, ``None`` when the own order is
        the slot order."""

    @abstractmethod
    def src_index(self) -> Tensor:
        """``[E]`` source of every edge, in the structure's own order."""

    @abstractmethod
    def dst_index(self) -> Tensor:
        """``[E]`` destination of every edge, in the structure's own order."""

    @abstractmethod
    def edge_ids(self) -> Tensor:
        """``[E]`` int64 id of every edge (own order) in the user's edge list of the whole
        graph (for a Block, the graph it was sampled from)."""

    @property
    @abstractmethod
    def original_order(self) -> Tensor | None:
        """``[E]`` position of every edge (own order) in the user's edge list, the order the
        layers take per-edge data in: a CSCGraph's ``eid``; ``None`` when the own order is the
        user's (a Block's edge list is its own)."""

    @abstractmethod
    def to(self, device: str | torch.device) -> "Structure":
        """A copy on ``device``."""

    def in_degrees(self) -> Tensor:
        """``[num_dst]`` int64 number of in-edges of every destination."""
        indptr = self.csc()[0]
        return indptr[1:] - indptr[:-1]

    def cached(self, name: Any, build: Callable[[], Any]) -> Any:
        """``build()``, computed once per structure and kept on it (the transposed structure,
        about 16 bytes per edge; a block's CSC). A structure must therefore not be modified in
        place once used; fastgl's ops and samplers never do, they make new ones."""
        cache = self.__dict__.setdefault("_derived", {})
        if name not in cache:
            cache[name] = build()
        return cache[name]


class CSCArrays(Structure):
    """A structure stored as CSC arrays over its destinations: ``indptr`` (``[num_dst + 1]``),
    ``indices`` (the source of every slot), optional ``eid`` (the original id of the edge in
    every slot) and ``weight``. What :class:`CSCGraph` and a heterogeneous graph's
    relations between two node types (:class:`fastgl.hetero.BipartiteCSC`) share."""

    indptr: Tensor
    indices: Tensor
    eid: Tensor | None

    @property
    def num_edges(self) -> int:
        return self.indices.numel()

    @property
    def device(self) -> torch.device:
        return self.indptr.device

    @property
    def original_order(self) -> Tensor | None:
        return self.eid

    def csc(self) -> tuple[Tensor, Tensor, Tensor | None]:
        return self.indptr, self.indices, None

    def src_index(self) -> Tensor:
        return self.indices

    def dst_index(self) -> Tensor:
        return expand_ptr(self.indptr, self.num_edges)

    def edge_ids(self) -> Tensor:
        """``[E]`` original edge id of every CSC slot (``eid``, or the slot number)."""
        if self.eid is not None:
            return self.eid
        return torch.arange(self.num_edges, device=self.device)


class CSCGraph(CSCArrays):
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
        eid: Tensor | None = None,
        weight: Tensor | None = None,
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
        num_nodes: int | None = None,
        edge_weight: Tensor | None = None,
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
            check_edge_weight(
                "CSCGraph.from_edge_index",
                edge_weight,
                edge_index.shape[1],
                edge_index.device,
                name="weight",
                stored=True,
            )
            weight = edge_weight[perm]
        return cls(indptr, indices, perm, weight, validate=False)

    @property
    def num_nodes(self) -> int:
        return self.indptr.numel() - 1

    @property
    def num_src(self) -> int:
        return self.num_nodes

    @property
    def num_dst(self) -> int:
        return self.num_nodes

    @property
    def src_in_degrees(self) -> Tensor:
        """The in-degrees of every node: a whole graph holds all their in-edges."""
        return self.in_degrees()

    def in_edge_slots(self, nodes: Tensor) -> tuple[Tensor, Tensor]:
        """Every in-edge of ``nodes`` (int64 ids): ``(target, slots)`` with ``target`` the
        position in ``nodes`` of the edge's target and ``slots`` its CSC slot, grouped by target
        in the order of ``nodes``, each node's in-edges in slot order.

        Example:
            >>> graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]]))
            >>> graph.in_edge_slots(torch.tensor([1, 0]))
            (tensor([0, 0, 1]), tensor([1, 2, 0]))
        """
        starts = self.indptr[nodes]
        slots, target = range_slots(starts, self.indptr[nodes + 1] - starts)
        return target, slots

    def induced_edges(self, nodes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Every edge between the distinct ``nodes``: ``(row, col, eid)`` with ``row``/``col`` the
        local (position in ``nodes``) source/target and ``eid`` the original edge id, grouped by
        target in the order of ``nodes``.

        Example:
            >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
            >>> graph = CSCGraph.from_edge_index(edge_index)
            >>> nodes = torch.tensor([1, 2, 0])   # e.g. a sample's sub.nodes
            >>> row, col, eid = graph.induced_edges(nodes)   # PyG's induced subgraph
            >>> row, col, eid
            (tensor([2, 1, 0, 1]), tensor([0, 0, 1, 2]), tensor([0, 3, 1, 2]))
        """
        ptr = torch.tensor([0, nodes.numel()], device=nodes.device)
        row, col, eid, _ = self.induced_subgraphs(nodes, ptr)
        return row, col, eid

    def induced_subgraphs(
        self, nodes: Tensor, ptr: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """:meth:`induced_edges` of many node sets at once: set ``s`` is ``nodes[ptr[s] :
        ptr[s+1]]`` (distinct int64 ids within a set, ``ptr`` int64). Returns ``(row, col, eid,
        edge_ptr)``: the edges of set ``s`` are ``edge_ptr[s] : edge_ptr[s+1]``, grouped by
        target in the order of its nodes, ``row``/``col`` local to the set (positions in its
        slice of ``nodes``). On the CPU one compiled pass (:func:`fastgl.ops.induced_subgraphs`);
        elsewhere a vectorized search among the sets' sorted nodes.

        Example:
            >>> graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]))
            >>> graph.induced_subgraphs(torch.tensor([0, 1, 2, 1]), torch.tensor([0, 2, 4]))
            (tensor([0, 1]), tensor([1, 0]), tensor([0, 1]), tensor([0, 1, 2]))
        """
        if self.device.type == "cpu":
            return induced_subgraphs(self, nodes, ptr)
        row, col, slots, edge_ptr = self._induced_by_search(nodes, ptr)
        return row, col, self.edge_ids()[slots], edge_ptr

    def _induced_by_search(
        self, nodes: Tensor, ptr: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """:meth:`induced_subgraphs` in tensor ops (CSC slots for edge ids): each in-edge's
        source looked up by binary search among the sets' nodes keyed by (set, node)."""
        set_of = expand_ptr(ptr, nodes.numel())
        target, slots = self.in_edge_slots(nodes)
        sources = self.indices[slots].to(torch.int64)
        span = max(self.num_nodes, 1)
        keys, order = torch.sort(set_of * span + nodes)
        wanted = set_of[target] * span + sources
        pos = torch.searchsorted(keys, wanted).clamp(max=max(nodes.numel() - 1, 0))
        inside = keys[pos] == wanted
        col = target[inside]
        edge_set = set_of[col]
        edge_ptr = torch.zeros(ptr.numel(), dtype=torch.int64, device=nodes.device)
        edge_ptr[1:] = torch.bincount(edge_set, minlength=ptr.numel() - 1).cumsum(0)
        first = ptr[edge_set]
        return order[pos[inside]] - first, col - first, slots[inside], edge_ptr

    def out_csr(self) -> "OutCSR":
        """The graph's out-edges as CSR, the view random walks follow (source to target): built
        once by a stable counting sort of the CSC slots by source, and cached on the graph
        (about 16 to 24 bytes per edge, 8 fewer without ``eid``). Its ``eid`` is ``None`` when
        slot ``k`` is edge ``k``, as for an edge list sorted by (source, target) like PyG's
        coalesced ``edge_index``: walks then name their edges without reading an id per step.

        Example:
            >>> g = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2, 2, 0], [2, 2, 1, 0, 1]]))
            >>> csr = g.out_csr()
            >>> csr.indptr, csr.indices, csr.eid
            (tensor([0, 2, 3, 5]), tensor([1, 2, 2, 0, 1]), tensor([4, 0, 1, 3, 2]))
            >>> CSCGraph.from_edge_index(torch.tensor([[0, 0, 1], [1, 2, 2]])).out_csr().eid is None
            True
        """
        return self.cached("out_csr", self._build_out_csr)

    def _build_out_csr(self) -> "OutCSR":
        # CSC slots are target-major, so the stable sort keeps each source's targets ascending.
        targets = self.dst_index().to(self.indices.dtype)
        indptr, indices, csc_slot = csc_from_coo(targets, self.indices, self.num_nodes)
        weight = None if self.weight is None else self.weight[csc_slot]
        eid = self.edge_ids()[csc_slot]
        if torch.equal(eid, torch.arange(eid.numel(), device=eid.device)):
            eid = None
        return OutCSR(indptr, indices, eid, weight)

    def to(self, device: str | torch.device, non_blocking: bool = False) -> "CSCGraph":
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


class OutCSR(NamedTuple):
    """A graph's out-edges (:meth:`CSCGraph.out_csr`): the out-edges of node ``u`` are the slots
    ``indptr[u] .. indptr[u+1]``; ``indices[k]`` is the target of slot ``k`` (ascending within
    each row, the dtype of the graph's ``indices``), ``eid[k]`` the edge's position in the user's
    edge list (``None`` when that is ``k``: :meth:`edge_ids` gives it either way) and
    ``weight[k]`` its weight (``None`` when the graph has none)."""

    indptr: Tensor
    indices: Tensor
    eid: Tensor | None
    weight: Tensor | None

    def edge_ids(self) -> Tensor:
        """``[E]`` int64 position of every slot's edge in the user's edge list."""
        if self.eid is not None:
            return self.eid
        return torch.arange(self.indices.numel(), device=self.indices.device)


def sorted_target_offsets(targets: Tensor, num_targets: int) -> Tensor | None:
    """``[num_targets + 1]`` CSC offsets of an edge list grouped by target in order (target
    ``v``'s edges at ``offsets[v] .. offsets[v+1]``), or ``None`` when ``targets`` is not
    sorted."""
    if targets.numel() > 1 and not bool((targets[1:] >= targets[:-1]).all()):
        return None
    counts = torch.bincount(targets, minlength=num_targets)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


@dataclass
class Block(Structure):
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
    dst=...)``) must drop it (``indptr=None``) or give the new one. ``weight``, optional, is a
    weight per edge in the block's edge order (``GCNConv`` uses it when given no
    ``edge_weight``); a block whose edges are reordered or replaced must likewise drop or
    replace it.
    """

    src: Tensor
    dst: Tensor
    eid: Tensor
    src_nodes: Tensor
    num_src_nodes: int
    num_dst_nodes: int
    src_in_degrees: Tensor | None = None
    indptr: Tensor | None = None
    weight: Tensor | None = None

    def to(self, device: str | torch.device) -> "Block":
        """This block with its tensors on ``device``."""
        tensors = {
            name: getattr(self, name).to(device) for name in ("src", "dst", "eid", "src_nodes")
        }
        optional = {
            name: None if getattr(self, name) is None else getattr(self, name).to(device)
            for name in ("src_in_degrees", "indptr", "weight")
        }
        return replace(self, **tensors, **optional)

    @property
    def dst_nodes(self) -> Tensor:
        """Global ids of the destination nodes (a prefix of ``src_nodes``)."""
        return self.src_nodes[: self.num_dst_nodes]

    @property
    def num_edges(self) -> int:
        return self.src.numel()

    @property
    def device(self) -> torch.device:
        return self.src.device

    @property
    def num_src(self) -> int:
        return self.num_src_nodes

    @property
    def num_dst(self) -> int:
        return self.num_dst_nodes

    @property
    def original_order(self) -> Tensor | None:
        return None

    def csc(self) -> tuple[Tensor, Tensor, Tensor | None]:
        """Built once and cached on the block: its own ``indptr`` (checked first, since the
        compiled kernels read it), else the offsets of a destination-sorted ``dst`` (a
        sampler's), else one stable sort by destination."""
        return self.cached("csc", self._build_csc)

    def _build_csc(self) -> tuple[Tensor, Tensor, Tensor | None]:
        if self.indptr is not None:
            self._check_indptr()
            return self.indptr, self.src, None
        indptr = sorted_target_offsets(self.dst, self.num_dst_nodes)
        if indptr is not None:
            return indptr, self.src, None
        num_dst = self.num_dst_nodes
        indptr, indices, perm = csc_from_coo(self.src, self.dst, max(num_dst, self.num_src_nodes))
        return indptr[: num_dst + 1], indices, perm

    def _check_indptr(self) -> None:
        indptr, num_dst = self.indptr, self.num_dst_nodes
        if indptr.dim() != 1 or indptr.numel() != num_dst + 1 or indptr.dtype != torch.int64:
            raise ValueError(
                f"Block: indptr must be an int64 tensor of shape [{num_dst + 1}] "
                f"(num_dst_nodes + 1), got {indptr.dtype} of shape {tuple(indptr.shape)}"
            )
        if indptr.device != self.device:
            raise ValueError(f"Block: indptr is on {indptr.device} but src is on {self.device}")
        # A sampler's offsets, or ones an op already checked, are on the compiled ops' record:
        # asking it reads nothing back; only an array found invalid is checked again for the
        # message.
        if is_compiling() or not torch.ops.fastgl._valid_offsets(indptr, self.num_edges):
            check_offsets("Block", "indptr", indptr, self.num_edges, "num_edges")

    def src_index(self) -> Tensor:
        return self.src

    def dst_index(self) -> Tensor:
        return self.dst

    def edge_ids(self) -> Tensor:
        return self.eid


def csc_structure(
    indptr: Tensor, indices: Tensor, num_src: int, num_dst: int, eid: Tensor | None = None
) -> Structure:
    """The structure of a CSC over ``num_dst`` destinations (``indptr`` int64, ``indices`` the
    source of every slot, ``eid`` each slot's position in the user's edge list): a CSCGraph when
    square, else a destination-sorted Block whose edge order is the slot order. Not checked: for
    arrays fastgl produced or checked."""
    if num_src == num_dst:
        return CSCGraph(indptr, indices, eid, validate=False)
    num_edges = indices.numel()
    return Block(
        src=indices.to(torch.int64),
        dst=expand_ptr(indptr, num_edges),
        eid=torch.arange(num_edges, device=indptr.device) if eid is None else eid,
        src_nodes=torch.arange(num_src, device=indptr.device),
        num_src_nodes=num_src,
        num_dst_nodes=num_dst,
        indptr=indptr,
    )


def inverse_permutation(perm: Tensor) -> Tensor:
    """``inverse`` with ``inverse[perm[i]] = i``: where each position of a permutation went."""
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(perm.numel(), device=perm.device)
    return inverse


def expand_ptr(indptr: Tensor, num_slots: int) -> Tensor:
    """``[num_slots]`` int64 row of every slot of the offsets ``indptr`` (row ``v`` owns slots
    ``indptr[v] .. indptr[v+1]``): a CSC's destination of every edge. ``num_slots`` is
    ``indptr[-1]``, passed because the caller knows it and reading it would synchronize a
    GPU."""
    counts = (indptr[1:] - indptr[:-1]).to(torch.int64)
    rows = torch.arange(counts.numel(), device=indptr.device)
    return torch.repeat_interleave(rows, counts, output_size=num_slots)


def range_slots(starts: Tensor, counts: Tensor) -> tuple[Tensor, Tensor]:
    """The slots of the ranges ``[starts[i], starts[i] + counts[i])`` laid end to end, and the
    range each slot comes from (both int64).

    Example:
        >>> range_slots(torch.tensor([5, 0, 9]), torch.tensor([2, 0, 3]))
        (tensor([ 5,  6,  9, 10, 11]), tensor([0, 0, 2, 2, 2]))
    """
    counts = counts.to(torch.int64)
    ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    num_slots = int(ptr[-1])
    owner = expand_ptr(ptr, num_slots)
    # A slot is its range's start plus its rank in the range.
    rank = torch.arange(num_slots, device=counts.device) - ptr[owner]
    return starts.to(torch.int64)[owner] + rank, owner


def check_ids(where: str, what: str, ids: Tensor, num_nodes: int, side: str | None = None) -> None:
    """Every id of ``what`` lies in ``[0, num_nodes)``; ``side`` (``"source"``, ``"target"``)
    names which nodes of a bipartite graph they count."""
    if ids.numel() == 0:
        return
    low, high = torch.stack(torch.aminmax(ids)).tolist()  # one pass, one read-back
    if low < 0 or high >= num_nodes:
        bad = low if low < 0 else high
        label, scope = (
            ("id", f"a graph of {num_nodes} nodes")
            if side is None
            else (f"{side} id", f"{num_nodes} {side} nodes")
        )
        raise ValueError(f"{where}: {what} has {label} {bad}, out of range for {scope}")


def check_offsets(where: str, name: str, offsets: Tensor, num_slots: int, slots: str) -> None:
    """``offsets`` run from 0 to ``num_slots`` (named ``slots`` in the message) without
    decreasing: what the compiled kernels need to stay in bounds. One pass and one read back
    when they do; the message then says where they do not."""
    first, last = offsets[0], offsets[-1]
    steps = offsets[1:] - offsets[:-1]
    if not bool((first != 0) | (last != num_slots) | (steps < 0).any()):
        return
    if int(first) != 0 or int(last) != num_slots:
        raise ValueError(
            f"{where}: {name} must run from 0 to {slots} = {num_slots}, "
            f"got {int(first)} to {int(last)}"
        )
    bad = int(torch.nonzero(steps < 0)[0])
    raise ValueError(
        f"{where}: {name} must never decrease, but {name}[{bad + 1}] = "
        f"{int(offsets[bad + 1])} < {name}[{bad}] = {int(offsets[bad])}"
    )


def check_edge_weight(
    where: str,
    weight: Any,
    num_edges: int,
    device: torch.device,
    name: str = "edge_weight",
    stored: bool = False,
) -> None:
    """``weight`` is one floating-point value per edge on the graph's ``device``. ``stored``:
    weights kept on a graph, which the samplers read: also float32/float64, finite and
    ``>= 0`` (one pass over them, so not for a per-call argument)."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"{where}: {name} must be a tensor, got {type(weight).__name__}")
    if weight.dim() != 1 or weight.numel() != num_edges:
        raise ValueError(
            f"{where}: {name} must have shape [{num_edges}] (one weight per edge), "
            f"got {tuple(weight.shape)}"
        )
    if stored and weight.dtype not in _STORED_WEIGHT_DTYPES:
        raise ValueError(f"{where}: {name} must be float32 or float64, got {weight.dtype}")
    if not weight.is_floating_point():
        raise ValueError(f"{where}: {name} must be floating point, got {weight.dtype}")
    if weight.device != device:
        raise ValueError(f"{where}: {name} is on {weight.device} but the graph is on {device}")
    if stored and num_edges and not bool(torch.isfinite(weight).all() & (weight >= 0).all()):
        raise ValueError(f"{where}: {name} must be finite and >= 0")


def _validate(indptr: Tensor, indices: Tensor, eid: Tensor | None, weight: Tensor | None) -> None:
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
    check_offsets(where, "indptr", indptr, indices.numel(), "len(indices)")
    check_ids(where, "indices", indices, indptr.numel() - 1)
    if eid is not None:
        if eid.dim() != 1 or eid.numel() != indices.numel() or eid.dtype != torch.int64:
            raise ValueError(
                f"{where}: eid must be int64 of shape [{indices.numel()}], got "
                f"{eid.dtype} {tuple(eid.shape)}"
            )
        if eid.device != indptr.device:
            raise ValueError(f"{where}: eid is on {eid.device} but indptr is on {indptr.device}")
    if weight is not None:
        check_edge_weight(where, weight, indices.numel(), indptr.device, "weight", stored=True)
