"""A drop-in for ``dgl.dataloading.NeighborSampler`` that samples with fastgl's compiled ops.

Same arguments, same fanout order (input layer first), same output: ``(input_nodes,
output_nodes, blocks)`` where every block carries global ``dgl.NID`` on its source and
destination nodes and global ``dgl.EID`` on its edges, destinations are the prefix of sources,
and ids have the graph's idtype. Like DGL's sampler, every layer draws fresh neighbors for all of
its destination nodes (DGL's layer-wise semantics, not PyG's hop-wise one).

Heterogeneous graphs take DGL's per-edge-type fanouts and seeds ``{ntype: ids}``; they are
sampled by :class:`fastgl.sampling.HeteroNeighborSampler` with ``layerwise=True`` (every layer
draws along all edge types in one compiled call; excluded edges are drawn with weight zero) and
every layer comes back as a DGL heterogeneous block, ids per node and edge type.
"""

import itertools
import operator
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import dgl
import torch
from dgl import graph_index, heterograph_index
from dgl import utils as dgl_utils
from dgl.dataloading import BlockSampler
from dgl.heterograph import DGLBlock
from torch import Tensor

from fastgl.graph import CSCGraph
from fastgl.hetero import BipartiteCSC, HeteroCSCGraph
from fastgl.ops import sample_hops
from fastgl.sampling import HeteroNeighborSampler, HeteroSampledSubgraph
from fastgl.sampling.neighbor import draw_key

_WHERE = "fastgl NeighborSampler"

