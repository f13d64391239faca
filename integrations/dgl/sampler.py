"""A drop-in for ``dgl.dataloading.NeighborSampler`` that samples with fastgl's compiled ops.

Same arguments, same fanout order (input layer first), same output: ``(input_nodes,
output_nodes, blocks)`` where every block carries global ``dgl.NID`` on its source and
destination nodes and global ``dgl.EID`` on its edges, destinations are the prefix of sources,
and ids have the graph's idtype. Like DGL's sampler, every layer draws fresh neighbors for all of
its destination nodes (DGL's layer-wise semantics, not PyG's hop-wise one).
"""

import itertools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import dgl
import torch
from dgl import heterograph_index
from dgl.dataloading import BlockSampler
from dgl.heterograph import DGLBlock
from torch import Tensor

from fastgl.ops import sample_hops
from fastgl.sampling.neighbor import checked_fanouts, draw_key


@dataclass
class _GraphCSC:
    """A DGLGraph's in-edges in the form fastgl's sampling op reads, built once per graph."""

    indptr: Tensor
    indices: Tensor
    eid: Tensor  # CSC slot -> DGL edge id
    weight: Tensor | None  # prob/mask in CSC slot order, or None for uniform sampling
    weight_source: tuple | None  # identity and version of the edge data it came from
    _slot_of_eid: Tensor | None = None
    _exclusion_weight: Tensor | None = None

    def excluding(self, exclude_eids: Tensor):
        """Edge weights with the edges ``exclude_eids`` at zero (never drawn), and a function
        that undoes the change. One cached buffer, so a batch pays O(#excluded), not O(E).
        Ids that name no edge (negative, or past the last edge) exclude nothing, as in DGL."""
        num_edges = self.eid.numel()
        exclude_eids = exclude_eids[(exclude_eids >= 0) & (exclude_eids < num_edges)]
        if self._slot_of_eid is None:
            self._slot_of_eid = torch.empty_like(self.eid)
            self._slot_of_eid[self.eid] = torch.arange(self.eid.numel(), device=self.eid.device)
            self._exclusion_weight = (
                self.weight.clone()
                if self.weight is not None
                else torch.ones(self.eid.numel(), device=self.eid.device)
            )
        buffer = self._exclusion_weight
        slots = self._slot_of_eid[exclude_eids]
        kept = buffer[slots]
        buffer[slots] = 0

        def restore() -> None:
            buffer[slots] = kept

        return buffer, restore


