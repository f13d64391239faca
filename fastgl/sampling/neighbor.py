"""Multi-hop neighbor sampling on a CSCGraph, one mini-batch or many at once."""

import time
from typing import List, Optional, Sequence

import torch

from ..graph import CSCGraph
from ..ops._kernels import id_map, sample_neighbors
from .subgraph import SampledSubgraph

Tensor = torch.Tensor

# Per-hop Philox keys derived from one generator draw (the golden-ratio increment of splitmix64).
_KEY_STEP = 0x9E3779B97F4A7C15


class NeighborSampler:
    """Samples ``fanouts[h]`` in-neighbors per node at hop ``h+1`` (hop 1 first, like PyG).

    Args:
        graph: the graph; sampling runs on its device.
        fanouts: neighbors per node at each hop, seeds outward; ``-1`` takes all neighbors.
        replace: sample with replacement (``False``: truly without).
        weighted: draw proportionally to ``graph.weight``.
        disjoint: every seed grows its own tree (PyG's ``disjoint=True``): nodes are shared by
            no two seeds, a node reached from two seeds appears twice, and the result's
            ``batch`` says which seed each node belongs to.

    Example:
        >>> sampler = NeighborSampler(graph, [15, 10, 5])
        >>> sub = sampler.sample(torch.tensor([0, 42, 7]))
        >>> blocks = sub.blocks()            # input layer first
        >>> subs = sampler.sample_batches([batch_a, batch_b])   # one pass per hop for both
    """

    def __init__(self, graph: CSCGraph, fanouts: Sequence[int], replace: bool = False,
                 weighted: bool = False, disjoint: bool = False) -> None:
        fanouts = [int(f) for f in fanouts]
        bad = [f for f in fanouts if f < -1]
        if bad:
            raise ValueError(f"neighbor_sample: fanouts must be -1 (all) or >= 0, got {bad[0]}")
        if weighted and graph.weight is None:
            raise ValueError("neighbor_sample: weighted=True needs a graph with edge weights")
        self.graph = graph
        self.fanouts = fanouts
        self.replace = replace
        self.weighted = weighted
        self.disjoint = disjoint

    def sample(self, seeds: Tensor, generator: Optional[torch.Generator] = None) -> SampledSubgraph:
        """Samples one mini-batch around ``seeds`` (1-D int tensor of node ids)."""
        return self.sample_batches([seeds], generator)[0]

    def sample_batches(self, seed_batches: Sequence[Tensor],
                       generator: Optional[torch.Generator] = None,
                       timings: Optional[List[dict]] = None) -> List[SampledSubgraph]:
        """Samples one subgraph per seed tensor, all batches in one pass per hop.

        Nodes are deduplicated within each batch, never across batches; each result has the
        layout and distribution of :meth:`sample` on that batch (with other random draws). All
        batches' (batch, transit) pairs go to one kernel call per hop, which the CUDA engine
        groups by transit so a shared transit's adjacency is read once. On the CPU it runs about as
        fast as calling :meth:`sample` per batch (see ``benchmarks/sampling.py``).

        ``timings``, when given, receives one dict per batch with the seconds spent drawing
        neighbors (``"sample_s"``: each hop's one kernel call, shared out by the batches' numbers
        of frontier nodes) and relabeling them with Fused-Map (``"idmap_s"``).
        """
        seed_batches = [self._check_seeds(s) for s in seed_batches]
        if not seed_batches:
            return []
        key = draw_key(generator, self.graph.device)
        if timings is not None:
            timings[:] = [{"sample_s": 0.0, "idmap_s": 0.0} for _ in seed_batches]
        return _sample_batches(self, seed_batches, key, timings)

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
                    weighted: bool = False, generator: Optional[torch.Generator] = None,
                    disjoint: bool = False) -> SampledSubgraph:
    """Samples a multi-hop neighborhood of ``seeds``; see :class:`NeighborSampler`.

    Example:
        >>> sub = fastgl.ops.neighbor_sample(graph, torch.tensor([3, 1]), [10, 5])
        >>> sub.nodes[:2], sub.num_sampled_nodes, sub.blocks()[0].num_src_nodes
    """
    return NeighborSampler(graph, fanouts, replace, weighted, disjoint).sample(seeds, generator)


def draw_key(generator: Optional[torch.Generator], device: torch.device) -> int:
    """One 62-bit Philox key from the generator of the graph's device (default: torch's)."""
    if generator is not None and torch.device(generator.device).type != device.type:
        raise ValueError(f"neighbor_sample: the generator is on {generator.device} but the "
                         f"graph is on {device}")
    return int(torch.randint(0, 1 << 62, (1,), generator=generator, device=device))


def hop_key(key: int, hop: int) -> int:
    """Distinct per-hop key, as a signed int64 for the op schema."""
    mixed = (key + (hop + 1) * _KEY_STEP) & ((1 << 64) - 1)
    return mixed - (1 << 64) if mixed >= 1 << 63 else mixed


