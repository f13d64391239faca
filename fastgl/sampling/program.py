"""Sampler programs: a new sampler written as a small Python class, run by a compiled engine.

A program states, step by step, what NextDoor's API states (Jangda et al., "Accelerating Graph
Sampling for Graph Machine Learning using GPUs", EuroSys '21, §3 and §4.1): which nodes of a
sample are transits (``stepTransits``), how many neighbors each transit draws, or each sample
from the combined neighborhood of its transits (``stepSize``, ``samplingType``), how likely each
candidate edge is (the distribution ``next`` draws from) and what the draws add to the sample
(the rest of ``next``). :func:`run_program` is the engine: per step it turns the transits into
slot ranges of the graph's adjacency, evaluates the program's edge weights over every candidate
at once (one vectorized torch expression, not a call per edge) and draws with the compiled
``sample_ranges`` under the step's Philox key, derived as the built-in samplers derive theirs.
A program that states a built-in sampler therefore draws exactly what that sampler draws.
docs/sampler-programs.md is the guide, with a worked example.
"""

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import Tensor

from fastgl.graph import Block, CSCGraph, check_offsets, expand_ptr
from fastgl.ops import FrontierTrace, id_map, sample_ranges

# Layer sampling's estimator (its layers' candidates, blocks and weights) is LayerSampler's own:
# the program states only how a layer draws.
from .layer import LayerFrontier, LayerSampledSubgraph, LayerSampler, assemble_layers
from .neighbor import (
    check_id_tensor,
    checked_fanouts,
    checked_seeds,
    draw_key,
    hop_key,
    split_tree_keys,
)
from .subgraph import SampledSubgraph

#: ``edge_weight(transit, candidate, edge, step) -> [C]`` weights of ``C`` candidate edges.
EdgeWeight = Callable[[Tensor, Tensor, Tensor, int], Tensor | None]

#: ``candidate_weight(neighborhood, step) -> [C]`` weights of a collective step's candidates.
CandidateWeight = Callable[["Neighborhood", int], Tensor | None]

DIRECTIONS = ("in", "out")
#: ProgramRandom.uniform's resolution: a slot in [0, 2^53), exact in a double (the kernels'
#: kRestartScale, csrc/sampling/walk_step.h).
UNIFORM_SCALE = 1 << 53


class Neighborhood(NamedTuple):
    """A collective step's candidates: sample ``p``'s are ``nodes[ptr[p]:ptr[p+1]]``, its
    transits first, then every other node an edge of its transits reaches, each once, in
    first-occurrence order (transit by transit, edge by edge); and those edges, every transit's
    in turn.

    Attributes:
        nodes: ``[C]`` int64 node id of every candidate.
        ptr: ``[P+1]`` int64 offsets of the samples' candidates.
        edge_transit: ``[E]`` int64 position (in ``nodes``) of every edge's transit.
        edge_candidate: ``[E]`` int64 position of the neighbor the edge reaches.
        edge_ids: ``[E]`` int64 id of every edge in the user's edge list.
    """

    nodes: Tensor
    ptr: Tensor
    edge_transit: Tensor
    edge_candidate: Tensor
    edge_ids: Tensor


class Draws(NamedTuple):
    """What one step drew, pair by pair. A pair is a transit (``pair`` indexes what
    :meth:`SamplerProgram.transits` returned) or, for a collective program, a sample.

    Attributes:
        ptr: ``[P+1]`` int64: pair ``p`` drew draws ``ptr[p] .. ptr[p+1]``.
        pair: ``[D]`` int64 pair of every draw (non-decreasing).
        nodes: ``[D]`` int64 drawn neighbor: the source of the drawn in-edge (``direction =
            "in"``) or the target of the drawn out-edge (``"out"``); a collective draw's node.
        edges: ``[D]`` int64 id of every drawn edge in the user's edge list (its column in
            ``edge_index``); ``-1`` for a collective draw, which draws a node (its edges to
            the transits are in ``neighborhood``).
        neighborhood: a collective step's :class:`Neighborhood`, else ``None``.
        candidate: ``[D]`` int64 position of every collective draw in ``neighborhood.nodes``,
            else ``None``.
    """

    ptr: Tensor
    pair: Tensor
    nodes: Tensor
    edges: Tensor
    neighborhood: Neighborhood | None = None
    candidate: Tensor | None = None