class NeighborSampler(BlockSampler):
    """Samples ``fanouts[i]`` in-neighbors per destination node of layer ``i`` (input layer
    first), like :class:`dgl.dataloading.NeighborSampler`, with fastgl's compiled kernels.

    Args:
        fanouts: neighbors per node for each GNN layer, input layer first (DGL's order;
            :class:`fastgl.NeighborSampler` takes PyG's, seeds outward); ``-1`` takes all.
        edge_dir: ``"in"`` (the only direction supported).
        prob: name of a non-negative float edge feature: draws are proportional to it and
            zero-probability edges are never drawn.
        mask: name of a boolean edge feature: only edges where it is true are drawn (exclusive
            with ``prob``, as in DGL).
        replace: sample with replacement.
        prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device: as in
            :class:`dgl.dataloading.BlockSampler` (lazy features on the blocks).
        fused: accepted for DGL compatibility; fastgl's sampler is always a fused compiled path.

    The graph's in-edge CSC is built once and cached per graph. A CPU graph is sampled on the CPU
    and a GPU graph on the GPU; with ``use_uva=True`` (pinned CPU graph, seeds on the GPU) the
    sample is drawn on the CPU and the blocks are moved to the seeds' device.

    Example:
        >>> from fastgl.integrations.dgl import NeighborSampler   # the only changed line
        >>> sampler = NeighborSampler([10, 25], prefetch_node_feats=["feat"])
        >>> loader = dgl.dataloading.DataLoader(g, train_nids, sampler, batch_size=1024)
        >>> for input_nodes, output_nodes, blocks in loader: ...
    """

    def __init__(
        self,
        fanouts: Sequence[int],
        edge_dir: str = "in",
        prob: str | None = None,
        mask: str | None = None,
        replace: bool = False,
        prefetch_node_feats=None,
        prefetch_labels=None,
        prefetch_edge_feats=None,
        output_device=None,
        fused: bool = True,
    ) -> None:
        super().__init__(
            prefetch_node_feats=prefetch_node_feats,
            prefetch_labels=prefetch_labels,
            prefetch_edge_feats=prefetch_edge_feats,
            output_device=output_device,
        )
        if edge_dir != "in":
            raise ValueError(
                f"fastgl NeighborSampler: only edge_dir='in' is supported, got "
                f"{edge_dir!r}; use dgl.dataloading.NeighborSampler for out-edges"
            )
        if prob is not None and mask is not None:
            raise ValueError(
                "fastgl NeighborSampler: prob and mask are mutually exclusive; "
                "multiply the probability by the mask instead"
            )
        self.fanouts = checked_fanouts("fastgl NeighborSampler", fanouts)
        self.edge_dir = edge_dir
        self.prob = prob
        self.mask = mask
        self.replace = replace
        self.fused = fused
        self._graph_ref = None
        self._csc: _GraphCSC | None = None

    def sample_blocks(self, g: dgl.DGLGraph, seed_nodes: Tensor, exclude_eids=None):
        """``(input_nodes, output_nodes, blocks)`` for ``seed_nodes``, blocks input layer first."""
        _check_homogeneous(g, seed_nodes, exclude_eids)
        csc = self._graph_csc(g)
        device = csc.indptr.device
        output_device = self.output_device or seed_nodes.device
        seeds = seed_nodes.to(device=device, dtype=torch.int64)
        weight, restore = csc.weight, None
        if exclude_eids is not None and exclude_eids.numel():
            weight, restore = csc.excluding(exclude_eids.to(device=device, dtype=torch.int64))
        try:
            # Layer-wise: every layer's destinations (all nodes so far) draw anew, DGL's semantics.
            sample = sample_hops(
                csc.indptr,
                csc.indices,
                weight,
                csc.eid,
                seeds,
                torch.tensor([0, seeds.numel()], device=device),
                list(reversed(self.fanouts)),
                replace=self.replace,
                layerwise=True,
                seed=draw_key(None, device),
            )
        finally:
            if restore is not None:
                restore()
        blocks = [block.to(output_device) for block in _blocks_of(sample, seeds, g.idtype)]
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seed_nodes.to(output_device)
        return input_nodes, seed_nodes.to(output_device), blocks

    def _graph_csc(self, g: dgl.DGLGraph) -> _GraphCSC:
        """The cached CSC of ``g`` (rebuilt for a different graph, or when the prob/mask edge
        feature was replaced or modified in place)."""
        feature = self.prob or self.mask
        if feature is not None and feature not in g.edata:
            raise ValueError(
                f"fastgl NeighborSampler: the graph has no edge feature "
                f"{feature!r} (edge features: {list(g.edata.keys())})"
            )
        data = g.edata[feature] if feature is not None else None
        source = None if data is None else (id(data), data._version)
        same_graph = self._graph_ref is not None and self._graph_ref() is g
        if not same_graph or self._csc.weight_source != source:
            self._csc = _build_csc(g, data, source, feature)
            self._graph_ref = weakref.ref(g)
        return self._csc


class MultiLayerFullNeighborSampler(NeighborSampler):
    """Every in-neighbor at every layer, like
    :class:`dgl.dataloading.MultiLayerFullNeighborSampler`.

    Example:
        >>> sampler = MultiLayerFullNeighborSampler(2)
    """

    def __init__(self, num_layers: int, **kwargs) -> None:
        super().__init__([-1] * num_layers, **kwargs)


