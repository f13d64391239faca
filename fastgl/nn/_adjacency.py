"""Turning a layer's inputs into the structure fastgl's ops read.

Every layer accepts the same three kinds of graph input:

* a :class:`~fastgl.CSCGraph` (square: every node is a source and a destination);
* a sampled :class:`~fastgl.Block` (destinations are its first ``num_dst_nodes`` sources);
* a PyG-style ``edge_index`` ``[2, E]`` (row 0 = source, row 1 = target), with an optional
  ``size=(num_src, num_dst)`` for bipartite graphs,

and node features either as one tensor or as a PyG-style pair ``(x_src, x_dst)``.
:func:`adjacency_of` resolves these into an :class:`Adjacency`: the structure (a CSCGraph, or a
destination-sorted Block), its sizes, and how to bring edge data given in the caller's edge order
into the structure's own edge order. Nothing is cached here.
"""

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import torch

from ..graph import CSCGraph
from ..ops import csc_from_coo
from ..ops._aggregate import csc_of
from ..sampling.subgraph import Block

Tensor = torch.Tensor
Structure = Union[CSCGraph, Block]
GraphInput = Union[Tensor, CSCGraph, Block]
Features = Union[Tensor, Tuple[Tensor, Optional[Tensor]]]


@dataclass
class Adjacency:
    """A graph input resolved for fastgl's ops.

    Attributes:
        structure: what :func:`fastgl.ops.aggregate` and friends read.
        num_src: number of source nodes (rows of the source features).
        num_dst: number of destination nodes (rows of the output).
        edge_order: ``[E]`` for every edge of ``structure`` (in its own order), the position of
            that edge in the caller's edge order; ``None`` when the two orders agree.
    """

    structure: Structure
    num_src: int
    num_dst: int
    edge_order: Optional[Tensor]

    @property
    def num_edges(self) -> int:
        return self.structure.num_edges

    @property
    def device(self) -> torch.device:
        if isinstance(self.structure, CSCGraph):
            return self.structure.device
        return self.structure.src.device

    def to_structure_order(self, edge_data: Tensor) -> Tensor:
        """Reorders per-edge data from the caller's edge order into the structure's."""
        return edge_data if self.edge_order is None else edge_data[self.edge_order]

    def src_index(self) -> Tensor:
        """``[E]`` int64 source of every edge, in the structure's edge order."""
        if isinstance(self.structure, CSCGraph):
            return self.structure.indices.to(torch.int64)
        return self.structure.src

    def dst_index(self) -> Tensor:
        """``[E]`` int64 destination of every edge, in the structure's edge order."""
        if isinstance(self.structure, CSCGraph):
            indptr = self.structure.indptr
            return torch.repeat_interleave(
                torch.arange(self.num_dst, device=indptr.device), indptr[1:] - indptr[:-1],
                output_size=self.num_edges)
        return self.structure.dst

    def csc(self) -> Tuple[Tensor, Tensor]:
        """``(indptr, indices)`` over the destinations, whatever the structure's edge order."""
        indptr, indices, _ = csc_of(self.structure)
        return indptr, indices.to(torch.int64)

    def with_self_loops(self, num_loops: int) -> "Adjacency":
        """The graph without its self-loops, plus one loop ``(i, i)`` for each ``i < num_loops``.

        The result is destination-sorted (each loop is the last in-edge of its node) and built
        without a sort; its edge order is its own (``edge_order`` is ``None``), so it suits
        layers that carry no per-edge input (GAT).
        """
        indptr, indices = self.csc()
        num_dst = self.num_dst
        device = indptr.device
        dst = torch.repeat_interleave(torch.arange(num_dst, device=device),
                                      indptr[1:] - indptr[:-1], output_size=indices.numel())
        keep = indices != dst
        kept_src, kept_dst = indices[keep], dst[keep]
        has_loop = torch.arange(num_dst, device=device) < num_loops
        degree = torch.bincount(kept_dst, minlength=num_dst) + has_loop
        new_indptr = torch.cat([degree.new_zeros(1), torch.cumsum(degree, 0)])
        new_indices = torch.empty(int(new_indptr[-1]), dtype=torch.int64, device=device)
        # Kept edges keep their order; every loop before them (rows < dst) shifts them by one.
        new_indices[torch.arange(kept_src.numel(), device=device)
                    + kept_dst.clamp(max=num_loops)] = kept_src
        new_indices[new_indptr[1: num_loops + 1] - 1] = torch.arange(num_loops, device=device)
        if isinstance(self.structure, CSCGraph):
            structure: Structure = CSCGraph(new_indptr, new_indices, validate=False)
        else:
            new_dst = torch.repeat_interleave(torch.arange(num_dst, device=device), degree,
                                              output_size=new_indices.numel())
            structure = Block(src=new_indices, dst=new_dst,
                              eid=torch.full_like(new_indices, -1),
                              src_nodes=self.structure.src_nodes, num_src_nodes=self.num_src,
                              num_dst_nodes=num_dst)
        return Adjacency(structure, self.num_src, self.num_dst, None)


def _check_ids(where: str, name: str, ids: Tensor, bound: int) -> None:
    if ids.numel() == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= bound:
        bad = low if low < 0 else high
        raise ValueError(f"{where}: edge_index has {name} id {bad}, out of range for "
                         f"{bound} {name} nodes")


def _bipartite_block(edge_index: Tensor, num_src: int, num_dst: int) -> Adjacency:
    """A destination-sorted Block of ``edge_index`` (one stable counting sort)."""
    indptr, indices, perm = csc_from_coo(edge_index[0], edge_index[1], max(num_src, num_dst))
    indptr = indptr[: num_dst + 1]
    dst = torch.repeat_interleave(torch.arange(num_dst, device=indptr.device),
                                  indptr[1:] - indptr[:-1], output_size=indices.numel())
    src_nodes = torch.arange(num_src, device=indptr.device)
    block = Block(src=indices.to(torch.int64), dst=dst, eid=perm, src_nodes=src_nodes,
                  num_src_nodes=num_src, num_dst_nodes=num_dst)
    return Adjacency(block, num_src, num_dst, perm)