class ProgramRandom:
    """The random draws of one run, all from one Philox key drawn from the run's generator.

    Step ``s`` owns the keys ``hop_key(key, s * keys_per_step + d)`` for ``d < keys_per_step``
    (:func:`~fastgl.sampling.neighbor.hop_key`, the built-in samplers' derivation): ``d = 0``
    draws the step's neighbors, the others are the program's, through :meth:`choose`,
    :meth:`choose_per_row` and :meth:`uniform`.

    Example:
        >>> rng = ProgramRandom(key=7, keys_per_step=2, where="example")
        >>> rng.choose(torch.tensor([0.0, 1.0, 0.0]), count=4, step=0)
        tensor([1, 1, 1, 1])
    """

    def __init__(
        self, key: int, keys_per_step: int, where: str, device: torch.device | str = "cpu"
    ) -> None:
        self._key = key
        self._keys_per_step = keys_per_step
        self._where = where
        self._device = torch.device(device)

    def key(self, step: int, draw: int = 0) -> int:
        """The signed int64 Philox key of draw ``draw`` of step ``step``."""
        return hop_key(self._key, step * self._keys_per_step + draw)

    def _check_draw(self, method: str, draw: int) -> None:
        if not 1 <= draw < self._keys_per_step:
            raise ValueError(
                f"{self._where}: {method}(draw={draw}) needs 1 <= draw < keys_per_step = "
                f"{self._keys_per_step} (draw 0 is the step's neighbor draw); raise the "
                "program's keys_per_step"
            )

    def uniform(self, count: int, step: int, draw: int = 1) -> Tensor:
        """``[count]`` float64 uniforms in ``[0, 1)`` on 53 bits, on the run's device, pair
        ``p``'s from key ``(step, draw)`` and stream ``p``: ``sample_ranges``' draw of one slot
        in ``[0, 2^53)``, scaled by ``2^-53``. How the built-in walk decides a restart
        (``u < restart_prob``).

        Example:
            >>> rng = ProgramRandom(key=7, keys_per_step=2, where="example")
            >>> u = rng.uniform(3, step=0)
            >>> u.dtype, bool(((u >= 0) & (u < 1)).all())
            (torch.float64, True)
        """
        self._check_draw("uniform", draw)
        slots = self._one_slot_per_pair(count, UNIFORM_SCALE, None, step, draw, self._device)
        return slots.double() / UNIFORM_SCALE

    def choose(self, weights: Tensor, count: int, step: int, draw: int = 1) -> Tensor:
        """``[count]`` int64: for each pair ``p < count``, an index into ``weights`` drawn
        proportionally to them (at least one must be positive), from key ``(step, draw)`` and
        stream ``p`` (so pair ``p``'s choice is the same whatever ``count`` is). This is
        ``sample_ranges`` with one range over ``weights`` per pair, fanout 1, with replacement."""
        self._check_draw("choose", draw)
        weights = self._checked_weights("choose", weights, 1)
        if not bool((weights > 0).any()):
            raise ValueError(
                f"{self._where}: choose needs finite weights >= 0, one of them > 0; got "
                f"{weights.tolist()}"
            )
        return self._one_slot_per_pair(count, weights.numel(), weights, step, draw, weights.device)

    def choose_per_row(self, weights: Tensor, step: int, draw: int = 1) -> Tensor:
        """``[P]`` int64: for each row ``p`` of ``weights`` (``[P, K]``), an index in ``[0, K)``
        drawn proportionally to that row, or ``-1`` for a row without a positive weight, from
        key ``(step, draw)`` and stream ``p``: what :meth:`choose` draws for pair ``p`` were
        its weights ``weights[p]``. Each sample choosing among its own candidates (e.g. the
        walker a multidimensional random walk moves).

        Example:
            >>> rng = ProgramRandom(key=7, keys_per_step=2, where="example")
            >>> rng.choose_per_row(torch.tensor([[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]]), step=0)
            tensor([ 1,  0, -1])
        """
        self._check_draw("choose_per_row", draw)
        weights = self._checked_weights("choose_per_row", weights, 2)
        rows, width = weights.shape
        starts = torch.arange(rows, device=weights.device) * width
        # A row's draw depends on its weights and its stream only, not on where its range lies.
        ptr, slots = sample_ranges(
            starts,
            starts + width,
            weights.reshape(-1),
            torch.ones_like(starts),
            True,
            self.key(step, draw),
        )
        drew = torch.diff(ptr) > 0  # a row of zeros draws nothing
        chosen = torch.full_like(starts, -1)
        return chosen.masked_scatter_(drew, slots - starts[drew])

    def _checked_weights(self, method: str, weights: Tensor, dim: int) -> Tensor:
        """``weights`` for ``sample_ranges`` after checking them: ``dim``-D, floating point
        (half precision becomes float64), finite and ``>= 0``, each draw's total finite."""
        if weights.dim() != dim or not weights.is_floating_point():
            raise ValueError(
                f"{self._where}: {method} needs a {dim}-D floating-point weight tensor, got "
                f"{weights.dtype} of shape {tuple(weights.shape)}"
            )
        if weights.dtype not in (torch.float32, torch.float64):
            weights = weights.double()
        totals = weights.sum(dim=-1)
        if not bool(
            ((weights >= 0) & torch.isfinite(weights)).all() & torch.isfinite(totals).all()
        ):
            raise ValueError(
                f"{self._where}: {method} needs finite weights >= 0 with a finite sum per draw"
            )
        return weights

    def _one_slot_per_pair(
        self, count: int, size: int, weights: Tensor | None, step: int, draw: int, device
    ) -> Tensor:
        """``sample_ranges`` with one range ``[0, size)`` (over ``weights``, if given) per pair,
        fanout 1, with replacement, under key ``(step, draw)``: pair ``p``'s slot."""
        zeros = torch.zeros(count, dtype=torch.int64, device=device)
        _, slots = sample_ranges(
            zeros, zeros + size, weights, zeros + 1, True, self.key(step, draw)
        )
        return slots