#: One GNN layer's fanout as DGL takes it: an int for every edge type, or {etype: int}.
LayerFanout = int | Mapping[str | tuple[str, str, str], int]


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
            :class:`fastgl.NeighborSampler` takes PyG's, seeds outward); ``-1`` takes all. On a
            heterogeneous graph a layer's entry is an int for every edge type or, as in DGL, a
            dict ``{etype: int}`` naming every edge type (``etype`` a name or a canonical
            ``(src_type, rel, dst_type)``); ``0`` draws nothing along an edge type.
        edge_dir: ``"in"`` (the only direction supported).
        prob: name of a non-negative float edge feature: draws are proportional to it and
            zero-probability edges are never drawn. On a heterogeneous graph, per edge type:
            edge types without the feature are drawn uniformly, as in DGL.
        mask: name of a boolean edge feature: only edges where it is true are drawn (exclusive
            with ``prob``, as in DGL; per edge type like ``prob``).
        replace: sample with replacement.
        prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device: as in
            :class:`dgl.dataloading.BlockSampler` (lazy features on the blocks; dicts per node
            or edge type on heterogeneous graphs).
        fused: accepted for DGL compatibility; fastgl's sampler is always a fused compiled path.

    Seeds are a tensor of node ids, or on a heterogeneous graph a dict ``{ntype: ids}`` (the
    blocks then hold every node and edge type of the graph, ``dgl.NID`` per node type and
    ``dgl.EID`` per edge type, destinations the prefix of the sources per node type).
    ``exclude_eids`` (from ``as_edge_prediction_sampler``: ``exclude="self"``,
    ``"reverse_id"``, ``"reverse_types"`` or a callable) is a tensor, or a dict ``{etype:
    ids}``; excluded edges are never drawn.

    The graph's in-edge CSC (per edge type: a :class:`fastgl.HeteroCSCGraph`) is built once
    and cached per graph. A CPU graph is sampled on the CPU and a GPU graph on the GPU; with
    ``use_uva=True`` (pinned CPU graph, seeds on the GPU) the sample is drawn on the CPU and the
    blocks are moved to the seeds' device.

    Example:
        >>> from fastgl.integrations.dgl import NeighborSampler   # the only changed line
        >>> sampler = NeighborSampler([10, 25], prefetch_node_feats=["feat"])
        >>> loader = dgl.dataloading.DataLoader(g, train_nids, sampler, batch_size=1024)
        >>> for input_nodes, output_nodes, blocks in loader: ...

        Heterogeneous, with a fanout per edge type (R-GCN style):

        >>> sampler = NeighborSampler([{"writes": 5, "cites": 10}] * 2,
        ...                           prefetch_node_feats={"paper": ["feat"]})
        >>> loader = dgl.dataloading.DataLoader(hg, {"paper": train_nids}, sampler,
        ...                                     batch_size=1024)
    """

    def __init__(
        self,
        fanouts: Sequence[LayerFanout],
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
                f"{_WHERE}: only edge_dir='in' is supported, got "
                f"{edge_dir!r}; use dgl.dataloading.NeighborSampler for out-edges"
            )
        if prob is not None and mask is not None:
            raise ValueError(
                f"{_WHERE}: prob and mask are mutually exclusive; "
                "multiply the probability by the mask instead"
            )
        self.fanouts = _checked_layer_fanouts(fanouts)
        self.edge_dir = edge_dir
        self.prob = prob
        self.mask = mask
        self.replace = replace
        self.fused = fused
        self._graph_ref = None
        self._csc: _GraphCSC | None = None
        self._hetero_ref = None
        self._hetero: _HeteroGraph | None = None

    def sample_blocks(self, g: dgl.DGLGraph, seed_nodes, exclude_eids=None):
        """``(input_nodes, output_nodes, blocks)`` for ``seed_nodes``, blocks input layer first."""
        if len(g.ntypes) > 1 or len(g.canonical_etypes) != 1:
            return self._sample_hetero(g, seed_nodes, exclude_eids)
        seeds = _homogeneous_seeds(g, seed_nodes)
        if isinstance(exclude_eids, Mapping):
            exclude_eids = _exclude_dict(g, exclude_eids).get(g.canonical_etypes[0])
        fanouts = _hop_fanouts(g, self.fanouts)[g.canonical_etypes[0]]
        input_nodes, blocks = self._sample_homogeneous(g, seeds, exclude_eids, fanouts)
        return input_nodes, _to_device(seed_nodes, self.output_device or seeds.device), blocks

    def _sample_homogeneous(self, g, seed_nodes: Tensor, exclude_eids, hop_fanouts: list[int]):
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
                torch.tensor([0, seeds.numel()]),  # read on the host: no copy back
                hop_fanouts,
                replace=self.replace,
                layerwise=True,
                seed=draw_key(None, device),
            )
        finally:
            if restore is not None:
                restore()
        blocks = [block.to(output_device) for block in _blocks_of(sample, seeds, g)]
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seed_nodes.to(output_device)
        return input_nodes, blocks

    def _sample_hetero(self, g: dgl.DGLGraph, seed_nodes, exclude_eids):
        state = self._hetero_graph(g)
        device = state.graph.device
        seeds, seed_device = _hetero_seeds(g, seed_nodes, device)
        output_device = self.output_device or seed_device
        exclude = _exclude_dict(g, exclude_eids) if exclude_eids is not None else {}
        exclude = {etype: ids for etype, ids in exclude.items() if ids.numel()}
        sampler = state.sampler(_hop_fanouts(g, self.fanouts), self.replace)
        weight, restore = None, None
        if exclude:
            weight, restore = state.excluding(exclude)
        try:
            sample = sampler.sample(seeds, edge_weight=weight)
        finally:
            if restore is not None:
                restore()
        for ntype, ids in seeds.items():
            if sample.num_sampled_nodes[ntype][0] != ids.numel():
                raise ValueError(f"{_WHERE}: seed_nodes[{ntype!r}] contains duplicate ids")
        blocks = [block.to(output_device) for block in _hetero_blocks(sample, g, state)]
        if blocks:
            input_nodes = blocks[0].srcdata[dgl.NID]
        else:
            input_nodes = {
                t: ids.to(device=output_device, dtype=g.idtype) for t, ids in seeds.items()
            }
            if len(g.ntypes) == 1:
                input_nodes = input_nodes[g.ntypes[0]]
        return input_nodes, _to_device(seed_nodes, output_device), blocks

    def _graph_csc(self, g: dgl.DGLGraph) -> _GraphCSC:
        """The cached CSC of ``g`` (rebuilt for a different graph, or when the prob/mask edge
        feature was replaced or modified in place)."""
        feature = self.prob or self.mask
        if feature is not None and feature not in g.edata:
            raise ValueError(
                f"{_WHERE}: the graph has no edge feature "
                f"{feature!r} (edge features: {list(g.edata.keys())})"
            )
        data = g.edata[feature] if feature is not None else None
        source = None if data is None else (id(data), data._version)
        same_graph = self._graph_ref is not None and self._graph_ref() is g
        if not same_graph or self._csc.weight_source != source:
            self._csc = _build_csc(g, data, source, feature)
            self._graph_ref = weakref.ref(g)
        return self._csc

    def _hetero_graph(self, g: dgl.DGLGraph) -> "_HeteroGraph":
        """The cached :class:`fastgl.HeteroCSCGraph` of ``g`` (rebuilt for a different graph,
        or when a prob/mask edge feature was added, replaced or modified in place)."""
        feature = self.prob or self.mask
        data = _edge_feature_per_type(g, feature)
        source = tuple((etype, id(d), d._version) for etype, d in data.items())
        same_graph = self._hetero_ref is not None and self._hetero_ref() is g
        if not same_graph or self._hetero.weight_source != source:
            self._hetero = _build_hetero(g, data, source, feature)
            self._hetero_ref = weakref.ref(g)
        return self._hetero


class MultiLayerFullNeighborSampler(NeighborSampler):
    """Every in-neighbor at every layer, like
    :class:`dgl.dataloading.MultiLayerFullNeighborSampler` (along every edge type of a
    heterogeneous graph).

    Example:
        >>> sampler = MultiLayerFullNeighborSampler(2)
    """

    def __init__(self, num_layers: int, **kwargs) -> None:
        super().__init__([-1] * num_layers, **kwargs)


def _build_csc(g: dgl.DGLGraph, data: Tensor | None, source, feature) -> _GraphCSC:
    """In-edge CSC of ``g`` on the device fastgl samples on (the CPU for a pinned graph)."""
    indptr, indices, eid = g.adj_tensors("csc")
    eid = eid.to(torch.int64)
    weight = None
    if data is not None:
        weight = _slot_weights(data, eid, g.num_edges(), feature)
    return _GraphCSC(indptr.to(torch.int64), indices, eid, weight, source)


def _slot_weights(
    data: Tensor, eid: Tensor, num_edges: int, feature: str, etype=None, where: str = _WHERE
) -> Tensor:
    """The prob/mask edge feature ``data`` checked and put in CSC slot order (``eid``), as
    float32 (float64 when it is float64); ``where`` names the caller in errors."""
    what = f"edge feature {feature!r}" + ("" if etype is None else f" of edge type {etype}")
    if data.dim() != 1 or data.numel() != num_edges:
        raise ValueError(f"{where}: {what} must have shape [{num_edges}], got {tuple(data.shape)}")
    if data.dtype != torch.bool and bool((data < 0).any()):
        raise ValueError(f"{where}: {what} must be non-negative")
    weight = data.to(eid.device)[eid]
    return weight.to(torch.float64 if weight.dtype == torch.float64 else torch.float32)


def _csc_block(
    ptr: Tensor, src: Tensor, edge_ids: Tensor, num_src: int, num_dst: int, g: dgl.DGLGraph
) -> dgl.DGLGraph:
    """A DGL block over a CSC that fastgl built and checked itself, made the way DGL's own
    samplers make theirs: straight from the arrays, without ``dgl.create_block``'s re-validation
    (a max over the sources) and per-relation graph objects, which cost more than the draws on
    small batches. ``heterograph_index`` and ``DGLBlock`` are DGL internals (as of DGL 2.1, the
    version the Makefile installs and the tests run against). Node and edge type names are
    ``g``'s."""
    graph_index = heterograph_index.create_unitgraph_from_csr(
        2, num_src, num_dst, ptr, src, edge_ids, ["coo", "csr", "csc"], True
    )
    return DGLBlock(graph_index, (g.ntypes, g.ntypes), g.etypes)


