"""Temporal neighbor sampling: PyG's ``NeighborLoader(time_attr=...)`` semantics on a CSCGraph.

Every seed grows its own tree (temporal sampling is always disjoint) and has a time: the one
given for it, or its own node time. At every hop a node of a tree draws only neighbors that do
not lie in that tree's future: ``node_time[neighbor] <= seed_time`` (node times) or
``edge_time[edge] <= seed_time`` (edge times).

How: each CSC row is sorted by time once, when the sampler is built, so the valid neighbors of
any node for any seed time are a prefix of its row. Per hop, a vectorized binary search finds
each transit's prefix end (``log2(max in-degree)`` tensor steps, the same on CPU and GPU) and the
compiled ``sample_ranges`` draws from the prefixes with sample_neighbors' per-pair draws; nodes
are relabeled with the compiled Fused-Map (``id_map``) on the keys ``tree * num_nodes + node``,
as the disjoint mode of :class:`~fastgl.sampling.NeighborSampler` does.
"""

from collections.abc import Sequence

import torch
from torch import Tensor

from fastgl.graph import CSCGraph, expand_ptr
from fastgl.ops import id_map, sample_ranges

from .neighbor import checked_fanouts, checked_seeds, draw_key, hop_key
from .subgraph import SampledSubgraph

STRATEGIES = ("uniform", "last")
_WHERE = "TemporalNeighborSampler"