class SamplerProgram(ABC):
    """A sampler stated as NextDoor's per-step functions; run it with :func:`run_program`.

    A run grows samples from seeds over ``steps`` steps. :meth:`start` makes the run's state
    from the seeds; at step ``s`` the engine asks :meth:`transits` which nodes draw, draws
    ``fanout(s)`` neighbors per transit (per sample when ``collective``) proportionally to
    ``edge_weight`` and hands the :class:`Draws` to :meth:`update`; :meth:`finish` turns the
    state into the result. The program holds what does not change during a run (the graph,
    parameters); the state holds the samples, so a program can run many times.

    Attributes (set on the class or the instance):
        graph: the :class:`~fastgl.CSCGraph` the program samples; runs use its device.
        steps: number of steps.
        collective: NextDoor's sampling type. ``False`` (individual transit sampling): every
            transit draws ``fanout`` neighbors of its own. ``True`` (collective): every sample
            draws ``fanout`` nodes from the combined neighborhood of its transits (the
            transits and every node their edges reach, each once: a :class:`Neighborhood`),
            and :meth:`transits` says which transits are whose.
        direction: ``"in"``: transits draw in-edges (the graph's CSC; the draws' ``nodes`` are
            their sources), as neighbor sampling does; ``"out"``: out-edges
            (``graph.out_csr()``; ``nodes`` are targets), as random walks do.
        replace: draw with replacement (``False``: distinct candidates per pair).
        keys_per_step: Philox keys per step: one for the neighbors, the others for
            :meth:`ProgramRandom.choose`, :meth:`ProgramRandom.choose_per_row` and
            :meth:`ProgramRandom.uniform` (e.g. 2 for a walk that may restart).
        edge_weight: ``None`` draws every candidate edge alike. Otherwise a callable (a method
            of the subclass, or e.g. :class:`StoredWeights` set in ``__init__``)
            ``edge_weight(transit, candidate, edge, step)`` that gets ``[C]`` int64 tensors
            over the step's ``C`` candidate edges (the transit drawing, the neighbor it
            offers, the edge's id in the user's edge list) and the step, and returns ``[C]``
            finite weights ``>= 0`` (or ``None``: alike at this step); the draws are
            proportional to them and zero-weight edges are never drawn. A bool tensor instead
            keeps edges: the draw is uniform among the kept ones, as if the others were not
            there (not the draws of weights 1 and 0, which take the weighted algorithms).
            Individual programs.
        candidate_weight: the collective counterpart: ``None`` draws every candidate alike,
            or a callable ``candidate_weight(neighborhood, step)`` that returns one finite
            weight ``>= 0`` (or one bool) per candidate of the :class:`Neighborhood`, or
            ``None``.
    """

    collective: bool = False
    direction: str = "in"
    replace: bool = False
    keys_per_step: int = 1
    edge_weight: EdgeWeight | None = None
    candidate_weight: CandidateWeight | None = None
    steps: int

    def __init__(self, graph: CSCGraph) -> None:
        self.graph = graph

    @abstractmethod
    def start(self, seeds: Tensor, rng: ProgramRandom) -> Any:
        """The state of a run from ``seeds`` (``[S]`` int64 node ids, checked); keep ``rng``
        in it to make random choices of your own."""

    @abstractmethod
    def transits(self, state: Any, step: int) -> Tensor | tuple[Tensor, Tensor]:
        """The nodes that draw at ``step``: ``[P]`` int node ids, one pair each (``-1``: the
        pair draws nothing this step but keeps its index, e.g. a finished walk). A collective
        program returns ``(nodes [T], ptr [P+1])``: sample ``p``'s transits are
        ``nodes[ptr[p]:ptr[p+1]]`` (node ids, repeats counted once). May update ``state``
        (e.g. a walk that restarts first)."""

    @abstractmethod
    def fanout(self, step: int) -> int:
        """Neighbors each pair draws at ``step``: ``k >= 0`` (with replacement exactly ``k``
        when it has a candidate, without ``min(k, candidates)``), ``-1`` every candidate."""

    @abstractmethod
    def update(self, state: Any, step: int, draws: Draws) -> None:
        """Adds ``step``'s draws to ``state``."""

    def finish(self, state: Any) -> Any:
        """The result of a run (by default the state itself)."""
        return state


def run_program(
    program: SamplerProgram, seeds: Tensor, generator: torch.Generator | None = None
) -> Any:
    """Runs ``program`` from ``seeds``: the engine of :class:`SamplerProgram`.

    One key is drawn from ``generator`` (of the graph's device; default: torch's) as the
    built-in samplers draw theirs, and step ``s`` draws its neighbors with key
    ``hop_key(key, s * program.keys_per_step)``: through the compiled ``sample_ranges`` over the
    transits' adjacency rows, or over the candidates gathered into one array where
    ``edge_weight`` weighs them (same draws: a pair's draws depend on its range's weights
    only). Pair ``p`` draws from Philox stream ``p``, as pair ``p`` of ``sample_neighbors``.

    Returns:
        whatever ``program.finish`` returns.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> program = KHopProgram(graph, [2, 1])
        >>> sub = run_program(program, torch.tensor([1, 2]), torch.Generator().manual_seed(0))
        >>> same = fastgl.sampling.neighbor_sample(
        ...     graph, torch.tensor([1, 2]), [2, 1], generator=torch.Generator().manual_seed(0)
        ... )
        >>> sub.nodes, bool((sub.eid == same.eid).all())
        (tensor([1, 2, 0, 3]), True)
    """
    where = f"run_program({type(program).__name__})"
    _check_program(where, program)
    graph = program.graph
    seeds = checked_seeds(where, graph, seeds)
    rows = _adjacency(graph, program.direction)
    rng = ProgramRandom(
        draw_key(generator, graph.device, where), program.keys_per_step, where, graph.device
    )
    state = program.start(seeds, rng)
    for step in range(program.steps):
        transits = program.transits(state, step)
        draws = _draw_step(where, program, rows, transits, step, rng.key(step))
        program.update(state, step, draws)
    return program.finish(state)


class StoredWeights:
    """An ``edge_weight`` that draws proportionally to the graph's stored ``weight``, as the
    built-in samplers' ``weighted=True``: ``program.edge_weight = StoredWeights(graph)``.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2], [1, 1, 0]])
        >>> weight = torch.tensor([1.0, 2.0, 3.0])   # one per column of edge_index
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index, edge_weight=weight)
        >>> weigh = StoredWeights(graph)
        >>> weigh(transit=None, candidate=None, edge=torch.tensor([2, 0]), step=0)
        tensor([3., 1.])
    """

    def __init__(self, graph: CSCGraph) -> None:
        if graph.weight is None:
            raise ValueError("StoredWeights: the graph has no edge weights (graph.weight is None)")
        # By edge id, the order the engine names edges in (graph.weight is in CSC slot order).
        self.by_edge = torch.empty_like(graph.weight)
        self.by_edge[graph.edge_ids()] = graph.weight

    def __call__(self, transit: Tensor, candidate: Tensor, edge: Tensor, step: int) -> Tensor:
        return self.by_edge[edge]