def _blocks_of(sample, seeds: Tensor, g: dgl.DGLGraph) -> list[dgl.DGLGraph]:
    """DGL blocks, input layer first, from a layer-wise ``sample_hops`` result of one batch:
    the block of hop ``h`` has the nodes of hops ``< h`` as destinations (a prefix of the sources,
    which add the nodes new at hop ``h``)."""
    node_counts, edge_counts = sample.node_counts[0].tolist(), sample.edge_counts[0].tolist()
    if node_counts[0] != seeds.numel():
        raise ValueError(f"{_WHERE}: seed_nodes contains duplicate ids")
    idtype = g.idtype
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
        block = _csc_block(ptr, sample.row[edges].to(idtype), no_edge_ids, num_src, num_dst, g)
        block.srcdata[dgl.NID] = nodes[:num_src]
        block.dstdata[dgl.NID] = nodes[:num_dst]
        block.edata[dgl.EID] = sample.edge_ids[edges].to(idtype)
        blocks.insert(0, block)
    return blocks


# ---------------------------------------------------------------------------------------------
# Arguments as DGL takes them


def _checked_fanout(value, where: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{_WHERE}: {where} must be an int, got {value!r}")
    value = operator.index(value)
    if value < -1:
        raise ValueError(f"{_WHERE}: fanouts must be -1 (all) or >= 0, got {value} at {where}")
    return value


def _checked_layer_fanouts(fanouts) -> list[LayerFanout]:
    """DGL's fanouts, input layer first: per layer an int, or a dict ``{etype: int}``
    (resolved against a graph's edge types when it is sampled)."""
    if isinstance(fanouts, (str, bytes, Mapping)) or not isinstance(fanouts, Iterable):
        raise TypeError(
            f"{_WHERE}: fanouts must be a list with one entry per GNN layer (an int, or a dict "
            f"{{etype: int}}), input layer first, got {type(fanouts).__name__}"
        )
    layers = []
    for i, layer in enumerate(fanouts):
        if not isinstance(layer, Mapping):
            layers.append(_checked_fanout(layer, f"fanouts[{i}]"))
            continue
        checked = {}
        for etype, value in layer.items():
            canonical = isinstance(etype, tuple) and len(etype) == 3
            if not (isinstance(etype, str) or canonical and all(isinstance(t, str) for t in etype)):
                raise TypeError(
                    f"{_WHERE}: the keys of fanouts[{i}] must be edge types (a name or a "
                    f"canonical (src_type, rel, dst_type)), got {etype!r}"
                )
            checked[etype] = _checked_fanout(value, f"fanouts[{i}][{etype!r}]")
        layers.append(checked)
    return layers


def _hop_fanouts(g: dgl.DGLGraph, layers: list[LayerFanout]) -> dict[tuple, list[int]]:
    """Per canonical edge type of ``g``, its fanouts seeds outward (fastgl's hop order: the
    last GNN layer's first)."""
    etypes = g.canonical_etypes
    per_layer = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Mapping):
            per_layer.append(dict.fromkeys(etypes, layer))
            continue
        resolved = {}
        for key, value in layer.items():
            etype = _canonical_etype(g, key, f"fanouts[{i}]")
            if etype in resolved:
                raise ValueError(f"{_WHERE}: fanouts[{i}] names edge type {etype} twice")
            resolved[etype] = value
        missing = [etype for etype in etypes if etype not in resolved]
        if missing:
            raise ValueError(
                f"{_WHERE}: fanouts[{i}] has no fanout for edge types {missing}; a dict needs "
                f"one for every edge type, as in DGL (0 draws nothing)"
            )
        per_layer.append(resolved)
    return {etype: [layer[etype] for layer in reversed(per_layer)] for etype in etypes}


