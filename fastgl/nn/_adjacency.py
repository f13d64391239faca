"""Turning a layer's inputs into the structure fastgl's ops read.

Every layer accepts the same kinds of graph input:

* a :class:`~fastgl.CSCGraph` (square: every node is a source and a destination);
* a sampled :class:`~fastgl.Block` (destinations are its first ``num_dst_nodes`` sources);
* a PyG-style ``edge_index`` ``[2, E]`` (row 0 = source, row 1 = target), with an optional
  ``size=(num_src, num_dst)`` for bipartite graphs;
* a PyG :class:`torch_geometric.EdgeIndex`: the same, with its ``sparse_size`` as ``size`` (as
  PyG's ``MessagePassing`` reads it; a ``size`` argument may fill in what ``sparse_size`` leaves
  open, not contradict it). One sorted by column (destination) is read without sorting;
* a torch sparse ``adj_t`` ``[num_dst, num_src]``, PyG's transposed adjacency (entry
  ``(i, j)`` is an edge ``j -> i``), in the ``sparse_coo``, ``sparse_csr`` or ``sparse_csc``
  layout. Its values come along as :attr:`Adjacency.values` for the layers to use as PyG does.
  A COO is coalesced first: PyG's ``spmm`` converts it to CSR, which merges duplicate entries
  into one edge carrying their sum. The CSR of ``adj_t`` is the CSC of the graph and is read
  without sorting; a coalesced COO is sorted by destination too; a CSC is sorted once.

``torch_sparse.SparseTensor`` is not accepted (torch-sparse is not a dependency): convert it with
``adj_t.to_torch_sparse_csr_tensor()``. Node features are either one tensor or a PyG-style pair
``(x_src, x_dst)``. :func:`adjacency_of` resolves these into an :class:`Adjacency`: the
:class:`~fastgl.graph.Structure` (a given CSCGraph or Block as it is; for the other inputs a
CSCGraph when square, else a destination-sorted Block), how to bring edge data given in the
caller's edge order into the structure's own edge order, and a sparse ``adj_t``'s values.
Only a structure's self-looped version (GAT's) is cached, on the structure it came from.
"""

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from fastgl.graph import (
    Structure,
    check_ids,
    check_offsets,
    csc_structure,
    expand_ptr,
    inverse_permutation,
    sorted_target_offsets,
)
from fastgl.ops import csc_from_coo
from fastgl.ops._compat import is_compiling

GraphInput = Tensor | Structure
Features = Tensor | tuple[Tensor, Tensor | None]

_SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc)