def _rows(t: Tensor) -> int:
    return t.shape[0]


def _check_features(where: str, name: str, t: Tensor) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: {name} must be a tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{where}: {name} must be 2-D [num_nodes, channels], got shape "
                         f"{tuple(t.shape)}")
    if not t.is_floating_point():
        raise ValueError(f"{where}: {name} must be a floating-point tensor, got {t.dtype}")


def _check_size(where: str, size: Optional[Sequence[Optional[int]]]) -> None:
    if size is None:
        return
    if (not isinstance(size, (tuple, list)) or len(size) != 2
            or any(s is not None and (not isinstance(s, int) or s < 0) for s in size)):
        raise ValueError(f"{where}: size must be a pair (num_src, num_dst) of non-negative "
                         f"ints, got {size!r}")


def adjacency_of(
    where: str,
    x: Features,
    edge_index: GraphInput,
    size: Optional[Sequence[Optional[int]]] = None,
) -> Tuple[Tensor, Optional[Tensor], Adjacency]:
    """Resolves a layer's ``(x, edge_index, size)`` into ``(x_src, x_dst, adjacency)``.

    ``x_dst`` is the destination features: the given ``x_dst`` of a pair (possibly ``None``, as
    in PyG), or, for a single tensor ``x``, its first ``num_dst`` rows (destinations are the
    prefix of the sources: a Block's layout, and the identity on square graphs).
    """
    _check_size(where, size)
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise ValueError(f"{where}: x must be a tensor or a pair (x_src, x_dst), got a "
                             f"{type(x).__name__} of {len(x)}")
        x_src, x_dst = x
        paired = True
        _check_features(where, "x_src", x_src)
        if x_dst is not None:
            _check_features(where, "x_dst", x_dst)
    else:
        x_src, x_dst, paired = x, None, False
        _check_features(where, "x", x_src)

    if isinstance(edge_index, CSCGraph):
        n = edge_index.num_nodes
        adj = Adjacency(edge_index, n, n, edge_index.eid)
        given = f"a CSCGraph of {n} nodes"
    elif isinstance(edge_index, Block):
        adj = Adjacency(edge_index, edge_index.num_src_nodes, edge_index.num_dst_nodes, None)
        given = (f"a Block of {edge_index.num_src_nodes} sources and "
                 f"{edge_index.num_dst_nodes} destinations")
    elif isinstance(edge_index, Tensor) and edge_index.layout != torch.strided:
        raise TypeError(f"{where}: sparse adjacency matrices ({edge_index.layout}) are not "
                        f"supported; pass an edge_index [2, E], a fastgl.CSCGraph or a Block")
    elif isinstance(edge_index, Tensor):
        adj, given = _adjacency_of_edge_index(where, x_src, x_dst, paired, edge_index, size), None
    else:
        raise TypeError(f"{where}: the graph must be an edge_index tensor [2, E], a "
                        f"fastgl.CSCGraph or a fastgl.Block, got {type(edge_index).__name__} "
                        f"(SparseTensor/sparse adjacency input is not supported)")

    if given is not None and size is not None and tuple(size) != (adj.num_src, adj.num_dst):
        raise ValueError(f"{where}: size={tuple(size)} disagrees with {given}")
    if _rows(x_src) != adj.num_src:
        raise ValueError(f"{where}: {'x_src' if paired else 'x'} has {_rows(x_src)} rows but "
                         f"the graph has {adj.num_src} source nodes")
    if x_src.device != adj.device:
        raise ValueError(f"{where}: x is on {x_src.device} but the graph is on {adj.device}")
    if paired:
        if x_dst is not None and _rows(x_dst) != adj.num_dst:
            raise ValueError(f"{where}: x_dst has {_rows(x_dst)} rows but the graph has "
                             f"{adj.num_dst} destination nodes")
    else:
        if adj.num_dst > adj.num_src:
            raise ValueError(f"{where}: with a single feature tensor x, destinations are the "
                             f"first num_dst sources, so num_dst ({adj.num_dst}) must not exceed "
                             f"num_src ({adj.num_src}); pass x=(x_src, x_dst) instead")
        x_dst = x_src[: adj.num_dst]
    return x_src, x_dst, adj


def _adjacency_of_edge_index(where: str, x_src: Tensor, x_dst: Optional[Tensor], paired: bool,
                             edge_index: Tensor, size) -> Adjacency:
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"{where}: edge_index must have shape [2, E], got "
                         f"{tuple(edge_index.shape)}")
    if edge_index.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{where}: edge_index must be int32 or int64, got {edge_index.dtype}")
    num_src = size[0] if size is not None and size[0] is not None else _rows(x_src)
    if size is not None and size[1] is not None:
        num_dst = size[1]
    elif paired:
        if x_dst is None:
            raise ValueError(f"{where}: x_dst is None, so the number of destinations is "
                             f"unknown: pass size=(num_src, num_dst)")
        num_dst = _rows(x_dst)
    else:
        num_dst = num_src
    edge_index = edge_index.to(torch.int64)
    _check_ids(where, "source", edge_index[0], num_src)
    _check_ids(where, "target", edge_index[1], num_dst)
    if num_src == num_dst:
        graph = CSCGraph.from_edge_index(edge_index, num_src)
        return Adjacency(graph, num_src, num_dst, graph.eid)
    return _bipartite_block(edge_index, num_src, num_dst)