class GrowingSubgraph:
    """A sample grown step by step in the layout of :class:`SampledSubgraph`
    (docs/contracts.md): the distinct seeds first, then the nodes each step adds in
    first-occurrence order, relabeled with the compiled Fused-Map (``id_map``). The state of
    programs whose result is a subgraph.

    Example:
        >>> sub = GrowingSubgraph(torch.tensor([5, 3, 5]))
        >>> sub.nodes, sub.newest
        (tensor([5, 3]), tensor([5, 3]))
        >>> sub.add(sources=torch.tensor([7, 3, 7]), targets=torch.tensor([0, 0, 1]),
        ...         edges=torch.tensor([10, 11, 12]))
        >>> sub.nodes, sub.newest, sub.newest_begin
        (tensor([5, 3, 7]), tensor([7]), 2)
    """

    def __init__(self, seeds: Tensor) -> None:
        self.nodes, self.seed_index = id_map(seeds.new_empty(0), seeds)
        self.newest_begin = 0
        self.num_sampled_nodes = [self.nodes.numel()]
        self.num_sampled_edges: list[int] = []
        self._rows: list[Tensor] = []
        self._cols: list[Tensor] = []
        self._eids: list[Tensor] = []

    @property
    def newest(self) -> Tensor:
        """The nodes the latest :meth:`add` added (the distinct seeds before any)."""
        return self.nodes[self.newest_begin :]

    def add(self, sources: Tensor, targets: Tensor, edges: Tensor) -> None:
        """Adds one step's edges: ``sources`` (graph ids, new ones become nodes in order of
        first occurrence), ``targets`` (local ids of nodes already in) and their ``edges``
        (ids in the user's edge list)."""
        nodes, local = id_map(self.nodes, sources)
        self._rows.append(local)
        self._cols.append(targets)
        self._eids.append(edges)
        self.num_sampled_edges.append(sources.numel())
        self.num_sampled_nodes.append(nodes.numel() - self.nodes.numel())
        self.newest_begin, self.nodes = self.nodes.numel(), nodes

    def subgraph(self, graph: CSCGraph) -> SampledSubgraph:
        """The sample, with every node's in-degree in ``graph``."""
        empty = self.nodes.new_empty(0)
        joined = [torch.cat(parts) if parts else empty for parts in (self._rows, self._cols)]
        return SampledSubgraph(
            nodes=self.nodes,
            row=joined[0],
            col=joined[1],
            eid=torch.cat(self._eids) if self._eids else empty,
            num_sampled_nodes=self.num_sampled_nodes,
            num_sampled_edges=self.num_sampled_edges,
            seed_index=self.seed_index,
            in_degrees=graph.in_degrees()[self.nodes],
        )


class KHopProgram(SamplerProgram):
    """GraphSAGE's k-hop neighbor sampling (NextDoor §3) as a program: at step ``h`` every
    node new at step ``h-1`` (every node so far when ``layerwise``, DGL's semantics) draws
    ``fanouts[h]`` in-neighbors. Draws what :func:`~fastgl.sampling.neighbor_sample` (and, for
    ``layerwise``, ``sample_hops(layerwise=True)``) draws from the same generator state.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sub = run_program(KHopProgram(graph, [-1]), torch.tensor([1]))
        >>> sub.nodes, sub.eid
        (tensor([1, 0, 2, 3]), tensor([0, 3, 4]))
    """

    def __init__(
        self,
        graph: CSCGraph,
        fanouts: list[int],
        replace: bool = False,
        weighted: bool = False,
        layerwise: bool = False,
    ) -> None:
        super().__init__(graph)
        self.fanouts = checked_fanouts(type(self).__name__, fanouts)
        self.steps = len(self.fanouts)
        self.replace = replace
        self.layerwise = layerwise
        if weighted:
            self.edge_weight = StoredWeights(graph)

    def start(self, seeds: Tensor, rng: ProgramRandom) -> GrowingSubgraph:
        return GrowingSubgraph(seeds)

    def transits(self, state: GrowingSubgraph, step: int) -> Tensor:
        return state.nodes if self.layerwise else state.newest

    def fanout(self, step: int) -> int:
        return self.fanouts[step]

    def update(self, state: GrowingSubgraph, step: int, draws: Draws) -> None:
        first_transit = 0 if self.layerwise else state.newest_begin
        state.add(draws.nodes, draws.pair + first_transit, draws.edges)

    def finish(self, state: GrowingSubgraph) -> SampledSubgraph:
        return state.subgraph(self.graph)


@dataclass
class WalkState:
    """Random walks in progress: ``nodes [S, length+1]`` (column 0 the starts, -1 where a walk
    has ended or not got yet) and ``edges [S, length]`` (the edge id each step took, -1 for
    none), as ``fastgl.ops.random_walk`` returns them, and which walks restart at this step."""

    nodes: Tensor
    edges: Tensor
    restarting: Tensor
    rng: ProgramRandom