@dataclass
class Adjacency:
    """A graph input resolved for fastgl's ops.

    Attributes:
        structure: what :func:`fastgl.nn.functional.aggregate` and friends read; its sizes are
            the graph's (``num_src`` rows of source features, ``num_dst`` rows of output).
        edge_order: ``[E]`` for every edge of ``structure`` (in its own order), the position of
            that edge in the caller's edge order; ``None`` when the two orders agree.
        values: ``[E]`` a sparse ``adj_t``'s values in the structure's edge order (what PyG
            weighs that edge's message by); ``None`` for every other graph input.
    """

    structure: Structure
    edge_order: Tensor | None = None
    values: Tensor | None = None

    @property
    def num_src(self) -> int:
        return self.structure.num_src

    @property
    def num_dst(self) -> int:
        return self.structure.num_dst

    @property
    def num_edges(self) -> int:
        return self.structure.num_edges

    @property
    def device(self) -> torch.device:
        return self.structure.device

    def to_structure_order(self, edge_data: Tensor) -> Tensor:
        """Reorders per-edge data from the caller's edge order into the structure's."""
        return edge_data if self.edge_order is None else edge_data[self.edge_order]

    def to_caller_order(self, edge_data: Tensor) -> Tensor:
        """Reorders per-edge data (first dim) from the structure's edge order into the
        caller's (the inverse of :meth:`to_structure_order`; differentiable)."""
        if self.edge_order is None:
            return edge_data
        return edge_data[inverse_permutation(self.edge_order)]

    def caller_edge_index(self) -> Tensor:
        """``[2, E]`` int64 ``(source, destination)`` of every edge, in the caller's order."""
        structure = self.structure
        pairs = torch.stack([structure.src_index().to(torch.int64), structure.dst_index()])
        return self.to_caller_order(pairs.t()).t()

    def slot_order(self) -> Tensor | None:
        """``[E]`` the caller's position of the edge in every CSC slot (destination-grouped,
        what the ops read), or ``None`` when the two orders agree."""
        perm = self.structure.csc()[2]
        if perm is None:
            return self.edge_order
        return perm if self.edge_order is None else self.edge_order[perm]

    def caller_sorted_by_dst(self) -> bool:
        """Whether the caller gave the edges sorted by destination (then the CSC slots, in
        which every destination's in-edges keep their relative order, are the caller's edges
        in the caller's order)."""
        order = self.slot_order()
        return order is None or bool(
            torch.equal(order, torch.arange(order.numel(), device=order.device))
        )

    def with_self_loops(self, num_loops: int, keep_order: bool = False) -> "Adjacency":
        """The graph without its self-loops, plus one loop ``(i, i)`` for each ``i < num_loops``.

        The result is destination-sorted (each loop is the last in-edge of its node) and built
        without a sort. Built once per graph or block and cached on it, so that a model run on
        the same structure every step (and the backward pass, whose transposed structure is
        cached on the result) does not rebuild it; its ``edge_ids()`` number its own slots,
        not edges of the user's graph, and a block's result has local ``src_nodes``.

        Its ``edge_order`` is ``None`` (its own order), for layers that carry no per-edge
        input; with ``keep_order=True`` it is the position of every edge in PyG's edge list
        with self-loops (``remove_self_loops`` then ``add_self_loops``): the caller's edges
        that are not loops, in the caller's order, then the loops ``(0, 0) ..
        (num_loops - 1, num_loops - 1)``. Per-edge data in that order (edge features with
        their loops' fill values appended) then comes into the structure's order through
        :meth:`to_structure_order`, and results go back with :meth:`to_caller_order`.
        """
        structure, kept_slots, kept_positions = self.structure.cached(
            ("self_loops", num_loops), lambda: self._build_with_self_loops(num_loops)
        )
        if not keep_order:
            return Adjacency(structure)
        return Adjacency(structure, self._looped_order(structure, kept_slots, kept_positions))

    def _build_with_self_loops(self, num_loops: int) -> tuple[Structure, Tensor, Tensor]:
        """``(structure, kept_slots, kept_positions)``: the looped structure, the CSC slots of
        the edges it keeps and their slots in it."""
        indptr, indices, _ = self.structure.csc()
        num_dst = self.num_dst
        device = indptr.device
        dst = expand_ptr(indptr, indices.numel())
        keep = indices != dst
        kept_slots = torch.nonzero(keep).view(-1)
        kept_src, kept_dst = indices[kept_slots], dst[kept_slots]
        has_loop = torch.arange(num_dst, device=device) < num_loops
        degree = torch.bincount(kept_dst, minlength=num_dst) + has_loop
        new_indptr = torch.cat([degree.new_zeros(1), torch.cumsum(degree, 0)])
        new_indices = torch.empty(int(new_indptr[-1]), dtype=torch.int64, device=device)
        # Kept edges keep their order; every loop before them (rows < dst) shifts them by one.
        kept_positions = torch.arange(kept_src.numel(), device=device) + kept_dst.clamp(
            max=num_loops
        )
        new_indices[kept_positions] = kept_src.to(torch.int64)
        new_indices[new_indptr[1 : num_loops + 1] - 1] = torch.arange(num_loops, device=device)
        structure = csc_structure(new_indptr, new_indices, self.num_src, num_dst)
        return structure, kept_slots, kept_positions

    def _looped_order(
        self, looped: Structure, kept_slots: Tensor, kept_positions: Tensor
    ) -> Tensor:
        """Every slot of ``looped``'s position in PyG's looped edge list (see
        :meth:`with_self_loops`)."""
        caller = self.slot_order()
        kept_callers = kept_slots if caller is None else caller[kept_slots]
        is_kept = torch.zeros(self.num_edges, dtype=torch.bool, device=self.device)
        is_kept[kept_callers] = True
        rank = torch.cumsum(is_kept, 0) - 1  # a kept edge's place among the kept edges
        order = torch.empty(looped.num_edges, dtype=torch.int64, device=self.device)
        order[kept_positions] = rank[kept_callers]
        is_loop = torch.ones(looped.num_edges, dtype=torch.bool, device=self.device)
        is_loop[kept_positions] = False
        order[is_loop] = kept_positions.numel() + looped.dst_index()[is_loop]
        return order


