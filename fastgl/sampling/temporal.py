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

:class:`TimeSortedRows` is that time-sorted view and its prefix search, shared with the temporal
mode of :class:`~fastgl.sampling.HeteroNeighborSampler` (over its combined edge array). On a GPU
both samplers run every hop in one call of the device sampling engine instead (one
synchronization; ``fastgl::_hetero_sample_hops`` with the graph as one node type here), which
cuts each row to the same prefix by a binary search over int64 keys of the times
(:func:`time_keys`) and draws the same samples bit for bit.
"""

from collections.abc import Iterable, Mapping, Sequence

import torch
from torch import Tensor

from fastgl.graph import CSCGraph, expand_ptr
from fastgl.hetero import EdgeType, HeteroCSCGraph, cat_or_empty, check_type_dict
from fastgl.ops import id_map, sample_ranges

from .neighbor import (
    check_id_tensor,
    checked_fanouts,
    checked_seeds,
    draw_key,
    hop_key,
    split_tree_keys,
    tree_keys,
)
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
        self.strategy = checked_strategy(_WHERE, strategy)
        if not isinstance(replace, bool):
            raise TypeError(f"{_WHERE}: replace must be a bool, got {type(replace).__name__}")
        if node_time is not None:
            check_times(_WHERE, "node_time", node_time, graph.num_nodes, "nodes", graph.device)
            slot_time = node_time[graph.indices.to(torch.int64)]
        else:
            check_times(_WHERE, "edge_time", edge_time, graph.num_edges, "edges", graph.device)
            slot_time = edge_time if graph.eid is None else edge_time[graph.eid]
        self.graph = graph
        self.node_time, self.edge_time = node_time, edge_time
        self.replace = replace
        self._rows = TimeSortedRows(graph.indptr, graph.indices, graph.edge_ids(), slot_time)
        self._in_degrees = graph.in_degrees()

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
        key = draw_key(generator, self.graph.device, _WHERE)
        if self.graph.device.type != "cuda" or seed_time is None:  # own times gather by seed
            seeds = checked_seeds(_WHERE, self.graph, seeds)
            return _sample_temporal(self, seeds, self._checked_seed_time(seeds, seed_time), key)
        # On the device engine the seeds' range is checked as they are inserted (no read-back).
        check_id_tensor(_WHERE, "seeds", seeds, self.graph.device)
        ids = seeds.to(torch.int64)
        try:
            return _sample_temporal(self, ids, self._checked_seed_time(ids, seed_time), key)
        except RuntimeError as error:
            if is_engine_seed_fault(error):
                checked_seeds(_WHERE, self.graph, seeds)  # the error path: the CPU's ValueError
            raise

    def _checked_seed_time(self, seeds: Tensor, seed_time: Tensor | None) -> Tensor:
        if seed_time is None:
            if self.node_time is None:
                raise ValueError(
                    f"{_WHERE}: seed_time is required with edge_time (one time per seed, "
                    "PyG's input_time); only node times give seeds a time of their own"
                )
            return self.node_time[seeds]
        check_times(_WHERE, "seed_time", seed_time, seeds.numel(), "seeds", self.graph.device)
        # One exact dtype for the comparison: torch would compare int64 times with float32 seed
        # times in float32, whose rounding could admit a neighbor later than its seed.
        return seed_time.to(common_time_dtype([self._rows.slot_time, seed_time]))

    def __repr__(self) -> str:
        time = "node_time" if self.node_time is not None else "edge_time"
        return (
            f"TemporalNeighborSampler(fanouts={self.fanouts}, {time}, "
            f"strategy={self.strategy!r}, replace={self.replace}, graph={self.graph})"
        )


class TimeSortedRows:
    """The slots of a CSC (rows ``indptr[v] .. indptr[v+1] - 1``) reordered so that every row
    ascends in time, ties in slot order: the neighbors valid for a time are then a prefix of
    each row, found by :meth:`valid_ends` and drawn from by ``sample_ranges`` over the ranges of
    :meth:`ranges`.

    Built once per sampler (a stable sort by time, then by row); keeps the source, edge id and
    time of every slot in the new order (24 bytes per edge with 8-byte times).

    Args:
        indptr: ``[R+1]`` row offsets; may have empty rows (the combined edge array of a
            :class:`~fastgl.HeteroCSCGraph` does, between relations).
        sources, edge_ids: ``[E]`` source and edge id of every slot.
        slot_time: ``[E]`` time of every slot (its source's node time or its edge's time).

    Example:
        >>> indptr = torch.tensor([0, 3, 4])
        >>> rows = TimeSortedRows(indptr, torch.tensor([7, 8, 9, 7]), torch.arange(4),
        ...                       torch.tensor([5, 1, 3, 2]))
        >>> rows.sources, rows.slot_time              # row 0 now ascends in time
        (tensor([8, 9, 7, 7]), tensor([1, 3, 5, 2]))
        >>> rows.valid_ends(indptr[:-1], indptr[1:], torch.tensor([3, 1]))
        tensor([2, 3])
    """

    def __init__(self, indptr: Tensor, sources: Tensor, edge_ids: Tensor, slot_time: Tensor):
        by_time = torch.sort(slot_time, stable=True).indices
        rows = expand_ptr(indptr, slot_time.numel())
        order = by_time[torch.sort(rows[by_time], stable=True).indices]
        self.sources = sources[order]
        self.edge_ids = edge_ids[order]
        self.slot_time = slot_time[order]
        self._slot_keys = {}  # per comparison dtype, built on first use (time_keys)
        lengths = indptr[1:] - indptr[:-1]
        # A binary search over a row of d slots settles in d.bit_length() halvings.
        self._search_steps = int(lengths.max()).bit_length() if lengths.numel() else 0

    def time_keys(self, tree_time: Tensor) -> tuple[Tensor, Tensor]:
        """The device engine's view of the times: int64 keys (:func:`time_keys`) of every
        slot's time and of ``tree_time``, in the dtype the reference compares them in."""
        dtype = common_time_dtype([self.slot_time, tree_time])
        if dtype not in self._slot_keys:
            self._slot_keys[dtype] = time_keys(self.slot_time, dtype)
        return self._slot_keys[dtype], time_keys(tree_time, dtype)

    def valid_ends(self, starts: Tensor, ends: Tensor, times: Tensor) -> Tensor:
        """For rows ``[starts, ends)``: the end of each row's prefix of slots whose time is
        ``<= times`` (one time per row; a binary search, all rows at once, in
        ``log2(longest row)`` tensor steps, the same on CPU and GPU)."""
        low, high = starts, ends
        last_slot = self.slot_time.numel() - 1
        for _ in range(self._search_steps):
            mid = (low + high) // 2
            # Settled rows (low == high) may point one past the last slot: clamped, then ignored.
            valid = self.slot_time[mid.clamp(max=last_slot)] <= times
            searching = low < high
            low = torch.where(searching & valid, mid + 1, low)
            high = torch.where(searching & ~valid, mid, high)
        return low

    def ranges(
        self,
        starts: Tensor,
        ends: Tensor,
        fanouts: Tensor,
        times: Tensor,
        strategy: str,
        timed: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """``(starts, ends, fanouts)`` for ``sample_ranges``: each row ``[starts, ends)`` cut to
        its prefix valid at ``times``; ``"last"``: to the ``fanout`` most recent slots of that
        prefix, taken whole (fanout ``-1``). ``timed`` (bool per row) leaves the rows where it
        is ``False`` as they are (no time constraint, drawn uniformly whatever the strategy)."""
        valid_ends = self.valid_ends(starts, ends, times)
        if timed is not None:
            valid_ends = torch.where(timed, valid_ends, ends)
        if strategy == "last":
            latest = fanouts >= 0 if timed is None else timed & (fanouts >= 0)
            starts = torch.where(latest, torch.maximum(starts, valid_ends - fanouts), starts)
            fanouts = torch.where(latest, -1, fanouts)
        return starts, valid_ends, fanouts


def checked_strategy(where: str, strategy) -> str:
    if strategy not in STRATEGIES:
        raise ValueError(f"{where}: strategy must be 'uniform' or 'last', got {strategy!r}")
    return strategy


def check_times(where: str, name: str, times, length: int, what: str, device: torch.device):
    """``times`` is a 1-D real tensor of ``length`` entries (one per ``what``) on ``device``,
    without NaN (a NaN time is neither before nor after anything)."""
    if not isinstance(times, Tensor):
        raise TypeError(f"{where}: {name} must be a tensor, got {type(times).__name__}")
    if times.dim() != 1 or times.dtype == torch.bool or times.is_complex():
        raise ValueError(
            f"{where}: {name} must be a 1-D tensor of real numbers (integers or floats), got "
            f"{times.dtype} of shape {tuple(times.shape)}"
        )
    if times.numel() != length:
        raise ValueError(
            f"{where}: {name} has {times.numel()} entries but there are {length} {what}"
        )
    if times.device != device:
        raise ValueError(
            f"{where}: {name} is on {times.device} but the graph is on {device}; "
            f"move it with {name}.to(graph.device)"
        )
    if times.is_floating_point() and bool(times.isnan().any()):
        raise ValueError(f"{where}: {name} has a NaN entry; times must be comparable")


def check_time_dict(
    where: str, name: str, times, lengths: Mapping, kind: str, device: torch.device
) -> dict:
    """``times`` as a dict keyed by ``kind`` types (``"node"`` or ``"edge"``) among
    ``lengths``' (node types or relations: their numbers of nodes or edges), every value
    checked by :func:`check_times` against its key's length."""
    check_type_dict(where, name, times, lengths, kind, "times")
    what = "nodes" if kind == "node" else "edges"
    for key, value in times.items():
        check_times(where, f"{name}[{key!r}]", value, lengths[key], what, device)
    return dict(times)


def common_time_dtype(times: Iterable[Tensor]) -> torch.dtype:
    """One dtype for times of several tensors: int64 when all are integers (exact), else
    float64 (torch's own promotion would take float32 for int64 and float32 times)."""
    floating = any(t.is_floating_point() for t in times)
    return torch.float64 if floating else torch.int64


def time_keys(times: Tensor, dtype: torch.dtype) -> Tensor:
    """int64 keys of ``times`` taken as ``dtype`` (:func:`common_time_dtype`) that compare as
    those times do, equal times giving equal keys: integers as they are; a float64's bits, with
    the negative ones' magnitude bits flipped so that they order below, and -0.0 made +0.0 first
    (NaN is refused before). The device engine compares these keys, one type for every time
    dtype.

    Example:
        >>> keys = time_keys(torch.tensor([-2.5, -0.0, 0.0, 1.0, float("inf")]), torch.float64)
        >>> keys.argsort(stable=True).tolist(), bool(keys[1] == keys[2])
        ([0, 1, 2, 3, 4], True)
    """
    if not dtype.is_floating_point:
        return times.to(torch.int64)
    bits = (times.to(torch.float64) + 0.0).view(torch.int64)  # + 0.0 turns -0.0 into +0.0
    return torch.where(bits < 0, bits ^ ((1 << 63) - 1), bits)


def is_engine_seed_fault(error: RuntimeError) -> bool:
    """Whether ``fastgl::_hetero_sample_hops`` refused a seed (it checks them as it inserts
    them); its callers then run their own seed check, which raises the CPU path's error."""
    return str(error).startswith("hetero_sample_hops: seed ")


def hetero_time_sorted_rows(
    where: str,
    graph: HeteroCSCGraph,
    node_time: Mapping[str, Tensor] | None,
    edge_time: Mapping[EdgeType, Tensor] | None,
) -> tuple[TimeSortedRows, Tensor]:
    """The time-sorted view of a heterogeneous graph's combined edge array (every relation's
    rows sorted by time, in place of the combined ``indices`` and ``eid``) and ``[R]`` bool:
    which relations have times. With node times (per node type, any subset of the types) a
    relation has times when its source type does; with edge times (per relation, in the order
    of the relation's ``edge_index``), when it has an entry. Times of several dtypes are kept in
    one (:func:`common_time_dtype`)."""
    if node_time is not None and edge_time is not None:
        raise ValueError(
            f"{where}: give node_time or edge_time, not both (PyG's time_attr is a node or an "
            "edge attribute)"
        )
    combined, device = graph.combined, graph.device
    if node_time is not None:
        times = check_time_dict(where, "node_time", node_time, graph.num_nodes, "node", device)
        dtype = common_time_dtype(times.values())
        per_type = [
            times[t].to(dtype) if t in times else torch.zeros(n, dtype=dtype, device=device)
            for t, n in graph.num_nodes.items()
        ]
        slot_time = cat_or_empty(per_type, device, dtype)[combined.indices]
        timed = [s in times for s, _, _ in graph.edge_types]
    else:
        times = check_time_dict(where, "edge_time", edge_time, graph.num_edges, "edge", device)
        dtype = common_time_dtype(times.values())
        bounds = combined.edge_offsets.tolist()
        per_relation = [
            times[e].to(dtype)[combined.eid[a:b]]
            if e in times
            else torch.zeros(b - a, dtype=dtype, device=device)
            for e, a, b in zip(graph.edge_types, bounds, bounds[1:])
        ]
        slot_time = cat_or_empty(per_relation, device, dtype)
        timed = [e in times for e in graph.edge_types]
    rows = TimeSortedRows(combined.indptr, combined.indices, combined.eid, slot_time)
    return rows, torch.tensor(timed, dtype=torch.bool, device=device)


def _sample_temporal(
    sampler: TemporalNeighborSampler,
    seeds: Tensor,
    seed_time: Tensor,
    key: int,
    engine: bool | None = None,
) -> SampledSubgraph:
    """Every hop of a temporal sample with Philox key ``key``, in the sample layout of
    docs/contracts.md: the seeds, then the nodes new at each hop in first-occurrence order (per
    tree: a node's key is ``tree * num_nodes + node``), edges grouped by hop and, within a hop,
    by target in frontier order.

    On a GPU (or with ``engine=True``) every hop runs in one call of the device sampling engine
    (:func:`_sample_temporal_on_engine`, one synchronization); otherwise, and as its reference,
    the hops are composed here of ``sample_ranges`` and ``id_map``."""
    if engine is None:
        engine = sampler.graph.device.type == "cuda"
    if engine:
        return _sample_temporal_on_engine(sampler, seeds, seed_time, key)
    graph, device, rows = sampler.graph, sampler.graph.device, sampler._rows
    num_nodes, num_trees = max(graph.num_nodes, 1), seeds.numel()
    keys = tree_keys(_WHERE, seeds, num_nodes)
    num_sampled_nodes, num_sampled_edges = [num_trees], []
    row_parts, cols, eids = [], [], []
    frontier_begin = 0
    for hop, fanout in enumerate(sampler.fanouts):
        tree, node = split_tree_keys(keys[frontier_begin:], num_nodes)
        starts, ends, fanouts = rows.ranges(
            graph.indptr[node],
            graph.indptr[node + 1],
            torch.full_like(node, fanout),
            seed_time[tree],
            sampler.strategy,
        )
        # 'last' leaves fanouts of -1 alone (whole ranges): replace matters to 'uniform' only.
        ptr, slots = sample_ranges(starts, ends, None, fanouts, sampler.replace, hop_key(key, hop))
        pair = expand_ptr(ptr, slots.numel())
        sources = rows.sources[slots].to(torch.int64)
        unique, local = id_map(keys, tree[pair] * num_nodes + sources)
        row_parts.append(local)
        cols.append(pair + frontier_begin)
        eids.append(rows.edge_ids[slots])
        num_sampled_edges.append(slots.numel())
        num_sampled_nodes.append(unique.numel() - keys.numel())
        frontier_begin, keys = keys.numel(), unique
    batch, nodes = split_tree_keys(keys, num_nodes)
    empty = torch.empty(0, dtype=torch.int64, device=device)
    return SampledSubgraph(
        nodes=nodes,
        row=torch.cat(row_parts) if row_parts else empty,
        col=torch.cat(cols) if cols else empty,
        eid=torch.cat(eids) if eids else empty,
        num_sampled_nodes=num_sampled_nodes,
        num_sampled_edges=num_sampled_edges,
        seed_index=torch.arange(num_trees, device=device),
        in_degrees=sampler._in_degrees[nodes],
        batch=batch,
    )


def _sample_temporal_on_engine(
    sampler: TemporalNeighborSampler, seeds: Tensor, seed_time: Tensor, key: int
) -> SampledSubgraph:
    """:func:`_sample_temporal` as one ``fastgl::_hetero_sample_hops`` call: the graph as one
    node type with one timed relation over its time-sorted rows, every seed its own tree. The
    seeds are checked and ``seed_time`` is of the slots' comparison dtype already."""
    graph, rows = sampler.graph, sampler._rows
    slot_keys, tree_keys = rows.time_keys(seed_time)
    nodes, node_counts, row, col, eid, edge_counts, _, tree, _ = (
        torch.ops.fastgl._hetero_sample_hops(
            graph.indptr,
            rows.sources,
            None,
            rows.edge_ids,
            seeds,
            [seeds.numel()],
            [0, graph.num_nodes],
            [0],
            [0],
            [0],
            sampler.fanouts,
            len(sampler.fanouts),
            sampler.replace,
            False,
            True,
            key,
            slot_time=slot_keys,
            tree_time=tree_keys,
            timed=[1],
            latest=sampler.strategy == "last",
        )
    )
    return SampledSubgraph(
        nodes=nodes,
        row=row,
        col=col,
        eid=eid,
        num_sampled_nodes=node_counts[0].tolist(),
        num_sampled_edges=edge_counts[0].tolist(),
        seed_index=torch.arange(seeds.numel(), device=graph.device),
        in_degrees=sampler._in_degrees[nodes],
        batch=tree,
    )
