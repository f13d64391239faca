"""Heterogeneous graphs: :class:`HeteroCSCGraph`, one CSC per relation over per-type node ids,
plus the combined edge array that lets a sampler draw along every relation in one compiled pass.

A relation is a canonical edge type ``(src_type, rel, dst_type)``. Node ids count within their
type (``0 .. num_nodes[t] - 1``), edge ids within their relation (a column of its
``edge_index``).
"""

from collections.abc import Mapping
from typing import NamedTuple

import torch
from torch import Tensor

from .graph import CSCArrays, CSCGraph, check_edge_weight, check_ids

EdgeType = tuple[str, str, str]

_WHERE = "HeteroCSCGraph.from_edge_index_dict"


class BipartiteCSC(CSCArrays):
    """The CSC of a relation between two node types: ``num_src`` sources of one type,
    ``indptr.numel() - 1`` destinations of another. The attributes of :class:`~fastgl.CSCGraph`
    (``indptr``, ``indices``, ``eid``, ``weight``), but ``indices`` count the sources, which are
    not the destinations: a conv layer takes it with features ``(x_src, x_dst)``.

    Built by :meth:`HeteroCSCGraph.from_edge_index_dict`, which checks the arrays; not checked
    here.

    Example:
        >>> g = HeteroCSCGraph.from_edge_index_dict(
        ...     {("user", "buys", "item"): torch.tensor([[0, 2, 2], [1, 1, 0]])},
        ...     {"user": 3, "item": 2},
        ... )
        >>> buys = g["user", "buys", "item"]
        >>> buys.num_src, buys.num_dst, buys.indptr, buys.indices
        (3, 2, tensor([0, 1, 3]), tensor([2, 0, 2]))
    """

    def __init__(
        self,
        indptr: Tensor,
        indices: Tensor,
        eid: Tensor | None,
        weight: Tensor | None,
        num_src: int,
    ) -> None:
        self.indptr = indptr
        self.indices = indices
        self.eid = eid
        self.weight = weight
        self._num_src = num_src

    @property
    def num_src(self) -> int:
        return self._num_src

    @property
    def num_dst(self) -> int:
        return self.indptr.numel() - 1

    @property
    def src_in_degrees(self) -> None:
        """Unknown: the sources are of another type, whose in-edges this relation lacks."""
        return None

    def to(self, device: str | torch.device) -> "BipartiteCSC":
        """A copy on ``device``."""
        move = lambda t: None if t is None else t.to(device)  # noqa: E731
        return BipartiteCSC(
            move(self.indptr), move(self.indices), move(self.eid), move(self.weight), self.num_src
        )

    def __repr__(self) -> str:
        return (
            f"BipartiteCSC(num_src={self.num_src}, num_dst={self.num_dst}, "
            f"num_edges={self.num_edges}, device={self.device})"
        )


RelationCSC = CSCGraph | BipartiteCSC


class CombinedEdges(NamedTuple):
    """Every relation's CSC in one id space, for samplers that draw along all relations at once.

    Node type ``t`` holds the global ids ``node_offsets[t] .. node_offsets[t+1] - 1``
    (:attr:`HeteroCSCGraph.node_offsets`). Relation ``r``'s edges are the slots
    ``edge_offsets[r] .. edge_offsets[r+1] - 1``; the in-edges of its destination ``v`` (an id
    of its destination type) are the slots ``indptr[indptr_start[r] + v] ..
    indptr[indptr_start[r] + v + 1] - 1``.

    Attributes:
        indptr: ``[sum_r (num_dst_r + 1)]`` int64, every relation's offsets shifted to its slots.
        indptr_start: ``[R]`` int64, where relation ``r``'s offsets begin in ``indptr``.
        edge_offsets: ``[R+1]`` int64, the slots of each relation.
        indices: ``[E]`` int64 global id of the source of every slot.
        eid: ``[E]`` int64 edge id of every slot within its relation.
        weight: ``[E]`` weight of every slot, or ``None`` unless every relation has weights.
        src_type, dst_type: ``[R]`` int64 index (in ``node_types``) of each relation's types.
    """

    indptr: Tensor
    indptr_start: Tensor
    edge_offsets: Tensor
    indices: Tensor
    eid: Tensor
    weight: Tensor | None
    src_type: Tensor
    dst_type: Tensor