def _from_pairs(
    where: str, what: str, src: Tensor, dst: Tensor, num_src: int, num_dst: int, maybe_sorted: bool
) -> Adjacency:
    """The edges ``src[e] -> dst[e]`` (int64), checked against the sizes.

    Edges that claim to be destination-sorted (a column-sorted EdgeIndex, a coalesced COO) are
    read as a CSC as they are (their edge order kept); the claim is checked first, since a wrong
    sort flag would otherwise give a silently wrong answer. Everything else is sorted once by
    destination (a stable counting sort).
    """
    _check_ids(where, what, src, num_src, "source")
    _check_ids(where, what, dst, num_dst, "target")
    offsets = sorted_target_offsets(dst, num_dst) if maybe_sorted else None
    if offsets is not None:
        # Contiguous, so that every op reads the structure's own array, not a copy per call.
        return Adjacency(csc_structure(offsets, src.contiguous(), num_src, num_dst))
    indptr, indices, perm = csc_from_coo(src, dst, max(num_src, num_dst))
    return Adjacency(csc_structure(indptr[: num_dst + 1], indices, num_src, num_dst, perm), perm)


def _check_ids(where: str, what: str, ids: Tensor, num_nodes: int, side: str) -> None:
    """:func:`fastgl.graph.check_ids`, asked of the checked-once record first: a layer called
    again and again on the same ``edge_index`` on a GPU (full-graph training) reads its ids'
    range back on the first call only, while the array is unchanged. Under ``torch.compile``
    an assertion inside the graph instead, since reading the ids' range back to Python would
    break the graph there."""
    if not is_compiling():
        if not torch.ops.fastgl._ids_in_range(ids, num_nodes):
            check_ids(where, what, ids, num_nodes, side)  # raises, with the offending id
        return
    torch._assert_async(
        ((ids >= 0) & (ids < num_nodes)).all(),
        f"{where}: {what} has a {side} id out of range for {num_nodes} {side} nodes",
    )


def _rows(t: Tensor) -> int:
    return t.shape[0]


def _check_features(where: str, name: str, t: Tensor) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: {name} must be a tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(
            f"{where}: {name} must be 2-D [num_nodes, channels], got shape {tuple(t.shape)}"
        )
    if not t.is_floating_point():
        raise ValueError(f"{where}: {name} must be a floating-point tensor, got {t.dtype}")


def _check_size(where: str, size: Sequence[int | None] | None) -> None:
    if size is None:
        return
    if (
        not isinstance(size, (tuple, list))
        or len(size) != 2
        or any(s is not None and (not isinstance(s, int) or s < 0) for s in size)
    ):
        raise ValueError(
            f"{where}: size must be a pair (num_src, num_dst) of non-negative ints, got {size!r}"
        )


def _check_size_agrees(
    where: str, size: Sequence[int | None] | None, adj: Adjacency, given: str
) -> None:
    """A graph that knows its sizes takes ``size`` only as a check (``None`` entries pass)."""
    if size is not None and any(
        s is not None and s != n for s, n in zip(size, (adj.num_src, adj.num_dst))
    ):
        raise ValueError(f"{where}: size={tuple(size)} disagrees with {given}")


def _pyg_edge_index_class():
    """PyG's ``EdgeIndex`` class if PyG is loaded (no EdgeIndex can exist otherwise), so that
    fastgl does not import PyG itself."""
    return getattr(sys.modules.get("torch_geometric"), "EdgeIndex", None)


def _is_pyg_edge_index(obj) -> bool:
    cls = _pyg_edge_index_class()
    return cls is not None and isinstance(obj, cls)