def _canonical_etype(g: dgl.DGLGraph, etype, where: str) -> tuple[str, str, str]:
    """``etype`` (a name or a canonical triple) as ``g``'s canonical edge type."""
    if isinstance(etype, tuple):
        if etype in g.canonical_etypes:
            return etype
    elif isinstance(etype, str) and etype in g.etypes:
        matches = [c for c in g.canonical_etypes if c[1] == etype]
        if len(matches) == 1:
            return matches[0]
        raise ValueError(
            f"{_WHERE}: {where} names edge type {etype!r}, which is ambiguous in the graph "
            f"({matches}); name it by its canonical (src_type, rel, dst_type)"
        )
    raise ValueError(
        f"{_WHERE}: {where} names edge type {etype!r}, which the graph lacks "
        f"(edge types: {g.canonical_etypes})"
    )


def _ids(value, where: str) -> Tensor:
    """A 1-D integer id tensor (lists and arrays as DGL takes them)."""
    if not isinstance(value, Tensor):
        try:
            value = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{_WHERE}: {where} must be a 1-D tensor of ids, got {type(value).__name__}"
            ) from None
    if value.dim() != 1 or value.dtype.is_floating_point or value.dtype == torch.bool:
        raise ValueError(
            f"{_WHERE}: {where} must be a 1-D integer tensor of ids, got {value.dtype} of "
            f"shape {tuple(value.shape)}"
        )
    return value


