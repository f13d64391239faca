"""Multi-hop neighbor sampling on a :class:`~fastgl.HeteroCSCGraph`.

Every hop is one compiled draw for all relations (``fastgl::sample_ranges`` over the graph's
combined edge array: each (relation, transit) pair is a slot range with its own fanout) and one
Fused-Map relabel (``fastgl::id_map``) over global node ids, whatever the number of node and
edge types. On a GPU, sampling (temporal too) runs all hops in one call of the device sampling
engine instead (``fastgl::_hetero_sample_hops``: one synchronization per call), which draws the
same samples bit for bit.

Temporal sampling (PyG's ``NeighborLoader(time_attr=...)`` on ``HeteroData``) is the same draw
over a time-sorted view of the combined edge array (``temporal.TimeSortedRows``, shared with
:class:`~fastgl.TemporalNeighborSampler`): each pair's range is cut to its prefix valid at the
time of the pair's tree.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import accumulate

import torch
from torch import Tensor

from fastgl.graph import Block, check_ids, expand_ptr, sorted_target_offsets
from fastgl.hetero import EdgeType, HeteroCSCGraph, check_type_dict
from fastgl.ops import id_map, sample_ranges

from .neighbor import (
    check_id_tensor,
    checked_fanouts,
    draw_key,
    hop_key,
    split_tree_keys,
    tree_keys,
)
from .temporal import (
    check_times,
    checked_strategy,
    common_time_dtype,
    hetero_time_sorted_rows,
    is_engine_seed_fault,
)

_WHERE = "hetero_neighbor_sample"

Fanouts = Sequence[int] | Mapping[EdgeType, Sequence[int]]


@dataclass
class RelationBlock(Block):
    """The :class:`~fastgl.Block` of one relation ``(src_type, rel, dst_type)`` in one layer of a
    heterogeneous sample.

    Its sources are the layer's first ``num_src_nodes`` nodes of ``src_type`` (global ids of that
    type in ``src_nodes``), its destinations the layer's first ``num_dst_nodes`` nodes of
    ``dst_type`` (``dst_nodes``). Between two types the destinations are not a prefix of the
    sources: a conv layer then takes the block with features ``(x_src, x_dst)``, ``x_dst`` the
    first ``num_dst_nodes`` rows of the destination type's features. Within one type the block
    is an ordinary one (destinations the prefix of the sources, ``src_in_degrees`` their
    in-degrees along the relation), so ``GCNConv`` takes it too.
    """

    dst_node_ids: Tensor | None = None

    @property
    def dst_nodes(self) -> Tensor:
        """Global ids (of the destination type) of the destination nodes."""
        if self.dst_node_ids is None:
            return self.src_nodes[: self.num_dst_nodes]
        return self.dst_node_ids

    def to(self, device: str | torch.device) -> "RelationBlock":
        """This block with its tensors on ``device``."""
        moved = super().to(device)
        ids = None if self.dst_node_ids is None else self.dst_node_ids.to(device)
        return replace(moved, dst_node_ids=ids)


@dataclass(frozen=True)
class HeteroSampledSubgraph:
    """A multi-hop heterogeneous neighbor sample, laid out like a PyG heterogeneous
    ``NeighborLoader`` batch: node fields per node type, edge fields per relation. Every node
    type and relation of the graph has an entry (empty when nothing was sampled). Frozen: its
    blocks are built once from these fields, on first access.

    Attributes:
        nodes: per node type, ids of that type: the (deduplicated) seeds first in the given
            order, then the nodes new at hop 1, hop 2, ... each in first-occurrence order.
        row: per relation, the local index (in ``nodes[src_type]``) of every sampled edge's
            source.
        col: per relation, the local index (in ``nodes[dst_type]``) of its destination, the
            node it was sampled for.
        eid: per relation, the id of every sampled edge (its column in the relation's
            ``edge_index``).
        num_sampled_nodes: per node type, ``L+1`` counts: seeds, then nodes new at each hop.
        num_sampled_edges: per relation, ``L`` counts: edges sampled at each hop (a relation's
            edges are grouped by hop, each hop's by destination).
        seed_index: per node type, the local index of every given seed (repeats map to their
            first occurrence).
        in_degrees: per relation, the in-degree along the relation (in the whole graph) of
            every node of ``nodes[dst_type]``, or ``None``; the sampler's are computed on
            first access (a read-only mapping).
        batch: disjoint sampling: per node type, the seed each node's tree grows from (its
            position among all seeds, node types in the graph's order); ``None`` otherwise.
        layerwise: the sample is layer-wise (DGL's semantics: at every hop all nodes so far
            drew); its blocks then hold one hop each.
        hop_indptr: per relation, per hop, the CSC offsets of the hop's edges over the hop's
            transits of the destination type (``None`` where the relation drew nothing): hop
            ``h``'s transits are the nodes new at hop ``h-1`` (the seeds at hop 1) hop-wise,
            every node before hop ``h`` layer-wise, so a layer-wise hop's offsets are its
            block's CSC as they come from the draw (DGL's drop-in builds its blocks from them).
    """

    nodes: dict[str, Tensor]
    row: dict[EdgeType, Tensor]
    col: dict[EdgeType, Tensor]
    eid: dict[EdgeType, Tensor]
    num_sampled_nodes: dict[str, list[int]]
    num_sampled_edges: dict[EdgeType, list[int]]
    seed_index: dict[str, Tensor]
    in_degrees: Mapping[EdgeType, Tensor] | None = None
    batch: dict[str, Tensor] | None = None
    layerwise: bool = False
    hop_indptr: dict[EdgeType, list[Tensor | None]] | None = None

    @property
    def num_layers(self) -> int:
        """The number of hops sampled, one block layer each."""
        counts = next(iter(self.num_sampled_nodes.values()), [0])
        return len(counts) - 1

    @property
    def batch_size(self) -> dict[str, int]:
        """Per node type, the number of distinct seeds (the first rows of its nodes)."""
        return {ntype: counts[0] for ntype, counts in self.num_sampled_nodes.items()}

    @property
    def edge_index(self) -> dict[EdgeType, Tensor]:
        """Per relation, ``[2, E]`` local edges, PyG orientation (row 0 = source)."""
        return {etype: torch.stack([self.row[etype], self.col[etype]]) for etype in self.row}

    @cached_property
    def block_sizes(self) -> list[dict[str, tuple[int, int]]]:
        """Per layer (input layer first), per node type ``(num_src, num_dst)``: the layer reads
        the first ``num_src`` nodes of the type and writes its first ``num_dst`` (the nodes of
        hops ``0 .. L-i`` and ``0 .. L-i-1`` for layer ``i``; the last layer writes the seeds)."""
        node_ends = {t: list(accumulate(c)) for t, c in self.num_sampled_nodes.items()}
        num_layers = self.num_layers
        return [
            {t: (ends[num_layers - i], ends[num_layers - i - 1]) for t, ends in node_ends.items()}
            for i in range(num_layers)
        ]

    @cached_property
    def blocks(self) -> list[dict[EdgeType, RelationBlock]]:
        """The message-flow graphs for an ``L``-layer GNN, input layer first: per layer one
        :class:`RelationBlock` per relation (R-GCN style: one conv per relation, outputs summed
        per destination type).

        Layer ``i`` reads the nodes of hops ``0 .. L-i`` of every type and writes those of hops
        ``0 .. L-i-1`` (:attr:`block_sizes`): per node type the destinations are the prefix of
        the sources, and the last layer writes the seeds. Hop-wise, a relation's block holds its
        edges of hops ``1 .. L-i``, so every node aggregates the same sampled neighbors in every
        layer; layer-wise, the edges of hop ``L-i`` alone (each layer drew anew).
        """
        edge_ends = {r: [0] + list(accumulate(c)) for r, c in self.num_sampled_edges.items()}
        num_layers = self.num_layers
        blocks = []
        for layer, sizes in enumerate(self.block_sizes):
            hops = num_layers - layer
            first = hops - 1 if self.layerwise else 0
            # Layer-wise, a layer is one hop, whose draw made its CSC offsets already.
            drawn = self.hop_indptr if self.layerwise and self.hop_indptr is not None else None
            blocks.append(
                {
                    etype: self._relation_block(
                        etype,
                        ends[first],
                        ends[hops],
                        sizes[etype[0]][0],
                        sizes[etype[2]][1],
                        None if drawn is None else drawn[etype][hops - 1],
                    )
                    for etype, ends in edge_ends.items()
                }
            )
        return blocks

    def _relation_block(
        self,
        etype: EdgeType,
        first: int,
        last: int,
        num_src: int,
        num_dst: int,
        indptr: Tensor | None = None,
    ) -> RelationBlock:
        """Relation ``etype``'s block of edges ``first .. last - 1`` (grouped by destination),
        with ``indptr`` its CSC offsets when known."""
        src_type, _, dst_type = etype
        dst = self.col[etype][first:last]
        degrees = None
        if src_type == dst_type and self.in_degrees is not None:
            degrees = self.in_degrees[etype][:num_src]
        if indptr is None:
            indptr = sorted_target_offsets(dst, num_dst)
        return RelationBlock(
            src=self.row[etype][first:last],
            dst=dst,
            eid=self.eid[etype][first:last],
            src_nodes=self.nodes[src_type][:num_src],
            num_src_nodes=num_src,
            num_dst_nodes=num_dst,
            src_in_degrees=degrees,
            indptr=indptr,
            dst_node_ids=self.nodes[dst_type][:num_dst],
        )


class HeteroNeighborSampler:
    """Samples in-neighbors along every relation of a heterogeneous graph, hop by hop (PyG's
    heterogeneous ``NeighborLoader``; DGL's ``NeighborSampler`` with ``layerwise=True``).

    At hop ``h`` every transit of node type ``t`` draws ``fanouts[r][h]`` in-neighbors along
    every relation ``r`` whose destination type is ``t``. Hop-wise (the default) the transits
    are the nodes new at hop ``h-1`` (of every type; the seeds at hop 1); layer-wise every node
    so far. All relations draw in one compiled call per hop, Philox-keyed like
    :class:`~fastgl.NeighborSampler`: deterministic for a generator seed, and CPU and CUDA draw
    the same sample.

    Args:
        graph: the graph; sampling runs on its device.
        fanouts: neighbors per transit at each hop, seeds outward (PyG's order): one list for
            every relation, or a dict ``{edge_type: list}`` with an entry for every relation
            (as PyG's, which raises for a missing one; ``[0] * hops`` samples nothing along
            it) and the same number of hops in each. ``-1`` takes all neighbors, ``0`` none.
        replace: sample with replacement (``False``: truly without).
        weighted: draw proportionally to the edge weights (every relation needs them).
        disjoint: every seed grows its own tree (PyG's ``disjoint=True``): a node reached from
            two seeds appears twice, and the result's ``batch`` says which seed each node
            belongs to.
        layerwise: every node so far draws at every hop (DGL's semantics: a layer's
            destinations per type are the prefix of its sources).
        node_time: temporal sampling by node times: ``{node_type: [num_nodes] times}`` for any
            subset of the node types. A tree draws a neighbor of a timed type only if its time
            ``node_time[type][neighbor]`` is at most the tree's seed time; neighbors of untimed
            types are not constrained (as in PyG).
        edge_time: temporal sampling by edge times: ``{edge_type: [num_edges] times}`` (in the
            order of the relation's ``edge_index``) for any subset of the relations; a tree
            draws an edge of a timed relation only if ``edge_time[relation][edge]`` is at most
            its seed time. Give ``node_time`` or ``edge_time``, not both.
        strategy: temporal sampling's draw along a timed relation: ``"uniform"`` among the
            valid neighbors (with or without replacement), ``"last"`` the ``fanout`` most
            recent valid ones (ties in time by edge order: the later edge is the more recent).
            Untimed relations draw uniformly either way (as in PyG).

    Temporal sampling is always disjoint (as in PyG; ``disjoint`` is then ``True`` whatever
    was given) and unweighted; every tree has the time of its seed (:meth:`sample`'s
    ``seed_time``). Times are any real dtype (NaN is refused); the sampler keeps the combined
    edge array sorted by time within every row (24 bytes per edge), built once here.

    Example:
        >>> import fastgl
        >>> graph = fastgl.HeteroCSCGraph.from_edge_index_dict(
        ...     {
        ...         ("author", "writes", "paper"): torch.tensor([[0, 1, 2], [0, 0, 1]]),
        ...         ("paper", "cites", "paper"): torch.tensor([[1], [0]]),
        ...     },
        ...     {"author": 3, "paper": 2},
        ... )
        >>> sub = HeteroNeighborSampler(graph, [-1, -1]).sample({"paper": torch.tensor([0])})
        >>> sub.nodes
        {'author': tensor([0, 1, 2]), 'paper': tensor([0, 1])}
        >>> sub.num_sampled_nodes         # per type: seeds, new at hop 1, new at hop 2
        {'author': [0, 2, 1], 'paper': [1, 1, 0]}
        >>> writes = ("author", "writes", "paper")
        >>> sub.row[writes], sub.col[writes], sub.eid[writes]   # local ids, edge ids
        (tensor([0, 1, 2]), tensor([0, 0, 1]), tensor([0, 1, 2]))

        One conv per relation and layer (R-GCN style), on the blocks (input layer first):

        >>> x = {t: torch.randn(n, 4) for t, n in graph.num_nodes.items()}
        >>> h = {t: x[t][sub.nodes[t]] for t in graph.node_types}
        >>> block = sub.blocks[0][writes]          # 3 authors -> 2 papers
        >>> conv = fastgl.nn.SAGEConv((4, 4), 8)
        >>> conv((h["author"], h["paper"][: block.num_dst_nodes]), block).shape
        torch.Size([2, 8])
        >>> sub.block_sizes[1]                    # the last layer writes the seeds
        {'author': (2, 0), 'paper': (2, 1)}

        Fanouts per relation, drawn at random (one draw per relation and transit here):

        >>> fanouts = {writes: [1], ("paper", "cites", "paper"): [0]}
        >>> sampler = HeteroNeighborSampler(graph, fanouts)
        >>> sub = sampler.sample({"paper": torch.tensor([0, 1])}, torch.Generator().manual_seed(0))
        >>> sub.num_sampled_edges
        {('author', 'writes', 'paper'): [2], ('paper', 'cites', 'paper'): [0]}

        Temporal sampling: one tree per seed, none reaching into its seed's future. Paper 0
        seeds two trees, at times 1 and 4; authors 0, 1, 2 are of times 3, 1, 2:

        >>> node_time = {"author": torch.tensor([3, 1, 2]), "paper": torch.tensor([0, 9])}
        >>> sampler = HeteroNeighborSampler(graph, [-1], node_time=node_time)
        >>> sub = sampler.sample(
        ...     {"paper": torch.tensor([0, 0])}, seed_time={"paper": torch.tensor([1, 4])}
        ... )
        >>> sub.nodes["author"], sub.batch["author"]   # oldest first within each tree
        (tensor([1, 1, 0]), tensor([0, 1, 1]))
        >>> sub.num_sampled_edges[("paper", "cites", "paper")]   # paper 1 (time 9): too new
        [0]
    """

    def __init__(
        self,
        graph: HeteroCSCGraph,
        fanouts: Fanouts,
        replace: bool = False,
        weighted: bool = False,
        disjoint: bool = False,
        layerwise: bool = False,
        *,
        node_time: Mapping[str, Tensor] | None = None,
        edge_time: Mapping[EdgeType, Tensor] | None = None,
        strategy: str = "uniform",
    ) -> None:
        if not isinstance(graph, HeteroCSCGraph):
            raise TypeError(f"{_WHERE}: graph must be a HeteroCSCGraph, got {type(graph).__name__}")
        self.fanouts, self.num_hops = _fanouts_per_relation(graph, fanouts)
        if weighted and graph.combined.weight is None:
            unweighted = [e for e in graph.edge_types if graph[e].weight is None]
            raise ValueError(
                f"{_WHERE}: weighted=True needs edge weights for every relation; "
                + (f"{unweighted} have none" if unweighted else "the graph has no relations")
            )
        self.graph = graph
        self.replace = replace
        self.weighted = weighted
        self.layerwise = layerwise
        self.strategy = checked_strategy(_WHERE, strategy)
        self._time_rows = self._timed = None  # the time-sorted view; relations with times
        if node_time is not None or edge_time is not None:
            if weighted:
                raise ValueError(
                    f"{_WHERE}: weighted=True does not go with node_time or edge_time (temporal "
                    "draws are 'uniform' or 'last', as in PyG)"
                )
            self._time_rows, self._timed = hetero_time_sorted_rows(
                _WHERE, graph, node_time, edge_time
            )
        elif strategy != "uniform":
            raise ValueError(f"{_WHERE}: strategy={strategy!r} needs node_time or edge_time")
        # The engine's view of the times: which relations have them.
        self._timed_relations = [] if self._timed is None else self._timed.int().tolist()
        self.node_time = None if node_time is None else dict(node_time)
        self.edge_time = None if edge_time is None else dict(edge_time)
        self.disjoint = disjoint or self.temporal
        # [L, R]: a pair's fanout is one gather by its relation.
        table = [[f[hop] for f in self.fanouts.values()] for hop in range(self.num_hops)]
        self._fanout_table = torch.tensor(table, dtype=torch.int64, device=graph.device).reshape(
            self.num_hops, len(graph.edge_types)
        )
        # Disjoint node keys tree * key_base + global id (key_base > 0 even without nodes).
        self._key_base = max(sum(graph.num_nodes.values()), 1)
        self._type_offsets = graph.node_offsets.tolist()  # read once, not per batch
        self._fanout_rows = table
        # A transit's row in the combined CSC: its global id + _row_base[relation].
        starts = graph.combined.indptr_start.tolist()
        types = {t: i for i, t in enumerate(graph.node_types)}
        self._row_base = [
            start - self._type_offsets[types[dst]]
            for start, (_, _, dst) in zip(starts, graph.edge_types)
        ]
        # The device engine's view of the relations (node types by position).
        self._src_types = [types[src] for src, _, _ in graph.edge_types]
        self._dst_types = [types[dst] for _, _, dst in graph.edge_types]
        self._flat_fanouts = [f for hop in table for f in hop]

    @property
    def temporal(self) -> bool:
        """Whether the sampler respects times (``node_time`` or ``edge_time`` was given)."""
        return self.node_time is not None or self.edge_time is not None

    def sample(
        self,
        seeds: Mapping[str, Tensor],
        generator: torch.Generator | None = None,
        *,
        seed_time: Mapping[str, Tensor] | None = None,
        edge_weight: Tensor | None = None,
    ) -> HeteroSampledSubgraph:
        """Samples one mini-batch around ``seeds``: a dict ``{node_type: 1-D int tensor of ids
        of that type}`` (types left out, or given empty tensors, have no seeds).

        ``edge_weight`` (not with temporal sampling): this batch's draws are proportional to it
        instead of to the graph's weights (or uniform), whatever ``weighted`` says: ``[E]``
        non-negative floats on the graph's device, one per slot of ``graph.combined`` (its
        relation-major CSC order); a zero-weight edge is never drawn. DGL's drop-in excludes
        edges this way (its weights with the excluded edges at zero).

        ``seed_time`` (temporal sampling only): ``{node_type: one time per seed of that type}``
        (PyG's ``input_time``); a seed type left out takes its seeds' own ``node_time``
        (required with ``edge_time``, and for seed types without node times). ``generator``
        (on the graph's device type; default: torch's) gives the Philox key: the same state
        gives the same sample, on CPU and GPU alike for the same key."""
        key = draw_key(generator, self.graph.device, _WHERE)
        return self._sample(seeds, key, seed_time, edge_weight=edge_weight)

    def _sample(
        self,
        seeds: Mapping[str, Tensor],
        key: int,
        seed_time: Mapping[str, Tensor] | None = None,
        *,
        edge_weight: Tensor | None = None,
        engine: bool | None = None,
    ) -> HeteroSampledSubgraph:
        """:meth:`sample` with an explicit Philox key (what tests compare CPU and CUDA with).

        On a GPU (or with ``engine=True``) a call is one ``_hetero_sample_hops``
        (:meth:`_sample_on_engine`); otherwise, and as its reference, the hops are composed here.
        Nodes are kept per type (one ``fastgl::id_map`` per type and hop over keys of that type)
        and a relation's pairs are its transits in their order, so every relation's draws come
        out grouped as the result lays them out: nothing is sorted by type or by relation."""
        if engine is None:
            engine = self.graph.device.type == "cuda"
        if engine:
            # The engine checks the seeds' ranges as it inserts them, but the gather of a seed
            # type's own node times (no seed_time for it) needs them in range first.
            given = seed_time if isinstance(seed_time, Mapping) else {}
            own_times = [t for t in self.graph.node_types if self.temporal and t not in given]
            checked = self._checked_seeds(seeds, own_times)
            tree_time = self._tree_times(seeds, seed_time)
            weight = self._checked_edge_weight(edge_weight)
            return self._sample_on_engine(seeds, checked, key, weight, tree_time)
        seed_ids, seeds_per_type = self._checked_seeds(seeds)
        tree_time = self._tree_times(seeds, seed_time)
        weight = self._checked_edge_weight(edge_weight)
        keys = seed_ids
        if self.disjoint:  # every seed its own tree, repeats included
            keys = tree_keys(_WHERE, seed_ids, self._key_base)
        nodes, seed_index = {}, {}
        for ntype, part in zip(self.graph.node_types, keys.split(seeds_per_type)):
            nodes[ntype], seed_index[ntype] = (
                id_map(part[:0], part) if part.numel() else (part, part)
            )
        node_ends = [{t: n.numel() for t, n in nodes.items()}]
        hops = []
        for hop in range(self.num_hops):
            # Hop-wise, the nodes new at the previous hop draw; layer-wise, every node so far.
            fresh = self.layerwise or hop == 0
            begin = dict.fromkeys(nodes, 0) if fresh else node_ends[hop - 1]
            drawn = self._draw_hop(nodes, begin, hop, hop_key(key, hop), tree_time, weight)
            hops.append(self._relabel(nodes, drawn))
            node_ends.append({t: n.numel() for t, n in nodes.items()})
        return self._assemble(nodes, seed_index, node_ends, hops)

    def _sample_on_engine(
        self,
        seeds: Mapping[str, Tensor],
        checked: tuple[Tensor, list[int]],
        key: int,
        weight: Tensor | None,
        tree_time: Tensor | None,
    ) -> HeteroSampledSubgraph:
        """Every hop in one ``fastgl::_hetero_sample_hops`` call, the device sampling engine:
        one synchronization per call (it brings back the counts), the samples of the hops
        composed in :meth:`_sample`, bit for bit. Temporal: the engine draws from the
        time-sorted view, each timed pair's range cut to its tree's valid prefix, comparing
        order-preserving int64 keys of the times (:func:`~.temporal.time_keys`). ``checked``:
        :meth:`_checked_seeds` of ``seeds``, whose ranges the engine checks.

        Host reads besides the op's one: a seed type that takes its own node times has its
        seeds range-checked (before the gather), and float seed times are checked for NaN, each
        once per node type."""
        graph, combined = self.graph, self.graph.combined
        seed_ids, seeds_per_type = checked
        # A graph without relations has no offsets at all; the op's CSC has one entry.
        indptr = combined.indptr if combined.indptr.numel() else seed_ids.new_zeros(1)
        sources, edge_ids, times = combined.indices, combined.eid, {}
        if tree_time is not None:
            rows = self._time_rows
            sources, edge_ids = rows.sources, rows.edge_ids
            slot_keys, tree_keys = rows.time_keys(tree_time)
            times = dict(
                slot_time=slot_keys,
                tree_time=tree_keys,
                timed=self._timed_relations,
                latest=self.strategy == "last",
            )
        try:
            out = torch.ops.fastgl._hetero_sample_hops(
                indptr,
                sources,
                weight,
                edge_ids,
                seed_ids,
                seeds_per_type,
                self._type_offsets,
                self._src_types,
                self._dst_types,
                self._row_base,
                self._flat_fanouts,
                self.num_hops,
                self.replace,
                self.layerwise,
                self.disjoint,
                key,
                **times,
            )
        except RuntimeError as error:
            if is_engine_seed_fault(error):
                self._checked_seeds(seeds)  # the error path: the CPU's ValueError
            raise
        nodes, node_counts, row, col, eid, edge_counts, seed_local, tree, indptr = out
        node_counts, edge_counts = node_counts.tolist(), edge_counts.tolist()
        types, sizes = graph.node_types, [sum(c) for c in node_counts]
        ids_of = {
            t: ids - offset if offset else ids
            for t, ids, offset in zip(types, nodes.split(sizes), self._type_offsets)
        }
        edges = self._engine_edges((row, col, eid), edge_counts)
        return self._subgraph(
            ids_of,
            dict(zip(types, tree.split(sizes))) if self.disjoint else None,
            dict(zip(types, seed_local.split(seeds_per_type))),
            dict(zip(types, node_counts)),
            edges,
            dict(zip(graph.edge_types, edge_counts)),
            self._engine_offsets(indptr, node_counts),
        )

    def _engine_edges(
        self, arrays: tuple[Tensor, Tensor, Tensor], edge_counts: list[list[int]]
    ) -> tuple[dict[EdgeType, Tensor], ...]:
        """Per relation, its (row, col, eid) of every hop, cut from the engine's layout: by
        source type, then hop, then relation."""
        runs = [[] for _ in self.graph.edge_types]
        at = 0
        for source in range(len(self.graph.node_types)):
            for hop in range(self.num_hops):
                for r, src in enumerate(self._src_types):
                    if src == source:
                        runs[r].append((at, edge_counts[r][hop]))
                        at += edge_counts[r][hop]
        fields = ({}, {}, {})
        for etype, relation_runs in zip(self.graph.edge_types, runs):
            for field, array in zip(fields, arrays):
                parts = [array[start : start + n] for start, n in relation_runs]
                field[etype] = (
                    parts[0] if len(parts) == 1 else torch.cat(parts) if parts else array[:0]
                )
        return fields

    def _engine_offsets(
        self, indptr: Tensor, node_counts: list[list[int]]
    ) -> dict[EdgeType, list[Tensor | None]]:
        """Per relation, per hop, its CSC offsets over the hop's transits (``None`` where it drew
        nothing), cut from the engine's layout: hop by hop, relation by relation, a run for each
        relation that drew."""
        out = {etype: [None] * self.num_hops for etype in self.graph.edge_types}
        at = 0
        for hop in range(self.num_hops):
            for r, etype in enumerate(self.graph.edge_types):
                counts = node_counts[self._dst_types[r]]
                transits = sum(counts[: hop + 1]) if self.layerwise else counts[hop]
                if self._fanout_rows[hop][r] != 0 and transits > 0:
                    out[etype][hop] = indptr[at : at + transits + 1]
                    at += transits + 1
        return out

    def _checked_edge_weight(self, edge_weight: Tensor | None) -> Tensor | None:
        """The weights this batch draws by: ``edge_weight`` (checked), else the graph's when
        ``weighted``, else ``None`` (uniform)."""
        combined = self.graph.combined
        if edge_weight is None:
            return combined.weight if self.weighted else None
        if self.temporal:
            raise ValueError(f"{_WHERE}: edge_weight does not go with node_time or edge_time")
        num_edges, device = combined.indices.numel(), self.graph.device
        if not isinstance(edge_weight, Tensor) or not edge_weight.is_floating_point():
            raise ValueError(f"{_WHERE}: edge_weight must be a float tensor")
        if edge_weight.shape != (num_edges,) or edge_weight.device != device:
            raise ValueError(
                f"{_WHERE}: edge_weight must have shape [{num_edges}] (one weight per edge of "
                f"graph.combined) on {device}, got {tuple(edge_weight.shape)} on "
                f"{edge_weight.device}"
            )
        return edge_weight

    def _checked_seeds(
        self, seeds: Mapping[str, Tensor], ranged: Collection[str] | None = None
    ) -> tuple[Tensor, list[int]]:
        """The seeds as global ids, node types in the graph's order, and their count per type;
        their ids are range-checked for the node types in ``ranged`` (default: all). The device
        engine checks the others as it inserts them (a read-back here would cost a
        synchronization per type)."""
        graph = self.graph
        check_type_dict(_WHERE, "seeds", seeds, graph.num_nodes, "node", "ids")
        parts, counts = [], []
        for ntype, offset in zip(graph.node_types, self._type_offsets):
            ids = seeds.get(ntype)
            if ids is None:
                counts.append(0)
                continue
            what = f"seeds[{ntype!r}]"
            check_id_tensor(_WHERE, what, ids, graph.device)
            if ranged is None or ntype in ranged:
                check_ids(_WHERE, what, ids, graph.num_nodes[ntype], f"'{ntype}'")
            parts.append(ids.to(torch.int64) + offset)
            counts.append(ids.numel())
        if not parts:
            return torch.zeros(0, dtype=torch.int64, device=graph.device), counts
        return torch.cat(parts), counts

    def _tree_times(
        self, seeds: Mapping[str, Tensor], seed_time: Mapping[str, Tensor] | None
    ) -> Tensor | None:
        """Temporal sampling: the time of every tree (seeds of the node types in the graph's
        order), from ``seed_time`` or the seeds' node times; ``None`` otherwise. ``seeds`` are
        checked."""
        if not self.temporal:
            if seed_time is not None:
                raise ValueError(
                    f"{_WHERE}: seed_time is for temporal sampling; the sampler has neither "
                    "node_time nor edge_time"
                )
            return None
        graph, seed_time = self.graph, {} if seed_time is None else seed_time
        check_type_dict(_WHERE, "seed_time", seed_time, graph.num_nodes, "node", "times")
        parts = []
        for ntype in graph.node_types:
            ids = seeds.get(ntype)
            count = 0 if ids is None else ids.numel()
            if ntype in seed_time:
                name, what = f"seed_time[{ntype!r}]", f"seeds of type {ntype!r}"
                check_times(_WHERE, name, seed_time[ntype], count, what, graph.device)
                parts.append(seed_time[ntype])
            elif count:
                parts.append(self._own_times(ntype, ids))
        dtype = common_time_dtype(parts)
        if not parts:
            return torch.zeros(0, dtype=dtype, device=graph.device)
        return torch.cat([p.to(dtype) for p in parts])

    def _own_times(self, ntype: str, ids: Tensor) -> Tensor:
        """The node times of seeds ``ids`` of type ``ntype``, which has no ``seed_time``; the ids
        are range-checked (:meth:`_checked_seeds`)."""
        if self.node_time is None or ntype not in self.node_time:
            why = (
                "edge times give seeds no time of their own"
                if self.node_time is None
                else f"node type {ntype!r} has no node_time"
            )
            raise ValueError(
                f"{_WHERE}: seeds of type {ntype!r} need seed_time[{ntype!r}] (one time per "
                f"seed, PyG's input_time): {why}"
            )
        return self.node_time[ntype][ids.to(torch.int64)]

    def _draw_hop(
        self,
        nodes: dict[str, Tensor],
        begin: dict[str, int],
        hop: int,
        seed: int,
        tree_time: Tensor | None,
        weight: Tensor | None,
    ) -> list[tuple[int, Tensor, Tensor, Tensor, Tensor]]:
        """One compiled draw for every (relation, transit) pair of the hop: relation-major (the
        graph's order), each relation's transits (``nodes[dst_type][begin[dst_type]:]``) in
        their order; relations with fanout 0 at the hop have none. Pair ``p`` draws from Philox
        stream ``p``. Returns, per relation that drew, ``(relation index, indptr over its
        transits, local id of every drawn edge's destination in nodes[dst_type], edge id within
        the relation, key of its source)``: the global id, plus the transit's tree when
        disjoint. Temporal: each pair draws from its range's prefix valid at ``tree_time`` of
        its tree, in the time-sorted view. One read-back: the relations' edge counts."""
        graph, combined = self.graph, self.graph.combined
        drawing, transit_of = [], {}
        for r, etype in enumerate(graph.edge_types):
            dst_type = etype[2]
            if self._fanout_rows[hop][r] == 0 or nodes[dst_type].numel() == begin[dst_type]:
                continue
            if dst_type not in transit_of:  # (keys, global ids, trees) of the type's transits
                transit_keys = nodes[dst_type][begin[dst_type] :]
                tree, ids = (None, transit_keys)
                if self.disjoint:
                    tree, ids = split_tree_keys(transit_keys, self._key_base)
                transit_of[dst_type] = (transit_keys, ids, tree)
            drawing.append((r, dst_type))
        if not drawing:
            return []
        counts = [transit_of[t][1].numel() for _, t in drawing]
        device = combined.indptr.device
        row = (
            torch.cat([transit_of[t][1] + self._row_base[r] for r, t in drawing])
            if len(drawing) > 1
            else transit_of[drawing[0][1]][1] + self._row_base[drawing[0][0]]
        )
        starts, ends = combined.indptr[row], combined.indptr[row + 1]
        per_rel = torch.tensor(counts, device=device)
        rel_ids = torch.tensor([r for r, _ in drawing], device=device)
        fanouts = torch.repeat_interleave(
            self._fanout_table[hop, rel_ids], per_rel, output_size=row.numel()
        )
        sources, edge_ids = combined.indices, combined.eid
        if self._time_rows is not None:  # cut every range to its tree's valid prefix
            rows = self._time_rows
            times = tree_time[torch.cat([transit_of[t][2] for _, t in drawing])]
            timed = torch.repeat_interleave(self._timed[rel_ids], per_rel, output_size=row.numel())
            starts, ends, fanouts = rows.ranges(starts, ends, fanouts, times, self.strategy, timed)
            sources, edge_ids = rows.sources, rows.edge_ids
        ptr, slots = sample_ranges(starts, ends, weight, fanouts, self.replace, seed)
        pair = expand_ptr(ptr, slots.numel())
        neighbor_keys, edge_ids = sources[slots], edge_ids[slots]
        if self.disjoint:  # a neighbor joins its transit's tree
            tree_base = torch.cat([transit_of[t][0] - transit_of[t][1] for _, t in drawing])
            neighbor_keys = neighbor_keys + tree_base[pair]
        pair_ends = list(accumulate([0] + counts))
        edge_ends = ptr[pair_ends].tolist()
        drawn = []
        for (r, t), p0, p1, e0, e1 in zip(
            drawing, pair_ends, pair_ends[1:], edge_ends, edge_ends[1:]
        ):
            drawn.append(
                (
                    r,
                    ptr[p0 : p1 + 1] - e0,
                    pair[e0:e1] - (p0 - begin[t]),
                    edge_ids[e0:e1],
                    neighbor_keys[e0:e1],
                )
            )
        return drawn

    def _relabel(
        self, nodes: dict[str, Tensor], drawn: list[tuple[int, Tensor, Tensor, Tensor, Tensor]]
    ) -> dict[int, tuple[Tensor, Tensor, Tensor, Tensor]]:
        """Adds the hop's new sources to ``nodes`` (per source type, one ``id_map`` over its
        relations' sources in relation order: first-occurrence order) and returns per relation
        that drew ``(indptr, row, col, eid)``, ``row`` the sources' local ids."""
        edge_types = self.graph.edge_types
        out = {}
        for ntype in nodes:
            mine = [d for d in drawn if edge_types[d[0]][0] == ntype]
            if not mine:
                continue
            sources = [d[4] for d in mine]
            neighbor_keys = torch.cat(sources) if len(sources) > 1 else sources[0]
            nodes[ntype], local = id_map(nodes[ntype], neighbor_keys)
            parts = local.split([s.numel() for s in sources]) if len(sources) > 1 else [local]
            for (r, indptr, col, eid, _), row in zip(mine, parts):
                out[r] = (indptr, row, col, eid)
        return out

    def _assemble(
        self,
        nodes: dict[str, Tensor],
        seed_index: dict[str, Tensor],
        node_ends: list[dict[str, int]],
        hops: list[dict[int, tuple[Tensor, Tensor, Tensor, Tensor]]],
    ) -> HeteroSampledSubgraph:
        """The result's fields from the nodes per type (keys) and the edges per hop and
        relation."""
        graph = self.graph
        empty = torch.zeros(0, dtype=torch.int64, device=graph.device)
        ids_of, batch = {}, {} if self.disjoint else None
        for ntype, offset in zip(graph.node_types, self._type_offsets):
            ids = nodes[ntype]
            if self.disjoint:
                batch[ntype], ids = split_tree_keys(ids, self._key_base)
            ids_of[ntype] = ids - offset if offset else ids
        row, col, eid, num_edges, indptr = {}, {}, {}, {}, {}
        for r, etype in enumerate(graph.edge_types):
            parts = [hop[r] for hop in hops if r in hop]
            num_edges[etype] = [hop[r][1].numel() if r in hop else 0 for hop in hops]
            indptr[etype] = [hop[r][0] if r in hop else None for hop in hops]
            for field, i in ((row, 1), (col, 2), (eid, 3)):
                field[etype] = (
                    empty
                    if not parts
                    else parts[0][i]
                    if len(parts) == 1
                    else torch.cat([p[i] for p in parts])
                )
        counts = {
            t: [node_ends[0][t]] + [b[t] - a[t] for a, b in zip(node_ends, node_ends[1:])]
            for t in graph.node_types
        }
        return self._subgraph(ids_of, batch, seed_index, counts, (row, col, eid), num_edges, indptr)

    def _subgraph(
        self,
        ids_of: dict[str, Tensor],
        batch: dict[str, Tensor] | None,
        seed_index: dict[str, Tensor],
        node_counts: dict[str, list[int]],
        edges: tuple[dict[EdgeType, Tensor], ...],
        num_edges: dict[EdgeType, list[int]],
        indptr: dict[EdgeType, list[Tensor | None]],
    ) -> HeteroSampledSubgraph:
        row, col, eid = edges
        return HeteroSampledSubgraph(
            nodes=ids_of,
            row=row,
            col=col,
            eid=eid,
            num_sampled_nodes=node_counts,
            num_sampled_edges=num_edges,
            seed_index=seed_index,
            in_degrees=_InDegrees(self.graph, ids_of),
            batch=batch,
            layerwise=self.layerwise,
            hop_indptr=indptr,
        )


class _InDegrees(Mapping):
    """Per relation, the in-degree along it (in the whole graph) of every sampled node of its
    destination type, computed on first access (most users never read them)."""

    def __init__(self, graph: HeteroCSCGraph, nodes: dict[str, Tensor]) -> None:
        self._graph, self._nodes, self._cache = graph, nodes, {}

    def __getitem__(self, etype: EdgeType) -> Tensor:
        if etype not in self._cache:
            r = self._graph.edge_types.index(etype)  # ValueError: not a relation of the graph
            combined = self._graph.combined
            row = combined.indptr_start[r] + self._nodes[etype[2]]
            self._cache[etype] = combined.indptr[row + 1] - combined.indptr[row]
        return self._cache[etype]

    def __iter__(self):
        return iter(self._graph.edge_types)

    def __len__(self) -> int:
        return len(self._graph.edge_types)

    def __repr__(self) -> str:
        return repr(dict(self))


def hetero_neighbor_sample(
    graph: HeteroCSCGraph,
    seeds: Mapping[str, Tensor],
    fanouts: Fanouts,
    replace: bool = False,
    weighted: bool = False,
    generator: torch.Generator | None = None,
    disjoint: bool = False,
    layerwise: bool = False,
    *,
    node_time: Mapping[str, Tensor] | None = None,
    edge_time: Mapping[EdgeType, Tensor] | None = None,
    strategy: str = "uniform",
    seed_time: Mapping[str, Tensor] | None = None,
) -> HeteroSampledSubgraph:
    """Samples a multi-hop heterogeneous neighborhood of ``seeds``, temporal when given
    ``node_time`` or ``edge_time``; see :class:`HeteroNeighborSampler`.

    Example:
        >>> import fastgl
        >>> cites = ("paper", "cites", "paper")
        >>> graph = fastgl.HeteroCSCGraph.from_edge_index_dict(
        ...     {cites: torch.tensor([[1, 2], [0, 0]])}, {"paper": 3}
        ... )
        >>> sub = hetero_neighbor_sample(graph, {"paper": torch.tensor([0])}, [1])
        >>> sub.num_sampled_nodes, sub.num_sampled_edges
        ({'paper': [1, 1]}, {('paper', 'cites', 'paper'): [1]})
    """
    sampler = HeteroNeighborSampler(
        graph,
        fanouts,
        replace,
        weighted,
        disjoint,
        layerwise,
        node_time=node_time,
        edge_time=edge_time,
        strategy=strategy,
    )
    return sampler.sample(seeds, generator, seed_time=seed_time)


def _fanouts_per_relation(
    graph: HeteroCSCGraph, fanouts: Fanouts
) -> tuple[dict[EdgeType, list[int]], int]:
    """Every relation's checked fanouts, in the graph's relation order, and the number of
    hops."""
    if not isinstance(fanouts, Mapping):
        shared = checked_fanouts(_WHERE, fanouts)
        return {etype: shared for etype in graph.edge_types}, len(shared)
    check_type_dict(_WHERE, "fanouts", fanouts, graph.edge_types, "edge", "fanouts")
    missing = [etype for etype in graph.edge_types if etype not in fanouts]
    if missing:
        raise ValueError(
            f"{_WHERE}: fanouts has no entry for relations {missing}; give every relation a "
            f"list ([0] * hops samples nothing along it)"
        )
    per_relation = {etype: checked_fanouts(_WHERE, fanouts[etype]) for etype in graph.edge_types}
    hops = {etype: len(f) for etype, f in per_relation.items()}
    if len(set(hops.values())) > 1:
        raise ValueError(f"{_WHERE}: every relation must have the same number of hops, got {hops}")
    return per_relation, next(iter(hops.values()), 0)