def _check_homogeneous(g: dgl.DGLGraph, seed_nodes, exclude_eids) -> None:
    if (
        len(g.ntypes) > 1
        or len(g.canonical_etypes) > 1
        or isinstance(seed_nodes, dict)
        or isinstance(exclude_eids, dict)
    ):
        raise NotImplementedError(
            "fastgl NeighborSampler: heterogeneous graphs are not "
            "supported yet; use dgl.dataloading.NeighborSampler"
        )
    if not isinstance(seed_nodes, Tensor) or seed_nodes.dim() != 1:
        raise ValueError(
            f"fastgl NeighborSampler: seed_nodes must be a 1-D tensor of node ids, "
            f"got {type(seed_nodes).__name__}"
        )


def _build_csc(g: dgl.DGLGraph, data: Tensor | None, source, feature) -> _GraphCSC:
    """In-edge CSC of ``g`` on the device fastgl samples on (the CPU for a pinned graph)."""
    indptr, indices, eid = g.adj_tensors("csc")
    eid = eid.to(torch.int64)
    weight = None
    if data is not None:
        if data.dim() != 1 or data.numel() != g.num_edges():
            raise ValueError(
                f"fastgl NeighborSampler: edge feature {feature!r} must have shape "
                f"[{g.num_edges()}], got {tuple(data.shape)}"
            )
        if data.dtype != torch.bool and bool((data < 0).any()):
            raise ValueError(
                f"fastgl NeighborSampler: edge feature {feature!r} must be non-negative"
            )
        weight = data.to(indptr.device)[eid]
        weight = weight.to(torch.float64 if weight.dtype == torch.float64 else torch.float32)
    return _GraphCSC(indptr.to(torch.int64), indices, eid, weight, source)


def _csc_block(
    ptr: Tensor, src: Tensor, edge_ids: Tensor, num_src: int, num_dst: int
) -> dgl.DGLGraph:
    """A DGL block over a CSC that fastgl built and checked itself, made the way DGL's own
    samplers make theirs: straight from the arrays, without ``dgl.create_block``'s re-validation
    (a max over the sources) and per-relation graph objects, which cost more than the draws on
    small batches. ``heterograph_index`` and ``DGLBlock`` are DGL internals (as of DGL 2.1, the
    version the Makefile installs and the tests run against)."""
    graph_index = heterograph_index.create_unitgraph_from_csr(
        2, num_src, num_dst, ptr, src, edge_ids, ["coo", "csr", "csc"], True
    )
    return DGLBlock(graph_index, (["_N"], ["_N"]), ["_E"])


def _blocks_of(sample, seeds: Tensor, idtype: torch.dtype) -> list[dgl.DGLGraph]:
    """DGL blocks, input layer first, from a layer-wise ``sample_hops`` result of one batch:
    the block of hop ``h`` has the nodes of hops ``< h`` as destinations (a prefix of the sources,
    which add the nodes new at hop ``h``)."""
    node_counts, edge_counts = sample.node_counts[0].tolist(), sample.edge_counts[0].tolist()
    if node_counts[0] != seeds.numel():
        raise ValueError("fastgl NeighborSampler: seed_nodes contains duplicate ids")
    node_ends = list(itertools.accumulate(node_counts))
    edge_ends = [0] + list(itertools.accumulate(edge_counts))
    nodes = sample.nodes.to(idtype)
    no_edge_ids = nodes.new_empty(0)
    blocks = []
    for hop, (num_dst, num_src) in enumerate(zip(node_ends, node_ends[1:])):
        edges = slice(edge_ends[hop], edge_ends[hop + 1])
        # A hop's edges come grouped by destination in order: they are a CSC over them already.
        per_dst = torch.bincount(sample.col[edges], minlength=num_dst)
        ptr = torch.cat([per_dst.new_zeros(1), per_dst.cumsum(0)]).to(idtype)
        block = _csc_block(ptr, sample.row[edges].to(idtype), no_edge_ids, num_src, num_dst)
        block.srcdata[dgl.NID] = nodes[:num_src]
        block.dstdata[dgl.NID] = nodes[:num_dst]
        block.edata[dgl.EID] = sample.edge_ids[edges].to(idtype)
        blocks.insert(0, block)
    return blocks