class DeepWalkProgram(SamplerProgram):
    """DeepWalk's first-order random walks (Perozzi et al., "DeepWalk: Online Learning of Social
    Representations", KDD 2014) as a program, NextDoor's random walk (§3): every walk is a
    sample whose one transit is its current node, drawing one out-neighbor per step. Draws the
    walks :func:`fastgl.ops.random_walk` draws (``p = q = 1``) from the same generator state.

    A walk ends (``-1`` from there on) at a node without drawable out-edges and, with
    ``restart_prob`` (DGL's meaning), before any step with that probability: step ``t`` decides
    it with the step's second key (``rng.uniform`` below ``restart_prob`` restarts), then moves
    with its first, as the op does.

    Args:
        graph: the graph; walks follow its out-edges.
        length: steps per walk.
        restart_prob: probability of a restart before each step, in ``[0, 1]``.
        weighted: draw out-edges proportionally to ``graph.weight``.
        walks_per_node: walks from every start (the starts tiled, as PyG's ``Node2Vec``).

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 1, 2], [1, 2, 0, 0]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> nodes, edges = run_program(DeepWalkProgram(graph, 3), torch.tensor([2]))
        >>> nodes[0, :2], edges[0, 0]               # node 2's one out-edge is edge 3
        (tensor([2, 0]), tensor(3))
    """

    direction = "out"
    replace = True
    keys_per_step = 2  # random_walk's: key 2t moves, key 2t+1 decides the restart
    #: PPR's: a restart, or a dead end away from the start, returns the walk to its start
    teleports = False

    def __init__(
        self,
        graph: CSCGraph,
        length: int,
        restart_prob: float = 0.0,
        weighted: bool = False,
        walks_per_node: int = 1,
    ) -> None:
        super().__init__(graph)
        where = type(self).__name__
        for name, value, least in (("length", length, 0), ("walks_per_node", walks_per_node, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{where}: {name} must be an int >= {least}, got {value!r}")
        if not 0 <= restart_prob <= 1:
            raise ValueError(f"{where}: restart_prob must lie in [0, 1], got {restart_prob}")
        self.steps = length
        self.restart_prob = float(restart_prob)
        self.walks_per_node = walks_per_node
        if weighted:
            self.edge_weight = StoredWeights(graph)

    def start(self, seeds: Tensor, rng: ProgramRandom) -> WalkState:
        starts = seeds.repeat(self.walks_per_node)
        nodes = torch.full((starts.numel(), self.steps + 1), -1, device=starts.device)
        nodes[:, 0] = starts
        edges = torch.full((starts.numel(), self.steps), -1, device=starts.device)
        no_restart = torch.zeros(starts.numel(), dtype=torch.bool, device=starts.device)
        return WalkState(nodes, edges, no_restart, rng)

    def transits(self, state: WalkState, step: int) -> Tensor:
        current = state.nodes[:, step]
        if self.restart_prob > 0:
            u = state.rng.uniform(current.numel(), step)
            state.restarting = (current >= 0) & (u < self.restart_prob)
        return torch.where(state.restarting, -1, current)  # a restarting walk does not move

    def fanout(self, step: int) -> int:
        return 1

    def update(self, state: WalkState, step: int, draws: Draws) -> None:
        current, start = state.nodes[:, step], state.nodes[:, 0]
        moved = torch.full_like(current, -1).index_put_((draws.pair,), draws.nodes)
        state.edges[:, step].index_put_((draws.pair,), draws.edges)
        if self.teleports:
            dead_end = (current >= 0) & (moved < 0) & (current != start)
            moved = torch.where(state.restarting | dead_end, start, moved)
        state.nodes[:, step + 1] = moved

    def finish(self, state: WalkState) -> tuple[Tensor, Tensor]:
        return state.nodes, state.edges


class PPRProgram(DeepWalkProgram):
    """Personalized-PageRank walks (PinSAGE-style visit counting) as a program: a
    :class:`DeepWalkProgram` whose restart, and dead end away from the start, teleports the
    walk back to its start (that step's node is the start, its edge -1) instead of ending it.
    Draws the walks of ``fastgl.ops.random_walk(..., ppr=True)`` from the same generator state.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1], [1, 2]])   # 0 -> 1 -> 2, and 2 is a dead end
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> nodes, edges = run_program(PPRProgram(graph, 4, restart_prob=0.0), torch.tensor([0]))
        >>> nodes, edges
        (tensor([[0, 1, 2, 0, 1]]), tensor([[ 0,  1, -1,  0]]))
    """

    teleports = True


@dataclass
class LayerState:
    """Layer sampling in progress: the next layer's destinations (the distinct seeds at first),
    the blocks so far (seeds outward) and the local index of every given seed."""

    frontier: LayerFrontier
    seed_index: Tensor
    blocks: list[Block] = field(default_factory=list)


class LayerProgram(SamplerProgram):
    """Layer sampling (NextDoor §3, after Gao et al.) as a collective program: at step ``l``
    the mini-batch is one sample whose transits are the layer's destinations, and it draws
    ``layer_sizes[l]`` distinct nodes uniformly from the union of their in-neighbors
    (``candidate_weight``: the candidates an edge from another node reaches). The blocks and
    their estimator weights are :class:`~fastgl.sampling.LayerSampler`'s own (its layer's
    candidates, built again from the destinations, in the order of the program's
    :class:`Neighborhood`). Draws what ``LayerSampler(graph, layer_sizes).sample`` draws from
    the same generator state.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[1, 2, 3, 3, 0], [0, 0, 0, 1, 2]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sub = run_program(LayerProgram(graph, [2]), torch.tensor([0]),
        ...                   torch.Generator().manual_seed(0))
        >>> sub.nodes, sub.blocks[0].weight       # as LayerSampler's example
        (tensor([0, 1, 3]), tensor([0.2500, 0.5303, 0.7500]))
    """

    collective = True

    def __init__(self, graph: CSCGraph, layer_sizes: list[int]) -> None:
        super().__init__(graph)
        self._sampler = LayerSampler(graph, layer_sizes)  # checks the sizes, keeps Â's scales
        self.layer_sizes = self._sampler.layer_sizes
        self.steps = len(self.layer_sizes)

    def start(self, seeds: Tensor, rng: ProgramRandom) -> LayerState:
        frontier, seed_index = self._sampler.first_frontier([seeds])
        return LayerState(frontier, seed_index[0])

    def transits(self, state: LayerState, step: int) -> tuple[Tensor, Tensor]:
        nodes = state.frontier.nodes
        return nodes, torch.tensor(state.frontier.ptr, device=nodes.device)

    def fanout(self, step: int) -> int:
        return self.layer_sizes[step]

    def candidate_weight(self, neighborhood: Neighborhood, step: int) -> Tensor:
        """The union of the destinations' in-neighbors: the candidates some edge reaches from
        another node (a self-loop of the graph links a node to itself only)."""
        reached = neighborhood.edge_candidate[
            neighborhood.edge_candidate != neighborhood.edge_transit
        ]
        union = torch.zeros(neighborhood.nodes.numel(), dtype=torch.bool, device=reached.device)
        return union.index_fill_(0, reached, True)

    def update(self, state: LayerState, step: int, draws: Draws) -> None:
        layer = self._sampler.candidates(state.frontier)
        # A drawn member of the union C weighs |C| / (number drawn): its inclusion's inverse.
        union_size = self.candidate_weight(draws.neighborhood, step).sum().double()
        scale = union_size / torch.diff(draws.ptr).clamp(min=1)
        factor = layer.zeros().index_put_((draws.candidate,), scale[draws.pair])
        blocks, state.frontier = self._sampler.layer_blocks(layer, factor)
        state.blocks.append(blocks[0])

    def finish(self, state: LayerState) -> LayerSampledSubgraph:
        return assemble_layers(state.blocks[0].num_dst_nodes, state.seed_index, state.blocks)


@dataclass
class MultiRWState:
    """Multidimensional random walks in progress, one per sample: ``frontier [S, m]`` where
    each of a sample's ``m`` walkers stands, ``first`` the roots it started from, ``popped`` and
    ``added [S, K]`` what each move took (``-1`` before it, or once no walker can move), and
    ``walker [S]`` the walker each sample moves at the current step (``-1``: none)."""

    frontier: Tensor
    first: Tensor
    popped: Tensor
    added: Tensor
    walker: Tensor
    rng: ProgramRandom


class MultiRWProgram(SamplerProgram):
    """Ribeiro and Towsley's multidimensional random walk, the frontier sampler of Zeng et al.
    ("Accurate, Efficient and Scalable Graph Embedding", IPDPS 2019, §III-C) and GraphSAINT, as
    NextDoor's MultiRW states it (§4): every sample keeps ``frontier_size`` walkers; at each of
    its ``budget - frontier_size`` steps its one transit is a walker picked with probability
    proportional to its vertex's in-degree (at most ``max_entries``, the paper's cap for
    skewed graphs), which draws one uniform in-neighbor and moves there.

    The seeds are the roots: ``frontier_size`` per sample, sample ``s``'s being
    ``seeds[s*m:(s+1)*m]`` (a vertex may hold two walkers). The pick is
    :meth:`ProgramRandom.choose_per_row` (the step's second key), the move the step's neighbor
    draw. Returns a :class:`~fastgl.ops.FrontierTrace` ``(frontier, popped, added)`` laid out
    as :func:`fastgl.ops.frontier_sample` returns it: the compiled Dashboard sampler's
    distribution, from other draws (the Dashboard picks by probing its table), which
    ``tests/test_sampler_programs.py`` checks against the exact distribution of the first
    moves.

    Example:
        >>> import fastgl
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> graph = fastgl.CSCGraph.from_edge_index(torch.cat([ring, ring.flip(0)], 1))
        >>> trace = run_program(MultiRWProgram(graph, 2, 5), torch.tensor([0, 3, 1, 4]))
        >>> trace.frontier.tolist(), trace.popped.shape
        ([[0, 3], [1, 4]], torch.Size([2, 3]))
        >>> sorted(set(((trace.added - trace.popped) % 6).flatten().tolist()))  # ring neighbors
        [1, 5]
    """

    replace = True
    keys_per_step = 2  # key 0 moves the walker, key 1 picks it

    def __init__(
        self, graph: CSCGraph, frontier_size: int, budget: int, max_entries: int | None = None
    ) -> None:
        super().__init__(graph)
        where = type(self).__name__
        for name, value, least in (
            ("frontier_size", frontier_size, 1),
            ("budget", budget, frontier_size),
            ("max_entries", max_entries, 1),
        ):
            if name == "max_entries" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{where}: {name} must be an int >= {least}, got {value!r}")
        self.frontier_size = frontier_size
        self.steps = budget - frontier_size
        degree = graph.in_degrees()
        #: a walker's weight in the pick: its vertex's in-degree, capped
        self.entries = (degree if max_entries is None else degree.clamp(max=max_entries)).double()

    def start(self, seeds: Tensor, rng: ProgramRandom) -> MultiRWState:
        if seeds.numel() % self.frontier_size:
            raise ValueError(
                f"{type(self).__name__}: seeds must hold frontier_size = {self.frontier_size} "
                f"roots per sample, got {seeds.numel()}"
            )
        first = seeds.view(-1, self.frontier_size).clone()  # the trace's own, as the op's
        moves = torch.full((first.size(0), self.steps), -1, device=seeds.device)
        no_walker = torch.full((first.size(0),), -1, device=seeds.device)
        return MultiRWState(first.clone(), first, moves, moves.clone(), no_walker, rng)

    def transits(self, state: MultiRWState, step: int) -> Tensor:
        state.walker = state.rng.choose_per_row(self.entries[state.frontier], step)
        standing = state.frontier.gather(1, state.walker.clamp(min=0).unsqueeze(1)).squeeze(1)
        return torch.where(state.walker >= 0, standing, -1)

    def fanout(self, step: int) -> int:
        return 1

    def update(self, state: MultiRWState, step: int, draws: Draws) -> None:
        samples = draws.pair  # a picked walker has in-edges: one draw each
        walkers = state.walker[samples]
        state.popped[samples, step] = state.frontier[samples, walkers]
        state.added[samples, step] = draws.nodes
        state.frontier[samples, walkers] = draws.nodes

    def finish(self, state: MultiRWState) -> FrontierTrace:
        return FrontierTrace(state.first, state.popped, state.added)


# ---------------------------------------------------------------------------------------------
# The engine's steps
# ---------------------------------------------------------------------------------------------


class _Rows(NamedTuple):
    """The adjacency a program draws from: row ``v`` is the slots ``indptr[v] .. indptr[v+1]``,
    ``neighbors[k]`` the node slot ``k`` offers and ``edge_ids[k]`` its edge's id."""

    indptr: Tensor
    neighbors: Tensor
    edge_ids: Tensor


def _adjacency(graph: CSCGraph, direction: str) -> _Rows:
    if direction == "in":
        return _Rows(graph.indptr, graph.indices, graph.edge_ids())
    out = graph.out_csr()
    return _Rows(out.indptr, out.indices, out.edge_ids())


def _draw_step(
    where: str, program: SamplerProgram, rows: _Rows, transits: Any, step: int, key: int
) -> Draws:
    """One step: the transits' rows as ranges, drawn by ``sample_ranges``; straight from the
    adjacency when the draw is uniform, else from the candidate edges gathered and weighed."""
    fanout = _checked_fanout(where, program.fanout(step), step)
    if program.collective:
        return _draw_collective(where, program, rows, transits, fanout, step, key)
    nodes = _checked_transits(where, transits, rows, step, missing_allowed=True)
    starts, ends = _row_ranges(rows, nodes)
    weight = None
    if program.edge_weight is not None:
        edges = _Edges.gather(starts, ends)
        weight = program.edge_weight(
            nodes[edges.transit],
            rows.neighbors[edges.slots].to(torch.int64),
            rows.edge_ids[edges.slots],
            step,
        )
        what = f"edge_weight(..., step={step})"
        weight = _checked_weight(where, what, weight, edges.slots.numel(), starts.device)
    if weight is None:
        fanouts = torch.full_like(starts, fanout)
        ptr, slots = sample_ranges(starts, ends, None, fanouts, program.replace, key)
    else:
        # The same draws as from the rows themselves: a pair's draws depend only on the weights
        # in its range, and its range holds its row's candidates in row order.
        ptr, picked = _draw_from(edges.ptr, weight, fanout, program.replace, key)
        slots = edges.slots[picked]
    pair = expand_ptr(ptr, slots.numel())
    return Draws(ptr, pair, rows.neighbors[slots].to(torch.int64), rows.edge_ids[slots])


def _draw_collective(
    where: str,
    program: SamplerProgram,
    rows: _Rows,
    transits: Any,
    fanout: int,
    step: int,
    key: int,
) -> Draws:
    """A collective step: every sample draws from its candidates (one range each)."""
    nodes, sample_ptr = _checked_collective_transits(where, transits, rows, step)
    neighborhood = _neighborhood(where, rows, nodes, sample_ptr)
    weight = None
    if program.candidate_weight is not None:
        weight = program.candidate_weight(neighborhood, step)
        what = f"candidate_weight(..., step={step})"
        weight = _checked_weight(where, what, weight, neighborhood.nodes.numel(), nodes.device)
    ptr, picked = _draw_from(neighborhood.ptr, weight, fanout, program.replace, key)
    pair = expand_ptr(ptr, picked.numel())
    drawn = neighborhood.nodes[picked]
    return Draws(ptr, pair, drawn, torch.full_like(picked, -1), neighborhood, picked)


def _draw_from(
    ptr: Tensor, weight: Tensor | None, fanout: int, replace: bool, key: int
) -> tuple[Tensor, Tensor]:
    """``(draw offsets per pair, positions)``: pair ``p`` draws ``fanout`` of the positions
    ``ptr[p] .. ptr[p+1]``, uniformly (``weight`` ``None``), proportionally to a float
    ``weight``, or uniformly among those a bool ``weight`` keeps: from the kept positions
    alone, one range per pair, as if the others were not there."""
    fanouts = torch.full_like(ptr[1:], fanout)
    if weight is None or weight.dtype != torch.bool:
        return sample_ranges(ptr[:-1], ptr[1:], weight, fanouts, replace, key)
    kept = torch.nonzero(weight).view(-1)
    owner = expand_ptr(ptr, weight.numel())[kept]
    counts = torch.bincount(owner, minlength=ptr.numel() - 1)
    kept_ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    drawn_ptr, picked = sample_ranges(kept_ptr[:-1], kept_ptr[1:], None, fanouts, replace, key)
    return drawn_ptr, kept[picked]


def _neighborhood(where: str, rows: _Rows, nodes: Tensor, sample_ptr: Tensor) -> Neighborhood:
    """Every sample's candidates by one Fused-Map (``id_map``) over the keys
    ``sample * num_nodes + node`` (which keep samples apart) of its transits, then of the
    nodes their edges reach, sample by sample."""
    num_samples, num_transits = sample_ptr.numel() - 1, nodes.numel()
    key_base = max(rows.indptr.numel() - 1, 1)
    if num_samples * key_base > 1 << 63:
        raise ValueError(
            f"{where}: {num_samples} samples of {key_base} nodes overflow the int64 keys "
            "sample * num_nodes + node of a collective step; run fewer samples at a time"
        )
    edges = _Edges.gather(*_row_ranges(rows, nodes))
    transit_sample = expand_ptr(sample_ptr, num_transits)
    sample = torch.cat([transit_sample, transit_sample[edges.transit]])
    keys = sample * key_base + torch.cat([nodes, rows.neighbors[edges.slots].to(torch.int64)])
    order = torch.sort(sample, stable=True).indices  # a sample's transits, then its edges
    unique, local_in_order = id_map(keys[:0], keys[order])
    local = torch.empty_like(local_in_order).index_put_((order,), local_in_order)
    candidate_sample, candidates = split_tree_keys(unique, key_base)
    counts = torch.bincount(candidate_sample, minlength=num_samples)
    return Neighborhood(
        nodes=candidates,
        ptr=torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)]),
        edge_transit=local[:num_transits][edges.transit],
        edge_candidate=local[num_transits:],
        edge_ids=rows.edge_ids[edges.slots],
    )