def _is_torch_sparse_object(obj) -> bool:
    """A ``torch_sparse.SparseTensor`` (found by its module: torch-sparse is not installed here)."""
    return type(obj).__module__.split(".")[0] == "torch_sparse"


FLOWS = ("source_to_target", "target_to_source")


def check_flow(where: str, flow: str) -> None:
    if flow not in FLOWS:
        raise ValueError(
            f"{where}: flow must be 'source_to_target' or 'target_to_source', got {flow!r}"
        )


def _reverse_flow(
    where: str, x: Features, edge_index: GraphInput, size: Sequence[int | None] | None
) -> tuple[GraphInput, tuple | None]:
    """PyG's ``flow="target_to_source"``: messages go from ``edge_index[1]`` to
    ``edge_index[0]`` and ``size`` is ``(num_dst, num_src)``; returns the same graph in the
    default flow. Only an edge list has a direction to reverse, and only one feature tensor
    a meaning under it (PyG would read a pair's second tensor as the sources)."""
    if isinstance(x, (tuple, list)):
        raise ValueError(
            f"{where}: flow='target_to_source' takes one feature tensor x, got a pair; for a "
            f"bipartite graph pass edge_index.flip(0) with flow='source_to_target'"
        )
    if isinstance(edge_index, Structure) or (
        isinstance(edge_index, Tensor) and edge_index.layout != torch.strided
    ):
        raise ValueError(
            f"{where}: flow='target_to_source' applies to an edge_index [2, E]; a "
            f"{'sparse adj_t' if isinstance(edge_index, Tensor) else type(edge_index).__name__}"
            f" fixes the direction of its edges: pass its transpose with "
            f"flow='source_to_target' instead"
        )
    if _is_pyg_edge_index(edge_index):
        size = _size_of_pyg_edge_index(where, edge_index, size)
        edge_index = edge_index.as_tensor()
    if isinstance(edge_index, Tensor) and edge_index.dim() == 2:
        edge_index = edge_index.flip(0)
    return edge_index, None if size is None else tuple(reversed(size))


def adjacency_of(
    where: str,
    x: Features,
    edge_index: GraphInput,
    size: Sequence[int | None] | None = None,
    flow: str = "source_to_target",
) -> tuple[Tensor, Tensor | None, Adjacency]:
    """Resolves a layer's ``(x, edge_index, size)`` into ``(x_src, x_dst, adjacency)``.

    ``edge_index`` is any graph input of the module docstring. ``x_dst`` is the destination
    features: the given ``x_dst`` of a pair (possibly ``None``, as in PyG), or, for a single
    tensor ``x``, its first ``num_dst`` rows (destinations are the prefix of the sources: a
    Block's layout, and the identity on square graphs). ``flow="target_to_source"`` (PyG's)
    reverses an ``edge_index``: messages go from ``edge_index[1]`` to ``edge_index[0]``, and
    ``size`` is ``(num_dst, num_src)``.
    """
    _check_size(where, size)
    if flow != "source_to_target":
        check_flow(where, flow)
        edge_index, size = _reverse_flow(where, x, edge_index, size)
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise ValueError(
                f"{where}: x must be a tensor or a pair (x_src, x_dst), got a "
                f"{type(x).__name__} of {len(x)}"
            )
        x_src, x_dst = x
        paired = True
        _check_features(where, "x_src", x_src)
        if x_dst is not None:
            _check_features(where, "x_dst", x_dst)
    else:
        x_src, x_dst, paired = x, None, False
        _check_features(where, "x", x_src)

    given = None  # for a graph that knows its own sizes: how to name it when size disagrees
    if isinstance(edge_index, Structure):
        adj = Adjacency(edge_index, edge_index.original_order)
        given = (
            f"a {type(edge_index).__name__} of {adj.num_src} sources and {adj.num_dst} destinations"
        )
    elif isinstance(edge_index, Tensor) and edge_index.layout != torch.strided:
        adj = _adjacency_of_sparse(where, edge_index)
        given = f"a sparse adj_t of shape {list(edge_index.shape)} ([num_dst, num_src])"
    elif _is_pyg_edge_index(edge_index):
        adj = _adjacency_of_edge_index(
            where,
            x_src,
            x_dst,
            paired,
            edge_index.as_tensor(),
            _size_of_pyg_edge_index(where, edge_index, size),
            dst_sorted=edge_index.is_sorted_by_col,
        )
    elif isinstance(edge_index, Tensor):
        adj = _adjacency_of_edge_index(where, x_src, x_dst, paired, edge_index, size)
    elif _is_torch_sparse_object(edge_index):
        raise TypeError(
            f"{where}: torch_sparse.SparseTensor is not supported (torch-sparse is "
            f"not a dependency of fastgl); pass adj_t.to_torch_sparse_csr_tensor(), "
            f"got {type(edge_index).__name__}"
        )
    else:
        raise TypeError(
            f"{where}: the graph must be an edge_index tensor [2, E], a "
            f"torch_geometric.EdgeIndex, a sparse adj_t [num_dst, num_src], a "
            f"fastgl.CSCGraph or a fastgl.Block, got {type(edge_index).__name__}"
        )

    if given is not None:
        _check_size_agrees(where, size, adj, given)
    if _rows(x_src) != adj.num_src:
        raise ValueError(
            f"{where}: {'x_src' if paired else 'x'} has {_rows(x_src)} rows but "
            f"the graph has {adj.num_src} source nodes"
        )
    if x_src.device != adj.device:
        raise ValueError(f"{where}: x is on {x_src.device} but the graph is on {adj.device}")
    if paired:
        if x_dst is not None and _rows(x_dst) != adj.num_dst:
            raise ValueError(
                f"{where}: x_dst has {_rows(x_dst)} rows but the graph has "
                f"{adj.num_dst} destination nodes"
            )
    else:
        if adj.num_dst > adj.num_src:
            raise ValueError(
                f"{where}: with a single feature tensor x, destinations are the "
                f"first num_dst sources, so num_dst ({adj.num_dst}) must not exceed "
                f"num_src ({adj.num_src}); pass x=(x_src, x_dst) instead"
            )
        x_dst = x_src[: adj.num_dst]
    return x_src, x_dst, adj


