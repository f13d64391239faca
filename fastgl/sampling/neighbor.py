"""Multi-hop neighbor sampling on a CSCGraph, one mini-batch or many at once."""

from typing import List, Optional, Sequence

import torch

from ..graph import CSCGraph
from ..ops._kernels import id_map, sample_neighbors
from .subgraph import SampledSubgraph

Tensor = torch.Tensor

# Batched sampling relabels (batch, node) pairs as one int64 key: batch << 40 | node.
_NODE_BITS = 40
_MAX_BATCHES = 1 << (63 - _NODE_BITS)
# Per-hop Philox keys derived from one generator draw (the golden-ratio increment of splitmix64).
_KEY_STEP = 0x9E3779B97F4A7C15


class NeighborSampler:
    """Samples ``fanouts[h]`` in-neighbors per node at hop ``h+1`` (hop 1 first, like PyG).

    Args:
        graph: the graph; sampling runs on its device.
        fanouts: neighbors per node at each hop, seeds outward; ``-1`` takes all neighbors.
        replace: sample with replacement (``False``: truly without).
        weighted: draw proportionally to ``graph.weight``.

    Example:
        >>> sampler = NeighborSampler(graph, [15, 10, 5])
        >>> sub = sampler.sample(torch.tensor([0, 42, 7]))
        >>> blocks = sub.blocks()            # input layer first
        >>> subs = sampler.sample_batches([batch_a, batch_b])   # one pass per hop for both
    """

    def __init__(self, graph: CSCGraph, fanouts: Sequence[int], replace: bool = False,
                 weighted: bool = False) -> None:
        fanouts = [int(f) for f in fanouts]
        bad = [f for f in fanouts if f < -1]
        if bad:
            raise ValueError(f"neighbor_sample: fanouts must be -1 (all) or >= 0, got {bad[0]}")
        if weighted and graph.weight is None:
            raise ValueError("neighbor_sample: weighted=True needs a graph with edge weights")
        if graph.num_nodes >= 1 << _NODE_BITS:
            raise ValueError(f"neighbor_sample: graphs up to 2^{_NODE_BITS} nodes are supported")
        self.graph = graph
        self.fanouts = fanouts
        self.replace = replace
        self.weighted = weighted

    def sample(self, seeds: Tensor, generator: Optional[torch.Generator] = None) -> SampledSubgraph:
        """Samples one mini-batch around ``seeds`` (1-D int tensor of node ids)."""
        return self.sample_batches([seeds], generator)[0]

    def sample_batches(self, seed_batches: Sequence[Tensor],
                       generator: Optional[torch.Generator] = None) -> List[SampledSubgraph]:
        """Samples one subgraph per seed tensor, all batches in one pass per hop.

        Nodes are deduplicated within each batch, never across batches; each result has the
        layout and distribution of :meth:`sample` on that batch (with other random draws). All
        batches' (batch, transit) pairs go to one kernel call per hop, which the CUDA engine
        groups by transit so a shared transit's adjacency is read once. On the CPU this does not
        beat calling :meth:`sample` per batch (see ``benchmarks/sampling.py``).
        """
        seed_batches = [self._check_seeds(s) for s in seed_batches]
        if not seed_batches:
            return []
        if len(seed_batches) >= _MAX_BATCHES:
            raise ValueError(f"neighbor_sample: at most {_MAX_BATCHES - 1} batches at once")
        key = _draw_key(generator, self.graph.device)
        return _sample_batches(self, seed_batches, key)

    def _check_seeds(self, seeds: Tensor) -> Tensor:
        if not isinstance(seeds, Tensor):
            raise TypeError(f"neighbor_sample: seeds must be a tensor, got {type(seeds).__name__}")
        if seeds.dim() != 1 or seeds.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"neighbor_sample: seeds must be a 1-D int32/int64 tensor, got "
                             f"{seeds.dtype} of shape {tuple(seeds.shape)}")
        if seeds.device != self.graph.device:
            raise ValueError(f"neighbor_sample: seeds are on {seeds.device} but the graph is on "
                             f"{self.graph.device}; move them with seeds.to(graph.device)")
        if seeds.numel():
            low, high = int(seeds.min()), int(seeds.max())
            if low < 0 or high >= self.graph.num_nodes:
                bad = low if low < 0 else high
                raise ValueError(f"neighbor_sample: seed id {bad} out of range for a graph of "
                                 f"{self.graph.num_nodes} nodes")
        return seeds.to(torch.int64)