class HeteroCSCGraph:
    """A heterogeneous graph: one CSC over incoming edges per relation ``(src_type, rel,
    dst_type)``, node ids per type.

    ``graph[etype]`` (or ``graph.relation(etype)``) is a relation's CSC: a
    :class:`~fastgl.CSCGraph` when its source and destination types are the same, else a
    :class:`BipartiteCSC`. For samplers, :attr:`combined` holds all relations' edges in one
    global node-id space (type ``t`` at ``node_offsets[t] ..``); it costs 16 bytes per edge
    (int64 sources and edge ids) on top of the relations, plus their weights when all have them.

    Build it with :meth:`from_edge_index_dict`.

    Example:
        >>> g = HeteroCSCGraph.from_edge_index_dict(
        ...     {
        ...         ("author", "writes", "paper"): torch.tensor([[0, 1, 1], [0, 0, 1]]),
        ...         ("paper", "cites", "paper"): torch.tensor([[1], [0]]),
        ...     },
        ...     {"author": 2, "paper": 2},
        ... )
        >>> g.node_types, g.num_nodes
        (['author', 'paper'], {'author': 2, 'paper': 2})
        >>> g.edge_types
        [('author', 'writes', 'paper'), ('paper', 'cites', 'paper')]
        >>> g["author", "writes", "paper"].indices    # in-edges of paper 0, then of paper 1
        tensor([0, 1, 1])
        >>> g.combined.indices                         # global ids: papers come after authors
        tensor([0, 1, 1, 3])
    """

    def __init__(
        self,
        relations: dict[EdgeType, RelationCSC],
        num_nodes: dict[str, int],
        device: str | torch.device | None = None,
    ) -> None:
        """From relation CSCs that fastgl built and checked (:meth:`from_edge_index_dict`), all
        on ``device`` (default: theirs, the CPU without relations), with ``num_nodes`` naming
        every node type of their edge types."""
        _check_relation_sizes(relations, num_nodes)
        self.num_nodes = dict(num_nodes)
        self.node_types = list(num_nodes)
        self.edge_types = list(relations)
        self._relations = dict(relations)
        self._device = _device_of(relations, device)
        counts = torch.tensor([0] + list(num_nodes.values()), dtype=torch.int64)
        self.node_offsets = counts.cumsum(0).to(self._device)
        self.combined = self._combine()

    @classmethod
    def from_edge_index_dict(
        cls,
        edge_index_dict: dict[EdgeType, Tensor],
        num_nodes_dict: dict[str, int],
        edge_weight_dict: dict[EdgeType, Tensor] | None = None,
    ) -> "HeteroCSCGraph":
        """Builds every relation's CSC with the compiled counting sort.

        Args:
            edge_index_dict: per relation ``(src_type, rel, dst_type)`` a ``[2, E_r]``
                int32/int64 ``edge_index``: row 0 the source (an id of ``src_type``), row 1 the
                destination (of ``dst_type``). Edge ``e`` of the relation has id ``e``.
            num_nodes_dict: the number of nodes of every node type (also of types without
                edges); its order is :attr:`node_types`'.
            edge_weight_dict: per relation (any subset) ``[E_r]`` float32/float64 non-negative
                weights; weighted sampling needs them for every relation.
        """
        if not isinstance(edge_index_dict, dict):
            raise TypeError(
                f"{_WHERE}: edge_index_dict must be a dict {{(src_type, rel, dst_type): "
                f"edge_index}}, got {type(edge_index_dict).__name__}"
            )
        num_nodes = _checked_num_nodes(num_nodes_dict)
        weights = _checked_weight_keys(edge_weight_dict, edge_index_dict)
        relations = {}
        for etype, edge_index in edge_index_dict.items():
            etype = _checked_edge_type(etype, num_nodes)
            relations[etype] = _relation_csc(etype, edge_index, num_nodes, weights.get(etype))
        return cls(relations, num_nodes)

    @property
    def device(self) -> torch.device:
        return self._device

    @property
    def num_edges(self) -> dict[EdgeType, int]:
        """The number of edges of every relation."""
        return {etype: rel.num_edges for etype, rel in self._relations.items()}

    def relation(self, etype: EdgeType) -> RelationCSC:
        """The CSC of relation ``etype`` (a canonical ``(src_type, rel, dst_type)``)."""
        try:
            return self._relations[tuple(etype)]
        except (KeyError, TypeError):
            raise KeyError(
                f"HeteroCSCGraph: no relation {etype!r}; the edge types are {self.edge_types}"
            ) from None

    def __getitem__(self, etype: EdgeType) -> RelationCSC:
        return self.relation(etype)

    def to(self, device: str | torch.device) -> "HeteroCSCGraph":
        """A copy on ``device`` (its combined arrays are rebuilt there, not copied)."""
        moved = {etype: rel.to(device) for etype, rel in self._relations.items()}
        return HeteroCSCGraph(moved, self.num_nodes, device)

    def _combine(self) -> CombinedEdges:
        """The relations' arrays concatenated, sources shifted into the global id space."""
        device, rels = self._device, list(self._relations.values())
        types = {t: i for i, t in enumerate(self.node_types)}
        src_type = [types[s] for s, _, _ in self.edge_types]
        dst_type = [types[d] for _, _, d in self.edge_types]
        edge_offsets = _offsets([rel.num_edges for rel in rels], device)
        indptr_sizes = [rel.num_dst + 1 for rel in rels]
        offsets = self.node_offsets
        weights = [rel.weight for rel in rels]
        has_weights = bool(rels) and all(w is not None for w in weights)
        return CombinedEdges(
            indptr=cat_or_empty(
                [rel.indptr + edge_offsets[r] for r, rel in enumerate(rels)], device
            ),
            indptr_start=_offsets(indptr_sizes, device)[:-1],
            edge_offsets=edge_offsets,
            indices=cat_or_empty(
                [rel.indices.to(torch.int64) + offsets[src_type[r]] for r, rel in enumerate(rels)],
                device,
            ),
            eid=cat_or_empty([rel.edge_ids() for rel in rels], device),
            weight=_cat_weights(weights) if has_weights else None,
            src_type=torch.tensor(src_type, dtype=torch.int64, device=device),
            dst_type=torch.tensor(dst_type, dtype=torch.int64, device=device),
        )

    def __repr__(self) -> str:
        edges = ", ".join(f"{etype}: {n}" for etype, n in self.num_edges.items())
        return (
            f"HeteroCSCGraph(num_nodes={self.num_nodes}, num_edges={{{edges}}}, "
            f"device={self.device})"
        )