def _dense_hint(t: Tensor) -> str:
    """A floating-point or boolean 2-D "edge_index" is most likely a dense adjacency matrix."""
    if t.dim() == 2 and (t.is_floating_point() or t.dtype == torch.bool):
        return (
            " (a dense adjacency matrix is not accepted: pass a sparse adj_t [num_dst, "
            "num_src], e.g. adj_t.to_sparse_csr())"
        )
    return ""


def _adjacency_of_edge_index(
    where: str,
    x_src: Tensor,
    x_dst: Tensor | None,
    paired: bool,
    edge_index: Tensor,
    size,
    dst_sorted: bool = False,
) -> Adjacency:
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(
            f"{where}: edge_index must have shape [2, E], got "
            f"{tuple(edge_index.shape)}{_dense_hint(edge_index)}"
        )
    if edge_index.dtype not in (torch.int32, torch.int64):
        raise ValueError(
            f"{where}: edge_index must be int32 or int64, got "
            f"{edge_index.dtype}{_dense_hint(edge_index)}"
        )
    num_src = size[0] if size is not None and size[0] is not None else _rows(x_src)
    if size is not None and size[1] is not None:
        num_dst = size[1]
    elif paired:
        if x_dst is None:
            raise ValueError(
                f"{where}: x_dst is None, so the number of destinations is "
                f"unknown: pass size=(num_src, num_dst)"
            )
        num_dst = _rows(x_dst)
    else:
        num_dst = num_src
    edge_index = edge_index.to(torch.int64)
    return _from_pairs(
        where, "edge_index", edge_index[0], edge_index[1], num_src, num_dst, maybe_sorted=dst_sorted
    )


def _size_of_pyg_edge_index(
    where: str, edge_index: Tensor, size: Sequence[int | None] | None
) -> tuple:
    """``size`` completed by the EdgeIndex's ``sparse_size`` ``(num_src, num_dst)``.

    PyG's ``MessagePassing`` takes the sparse size as the size and ignores a ``size`` argument;
    here one that contradicts it is an error instead of being dropped silently.
    """
    known = tuple(edge_index.sparse_size())
    asked = (None, None) if size is None else tuple(size)
    for a, k in zip(asked, known):
        if a is not None and k is not None and a != k:
            raise ValueError(
                f"{where}: size={asked} disagrees with the EdgeIndex's sparse_size {known}"
            )
    return tuple(k if k is not None else a for a, k in zip(asked, known))