class _BatchSample:
    """One mini-batch being sampled: its nodes so far and its edges hop by hop.

    Nodes are tracked as keys: the node id itself, or in disjoint mode ``tree * N + node`` (one
    tree per seed), so that one Fused-Map call deduplicates within trees and never across them.
    """

    def __init__(self, seeds: Tensor, disjoint_nodes: Optional[int] = None) -> None:
        self.tree_stride = disjoint_nodes
        if disjoint_nodes is not None:
            if seeds.numel() and seeds.numel() * disjoint_nodes >= 1 << 63:
                raise ValueError(f"neighbor_sample: disjoint sampling of {seeds.numel()} seeds on "
                                 f"{disjoint_nodes} nodes overflows int64 node keys")
            trees = torch.arange(seeds.numel(), device=seeds.device)
            seeds = trees * disjoint_nodes + seeds
        self.nodes, self.seed_index = id_map(seeds.new_empty(0), seeds)
        self.frontier_start = 0  # the nodes new at the last hop are nodes[frontier_start:]
        self.rows: List[Tensor] = []
        self.cols: List[Tensor] = []
        self.eids: List[Tensor] = []
        self.num_sampled_nodes = [self.nodes.numel()]

    def frontier(self) -> Tensor:
        """Graph node ids of the nodes new at the last hop."""
        return self._node_ids(self.nodes[self.frontier_start:])

    def _node_ids(self, keys: Tensor) -> Tensor:
        return keys if self.tree_stride is None else keys % self.tree_stride

    def add_hop(self, neighbors: Tensor, eid: Tensor, per_transit: Tensor) -> None:
        """Adds the edges drawn for the frontier: ``per_transit[i]`` for frontier node ``i``."""
        old = self.nodes.numel()
        frontier_local = torch.arange(self.frontier_start, old, device=neighbors.device)
        frontier_of_edge = torch.repeat_interleave(frontier_local, per_transit,
                                                   output_size=neighbors.numel())
        self.cols.append(frontier_of_edge)
        if self.tree_stride is not None:  # a neighbor joins the tree of the node it was drawn for
            tree_base = self.nodes[frontier_of_edge] // self.tree_stride * self.tree_stride
            neighbors = tree_base + neighbors
        self.nodes, local = id_map(self.nodes, neighbors)
        self.rows.append(local)
        self.eids.append(eid)
        self.num_sampled_nodes.append(self.nodes.numel() - old)
        self.frontier_start = old

    def result(self, indptr: Tensor) -> SampledSubgraph:
        empty = self.nodes.new_empty(0)
        row, col, eid = (torch.cat(parts) if parts else empty
                         for parts in (self.rows, self.cols, self.eids))
        nodes = self._node_ids(self.nodes)
        batch = None if self.tree_stride is None else self.nodes // self.tree_stride
        return SampledSubgraph(nodes=nodes, row=row, col=col, eid=eid,
                               num_sampled_nodes=self.num_sampled_nodes,
                               num_sampled_edges=[r.numel() for r in self.rows],
                               seed_index=self.seed_index,
                               in_degrees=indptr[nodes + 1] - indptr[nodes], batch=batch)


def _sample_batches(sampler: NeighborSampler, seed_batches: List[Tensor], key: int,
                    timings: Optional[List[dict]] = None) -> List[SampledSubgraph]:
    """All batches' frontiers go to one sampling call per hop (pairs batch-major, so the CUDA
    engine can group every batch's pairs by transit); relabeling stays per batch, whose small
    tables stay in cache."""
    graph = sampler.graph
    weight = graph.weight if sampler.weighted else None
    disjoint_nodes = graph.num_nodes if sampler.disjoint else None
    batches = [_BatchSample(seeds, disjoint_nodes) for seeds in seed_batches]
    for hop, fanout in enumerate(sampler.fanouts):
        frontiers = [b.frontier() for b in batches]
        start = time.perf_counter()
        ptr, neighbors, edge_pos = sample_neighbors(
            graph.indptr, graph.indices, torch.cat(frontiers), fanout,
            replace=sampler.replace, weight=weight, seed=hop_key(key, hop))
        eid = graph.eid.index_select(0, edge_pos) if graph.eid is not None else edge_pos
        per_transit = ptr[1:] - ptr[:-1]
        pair_bounds = [0]
        for frontier in frontiers:
            pair_bounds.append(pair_bounds[-1] + frontier.numel())
        edge_bounds = ptr[pair_bounds].tolist()
        if timings is not None:
            _share_out(timings, "sample_s", time.perf_counter() - start, pair_bounds)
        for b, batch in enumerate(batches):
            edges = slice(edge_bounds[b], edge_bounds[b + 1])
            start = time.perf_counter()
            batch.add_hop(neighbors[edges], eid[edges],
                          per_transit[pair_bounds[b]:pair_bounds[b + 1]])
            if timings is not None:
                timings[b]["idmap_s"] += time.perf_counter() - start
    return [b.result(graph.indptr) for b in batches]


def _share_out(timings: List[dict], key: str, seconds: float, bounds: List[int]) -> None:
    """Adds ``seconds`` to the batches' ``key`` in proportion to their shares of ``bounds``."""
    total = max(bounds[-1], 1)
    for b, timing in enumerate(timings):
        timing[key] += seconds * (bounds[b + 1] - bounds[b]) / total