def neighbor_sample(graph: CSCGraph, seeds: Tensor, fanouts: Sequence[int], replace: bool = False,
                    weighted: bool = False,
                    generator: Optional[torch.Generator] = None) -> SampledSubgraph:
    """Samples a multi-hop neighborhood of ``seeds``; see :class:`NeighborSampler`.

    Example:
        >>> sub = fastgl.ops.neighbor_sample(graph, torch.tensor([3, 1]), [10, 5])
        >>> sub.nodes[:2], sub.num_sampled_nodes, sub.blocks()[0].num_src_nodes
    """
    return NeighborSampler(graph, fanouts, replace, weighted).sample(seeds, generator)


def _draw_key(generator: Optional[torch.Generator], device: torch.device) -> int:
    """One 62-bit Philox key from the generator of the graph's device (default: torch's)."""
    if generator is not None and torch.device(generator.device).type != device.type:
        raise ValueError(f"neighbor_sample: the generator is on {generator.device} but the "
                         f"graph is on {device}")
    return int(torch.randint(0, 1 << 62, (1,), generator=generator, device=device))


def _hop_key(key: int, hop: int) -> int:
    """Distinct per-hop key, as a signed int64 for the op schema."""
    mixed = (key + (hop + 1) * _KEY_STEP) & ((1 << 64) - 1)
    return mixed - (1 << 64) if mixed >= 1 << 63 else mixed


class _Frontier:
    """Per-hop state of the batched sampler, all batches flattened batch-major.

    ``keys`` lists every (batch, node) key found so far, hop-major: the id_map prefix grows by
    appending, so earlier local positions never move. ``local`` maps each flat position to the
    node's index within its own batch. With a single batch the keys are the node ids and the
    flat position is the local index, so the encoding and its gathers are skipped.
    """

    def __init__(self, seed_batches: List[Tensor], device: torch.device) -> None:
        self.single = len(seed_batches) == 1
        sizes = torch.tensor([s.numel() for s in seed_batches], device=device)
        batch = torch.repeat_interleave(torch.arange(len(seed_batches), device=device), sizes)
        given = torch.cat(seed_batches)
        self.keys, given_pos = id_map(given.new_empty(0), self._encode(given, batch))
        self.batch = self.keys >> _NODE_BITS
        self.count = torch.bincount(self.batch, minlength=len(seed_batches))
        self.local = _rank_within_batch(self.batch, self.count)
        self.seed_index = self.local[given_pos]
        self.given_sizes = sizes
        self.new_start = 0  # flat position where the last hop's new nodes begin
        self.per_hop_counts = [self.count]

    def _encode(self, nodes: Tensor, batch: Tensor) -> Tensor:
        return nodes if self.single else nodes + (batch << _NODE_BITS)

    def nodes(self, flat: slice = slice(None)) -> Tensor:
        keys = self.keys[flat]
        return keys if self.single else keys & ((1 << _NODE_BITS) - 1)

    def frontier(self) -> slice:
        return slice(self.new_start, self.keys.numel())

    def add(self, neighbors: Tensor, batch: Tensor) -> Tensor:
        """Adds a hop's sampled neighbors of ``batch``; returns their local index in it."""
        old = self.keys.numel()
        self.keys, flat_pos = id_map(self.keys, self._encode(neighbors, batch))
        new_batch = self.keys[old:] >> _NODE_BITS
        new_count = torch.bincount(new_batch, minlength=self.count.numel())
        new_local = _rank_within_batch(new_batch, new_count) + self.count[new_batch]
        self.batch = torch.cat([self.batch, new_batch])
        self.local = torch.cat([self.local, new_local])
        self.count = self.count + new_count
        self.new_start = old
        self.per_hop_counts.append(new_count)
        return flat_pos if self.single else self.local[flat_pos]


def _rank_within_batch(batch: Tensor, count: Tensor) -> Tensor:
    """Position of each element among those of its batch (``batch`` is sorted)."""
    first = torch.cumsum(count, 0) - count
    return torch.arange(batch.numel(), device=batch.device) - first[batch]