def _adjacency_of_sparse(where: str, adj_t: Tensor) -> Adjacency:
    """A torch sparse ``adj_t`` ``[num_dst, num_src]``: entry ``(i, j)`` is an edge ``j -> i``,
    its value in :attr:`Adjacency.values`."""
    if adj_t.layout not in _SPARSE_LAYOUTS:
        raise ValueError(
            f"{where}: a sparse adj_t must be in the sparse_coo, sparse_csr or "
            f"sparse_csc layout, got {adj_t.layout}"
        )
    if adj_t.dim() != 2:
        raise ValueError(
            f"{where}: a sparse adj_t must be a 2-D matrix [num_dst, num_src] "
            f"with one value per entry, got shape {tuple(adj_t.shape)} "
            f"({adj_t.sparse_dim()} sparse and {adj_t.dense_dim()} dense dims)"
        )
    num_dst, num_src = adj_t.shape
    if adj_t.layout == torch.sparse_csr:
        # The CSR of adj_t is the CSC of the graph: rows are destinations, columns sources.
        crow, col = adj_t.crow_indices(), adj_t.col_indices()
        check_offsets(where, "adj_t.crow_indices()", crow, col.numel(), "nnz")
        _check_ids(where, "adj_t", col, num_src, "source")
        structure = csc_structure(crow.to(torch.int64), col.contiguous(), num_src, num_dst)
        return Adjacency(structure, values=adj_t.values())
    if adj_t.layout == torch.sparse_coo:
        # PyG's spmm turns a COO into a CSR, which coalesces it; coalesced, it is sorted by
        # (destination, source).
        adj_t = adj_t.coalesce()
        dst, src = adj_t.indices()
        adj = _from_pairs(where, "adj_t", src, dst, num_src, num_dst, maybe_sorted=True)
    else:  # CSC: compressed over the sources, so the edges need one sort by destination
        ccol, row = adj_t.ccol_indices(), adj_t.row_indices()
        check_offsets(where, "adj_t.ccol_indices()", ccol, row.numel(), "nnz")
        src = expand_ptr(ccol, row.numel())
        adj = _from_pairs(
            where, "adj_t", src, row.to(torch.int64), num_src, num_dst, maybe_sorted=False
        )
    return replace(adj, values=adj.to_structure_order(adj_t.values()))


def sparse_adj_t(adj: Adjacency, values: Tensor, layout: torch.layout) -> tuple[Tensor, Tensor]:
    """``(adj_t, values)``: a torch sparse ``adj_t`` ``[num_dst, num_src, *values.shape[1:]]``
    of the adjacency's edges in ``layout``, holding ``values`` (one row per edge, given in the
    structure's order), and its values in its own entry order (both differentiable): what PyG
    returns for a sparse input. Entries are sorted by (destination, source), as in a coalesced
    COO (which also merges duplicate entries) and a CSR built from one; a CSC's by (source,
    destination)."""
    structure = adj.structure
    dst, src = structure.dst_index(), structure.src_index().to(torch.int64)
    shape = (adj.num_dst, adj.num_src, *values.shape[1:])
    if layout == torch.sparse_coo:
        coo = torch.sparse_coo_tensor(torch.stack([dst, src]), values, shape).coalesce()
        return coo, coo.values()
    by_src = layout == torch.sparse_csc
    major, minor = (src, dst) if by_src else (dst, src)
    num_major = adj.num_src if by_src else adj.num_dst
    order = torch.argsort(major * max(adj.num_dst, adj.num_src, 1) + minor, stable=True)
    counts = torch.bincount(major, minlength=num_major)
    offsets = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    values = values[order]
    build = torch.sparse_csc_tensor if by_src else torch.sparse_csr_tensor
    return build(offsets, minor[order], values, shape), values