def _homogeneous_seeds(g: dgl.DGLGraph, seed_nodes) -> Tensor:
    """The seeds of a graph with one node type: a tensor, or a dict with that one type."""
    if isinstance(seed_nodes, Mapping):
        _check_seed_types(g, seed_nodes)
        seed_nodes = seed_nodes[g.ntypes[0]]
        where = f"seed_nodes[{g.ntypes[0]!r}]"
    else:
        where = "seed_nodes"
    if not isinstance(seed_nodes, Tensor) or seed_nodes.dim() != 1:
        raise ValueError(
            f"{_WHERE}: {where} must be a 1-D tensor of node ids, got {type(seed_nodes).__name__}"
        )
    return seed_nodes


def _check_seed_types(g: dgl.DGLGraph, seed_nodes: Mapping) -> None:
    if not seed_nodes:
        raise ValueError(
            f"{_WHERE}: seed_nodes is an empty dict; give node types empty tensors instead, "
            "as in DGL"
        )
    unknown = [t for t in seed_nodes if t not in g.ntypes]
    if unknown:
        raise ValueError(
            f"{_WHERE}: seed_nodes has node types {unknown} that the graph lacks "
            f"(node types: {g.ntypes})"
        )


def _hetero_seeds(g: dgl.DGLGraph, seed_nodes, device) -> tuple[dict[str, Tensor], torch.device]:
    """``{ntype: int64 ids on device}`` and the seeds' own device (the blocks' default)."""
    if not isinstance(seed_nodes, Mapping):
        if len(g.ntypes) > 1:
            raise ValueError(
                f"{_WHERE}: the graph has node types {g.ntypes}: seed_nodes must be a dict "
                "{ntype: ids}, as in DGL"
            )
        seed_nodes = {g.ntypes[0]: seed_nodes}
    _check_seed_types(g, seed_nodes)
    seeds, seed_device = {}, None
    for ntype, ids in seed_nodes.items():
        ids = _ids(ids, f"seed_nodes[{ntype!r}]")
        seed_device = seed_device or ids.device
        if ids.numel():
            low, high = int(ids.min()), int(ids.max())
            bad = low if low < 0 else high if high >= g.num_nodes(ntype) else None
            if bad is not None:
                raise ValueError(
                    f"{_WHERE}: seed id {bad} out of range for node type {ntype!r} of "
                    f"{g.num_nodes(ntype)} nodes"
                )
        seeds[ntype] = ids.to(device=device, dtype=torch.int64)
    return seeds, seed_device


def _exclude_dict(g: dgl.DGLGraph, exclude_eids) -> dict[tuple, Tensor]:
    """``exclude_eids`` (a tensor on a graph with one edge type, or ``{etype: ids}``) per
    canonical edge type."""
    if not isinstance(exclude_eids, Mapping):
        if len(g.canonical_etypes) != 1:
            raise ValueError(
                f"{_WHERE}: the graph has edge types {g.canonical_etypes}: exclude_eids must be "
                "a dict {etype: edge ids}, as in DGL"
            )
        exclude_eids = {g.canonical_etypes[0]: exclude_eids}
    excluded = {}
    for key, ids in exclude_eids.items():
        etype = _canonical_etype(g, key, "exclude_eids")
        ids = _ids(ids, f"exclude_eids[{key!r}]")
        excluded[etype] = torch.cat([excluded[etype], ids]) if etype in excluded else ids
    return excluded