def check_type_dict(where: str, name: str, value, known, kind: str, values: str) -> None:
    """``value`` is a dict keyed by types among ``known`` (a graph's ``node_types`` or
    ``edge_types``; ``kind`` is ``"node"`` or ``"edge"``), mapping them to ``values`` (named in
    the message): a ``TypeError`` or ``ValueError`` starting with ``where`` otherwise.

    Example:
        >>> check_type_dict("example", "seeds", {"book": 0}, ["paper"], "node", "ids")
        Traceback (most recent call last):
        ...
        ValueError: example: seeds has node types ['book'] that the graph lacks (node types: ...)
    """
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{where}: {name} must be a dict {{{kind}_type: {values}}}, got {type(value).__name__}"
        )
    unknown = [key for key in value if key not in known]
    if unknown:
        raise ValueError(
            f"{where}: {name} has {kind} types {unknown} that the graph lacks "
            f"({kind} types: {list(known)})"
        )


def _check_relation_sizes(relations: Mapping[EdgeType, RelationCSC], num_nodes: Mapping) -> None:
    """Every relation's sources and destinations are as many as its node types' nodes: the
    combined edge array addresses a relation's rows and sources by the types' id ranges."""
    for etype, rel in relations.items():
        src_type, _, dst_type = etype
        for side, ntype, count in (
            ("source", src_type, rel.num_src),
            ("destination", dst_type, rel.num_dst),
        ):
            if ntype not in num_nodes:
                raise ValueError(
                    f"HeteroCSCGraph: relation {etype} has {side} type '{ntype}', which "
                    "num_nodes lacks"
                )
            if count != num_nodes[ntype]:
                raise ValueError(
                    f"HeteroCSCGraph: relation {etype} has {count} {side} nodes but node type "
                    f"'{ntype}' has {num_nodes[ntype]}"
                )


def _relation_csc(
    etype: EdgeType, edge_index: Tensor, num_nodes: dict[str, int], weight: Tensor | None
) -> RelationCSC:
    """One relation's CSC, by :meth:`CSCGraph.from_edge_index` over ``max(num_src, num_dst)``
    nodes (it counts sources and destinations alike) cut to the destinations."""
    src_type, _, dst_type = etype
    num_src, num_dst = num_nodes[src_type], num_nodes[dst_type]
    what = f"edge_index_dict[{etype}]"
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.shape[0] != 2:
        shape = tuple(edge_index.shape) if isinstance(edge_index, Tensor) else type(edge_index)
        raise ValueError(f"{_WHERE}: {what} must have shape [2, E], got {shape}")
    if edge_index.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{_WHERE}: {what} must be int32 or int64, got {edge_index.dtype}")
    if edge_index.device.type == "meta":
        raise ValueError(f"{_WHERE}: {what} is on the meta device, which holds no ids to read")
    check_ids(_WHERE, what, edge_index[0], num_src, f"source ('{src_type}')")
    check_ids(_WHERE, what, edge_index[1], num_dst, f"destination ('{dst_type}')")
    if weight is not None:
        check_edge_weight(
            _WHERE,
            weight,
            edge_index.shape[1],
            edge_index.device,
            name=f"edge_weight_dict[{etype}]",
            stored=True,
        )
    # Without the weights (checked above, under the relation's name): only their order changes.
    csc = CSCGraph.from_edge_index(edge_index, max(num_src, num_dst))
    weight = None if weight is None else weight[csc.eid]
    if src_type == dst_type:
        return CSCGraph(csc.indptr, csc.indices, csc.eid, weight, validate=False)
    # Rows past num_dst are empty (every destination is below it); a copy frees the rest.
    indptr = csc.indptr[: num_dst + 1].clone() if num_src > num_dst else csc.indptr
    return BipartiteCSC(indptr, csc.indices, csc.eid, weight, num_src)