def _row_ranges(rows: _Rows, nodes: Tensor) -> tuple[Tensor, Tensor]:
    """``(starts, ends)`` of the nodes' rows; an empty range for ``-1``."""
    valid = nodes >= 0
    safe = torch.where(valid, nodes, 0)
    return torch.where(valid, rows.indptr[safe], 0), torch.where(valid, rows.indptr[safe + 1], 0)


class _Edges(NamedTuple):
    """The edges of a step's transits in one array, transit by transit: transit ``t``'s are
    ``ptr[t] .. ptr[t+1]``; ``transit`` says whose each is and ``slots`` where it lies in the
    adjacency."""

    ptr: Tensor
    transit: Tensor
    slots: Tensor

    @staticmethod
    def gather(starts: Tensor, ends: Tensor) -> "_Edges":
        ptr = torch.cat([starts.new_zeros(1), torch.cumsum(ends - starts, 0)])
        num = int(ptr[-1])
        transit = expand_ptr(ptr, num)
        rank = torch.arange(num, device=starts.device) - ptr[transit]
        return _Edges(ptr, transit, starts[transit] + rank)


# ---------------------------------------------------------------------------------------------
# Checks of what a program returns
# ---------------------------------------------------------------------------------------------


def _check_program(where: str, program: Any) -> None:
    if not isinstance(program, SamplerProgram):
        raise TypeError(
            f"run_program: program must be a SamplerProgram, got {type(program).__name__}"
        )
    if not isinstance(program.graph, CSCGraph):
        raise TypeError(f"{where}: graph must be a CSCGraph, got {type(program.graph).__name__}")
    if program.direction not in DIRECTIONS:
        raise ValueError(
            f"{where}: direction must be one of {DIRECTIONS}, got {program.direction!r}"
        )
    for name, least in (("steps", 0), ("keys_per_step", 1)):
        value = getattr(program, name, None)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{where}: {name} must be an int >= {least}, got {value!r}")
    for name, arguments in (
        ("edge_weight", "(transit, candidate, edge, step)"),
        ("candidate_weight", "(neighborhood, step)"),
    ):
        weigh = getattr(program, name)
        if weigh is not None and not callable(weigh):
            raise TypeError(
                f"{where}: {name} must be None or a callable {arguments}, got "
                f"{type(weigh).__name__}"
            )
    # Each sampling type has its own weights: the other's would silently be ignored.
    unused = "edge_weight" if program.collective else "candidate_weight"
    if getattr(program, unused) is not None:
        kind = "a collective" if program.collective else "an individual"
        used = "candidate_weight" if program.collective else "edge_weight"
        raise ValueError(f"{where}: {kind} program weighs its draws with {used}, not {unused}")