def _to_device(nodes, device):
    """``nodes`` (a tensor or a dict of them) on ``device``."""
    if isinstance(nodes, Mapping):
        return {key: value.to(device) for key, value in nodes.items()}
    return nodes.to(device)


# ---------------------------------------------------------------------------------------------
# Heterogeneous graphs


@dataclass
class _HeteroGraph:
    """A heterogeneous DGLGraph in the form fastgl's heterogeneous sampling reads, built once per
    graph: its :class:`~fastgl.HeteroCSCGraph` (node and edge types in ``g``'s order, weights
    when prob/mask names a feature) and the blocks' metagraph."""

    graph: HeteroCSCGraph
    weight_source: tuple
    metagraph: object  # DGL GraphIndex: source types 0..T-1, destination types T..2T-1
    _exclusion_weight: Tensor | None = None
    _slot_of: Tensor | None = None
    _samplers: dict = field(default_factory=dict)

    def sampler(self, fanouts: dict[tuple, list[int]], replace: bool) -> HeteroNeighborSampler:
        """fastgl's layer-wise :class:`~fastgl.sampling.HeteroNeighborSampler` of the graph
        for ``fanouts`` (per canonical edge type, seeds outward), weighted by prob/mask when
        the graph has them; cached per fanouts."""
        key = (tuple(tuple(f) for f in fanouts.values()), replace)
        if key not in self._samplers:
            weighted = self.graph.combined.weight is not None
            self._samplers[key] = HeteroNeighborSampler(
                self.graph, fanouts, replace, weighted, layerwise=True
            )
        return self._samplers[key]

    def excluding(self, exclude: dict[tuple, Tensor]):
        """Weights of the combined edge array with the edges ``exclude`` (``{canonical etype:
        edge ids}``) at zero, so they are never drawn, and a function that undoes the change.
        One cached buffer (a copy of the prob/mask weights, or ones), so a batch pays
        O(#excluded), not O(E). Ids that name no edge exclude nothing, as in DGL."""
        combined = self.graph.combined
        if self._slot_of is None:  # (relation's first slot + edge id) -> slot
            sizes = combined.edge_offsets.diff()
            rel = torch.repeat_interleave(torch.arange(sizes.numel(), device=sizes.device), sizes)
            self._slot_of = torch.empty_like(combined.eid)
            self._slot_of[combined.edge_offsets[rel] + combined.eid] = torch.arange(
                combined.eid.numel(), device=combined.eid.device
            )
            self._exclusion_weight = (
                combined.weight.clone()
                if combined.weight is not None
                else torch.ones(combined.eid.numel(), device=combined.eid.device)
            )
        edge_types = self.graph.edge_types
        offsets = combined.edge_offsets.tolist()
        parts = []
        for etype, ids in exclude.items():
            r = edge_types.index(etype)
            ids = ids.to(device=combined.eid.device, dtype=torch.int64)
            ids = ids[(ids >= 0) & (ids < offsets[r + 1] - offsets[r])]
            parts.append(self._slot_of[ids + offsets[r]])
        slots = torch.cat(parts)
        weight = self._exclusion_weight
        kept = weight[slots]
        weight[slots] = 0

        def restore() -> None:
            weight[slots] = kept

        return weight, restore


def _edge_feature_per_type(g: dgl.DGLGraph, feature: str | None) -> dict[tuple, Tensor]:
    """``{canonical etype: g.edges[etype].data[feature]}`` for the edge types that have it."""
    if feature is None:
        return {}
    data = {
        etype: g.edges[etype].data[feature]
        for etype in g.canonical_etypes
        if feature in g.edges[etype].data
    }
    if not data:
        raise ValueError(
            f"{_WHERE}: no edge type of the graph has the edge feature {feature!r} "
            f"(edge types: {g.canonical_etypes})"
        )
    return data