class TemporalNeighborSampler:
    """Samples ``fanouts[h]`` in-neighbors per node at hop ``h+1`` that respect time, one tree
    per seed (PyG's temporal ``NeighborLoader``).

    Args:
        graph: the graph; sampling runs on its device.
        fanouts: neighbors per node at each hop, seeds outward (PyG's order); ``-1`` takes every
            valid neighbor, ``0`` none.
        node_time: ``[N]`` time of every node: a neighbor is valid for a tree when
            ``node_time[neighbor] <= seed time``. Give this or ``edge_time``, not both.
        edge_time: ``[E]`` time of every edge, in the user's edge order (``edge_index``'s
            columns, as ``graph.eid`` numbers them): an in-edge is valid when
            ``edge_time[edge] <= seed time``.
        strategy: ``"uniform"`` draws uniformly among the valid neighbors (with or without
            replacement); ``"last"`` takes the ``fanout`` most recent valid ones (ties in time go
            by edge order: the later edge is the more recent), whatever ``replace`` says.
        replace: ``"uniform"`` draws with replacement.

    Times are any real dtype (integers or floats; NaN is refused). The sampler keeps the graph's
    in-edges sorted by time (source, edge id and time of every edge: 24 bytes per edge), built
    once here. Draws are unweighted.

    :meth:`sample` returns a :class:`SampledSubgraph` in PyG's disjoint layout: ``batch`` says
    which seed's tree each node belongs to; a node reached by two trees appears in both.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 4, 3], [3, 3, 3, 3, 0]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> node_time = torch.tensor([1, 2, 3, 0, 5])
        >>> sampler = TemporalNeighborSampler(graph, [1], node_time=node_time, strategy="last")
        >>> sub = sampler.sample(torch.tensor([3, 3]), seed_time=torch.tensor([2, 4]))
        >>> sub.nodes, sub.batch        # tree 0 sees up to time 2, tree 1 up to time 4
        (tensor([3, 3, 1, 2]), tensor([0, 1, 0, 1]))
        >>> sub.eid                     # the latest valid in-edge of each tree's seed
        tensor([1, 2])
    """

    def __init__(
        self,
        graph: CSCGraph,
        fanouts: Sequence[int],
        *,
        node_time: Tensor | None = None,
        edge_time: Tensor | None = None,
        strategy: str = "uniform",
        replace: bool = False,
    ) -> None:
        if not isinstance(graph, CSCGraph):
            raise TypeError(
                f"{_WHERE}: graph must be a fastgl.CSCGraph, got {type(graph).__name__}"
            )
        self.fanouts = checked_fanouts(_WHERE, fanouts)
        if (node_time is None) == (edge_time is None):
            given = "both" if node_time is not None else "neither"
            raise ValueError(
                f"{_WHERE}: give exactly one of node_time and edge_time (PyG's time_attr is a "
                f"node or an edge attribute), got {given}"
            )
        if strategy not in STRATEGIES:
            raise ValueError(f"{_WHERE}: strategy must be 'uniform' or 'last', got {strategy!r}")
        if not isinstance(replace, bool):
            raise TypeError(f"{_WHERE}: replace must be a bool, got {type(replace).__name__}")
        if node_time is not None:
            _check_times("node_time", node_time, graph.num_nodes, "nodes", graph.device)
            slot_time = node_time[graph.indices.to(torch.int64)]
        else:
            _check_times("edge_time", edge_time, graph.num_edges, "edges", graph.device)
            slot_time = edge_time if graph.eid is None else edge_time[graph.eid]
        self.graph = graph
        self.node_time, self.edge_time = node_time, edge_time
        self.strategy, self.replace = strategy, replace
        order = _rows_sorted_by_time(graph, slot_time)
        self._sources = graph.indices[order]
        self._edge_ids = graph.edge_ids()[order]
        self._slot_time = slot_time[order]
        degrees = graph.in_degrees()
        self._in_degrees = degrees
        # A binary search over a row of d slots settles in d.bit_length() halvings.
        self._search_steps = int(degrees.max()).bit_length() if degrees.numel() else 0

    def sample(
        self,
        seeds: Tensor,
        seed_time: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> SampledSubgraph:
        """Samples one tree per seed (1-D int tensor of node ids; repeats get trees of their
        own). ``seed_time``: one time per seed (PyG's ``input_time``); ``None`` takes each
        seed's own ``node_time`` (required with ``edge_time``). ``generator`` (on the graph's
        device type; default: torch's) gives the Philox key, so the same generator state gives
        the same sample, on CPU and GPU alike for the same key."""
        seeds = checked_seeds(_WHERE, self.graph, seeds)
        seed_time = self._checked_seed_time(seeds, seed_time)
        return _sample_temporal(
            self, seeds, seed_time, draw_key(generator, self.graph.device, _WHERE)
        )

    def _checked_seed_time(self, seeds: Tensor, seed_time: Tensor | None) -> Tensor:
        if seed_time is None:
            if self.node_time is None:
                raise ValueError(
                    f"{_WHERE}: seed_time is required with edge_time (one time per seed, "
                    "PyG's input_time); only node times give seeds a time of their own"
                )
            return self.node_time[seeds]
        _check_times("seed_time", seed_time, seeds.numel(), "seeds", self.graph.device)
        return seed_time

    def _valid_ends(self, starts: Tensor, ends: Tensor, times: Tensor) -> Tensor:
        """For rows ``[starts, ends)`` sorted by time: the end of each row's prefix of slots
        whose time is ``<= times`` (a binary search, all rows at once)."""
        low, high = starts, ends
        last_slot = self._slot_time.numel() - 1
        for _ in range(self._search_steps):
            mid = (low + high) // 2
            # Settled rows (low == high) may point one past the last slot: clamped, then ignored.
            valid = self._slot_time[mid.clamp(max=last_slot)] <= times
            searching = low < high
            low = torch.where(searching & valid, mid + 1, low)
            high = torch.where(searching & ~valid, mid, high)
        return low

    def _draw(self, starts: Tensor, valid_ends: Tensor, fanout: int, key: int):
        """``(ptr, slots)``: each transit's draws from its valid prefix ``[starts, valid_ends)``."""
        if self.strategy == "last" and fanout >= 0:
            # The `fanout` most recent valid slots: the tail of the prefix, taken whole.
            starts = torch.maximum(starts, valid_ends - fanout)
            fanout = -1
        fanouts = torch.full_like(starts, fanout)
        replace = self.replace and self.strategy == "uniform"
        return sample_ranges(starts, valid_ends, None, fanouts, replace, key)

    def __repr__(self) -> str:
        time = "node_time" if self.node_time is not None else "edge_time"
        return (
            f"TemporalNeighborSampler(fanouts={self.fanouts}, {time}, "
            f"strategy={self.strategy!r}, replace={self.replace}, graph={self.graph})"
        )


def _check_times(name: str, times, length: int, what: str, device: torch.device) -> None:
    """``times`` is a 1-D real tensor of ``length`` entries (one per ``what``) on ``device``,
    without NaN (a NaN time is neither before nor after anything)."""
    if not isinstance(times, Tensor):
        raise TypeError(f"{_WHERE}: {name} must be a tensor, got {type(times).__name__}")
    if times.dim() != 1 or times.dtype == torch.bool or times.is_complex():
        raise ValueError(
            f"{_WHERE}: {name} must be a 1-D tensor of real numbers (integers or floats), got "
            f"{times.dtype} of shape {tuple(times.shape)}"
        )
    if times.numel() != length:
        raise ValueError(
            f"{_WHERE}: {name} has {times.numel()} entries but there are {length} {what}"
        )
    if times.device != device:
        raise ValueError(
            f"{_WHERE}: {name} is on {times.device} but the graph is on {device}; "
            f"move it with {name}.to(graph.device)"
        )
    if times.is_floating_point() and bool(times.isnan().any()):
        raise ValueError(f"{_WHERE}: {name} has a NaN entry; times must be comparable")


def _rows_sorted_by_time(graph: CSCGraph, slot_time: Tensor) -> Tensor:
    """The CSC slots reordered so that each row's in-edges ascend in time, ties in slot order
    (the user's edge order): a stable sort by time, then a stable sort by row."""
    by_time = torch.sort(slot_time, stable=True).indices
    rows = expand_ptr(graph.indptr, graph.num_edges)
    return by_time[torch.sort(rows[by_time], stable=True).indices]


def _sample_temporal(
    sampler: TemporalNeighborSampler, seeds: Tensor, seed_time: Tensor, key: int
) -> SampledSubgraph:
    """Every hop of a temporal sample with Philox key ``key``, in the sample layout of
    docs/contracts.md: the seeds, then the nodes new at each hop in first-occurrence order (per
    tree: a node's key is ``tree * num_nodes + node``), edges grouped by hop and, within a hop,
    by target in frontier order."""
    graph, device = sampler.graph, sampler.graph.device
    num_nodes, num_trees = max(graph.num_nodes, 1), seeds.numel()
    if num_trees > (2**63 - 1) // num_nodes:
        raise ValueError(
            f"{_WHERE}: {num_trees} seeds on {num_nodes} nodes overflow the int64 node keys "
            "tree * num_nodes + node; sample fewer seeds at a time"
        )
    keys = torch.arange(num_trees, device=device) * num_nodes + seeds
    num_sampled_nodes, num_sampled_edges = [num_trees], []
    rows, cols, eids = [], [], []
    frontier_begin = 0
    for hop, fanout in enumerate(sampler.fanouts):
        frontier = keys[frontier_begin:]
        tree = torch.div(frontier, num_nodes, rounding_mode="floor")
        node = frontier - tree * num_nodes
        starts, ends = graph.indptr[node], graph.indptr[node + 1]
        valid_ends = sampler._valid_ends(starts, ends, seed_time[tree])
        ptr, slots = sampler._draw(starts, valid_ends, fanout, hop_key(key, hop))
        pair = expand_ptr(ptr, slots.numel())
        sources = sampler._sources[slots].to(torch.int64)
        unique, local = id_map(keys, tree[pair] * num_nodes + sources)
        rows.append(local)
        cols.append(pair + frontier_begin)
        eids.append(sampler._edge_ids[slots])
        num_sampled_edges.append(slots.numel())
        num_sampled_nodes.append(unique.numel() - keys.numel())
        frontier_begin, keys = keys.numel(), unique
    batch = torch.div(keys, num_nodes, rounding_mode="floor")
    nodes = keys - batch * num_nodes
    empty = torch.empty(0, dtype=torch.int64, device=device)
    return SampledSubgraph(
        nodes=nodes,
        row=torch.cat(rows) if rows else empty,
        col=torch.cat(cols) if cols else empty,
        eid=torch.cat(eids) if eids else empty,
        num_sampled_nodes=num_sampled_nodes,
        num_sampled_edges=num_sampled_edges,
        seed_index=torch.arange(num_trees, device=device),
        in_degrees=sampler._in_degrees[nodes],
        batch=batch,
    )
