"""Layer-wise importance sampling for GCN: layer sampling, FastGCN, LADIES, and MVS's node
sampling. NextDoor (Jangda et al., "Accelerating Graph Sampling for Graph Machine Learning
using GPUs", EuroSys '21, §4) calls these *collective transit* samplers: a layer draws a fixed
number of vertices for all its nodes together, not a fanout per node.

A sample grows from the seeds outward. Layer ``l``'s destinations ``D`` are the nodes of the
layer before (the distinct seeds at layer 1); its candidates are ``D`` and the in-neighbors of
``D``. The layer draws its vertices with one compiled ``sample_ranges`` call (all batches of a
window together, batch ``b`` is pair ``b``, Philox key ``hop_key(key, l)`` of the call's
:func:`~fastgl.sampling.neighbor.draw_key`) and builds a :class:`~fastgl.Block` whose ``weight``
is the coefficient of every edge in the layer's estimator of ``Â H``, with
``Â = D^-1/2 (A + I) D^-1/2`` as :class:`fastgl.nn.GCNConv` normalizes it (unweighted: edge
weights are not read; a self-loop of the graph is replaced by the one ``Â`` adds):

* :class:`LayerSampler`: ``s`` distinct vertices uniformly from the union ``C`` of the
  destinations' in-neighbors (Gao et al.'s layer sampling as NextDoor §4 states it); a drawn
  ``u`` gets ``Â(v, u) |C| / s``, the inverse of its inclusion probability ``s / |C|``.
* :class:`FastGCNSampler`: ``s`` i.i.d. draws from all nodes with
  ``q(u) ∝ ||Â(:, u)||²``, independent of the layer (Chen et al., "FastGCN: Fast Learning with
  Graph Convolutional Networks via Importance Sampling", ICLR 2018, §3); a vertex drawn ``c``
  times gets ``Â(v, u) c / (s q(u))``. A draw no destination links to adds nothing and is
  dropped.
* :class:`LADIESSampler`: the same with ``q`` restricted to the layer, ``q(u) ∝ ||Q Â(:, u)||²``
  with ``Q`` the rows of ``D`` (Zou et al., "Layer-Dependent Importance Sampling for Training
  Deep and Large Graph Convolutional Networks", NeurIPS 2019, §4); by default every row of the
  block is then rescaled (LADIES's row normalization in practice), here to the row sum of
  ``Â``, the scale of the exact GCN that evaluates the model.

Every destination keeps itself as a source (the block layout needs it: destinations are the
first sources) and always gets its self-loop term ``Â(v, v)`` exactly, as an edge ``v -> v``
(``eid`` -1: not an edge of the graph). The sampled part estimates ``Σ_{u≠v} Â(v, u) h(u)``
without bias, so the whole layer does too; the node's own features reach it on every draw,
not only when its column happens to be drawn (LADIES likewise always adds the layer's nodes to
the sampled ones). The draws themselves follow the papers' ``q``, self-loop included. A layer
size of ``-1`` takes every candidate with weight ``Â(v, u)``: the exact GCN layer.

Train with :class:`fastgl.nn.GCN` built with ``normalize=False``: the blocks' weights already
are the normalized coefficients, self-loops included.

:class:`MVSSampler` carries the sampling half of MVS-GNN (Cong et al., "Minimal Variance
Sampling with Provable Guarantees for Fast Training of Graph Neural Networks", KDD 2020): the
batch is drawn by minimal-variance probabilities from per-node gradient-norm estimates, then its
one full hop (NextDoor §4); the historical embeddings MVS-GNN aggregates beyond that hop are
not a sampler's to keep (see its docstring).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from fastgl.graph import Block, CSCGraph, expand_ptr
from fastgl.ops import id_map, sample_ranges

from .neighbor import checked_fanouts, checked_seeds, draw_key, hop_key

ALL = -1  # a layer size that takes every candidate: the exact layer


@dataclass(frozen=True)
class LayerSampledSubgraph:
    """A layer-wise sample: per layer a block of its own edges and estimator weights.

    Attributes:
        nodes: global ids; the distinct seeds first in the given order, then the nodes new at
            layer 1, layer 2, ... each in first-occurrence order (the sources of the input
            block, ``blocks[0].src_nodes``).
        blocks: one :class:`~fastgl.Block` per layer, input layer first (DGL order). Block ``i``'s
            destinations are the sources of block ``i + 1`` (the seeds for the last block); its
            ``weight`` holds the estimator's coefficients, self-loops included.
        num_sampled_nodes: ``L+1`` counts: seeds, then nodes new at each layer (seeds outward).
        num_sampled_edges: ``L`` counts, seeds outward: edges of each layer's block, self-loops
            included.
        seed_index: local index of every given seed (duplicates map to their first occurrence).
        seed_weight: :class:`MVSSampler`'s ``1 / p`` of every distinct seed (weights of an
            unbiased loss), ``None`` for the layer-wise samplers.
    """

    nodes: Tensor
    blocks: list[Block]
    num_sampled_nodes: list[int]
    num_sampled_edges: list[int]
    seed_index: Tensor
    seed_weight: Tensor | None = None

    @property
    def batch_size(self) -> int:
        """Number of distinct seeds (the first rows of any output)."""
        return self.num_sampled_nodes[0]


def gcn_inverse_sqrt_degrees(graph: CSCGraph) -> Tensor:
    """``[N]`` float64 ``d^-1/2`` of every node, ``d`` its in-degree without self-loops plus
    the one self-loop ``Â`` adds, so ``Â(v, u) = d_v^-1/2 d_u^-1/2`` as :class:`fastgl.nn.GCNConv`
    (unweighted) normalizes.

    Example:
        >>> graph = CSCGraph.from_edge_index(torch.tensor([[0, 2, 3, 1], [1, 1, 1, 1]]))
        >>> gcn_inverse_sqrt_degrees(graph)      # node 1: 3 in-neighbors, its loop replaced
        tensor([1.0000, 0.5000, 1.0000, 1.0000], dtype=torch.float64)
    """
    targets = expand_ptr(graph.indptr, graph.num_edges)
    sources = graph.indices.to(torch.int64)
    degree = torch.bincount(targets[sources != targets], minlength=graph.num_nodes)
    return (degree.to(torch.float64) + 1).rsqrt()


@dataclass(frozen=True)
class LayerFrontier:
    """The destinations of one layer for every batch of a window, batch after batch (each
    batch's distinct nodes in their layout order)."""

    nodes: Tensor  # [D] global ids
    batch: Tensor  # [D] batch of each
    ptr: list[int]  # [B+1] where each batch's destinations start

    @property
    def num_batches(self) -> int:
        return len(self.ptr) - 1


@dataclass(frozen=True)
class LayerCandidates:
    """One layer of a window before its draw: the destinations' in-edges (self-loops of the
    graph left out: ``Â``'s own loop is added exactly) and the candidates they reach, per batch
    the batch's destinations then its other in-neighbors in first occurrence (CSC order), batch
    after batch."""

    dst: LayerFrontier
    target: Tensor  # [S] destination (index into dst.nodes) of every in-edge, grouped by it
    slots: Tensor  # [S] its CSC slot
    sources: Tensor  # [S] its source
    dst_scale: Tensor  # [D] d^-1/2 of every destination, float64
    inv_sqrt_degree: Tensor  # [N] d^-1/2 of every node
    cand_nodes: Tensor  # [C] global ids
    cand_batch: Tensor  # [C] batch of each
    cand_ptr: Tensor  # [B+1] where each batch's candidates start
    slot_cand: Tensor  # [S] candidate of every in-edge's source
    dst_cand: Tensor  # [D] candidate of every destination

    @property
    def num_candidates(self) -> int:
        return self.cand_nodes.numel()

    @property
    def self_coef(self) -> Tensor:
        """``[D]`` ``Â(v, v)`` of every destination."""
        return self.dst_scale * self.dst_scale

    @cached_property
    def coef(self) -> Tensor:
        """``[S]`` ``Â(v, u)`` of every in-edge (float64); LADIES needs them all, the others
        only those of the kept edges (:meth:`coef_of`)."""
        return self.coef_of(slice(None))

    def coef_of(self, index: Tensor | slice) -> Tensor:
        """``Â(v, u)`` of the in-edges ``index`` selects."""
        if "coef" in self.__dict__:  # computed already
            return self.coef[index]
        scale = self.inv_sqrt_degree
        return self.dst_scale[self.target[index]] * scale[self.sources[index]]

    def zeros(self) -> Tensor:
        """``[C]`` float64 zeros: a value per candidate."""
        return torch.zeros(self.num_candidates, dtype=torch.float64, device=self.target.device)

    def linked(self) -> Tensor:
        """``[C]`` bool: the candidates some destination (other than themselves) has an
        in-edge from."""
        linked = torch.zeros(self.num_candidates, dtype=torch.bool, device=self.target.device)
        return linked.index_fill_(0, self.slot_cand, True)

    def per_batch(self, values: Tensor) -> Tensor:
        """``[B]`` sums of a value per candidate over each batch's candidates."""
        sums = torch.zeros(self.dst.num_batches, dtype=values.dtype, device=values.device)
        return sums.index_add_(0, self.cand_batch, values)


def _check_graph(where: str, graph: CSCGraph) -> None:
    if not isinstance(graph, CSCGraph):
        raise TypeError(f"{where}: graph must be a fastgl.CSCGraph, got {type(graph).__name__}")


def _keys(batch: Tensor, nodes: Tensor, key_base: int) -> Tensor:
    """One int64 key per (batch, node): one Fused-Map over keys keeps batches apart."""
    return batch * key_base + nodes


def _first_frontier(where: str, seed_batches: list[Tensor], key_base: int):
    """``(frontier, seed_index)``: each batch's distinct seeds in first-occurrence order (one
    ``id_map`` over the window's keys), and per batch the local index of every given seed."""
    sizes = [s.numel() for s in seed_batches]
    if len(sizes) * key_base > 1 << 62:
        raise ValueError(
            f"{where}: {len(sizes)} batches of a graph of {key_base} nodes overflow the int64 "
            "keys batch * num_nodes + node; sample fewer batches at a time"
        )
    seeds = torch.cat(seed_batches)
    batch = torch.repeat_interleave(
        torch.arange(len(sizes), device=seeds.device),
        torch.tensor(sizes, device=seeds.device),
        output_size=seeds.numel(),
    )
    keys, local = id_map(seeds[:0], _keys(batch, seeds, key_base))
    distinct_batch = torch.div(keys, key_base, rounding_mode="floor")
    counts = torch.bincount(distinct_batch, minlength=len(sizes))
    ptr = [0] + torch.cumsum(counts, 0).tolist()
    frontier = LayerFrontier(keys - distinct_batch * key_base, distinct_batch, ptr)
    seed_index = [part - first for part, first in zip(local.split(sizes), ptr[:-1])]
    return frontier, seed_index


def _layer_of(graph: CSCGraph, inv_sqrt_degree: Tensor, dst: LayerFrontier) -> LayerCandidates:
    """The in-edges of every batch's destinations and their candidates."""
    target, slots = graph.in_edge_slots(dst.nodes)
    sources = graph.indices[slots].to(torch.int64)
    loops = sources == dst.nodes[target]
    if bool(loops.any()):  # most graphs have none: copy the in-edges only when needed
        keep = ~loops
        target, slots, sources = target[keep], slots[keep], sources[keep]
    cand_nodes, cand_batch, cand_ptr, slot_cand, dst_cand = _candidates(
        graph.num_nodes, dst, target, sources
    )
    return LayerCandidates(
        dst=dst,
        target=target,
        slots=slots,
        sources=sources,
        dst_scale=inv_sqrt_degree[dst.nodes],
        inv_sqrt_degree=inv_sqrt_degree,
        cand_nodes=cand_nodes,
        cand_batch=cand_batch,
        cand_ptr=cand_ptr,
        slot_cand=slot_cand,
        dst_cand=dst_cand,
    )


def _candidates(num_nodes: int, dst: LayerFrontier, target: Tensor, sources: Tensor):
    """``(nodes, batch, ptr, of_slot, of_dst)`` of the candidates: each batch's destinations and
    in-neighbors, destinations first, batch after batch (``ptr``: where each batch's start),
    and the candidate of every in-edge's source and of every destination.

    One Fused-Map (``id_map``) over (batch, node) keys gives them; its new ids come batch after
    batch (the in-edges do), so moving each batch's destinations before its new ids makes every
    batch's candidates one range. One batch needs neither keys nor the move."""
    num_dst, device = dst.nodes.numel(), dst.nodes.device
    if dst.num_batches == 1:
        nodes, of_slot = id_map(dst.nodes, sources)
        ptr = torch.tensor([0, nodes.numel()], device=device)
        return nodes, torch.zeros_like(nodes), ptr, of_slot, torch.arange(num_dst, device=device)
    key_base = max(num_nodes, 1)
    keys, of_slot = id_map(
        _keys(dst.batch, dst.nodes, key_base), _keys(dst.batch[target], sources, key_base)
    )
    new_batch = torch.div(keys[num_dst:], key_base, rounding_mode="floor")
    new_counts = torch.bincount(new_batch, minlength=dst.num_batches)
    new_ptr = torch.cat([new_counts.new_zeros(1), torch.cumsum(new_counts, 0)])
    dst_ptr = torch.tensor(dst.ptr, device=device)
    position = torch.cat(
        [
            torch.arange(num_dst, device=device) + new_ptr[dst.batch],
            torch.arange(keys.numel() - num_dst, device=device) + dst_ptr[new_batch + 1],
        ]
    )
    cand_keys = torch.empty_like(keys)
    cand_keys[position] = keys
    batch = torch.div(cand_keys, key_base, rounding_mode="floor")
    nodes = cand_keys - batch * key_base
    return nodes, batch, dst_ptr + new_ptr, position[of_slot], position[:num_dst]


def _blocks(
    graph: CSCGraph, layer: LayerCandidates, factor: Tensor, in_degrees: Tensor, row_sums: bool
) -> tuple[list[Block], LayerFrontier]:
    """Every batch's block of the layer and the next layer's destinations (the blocks'
    sources).

    A block holds every in-edge whose source has ``factor > 0`` (``[C]``, the estimator's scale
    of each candidate) with weight ``Â(v, u) * factor[u]``, and every destination's self-loop
    ``Â(v, v)``, first among its in-edges. ``row_sums``: rescale each destination's weights to
    sum to its row of ``Â``. Its sources: the destinations, then the kept candidates in
    candidate order (their first occurrence among the kept edges)."""
    dst, device = layer.dst, layer.target.device
    kept, weight, self_weight = _estimator_weights(layer, factor, row_sums)
    target, candidate = layer.target[kept], layer.slot_cand[kept]
    src_nodes, src_batch, src_ptr, local = _sources(layer, candidate)
    # Each destination's self-loop first, then its kept in-edges: kept edge i lands after the
    # self-loops of its own and every earlier destination.
    counts = torch.bincount(target, minlength=dst.nodes.numel()) + 1
    indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    num_edges = int(indptr[-1])
    self_at, edge_at = indptr[:-1], torch.arange(target.numel(), device=device) + target + 1
    dst_first = torch.tensor(dst.ptr, device=device)[dst.batch]
    src = torch.empty(num_edges, dtype=torch.int64, device=device)
    src[self_at] = torch.arange(dst.nodes.numel(), device=device) - dst_first
    src[edge_at] = local[candidate]
    owner = expand_ptr(indptr, num_edges)
    eid = torch.full((num_edges,), -1, dtype=torch.int64, device=device)
    eid[edge_at] = graph.edge_ids()[layer.slots[kept]]
    weights = torch.empty(num_edges, dtype=torch.float32, device=device)
    weights[self_at], weights[edge_at] = self_weight.float(), weight.float()
    columns = {"src": src, "dst": owner - dst_first[owner], "eid": eid, "weight": weights}
    # Every batch's own offsets, one after the other: batch b's start at dst.ptr[b] + b.
    offsets = torch.zeros(dst.nodes.numel() + dst.num_batches, dtype=torch.int64, device=device)
    own_end = torch.arange(dst.nodes.numel(), device=device) + dst.batch + 1
    offsets[own_end] = indptr[1:] - indptr[dst_first]
    src_in_degrees = in_degrees[src_nodes]
    edge_bounds, src_bounds = indptr[dst.ptr].tolist(), src_ptr.tolist()
    blocks = []
    for b in range(dst.num_batches):
        e0, e1 = edge_bounds[b], edge_bounds[b + 1]
        d0, d1 = dst.ptr[b], dst.ptr[b + 1]
        s0, s1 = src_bounds[b], src_bounds[b + 1]
        blocks.append(
            Block(
                **{name: column[e0:e1] for name, column in columns.items()},
                src_nodes=src_nodes[s0:s1],
                num_src_nodes=s1 - s0,
                num_dst_nodes=d1 - d0,
                src_in_degrees=src_in_degrees[s0:s1],
                indptr=offsets[d0 + b : d1 + b + 1],
            )
        )
    return blocks, LayerFrontier(src_nodes, src_batch, src_bounds)


def _estimator_weights(
    layer: LayerCandidates, factor: Tensor, row_sums: bool
) -> tuple[Tensor, Tensor, Tensor]:
    """``(kept, weight, self_weight)``: the in-edges whose source has ``factor > 0`` (indices),
    their weights ``Â(v, u) * factor[u]`` and the destinations' self-loop weights ``Â(v, v)``,
    with ``row_sums`` every destination's rescaled to sum to its row of ``Â``."""
    edge_factor = factor[layer.slot_cand]
    kept = torch.nonzero(edge_factor > 0).view(-1)  # indices once, for the gathers after
    weight = layer.coef_of(kept) * edge_factor[kept]
    self_weight = layer.self_coef
    if row_sums:
        target = layer.target[kept]
        exact = self_weight.index_add(0, layer.target, layer.coef)
        scale = exact / self_weight.index_add(0, target, weight)
        weight, self_weight = weight * scale[target], self_weight * scale
    return kept, weight, self_weight


def _sources(
    layer: LayerCandidates, kept_candidates: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(nodes, batch, ptr, local)`` of the blocks' sources: per batch its destinations, then
    its kept candidates in candidate order, batch after batch (``ptr``: where each batch's
    start), and every candidate's index among its batch's sources."""
    used = torch.zeros(layer.num_candidates, dtype=torch.bool, device=layer.target.device)
    used[layer.dst_cand] = True
    used[kept_candidates] = True
    batch = layer.cand_batch[used]
    counts = torch.bincount(batch, minlength=layer.dst.num_batches)
    ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    local = torch.cumsum(used, 0) - 1 - ptr[layer.cand_batch]
    return layer.cand_nodes[used], batch, ptr, local


class _LayerwiseSampler:
    """What the layer-wise samplers share: checks, the layer loop, the blocks. A subclass
    says how a layer draws (:meth:`_draw`): the scale of every candidate in the estimator."""

    row_sums = False

    def __init__(self, graph: CSCGraph, layer_sizes: Sequence[int]) -> None:
        where = type(self).__name__
        _check_graph(where, graph)
        sizes = checked_fanouts(where, layer_sizes, name="layer_sizes", minimum=1)
        if not sizes:
            raise ValueError(f"{where}: layer_sizes must list one size per layer, got []")
        self.graph = graph
        self.layer_sizes = sizes
        self._inv_sqrt_degree = gcn_inverse_sqrt_degrees(graph)
        self._in_degrees = graph.in_degrees()

    # The estimator's steps around a layer's draw, public for sampler programs
    # (fastgl.sampling.program.LayerProgram states only how a layer draws).

    def first_frontier(self, seed_batches: list[Tensor]) -> tuple[LayerFrontier, list[Tensor]]:
        """``(frontier, seed_index)``: each batch's distinct seeds, and per batch the local
        index of every given seed."""
        return _first_frontier(type(self).__name__, seed_batches, max(self.graph.num_nodes, 1))

    def candidates(self, frontier: LayerFrontier) -> LayerCandidates:
        """The layer below ``frontier`` before its draw: its in-edges and candidates."""
        return _layer_of(self.graph, self._inv_sqrt_degree, frontier)

    def layer_blocks(
        self, layer: LayerCandidates, factor: Tensor
    ) -> tuple[list[Block], LayerFrontier]:
        """Each batch's block of ``layer`` for the estimator's scale ``factor`` (``[C]``, 0 for
        a candidate not drawn), and the next layer's frontier."""
        return _blocks(self.graph, layer, factor, self._in_degrees, self.row_sums)

    @property
    def fanouts(self) -> list[int]:
        """The layer sizes, seeds outward (the name the loader and reports read)."""
        return self.layer_sizes

    def sample(
        self, seeds: Tensor, generator: torch.Generator | None = None
    ) -> LayerSampledSubgraph:
        """Samples one mini-batch around ``seeds`` (1-D int tensor of node ids)."""
        return self.sample_batches([seeds], generator)[0]

    def sample_batches(
        self, seed_batches: Sequence[Tensor], generator: torch.Generator | None = None
    ) -> list[LayerSampledSubgraph]:
        """One sample per seed tensor, every layer of all batches at once: one compiled draw
        per layer (batch ``b`` is its pair ``b``, so the first batch draws what :meth:`sample`
        draws with the same generator state) and one Fused-Map over (batch, node) keys.
        Batches share no nodes; each has the layout and distribution of :meth:`sample`."""
        where = type(self).__name__
        seed_batches = [checked_seeds(where, self.graph, s) for s in seed_batches]
        if not seed_batches:
            return []
        key = draw_key(generator, self.graph.device, where)
        frontier, seed_index = self.first_frontier(seed_batches)
        seeds = frontier
        layers: list[list[Block]] = []
        for depth, size in enumerate(self.layer_sizes):
            layer = self.candidates(frontier)
            if size == ALL:  # the exact layer: every candidate once, nothing drawn
                factor = torch.ones_like(layer.zeros())
            else:
                factor = self._draw(layer, size, hop_key(key, depth))
            blocks, frontier = self.layer_blocks(layer, factor)
            layers.append(blocks)
        return [
            assemble_layers(
                seeds.ptr[b + 1] - seeds.ptr[b], seed_index[b], [bl[b] for bl in layers]
            )
            for b in range(len(seed_batches))
        ]

    def _draw(self, layer: LayerCandidates, size: int, seed: int) -> Tensor:
        """``[C]`` the estimator's scale of every candidate after the layer's draw."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(layer_sizes={self.layer_sizes})"


def assemble_layers(
    num_seeds: int, seed_index: Tensor, blocks: list[Block], seed_weight: Tensor | None = None
) -> LayerSampledSubgraph:
    """The sample of ``blocks`` (seeds outward), input layer first."""
    sizes = [num_seeds] + [b.num_src_nodes for b in blocks]
    return LayerSampledSubgraph(
        nodes=blocks[-1].src_nodes,
        blocks=blocks[::-1],
        num_sampled_nodes=[num_seeds] + [b - a for a, b in zip(sizes, sizes[1:])],
        num_sampled_edges=[b.num_edges for b in blocks],
        seed_index=seed_index,
        seed_weight=seed_weight,
    )


def _draw_ranges(
    ptr: Tensor, weight: Tensor | None, size: int, replace: bool, seed: int
) -> tuple[Tensor, Tensor]:
    """Batch ``b`` draws ``size`` positions in ``ptr[b] .. ptr[b+1]`` (``∝ weight``, uniform
    for ``None``): one ``sample_ranges`` call, pair ``b`` for batch ``b``; returns its
    ``(per-batch offsets, positions)``."""
    fanouts = torch.full((ptr.numel() - 1,), size, device=ptr.device)
    return sample_ranges(ptr[:-1], ptr[1:], weight, fanouts, replace, seed)


class LayerSampler(_LayerwiseSampler):
    """Layer sampling: each layer draws ``layer_sizes[l]`` distinct vertices uniformly from the
    union ``C`` of its destinations' in-neighbors (NextDoor §4 and §8: one collective draw per
    step over the combined neighborhood); a drawn ``u`` gets weight ``Â(v, u) |C| / s`` (``s``
    the number drawn, at most ``|C|``).

    Args:
        graph: the graph; sampling runs on its device.
        layer_sizes: vertices drawn per layer, seeds outward; ``-1`` takes the whole union
            (the exact layer).

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[1, 2, 3, 3, 0], [0, 0, 0, 1, 2]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sub = LayerSampler(graph, [2]).sample(torch.tensor([0]),
        ...                                       torch.Generator().manual_seed(0))
        >>> sub.nodes, sub.num_sampled_nodes, sub.num_sampled_edges
        (tensor([0, 1, 3]), [1, 2], [3])
        >>> block = sub.blocks[0]                 # self-loop first, then the drawn in-edges
        >>> block.src, block.dst, block.eid
        (tensor([0, 1, 2]), tensor([0, 0, 0]), tensor([-1,  0,  2]))
        >>> block.weight                          # 1/4, then Â(0, 1) * 3/2 and Â(0, 3) * 3/2
        tensor([0.2500, 0.5303, 0.7500])
    """

    def _draw(self, layer: LayerCandidates, size: int, seed: int) -> Tensor:
        # The union: the candidates some destination links to (a destination is one only when
        # another destination has an in-edge from it), batch after batch.
        union = torch.nonzero(layer.linked()).view(-1)
        union_counts = torch.bincount(layer.cand_batch[union], minlength=layer.dst.num_batches)
        union_ptr = torch.cat([union_counts.new_zeros(1), torch.cumsum(union_counts, 0)])
        drawn_ptr, picked = _draw_ranges(union_ptr, None, size, False, seed)
        # Each member is drawn with probability min(s, |C|) / |C|.
        scale = union_counts.double() / torch.diff(drawn_ptr).clamp(min=1)
        members = union[picked]
        return layer.zeros().index_put_((members,), scale[layer.cand_batch[members]])


class FastGCNSampler(_LayerwiseSampler):
    """FastGCN: each layer draws ``layer_sizes[l]`` vertices i.i.d. from all nodes with
    probability ``q(u) ∝ ||Â(:, u)||²`` (Chen et al., §3: the importance distribution),
    independently of the layer before; a vertex drawn ``c`` times gets weight
    ``Â(v, u) c / (s q(u))`` on its edges to the layer's destinations, and one linked to none is
    dropped.

    Args:
        graph: the graph; sampling runs on its device.
        layer_sizes: draws per layer, seeds outward; ``-1`` takes every in-neighbor (the exact
            layer).
        importance: ``[N]`` non-negative weights to draw with instead of ``||Â(:, u)||²``
            (normalized here), e.g. ones for FastGCN's uniform variant.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[1, 2, 3, 3, 0], [0, 0, 0, 1, 2]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sampler = FastGCNSampler(graph, [4])
        >>> sampler.q                             # ∝ (3/16, 3/8, 3/8, 7/4)
        tensor([0.0698, 0.1395, 0.1395, 0.6512], dtype=torch.float64)
        >>> sub = sampler.sample(torch.tensor([0]), torch.Generator().manual_seed(0))
        >>> sub.nodes, sub.blocks[0].weight       # 1 drawn once, 3 twice (and 0 once: no edge)
        (tensor([0, 1, 3]), tensor([0.2500, 0.6334, 0.3839]))
    """

    def __init__(
        self, graph: CSCGraph, layer_sizes: Sequence[int], importance: Tensor | None = None
    ) -> None:
        super().__init__(graph, layer_sizes)
        if importance is None:
            importance = self._column_norms()
        else:
            importance = checked_importance(type(self).__name__, "importance", importance, graph)
        self.q = importance / importance.sum()

    def _column_norms(self) -> Tensor:
        """``[N]`` ``||Â(:, u)||²``: the self-loop's ``d_u^-2`` and ``Â(v, u)²`` of every
        in-edge ``u -> v`` that is not a loop."""
        graph, scale = self.graph, self._inv_sqrt_degree
        targets = expand_ptr(graph.indptr, graph.num_edges)
        sources = graph.indices.to(torch.int64)
        not_loop = sources != targets
        sources, targets = sources[not_loop], targets[not_loop]
        squares = (scale[targets] * scale[sources]) ** 2
        return (scale**4).index_add(0, sources, squares)

    def _draw(self, layer: LayerCandidates, size: int, seed: int) -> Tensor:
        num_batches, device = layer.dst.num_batches, self.q.device
        every_node = torch.tensor([0, self.graph.num_nodes], device=device)
        ptr, drawn = sample_ranges(
            every_node[:1].expand(num_batches).contiguous(),
            every_node[1:].expand(num_batches).contiguous(),
            self.q,
            torch.full((num_batches,), size, device=device),
            True,
            seed,
        )
        # A draw that is no candidate of its batch links to none of its destinations.
        key_base = max(self.graph.num_nodes, 1)
        pair = expand_ptr(ptr, drawn.numel())
        _, position = id_map(
            _keys(layer.cand_batch, layer.cand_nodes, key_base), _keys(pair, drawn, key_base)
        )
        position = position[position < layer.num_candidates]
        counts = torch.bincount(position, minlength=layer.num_candidates)
        # A candidate of importance 0 is never drawn: its 0 / 0 is no weight.
        return (counts / (size * self.q[layer.cand_nodes])).nan_to_num(0.0)


class LADIESSampler(_LayerwiseSampler):
    """LADIES: each layer draws ``layer_sizes[l]`` vertices i.i.d. from its candidates (the
    destinations and their in-neighbors) with probability ``q(u) ∝ ||Q Â(:, u)||²``, ``Q`` the
    rows of the layer's destinations (Zou et al., §4); a vertex drawn ``c`` times gets weight
    ``Â(v, u) c / (s q(u))``.

    Args:
        graph: the graph; sampling runs on its device.
        layer_sizes: draws per layer, seeds outward; ``-1`` takes every in-neighbor (the exact
            layer).
        row_normalize: rescale every destination's weights (self-loop included) to sum to its
            row of ``Â`` (LADIES's row normalization in practice, to ``Â``'s row sums rather than
            1). Off: the unbiased estimator as such.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[1, 2, 3, 3, 0], [0, 0, 0, 1, 2]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sampler = LADIESSampler(graph, [4], row_normalize=False)
        >>> sub = sampler.sample(torch.tensor([0]), torch.Generator().manual_seed(0))
        >>> sub.nodes, sub.blocks[0].weight       # q ∝ (1/16, 1/8, 1/8, 1/4): 1 once, 2 twice
        (tensor([0, 1, 2]), tensor([0.2500, 0.3977, 0.7955]))
        >>> sampler = LADIESSampler(graph, [4])
        >>> sub = sampler.sample(torch.tensor([0]), torch.Generator().manual_seed(0))
        >>> sub.blocks[0].weight.sum()            # Â's row of node 0: 1/4 + 2/sqrt(8) + 1/2
        tensor(1.4571)
    """

    def __init__(
        self, graph: CSCGraph, layer_sizes: Sequence[int], row_normalize: bool = True
    ) -> None:
        super().__init__(graph, layer_sizes)
        if not isinstance(row_normalize, bool):
            raise TypeError(
                f"LADIESSampler: row_normalize must be a bool, got {type(row_normalize).__name__}"
            )
        self.row_sums = row_normalize

    def _draw(self, layer: LayerCandidates, size: int, seed: int) -> Tensor:
        q = _restricted_column_norms(layer)
        _, drawn = _draw_ranges(layer.cand_ptr, q, size, True, seed)
        counts = torch.bincount(drawn, minlength=layer.num_candidates)
        return counts * layer.per_batch(q)[layer.cand_batch] / (size * q)


def _restricted_column_norms(layer: LayerCandidates) -> Tensor:
    """``[C]`` ``||Q Â(:, u)||²`` of every candidate: the squares of its in-edges to its
    batch's destinations, and ``Â(v, v)²`` for a destination's own column."""
    norms = layer.zeros().index_add_(0, layer.dst_cand, layer.self_coef**2)
    return norms.index_add_(0, layer.slot_cand, layer.coef**2)


def checked_importance(where: str, name: str, weights: Tensor, graph: CSCGraph) -> Tensor:
    """``weights`` as float64 after checking that they are ``[N]`` finite, non-negative
    floating-point values on the graph's device with a positive sum (a ``ValueError``
    starting with ``where``)."""
    return _checked_weights(where, name, weights, graph.num_nodes, graph.device, "node")


def _checked_weights(
    where: str, name: str, weights: Tensor, count: int, device: torch.device, per: str
) -> Tensor:
    if not isinstance(weights, Tensor):
        raise TypeError(f"{where}: {name} must be a tensor, got {type(weights).__name__}")
    if weights.dim() != 1 or weights.numel() != count or not weights.is_floating_point():
        raise ValueError(
            f"{where}: {name} must be a floating-point tensor of shape [{count}] (one per "
            f"{per}), got {weights.dtype} of shape {tuple(weights.shape)}"
        )
    if weights.device != device:
        raise ValueError(f"{where}: {name} is on {weights.device} but the graph is on {device}")
    weights = weights.to(torch.float64)
    if count and not bool((torch.isfinite(weights) & (weights >= 0)).all()):
        raise ValueError(f"{where}: {name} must be finite and >= 0")
    if count and not bool(weights.sum() > 0):
        raise ValueError(f"{where}: {name} must have a positive entry, got all zeros")
    return weights


def mvs_probabilities(grad_norm: Tensor, batch_size: int) -> Tensor:
    """The minimal-variance inclusion probabilities ``p_i = min(1, g_i / μ)``, ``μ`` such that
    ``Σ p_i = batch_size``: the minimizer of ``Σ g_i² / p_i`` (the variance of the
    Horvitz-Thompson gradient estimate ``Σ_{i in batch} g_i / p_i``) over ``0 < p_i <= 1`` with
    ``batch_size`` nodes expected (Cong et al.'s gradient-based minimal variance sampling).
    Every ``p_i`` is 1 when ``batch_size >= len(grad_norm)``.

    Args:
        grad_norm: ``[n]`` non-negative gradient-norm estimates with a positive entry (float).
        batch_size: expected number of nodes drawn, at least 1.

    Example:
        >>> mvs_probabilities(torch.tensor([8.0, 1.0, 1.0, 2.0]), 2)
        tensor([1.0000, 0.2500, 0.2500, 0.5000], dtype=torch.float64)
    """
    g = grad_norm.to(torch.float64)
    n = g.numel()
    if batch_size >= n:
        return torch.ones_like(g)
    ordered = torch.sort(g, descending=True).values
    # With the k largest clipped to 1, mu_k spreads the remaining batch over the rest; the
    # solution clips the fewest nodes whose next node then stays below 1.
    rest = ordered.flip(0).cumsum(0).flip(0)  # rest[k] = sum of ordered[k:]
    k = torch.arange(batch_size, device=g.device)
    mu = rest[:batch_size] / (batch_size - k)
    first_fit = int(torch.nonzero(ordered[:batch_size] <= mu)[0])
    return (g / mu[first_fit]).clamp(max=1.0)


class MVSSampler:
    """The sampling half of MVS-GNN (Cong et al., KDD 2020): draws the batch from a pool of
    nodes with the minimal-variance probabilities of per-node gradient-norm estimates
    (:func:`mvs_probabilities`), each node independently, then takes the batch's one full hop
    (NextDoor §4: MVS samples the 1-hop neighbors of all initial vertices) as one block with
    the exact ``Â`` weights and self-loops, and ``seed_weight = 1 / p`` for an unbiased loss.

    What it does not carry: MVS-GNN computes the layers below the batch's hop from historical
    embeddings of the neighbors (its variance reduction of the embedding approximation), kept
    and refreshed by the training loop, and its gradient norms come from periodic large-batch
    passes of that loop; a sampler has neither. A model of more than one layer therefore needs
    those embeddings from elsewhere, or a sampler for its lower layers.

    Both draws use the compiled engine: node ``i`` is pair ``i`` of one ``sample_ranges`` call
    (key ``hop_key(key, 0)``) drawing once from the two slots ``(p_i, 1 - p_i)``; the hop is a
    whole neighborhood and draws nothing.

    Args:
        graph: the graph; sampling runs on its device.
        batch_size: expected number of seeds per sample.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[1, 2, 3, 3, 0], [0, 0, 0, 1, 2]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sampler = MVSSampler(graph, batch_size=2)
        >>> sub = sampler.sample(torch.tensor([0, 1, 2, 3]), torch.tensor([8.0, 1.0, 1.0, 2.0]),
        ...                      generator=torch.Generator().manual_seed(0))
        >>> sub.nodes[: sub.batch_size], sub.seed_weight       # node 0 has p = 1
        (tensor([0, 3]), tensor([1., 2.], dtype=torch.float64))
        >>> sub.blocks[0].num_dst_nodes, sub.blocks[0].num_src_nodes
        (2, 4)
    """

    def __init__(self, graph: CSCGraph, batch_size: int) -> None:
        _check_graph("MVSSampler", graph)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"MVSSampler: batch_size must be an int >= 1, got {batch_size!r}")
        self.graph = graph
        self.batch_size = batch_size
        self._inv_sqrt_degree = gcn_inverse_sqrt_degrees(graph)
        self._in_degrees = graph.in_degrees()

    def sample(
        self,
        nodes: Tensor,
        grad_norm: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> LayerSampledSubgraph:
        """Draws a batch from the distinct ``nodes`` (1-D ids) by the minimal-variance
        probabilities of ``grad_norm`` (``[len(nodes)]``; ``None``: all equal, so every node
        has ``p = batch_size / len(nodes)``) and returns it with its full hop."""
        where = "MVSSampler"
        nodes = checked_seeds(where, self.graph, nodes)
        if id_map(nodes[:0], nodes)[0].numel() != nodes.numel():
            raise ValueError(f"{where}: nodes must be distinct (a pool to draw the batch from)")
        if grad_norm is None:
            grad_norm = torch.ones(nodes.numel(), dtype=torch.float64, device=nodes.device)
        grad_norm = _checked_weights(
            where, "grad_norm", grad_norm, nodes.numel(), self.graph.device, "node of nodes"
        )
        p = mvs_probabilities(grad_norm, self.batch_size)
        key = draw_key(generator, self.graph.device, where)
        pair_starts = torch.arange(nodes.numel(), device=nodes.device) * 2
        _, slots = sample_ranges(
            pair_starts,
            pair_starts + 2,
            torch.stack([p, 1 - p], 1).view(-1),
            torch.ones_like(pair_starts),
            True,
            hop_key(key, 0),
        )
        chosen = torch.div(slots[slots % 2 == 0], 2, rounding_mode="floor")
        seeds = LayerFrontier(nodes[chosen], torch.zeros_like(chosen), [0, chosen.numel()])
        layer = _layer_of(self.graph, self._inv_sqrt_degree, seeds)
        every = torch.ones_like(layer.zeros())
        blocks, _ = _blocks(self.graph, layer, every, self._in_degrees, row_sums=False)
        seed_index = torch.arange(chosen.numel(), device=chosen.device)
        return assemble_layers(chosen.numel(), seed_index, blocks, seed_weight=1 / p[chosen])