def _checked_num_nodes(num_nodes_dict: dict[str, int]) -> dict[str, int]:
    if not isinstance(num_nodes_dict, dict):
        raise TypeError(
            f"{_WHERE}: num_nodes_dict must be a dict {{node_type: number of nodes}}, "
            f"got {type(num_nodes_dict).__name__}"
        )
    checked = {}
    for ntype, n in num_nodes_dict.items():
        if not isinstance(ntype, str):
            raise TypeError(f"{_WHERE}: node types must be strings, got {ntype!r}")
        if isinstance(n, bool) or not hasattr(n, "__index__") or int(n) < 0:
            raise ValueError(f"{_WHERE}: num_nodes_dict[{ntype!r}] must be an int >= 0, got {n!r}")
        checked[ntype] = int(n)
    return checked


def _checked_edge_type(etype: EdgeType, num_nodes: dict[str, int]) -> EdgeType:
    if not (
        isinstance(etype, tuple) and len(etype) == 3 and all(isinstance(t, str) for t in etype)
    ):
        raise TypeError(
            f"{_WHERE}: edge types must be tuples (src_type, rel, dst_type) of strings, "
            f"got {etype!r}"
        )
    for side, ntype in (("source", etype[0]), ("destination", etype[2])):
        if ntype not in num_nodes:
            raise ValueError(
                f"{_WHERE}: the {side} type {ntype!r} of edge type {etype} is not in "
                f"num_nodes_dict (node types: {list(num_nodes)})"
            )
    return etype


def _checked_weight_keys(
    edge_weight_dict: dict[EdgeType, Tensor] | None, edge_index_dict: dict[EdgeType, Tensor]
) -> dict[EdgeType, Tensor]:
    if edge_weight_dict is None:
        return {}
    if not isinstance(edge_weight_dict, dict):
        raise TypeError(
            f"{_WHERE}: edge_weight_dict must be a dict {{edge_type: weight}} or None, "
            f"got {type(edge_weight_dict).__name__}"
        )
    unknown = [etype for etype in edge_weight_dict if etype not in edge_index_dict]
    if unknown:
        raise ValueError(
            f"{_WHERE}: edge_weight_dict has edge types {unknown} that edge_index_dict lacks"
        )
    return edge_weight_dict


def _device_of(
    relations: dict[EdgeType, RelationCSC], device: str | torch.device | None
) -> torch.device:
    """The one device of all relations: ``device`` when given, else theirs (the CPU when there
    are none)."""
    devices = {etype: rel.device for etype, rel in relations.items()}
    given = set() if device is None else {torch.empty(0, device=device).device}  # "cuda": cuda:0
    found = set(devices.values()) | given
    if len(found) > 1:
        named = f" and device={device}" if device is not None else ""
        raise ValueError(
            f"HeteroCSCGraph: all relations must be on one device, got {devices}{named}"
        )
    return next(iter(found), torch.device("cpu"))


def _offsets(sizes: list[int], device: torch.device) -> Tensor:
    """``[len(sizes) + 1]`` int64 exclusive prefix sums of ``sizes`` (ends included)."""
    return torch.tensor([0] + sizes, dtype=torch.int64, device=device).cumsum(0)


def cat_or_empty(
    tensors: list[Tensor], device: torch.device, dtype: torch.dtype = torch.int64
) -> Tensor:
    """``torch.cat(tensors)``, or an empty ``dtype`` tensor when there are none."""
    return torch.cat(tensors) if tensors else torch.zeros(0, dtype=dtype, device=device)


def _cat_weights(weights: list[Tensor]) -> Tensor:
    """One weight array in the widest of the relations' dtypes (float64 if any is)."""
    dtype = torch.float64 if any(w.dtype == torch.float64 for w in weights) else torch.float32
    return torch.cat([w.to(dtype) for w in weights])