def _checked_fanout(where: str, fanout: Any, step: int) -> int:
    if isinstance(fanout, bool) or not hasattr(fanout, "__index__"):
        raise TypeError(f"{where}: fanout({step}) must return an int, got {fanout!r}")
    value = operator.index(fanout)
    if value < -1:
        raise ValueError(
            f"{where}: fanout({step}) must be -1 (every candidate) or >= 0, got {value}"
        )
    return value


def _checked_transits(
    where: str, transits: Any, rows: _Rows, step: int, missing_allowed: bool = False
) -> Tensor:
    """``transits`` as int64 after checking that they are a 1-D int tensor of node ids on the
    graph's device (or ``-1`` where ``missing_allowed``)."""
    what = f"transits(state, {step})"
    check_id_tensor(where, what, transits, rows.indptr.device)
    num_nodes, least = rows.indptr.numel() - 1, -1 if missing_allowed else 0
    if transits.numel():
        low, high = torch.stack(torch.aminmax(transits)).tolist()
        if low < least or high >= num_nodes:
            raise ValueError(
                f"{where}: {what} returned node {low if low < least else high}; expected ids "
                f"in [0, {num_nodes})" + (" or -1 (no draw)" if missing_allowed else "")
            )
    return transits.to(torch.int64)


def _checked_collective_transits(
    where: str, transits: Any, rows: _Rows, step: int
) -> tuple[Tensor, Tensor]:
    if not (isinstance(transits, tuple) and len(transits) == 2):
        raise TypeError(
            f"{where}: a collective program's transits(state, {step}) must return (nodes, ptr), "
            f"got {type(transits).__name__}"
        )
    nodes = _checked_transits(where, transits[0], rows, step)
    ptr = transits[1]
    check_id_tensor(where, f"transits(state, {step})'s ptr", ptr, rows.indptr.device)
    if ptr.numel() == 0:
        raise ValueError(f"{where}: transits(state, {step})'s ptr must have P+1 >= 1 entries")
    check_offsets(where, f"transits(state, {step})'s ptr", ptr, nodes.numel(), "transits")
    return nodes, ptr.to(torch.int64)