def _sample_batches(sampler: NeighborSampler, seed_batches: List[Tensor],
                    key: int) -> List[SampledSubgraph]:
    graph = sampler.graph
    weight = graph.weight if sampler.weighted else None
    state = _Frontier(seed_batches, graph.device)
    rows, cols, eids, edge_batches = [], [], [], []
    for hop, fanout in enumerate(sampler.fanouts):
        frontier = state.frontier()
        ptr, neighbors, edge_pos = sample_neighbors(
            graph.indptr, graph.indices, state.nodes(frontier), fanout,
            replace=sampler.replace, weight=weight, seed=_hop_key(key, hop))
        per_transit = ptr[1:] - ptr[:-1]
        edge_batch = torch.repeat_interleave(state.batch[frontier], per_transit)
        cols.append(torch.repeat_interleave(state.local[frontier], per_transit))
        rows.append(state.add(neighbors, edge_batch))
        eids.append(graph.eid.index_select(0, edge_pos) if graph.eid is not None else edge_pos)
        edge_batches.append(edge_batch)
    return _split_batches(state, rows, cols, eids, edge_batches, len(seed_batches))


def _split_batches(state: _Frontier, rows, cols, eids, edge_batches,
                   num_batches: int) -> List[SampledSubgraph]:
    """Regroups the hop-major flat results into one SampledSubgraph per batch."""
    empty = state.keys.new_empty(0)
    row, col, eid = (torch.cat(parts) if parts else empty for parts in (rows, cols, eids))
    nodes = state.nodes()
    hop_counts = empty.new_zeros((0, num_batches))  # [hop, batch]
    if edge_batches:
        hop_counts = torch.stack([torch.bincount(b, minlength=num_batches) for b in edge_batches])
    if num_batches > 1:
        nodes = _batch_major_nodes(state, nodes)
        if edge_batches:
            place = _batch_major_edge_places(edge_batches, hop_counts)
            row, col, eid = (torch.empty_like(t).index_put_((place,), t) for t in (row, col, eid))

    node_counts = torch.stack(state.per_hop_counts, 1).tolist()  # [batch][hop]
    edge_counts = hop_counts.t().tolist()  # [batch][hop]
    seed_first = (torch.cumsum(state.given_sizes, 0) - state.given_sizes).tolist()
    seed_sizes = state.given_sizes.tolist()
    results, node_at, edge_at = [], 0, 0
    for b in range(num_batches):
        n, e = sum(node_counts[b]), sum(edge_counts[b])
        results.append(SampledSubgraph(
            nodes=nodes[node_at:node_at + n], row=row[edge_at:edge_at + e],
            col=col[edge_at:edge_at + e], eid=eid[edge_at:edge_at + e],
            num_sampled_nodes=node_counts[b], num_sampled_edges=edge_counts[b],
            seed_index=state.seed_index[seed_first[b]:seed_first[b] + seed_sizes[b]]))
        node_at, edge_at = node_at + n, edge_at + e
    return results


def _batch_major_nodes(state: _Frontier, nodes: Tensor) -> Tensor:
    """Each batch's nodes, batches one after the other, in local order."""
    node_first = torch.cumsum(state.count, 0) - state.count
    return torch.empty_like(nodes).index_put_((node_first[state.batch] + state.local,), nodes)


def _batch_major_edge_places(edge_batches: List[Tensor], hop_counts: Tensor) -> Tensor:
    """Where each hop-major edge goes when edges are regrouped by batch, hops in order.

    Within a hop the edges are already batch-major, so an edge's place is its batch's start,
    plus the batch's edges of earlier hops, plus its rank among the batch's edges of this hop.
    """
    per_batch = hop_counts.sum(0)
    batch_first = torch.cumsum(per_batch, 0) - per_batch
    earlier_hops = torch.cumsum(hop_counts, 0) - hop_counts
    first_in_hop = torch.cumsum(hop_counts, 1) - hop_counts
    return torch.cat([
        torch.arange(b.numel(), device=b.device) - first_in_hop[h, b] + earlier_hops[h, b]
        + batch_first[b] for h, b in enumerate(edge_batches)])