def _build_hetero(g: dgl.DGLGraph, data: dict, source: tuple, feature) -> _HeteroGraph:
    """``g``'s in-edge CSC per edge type (DGL's own, as the homogeneous path takes it) as a
    :class:`~fastgl.HeteroCSCGraph` on the device fastgl samples on (the CPU for a pinned
    graph), with prob/mask weights per edge type (1 where an edge type lacks the feature, so
    uniform, as in DGL)."""
    relations = {}
    device = None
    for etype in g.canonical_etypes:
        indptr, indices, eid = g.adj_tensors("csc", etype)
        eid, device = eid.to(torch.int64), indptr.device
        weight = None
        if data:
            weight = (
                _slot_weights(data[etype], eid, g.num_edges(etype), feature, etype)
                if etype in data
                else torch.ones(eid.numel(), device=device)
            )
        src_type, _, dst_type = etype
        if src_type == dst_type:
            relations[etype] = CSCGraph(indptr, indices, eid, weight)  # validated once
        else:
            relations[etype] = BipartiteCSC(
                indptr.to(torch.int64), indices, eid, weight, g.num_nodes(src_type)
            )
    num_nodes = {ntype: g.num_nodes(ntype) for ntype in g.ntypes}
    graph = HeteroCSCGraph(relations, num_nodes, device)
    types = {ntype: i for i, ntype in enumerate(g.ntypes)}
    metagraph = graph_index.from_coo(
        2 * len(types),
        [types[s] for s, _, _ in g.canonical_etypes],
        [len(types) + types[d] for _, _, d in g.canonical_etypes],
        True,
    )
    return _HeteroGraph(graph, source, metagraph)


def _hetero_blocks(
    sample: HeteroSampledSubgraph, g: dgl.DGLGraph, state: _HeteroGraph
) -> list[dgl.DGLGraph]:
    """DGL heterogeneous blocks, input layer first, from a layer-wise
    :class:`~fastgl.sampling.HeteroSampledSubgraph`: every node and edge type of ``g`` (in
    ``g``'s order), per node type the destinations the prefix of the sources, ``dgl.NID`` per
    node type and ``dgl.EID`` per edge type in ``g``'s idtype. A hop's edges of a relation
    are the CSC over its destinations that the draw made (``sample.hop_indptr``). Made from the
    arrays as :func:`_csc_block` makes its blocks."""
    idtype, ntypes, etypes = g.idtype, g.ntypes, g.canonical_etypes
    nodes = {t: ids.to(idtype) for t, ids in sample.nodes.items()}
    node_ends = list(zip(*(itertools.accumulate(sample.num_sampled_nodes[t]) for t in ntypes)))
    edge_ends = {e: [0, *itertools.accumulate(sample.num_sampled_edges[e])] for e in etypes}
    row = {e: sample.row[e].to(idtype) for e in etypes}
    blocks = []
    for hop in range(sample.num_layers):
        num_dst, num_src = list(node_ends[hop]), list(node_ends[hop + 1])
        dst_of = dict(zip(ntypes, num_dst))
        rel_graphs, eids = [], []
        for etype in etypes:
            first, last = edge_ends[etype][hop], edge_ends[etype][hop + 1]
            indptr = sample.hop_indptr[etype][hop]
            if indptr is None:  # drew nothing: an empty CSC over its destinations
                indptr = torch.zeros(dst_of[etype[2]] + 1, dtype=idtype, device=row[etype].device)
            rel_graphs.append(
                heterograph_index.create_unitgraph_from_csr(
                    2,
                    num_src[ntypes.index(etype[0])],
                    dst_of[etype[2]],
                    indptr.to(idtype),
                    row[etype][first:last],
                    row[etype].new_empty(0),
                    ["coo", "csr", "csc"],
                    True,
                )
            )
            eids.append(sample.eid[etype][first:last].to(idtype))
        graph = heterograph_index.create_heterograph_from_relations(
            state.metagraph, rel_graphs, dgl_utils.toindex(num_src + num_dst, "int64")
        )
        block = DGLBlock(graph, (ntypes, ntypes), g.etypes)
        for ntype, n_src, n_dst in zip(ntypes, num_src, num_dst):
            block.srcnodes[ntype].data[dgl.NID] = nodes[ntype][:n_src]
            block.dstnodes[ntype].data[dgl.NID] = nodes[ntype][:n_dst]
        for etype, eid in zip(etypes, eids):
            block.edges[etype].data[dgl.EID] = eid
        blocks.insert(0, block)
    return blocks