def _checked_weight(
    where: str, what: str, weight: Any, count: int, device: torch.device
) -> Tensor | None:
    """``weight`` (what ``what`` returned) as float32/float64 (other real dtypes become
    float64), after checking that it is ``count`` finite weights ``>= 0`` on ``device``;
    ``None`` and a bool mask (of ``count``, on ``device``) stay as they are."""
    if weight is None:
        return None
    if not isinstance(weight, Tensor):
        raise TypeError(
            f"{where}: {what} must return a tensor or None, got {type(weight).__name__}"
        )
    if weight.shape != (count,):
        raise ValueError(
            f"{where}: {what} must return one weight per candidate, shape ({count},); got shape "
            f"{tuple(weight.shape)}"
        )
    if weight.device != device:
        raise ValueError(f"{where}: {what} returned a tensor on {weight.device}, not {device}")
    if weight.dtype == torch.bool:
        return weight
    if weight.is_complex():
        raise ValueError(f"{where}: {what} must return real weights, got {weight.dtype}")
    if weight.dtype not in (torch.float32, torch.float64):
        weight = weight.to(torch.float64)
    bad = ~((weight >= 0) & torch.isfinite(weight))
    if bool(bad.any()):
        raise ValueError(
            f"{where}: {what} must return finite weights >= 0, got {float(weight[bad][0])}"
        )
    return weight
