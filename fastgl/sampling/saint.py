"""Graph-sampling training's samplers: each draws a small subgraph, on which a complete GNN trains
(Zeng et al., Accurate, Efficient and Scalable Graph Embedding, IPDPS 2019, Algorithm 1), and
GraphSAINT's normalization of what they draw (Zeng et al., GraphSAINT: Graph Sampling Based
Inductive Learning Method, ICLR 2020, §3.2 and §3.3).

Every sampler here draws vertex sets and returns the subgraphs they induce, as one-hop
:class:`SampledSubgraph` whose nodes are all seeds: a GNN of any depth runs on ``sub.edge_index``
(PyG) or ``sub.blocks[0]`` (DGL style) in every layer. :func:`saint_normalization` estimates
the loss and aggregation weights that make training on such subgraphs unbiased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor
from tqdm import tqdm

from fastgl.graph import CSCGraph, expand_ptr
from fastgl.ops import frontier_sample, id_map, random_walk

from .neighbor import neighbor_sample
from .subgraph import SampledSubgraph


class SubgraphSampler:
    """What the graph-sampling samplers share: ``sample`` draws vertex sets (``sample_nodes``)
    and returns the subgraphs of ``graph`` they induce, all found in one vectorized pass."""

    graph: CSCGraph

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        """``num_subgraphs`` vertex sets as ``(nodes, ptr)``: set ``s`` is ``nodes[ptr[s] :
        ptr[s+1]]``, of distinct ids."""
        raise NotImplementedError

    def sample(
        self, num_subgraphs: int = 1, generator: torch.Generator | None = None
    ) -> list[SampledSubgraph]:
        """``num_subgraphs`` induced subgraphs, deterministic for a generator's seed."""
        if num_subgraphs < 0:
            raise ValueError(
                f"{type(self).__name__}: num_subgraphs must be >= 0, got {num_subgraphs}"
            )
        if num_subgraphs == 0:
            return []
        return self.induce(*self.sample_nodes(num_subgraphs, generator))

    def normalization(
        self, sample_coverage: float, generator: torch.Generator | None = None
    ) -> SAINTNorm:
        """GraphSAINT's normalization for this sampler: estimated from subgraphs holding
        ``sample_coverage`` times the graph's vertices (:func:`saint_normalization`); a sampler
        whose probabilities are known gives it exactly."""
        return saint_normalization(self, sample_coverage, generator=generator)

    def induce(self, nodes: Tensor, ptr: Tensor) -> list[SampledSubgraph]:
        """The subgraphs of ``graph`` induced on the vertex sets ``(nodes, ptr)`` (as
        :meth:`sample_nodes` returns them)."""
        row, col, eid, edge_ptr = self.graph.induced_subgraphs(nodes, ptr)
        sizes, edge_sizes = ptr.diff().tolist(), edge_ptr.diff().tolist()
        positions = torch.arange(max(sizes, default=0), device=nodes.device)
        return [
            SampledSubgraph(
                nodes=sub_nodes,
                row=sub_row,
                col=sub_col,
                eid=sub_eid,
                num_sampled_nodes=[size, 0],  # all seeds; hop 1 adds none
                num_sampled_edges=[edge_size],
                seed_index=positions[:size],
            )
            for sub_nodes, sub_row, sub_col, sub_eid, size, edge_size in zip(
                nodes.split(sizes),
                row.split(edge_sizes),
                col.split(edge_sizes),
                eid.split(edge_sizes),
                sizes,
                edge_sizes,
            )
        ]


def distinct_per_row(draws: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    """The distinct non-negative ids of each row of ``draws`` ``[S, k]``, ascending, as the
    ``(nodes, ptr)`` of :meth:`SubgraphSampler.sample_nodes`: one sort of (row, id) keys."""
    num_rows = draws.shape[0]
    rows = torch.arange(num_rows, device=draws.device).unsqueeze(1).expand_as(draws)
    valid = draws >= 0
    return distinct_per_tree(draws[valid], rows[valid], num_rows, num_nodes)


def sizes_to_ptr(sizes: Tensor) -> Tensor:
    """Offsets ``[len(sizes) + 1]`` of consecutive slices of ``sizes``."""
    ptr = torch.zeros(sizes.numel() + 1, dtype=torch.int64, device=sizes.device)
    ptr[1:] = sizes.cumsum(0)
    return ptr


class FrontierSampler(SubgraphSampler):
    """Zeng et al.'s frontier sampler (a multidimensional random walk; GraphSAINT's "MRW"):
    subgraphs induced on the vertices that ``frontier_size`` walkers visit in ``budget -
    frontier_size`` moves, each move popping a walker in proportion to its vertex's degree through
    the Dashboard (:func:`fastgl.ops.frontier_sample` has the details). Many subgraphs are drawn
    at once, in parallel: the paper's inter-subgraph parallelism.

    A subgraph's ``nodes`` are the first frontier, then each vertex a move reached, in order (at
    most ``budget``); its edges are every edge of the graph between them (``row``, ``col``, local;
    ``eid``, global).

    Args:
        graph: the graph; walkers follow in-edges (an undirected graph's neighbors).
        frontier_size: walkers per sampler, ``m`` (the paper uses 1000).
        budget: vertex budget per subgraph, ``n >= m``.
        eta: the Dashboard's enlargement factor (speed only).
        max_entries: cap on a vertex's popping weight (the paper caps at 30 on skewed graphs),
            or ``None``.
        entry_weight: the weight a Dashboard entry stands for (speed only; ``None``: the mean
            in-degree, 1: the paper's Dashboard).

    Example:
        >>> edge_index = torch.randint(0, 100, (2, 600), generator=torch.Generator().manual_seed(0))
        >>> edge_index = torch.cat([edge_index, edge_index.flip(0)], 1)   # undirected
        >>> graph = CSCGraph.from_edge_index(edge_index)
        >>> sampler = FrontierSampler(graph, frontier_size=10, budget=40)
        >>> subs = sampler.sample(4, generator=torch.Generator().manual_seed(1))
        >>> len(subs), all(10 <= sub.nodes.numel() <= 40 for sub in subs)
        (4, True)
        >>> sub = subs[0]
        >>> bool((edge_index[:, sub.eid] == sub.nodes[sub.edge_index]).all())  # the graph's edges
        True
    """

    def __init__(
        self,
        graph: CSCGraph,
        frontier_size: int,
        budget: int,
        *,
        eta: float = 2.0,
        max_entries: int | None = None,
        entry_weight: int | None = None,
    ) -> None:
        self.graph = graph
        self.frontier_size = frontier_size
        self.budget = budget
        self.eta = eta
        self.max_entries = max_entries
        self.entry_weight = entry_weight

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        trace = frontier_sample(
            self.graph,
            num_subgraphs,
            self.frontier_size,
            self.budget,
            eta=self.eta,
            max_entries=self.max_entries,
            entry_weight=self.entry_weight,
            generator=generator,
        )
        samples = [
            sampled_vertices(frontier, added)
            for frontier, added in zip(trace.frontier, trace.added)
        ]
        sizes = torch.tensor([sample.numel() for sample in samples], dtype=torch.int64)
        return torch.cat(samples), sizes_to_ptr(sizes).to(self.graph.device)


def sampled_vertices(frontier: Tensor, added: Tensor) -> Tensor:
    """A frontier sampler's sample: its (distinct) first frontier, then the vertices its moves
    reached, each once, in first-occurrence order (``added`` is -1 after the last move)."""
    return id_map(frontier, added[added >= 0])[0]


class SAINTNodeSampler(SubgraphSampler):
    """GraphSAINT's node sampler: ``budget`` draws of a vertex with probability proportional to
    its out-degree (at least 1, so that every vertex can be drawn), with replacement; the
    subgraph is induced on the distinct vertices drawn, in ascending order. The probabilities are
    DGL's ``SAINTSampler(mode='node')``'s (PyG's, but for PyG never drawing a vertex without
    out-edges).

    A draw costs O(1) without a table over the edges: a slot drawn uniformly from the ``E``
    edges and the ``Z`` vertices without out-edges names an edge's source (each vertex as often
    as it has out-edges) or one of those vertices.

    Example:
        >>> graph = CSCGraph.from_edge_index(torch.tensor([[0, 0, 1, 2], [1, 2, 2, 0]]), 4)
        >>> sampler = SAINTNodeSampler(graph, budget=2)
        >>> [sub.nodes.tolist() for sub in sampler.sample(3, generator=torch.manual_seed(0))]
        [[3], [1, 2], [1, 3]]
        >>> sub = SAINTNodeSampler(graph, budget=50).sample(generator=torch.manual_seed(0))[0]
        >>> sub.nodes.tolist(), sub.edge_index.shape[1]   # node 3 has no out-edge, yet is drawn
        ([0, 1, 2, 3], 4)
    """

    def __init__(self, graph: CSCGraph, budget: int) -> None:
        _check_positive(type(self).__name__, "budget", budget)
        _check_has_nodes(type(self).__name__, graph)
        self.graph = graph
        self.budget = budget
        out_degrees = torch.bincount(graph.indices.to(torch.int64), minlength=graph.num_nodes)
        self._without_out_edges = (out_degrees == 0).nonzero().view(-1)

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        num_edges = self.graph.num_edges
        slots = torch.randint(
            num_edges + self._without_out_edges.numel(),
            (num_subgraphs, self.budget),
            generator=generator,
            device=self.graph.device,
        )
        return distinct_per_row(self._vertex_of(slots), self.graph.num_nodes)

    def _vertex_of(self, slots: Tensor) -> Tensor:
        """The source of edge slot ``k < E``, else the ``(k - E)``-th vertex without out-edges."""
        num_edges, lone = self.graph.num_edges, self._without_out_edges
        if lone.numel() == 0:
            return self.graph.indices[slots].to(torch.int64)
        if num_edges == 0:
            return lone[slots]
        source = self.graph.indices[slots.clamp(max=num_edges - 1)].to(torch.int64)
        return torch.where(slots < num_edges, source, lone[(slots - num_edges).clamp(min=0)])


class SAINTEdgeSampler(SubgraphSampler):
    """GraphSAINT's edge sampler: ``budget`` draws of an edge ``u -> v`` with probability
    proportional to ``1 / out_degree(u) + 1 / in_degree(v)`` (GraphSAINT §3.3, Algorithm 2's
    edge sampler; DGL's ``SAINTSampler(mode='edge')``), with replacement; the subgraph is
    induced on the distinct endpoints, in ascending order.

    A draw costs O(1) without a table over the edges: the probability is a mixture of two
    uniform draws. Summed over the edges, ``1 / in_degree(v)`` gives each vertex with in-edges a
    total of 1, so that half draws a uniform vertex among those with in-edges, then one of its
    in-edges; likewise ``1 / out_degree(u)`` for out-edges (through :meth:`CSCGraph.out_csr`).

    Example:
        >>> graph = CSCGraph.from_edge_index(torch.tensor([[0, 0, 1, 2], [1, 2, 2, 3]]))
        >>> sub = SAINTEdgeSampler(graph, budget=1).sample(generator=torch.manual_seed(0))[0]
        >>> sub.nodes.numel(), sub.edge_index.shape[1]   # the endpoints of one edge, and it
        (2, 1)
    """

    def __init__(self, graph: CSCGraph, budget: int) -> None:
        _check_positive(type(self).__name__, "budget", budget)
        if graph.num_edges == 0:
            raise ValueError(f"{type(self).__name__}: the graph has no edges to draw")
        self.graph = graph
        self.budget = budget
        self._out = graph.out_csr()
        self._with_in_edges = (graph.in_degrees() > 0).nonzero().view(-1)
        self._with_out_edges = (self._out.indptr.diff() > 0).nonzero().view(-1)

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        shape = (num_subgraphs, self.budget)
        num_in, num_out = self._with_in_edges.numel(), self._with_out_edges.numel()
        device = self.graph.device
        pick = torch.randint(num_in + num_out, shape, generator=generator, device=device)
        rank = torch.rand(shape, generator=generator, device=device, dtype=torch.float64)
        by_target = pick < num_in
        # A vertex, then one of its edges: in-edges on the CSC, out-edges on the out-CSR.
        target = self._with_in_edges[pick.clamp(max=num_in - 1)]
        source = self._with_out_edges[(pick - num_in).clamp(min=0, max=num_out - 1)]
        in_slot = _uniform_slot(self.graph.indptr, target, rank)
        out_slot = _uniform_slot(self._out.indptr, source, rank)
        first = torch.where(by_target, self.graph.indices[in_slot].to(torch.int64), source)
        second = torch.where(by_target, target, self._out.indices[out_slot].to(torch.int64))
        return distinct_per_row(torch.cat([first, second], 1), self.graph.num_nodes)


def _uniform_slot(indptr: Tensor, rows: Tensor, rank: Tensor) -> Tensor:
    """A slot of each of ``rows`` (each with at least one), uniform by ``rank`` in [0, 1)."""
    start, end = indptr[rows], indptr[rows + 1]
    return torch.minimum(start + (rank * (end - start)).to(torch.int64), end - 1)


class SAINTRandomWalkSampler(SubgraphSampler):
    """GraphSAINT's random-walk sampler: ``num_roots`` roots drawn uniformly (with
    replacement), a walk of ``walk_length`` steps along out-edges from each
    (:func:`fastgl.ops.random_walk`; a walk ends at a vertex without out-edges); the subgraph is
    induced on the distinct vertices visited, roots included, in ascending order. DGL's
    ``SAINTSampler(mode='walk', budget=(num_roots, walk_length))`` and PyG's
    ``GraphSAINTRandomWalkSampler(batch_size=num_roots, walk_length=...)``.

    Example:
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> graph = CSCGraph.from_edge_index(ring)
        >>> sampler = SAINTRandomWalkSampler(graph, num_roots=1, walk_length=2)
        >>> sub = sampler.sample(generator=torch.manual_seed(0))[0]
        >>> sub.nodes.numel(), sub.edge_index.shape[1]   # a root, two steps on: a path
        (3, 2)
    """

    def __init__(self, graph: CSCGraph, num_roots: int, walk_length: int) -> None:
        _check_positive(type(self).__name__, "num_roots", num_roots)
        if walk_length < 0:
            raise ValueError(f"{type(self).__name__}: walk_length must be >= 0, got {walk_length}")
        _check_has_nodes(type(self).__name__, graph)
        self.graph = graph
        self.num_roots = num_roots
        self.walk_length = walk_length

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        device = self.graph.device
        roots = torch.randint(
            self.graph.num_nodes,
            (num_subgraphs * self.num_roots,),
            generator=generator,
            device=device,
        )
        nodes, _ = random_walk(self.graph, roots, self.walk_length, generator=generator)
        return distinct_per_row(nodes.view(num_subgraphs, -1), self.graph.num_nodes)


@dataclass(frozen=True)
class SAINTNorm:
    """GraphSAINT's normalization (§3.2), estimated from ``num_subgraphs`` pre-drawn subgraphs in
    which vertex ``v`` appeared ``C_v`` times and edge ``e`` ``C_e`` times.

    Attributes:
        node_norm: ``[N]`` loss weight of each vertex, ``num_subgraphs / (C_v * N)``: a
            mini-batch loss ``sum(node_norm[v] * loss_v)`` over a subgraph's vertices estimates
            the mean loss over the graph without bias (PyG's ``node_norm``). A vertex never drawn
            counts ``C_v = 0.1``, as in PyG.
        edge_norm: ``[E]`` aggregation weight of each edge ``u -> v`` by edge id, ``C_v / C_e``
            (the target's count over the edge's: the inverse of GraphSAINT's ``alpha_{u,v}``),
            clamped to ``1e4``; ``0.1`` for an edge never drawn whose target was not either
            (PyG's values). Multiplying each message by it makes a subgraph's aggregation at
            ``v`` estimate the full graph's. PyG's ``edge_norm`` takes the count of the edge's
            *source* instead of its target's; the aggregation is at the target, as here (the
            two agree on graphs where the counts of an edge's endpoints do).
        num_subgraphs: subgraphs drawn for the estimate.
    """

    node_norm: Tensor
    edge_norm: Tensor
    num_subgraphs: int


def saint_normalization(
    sampler: SubgraphSampler,
    sample_coverage: float,
    *,
    subgraphs_per_call: int = 32,
    generator: torch.Generator | None = None,
    progress: bool = False,
) -> SAINTNorm:
    """Estimate GraphSAINT's normalization for ``sampler`` by drawing subgraphs until they hold
    ``sample_coverage`` times as many vertices as the graph has (PyG's ``sample_coverage``;
    GraphSAINT pre-samples about 50 times the graph), ``subgraphs_per_call`` at a time, with a
    progress bar if ``progress``.

    Example:
        >>> edge_index = torch.randint(0, 50, (2, 300), generator=torch.manual_seed(0))
        >>> graph = CSCGraph.from_edge_index(torch.cat([edge_index, edge_index.flip(0)], 1))
        >>> sampler = SAINTNodeSampler(graph, budget=20)
        >>> norm = saint_normalization(sampler, 10, generator=torch.manual_seed(1))
        >>> norm.node_norm.shape, norm.edge_norm.shape, norm.num_subgraphs >= 25
        (torch.Size([50]), torch.Size([600]), True)
    """
    where = "saint_normalization"
    if not sample_coverage > 0:
        raise ValueError(f"{where}: sample_coverage must be > 0, got {sample_coverage}")
    _check_positive(where, "subgraphs_per_call", subgraphs_per_call)
    graph = sampler.graph
    node_count = torch.zeros(graph.num_nodes, dtype=torch.float64, device=graph.device)
    edge_count = torch.zeros(graph.num_edges, dtype=torch.float64, device=graph.device)
    num_subgraphs, drawn, wanted = 0, 0, sample_coverage * graph.num_nodes
    with tqdm(total=wanted, disable=not progress, desc="GraphSAINT normalization") as bar:
        while drawn < wanted:
            for sub in sampler.sample(subgraphs_per_call, generator):
                node_count[sub.nodes] += 1
                edge_count[sub.eid] += 1
                drawn += sub.nodes.numel()
                bar.update(sub.nodes.numel())
            num_subgraphs += subgraphs_per_call
            if drawn == 0:
                raise ValueError(f"{where}: the sampler draws empty subgraphs")
    return _norms(graph, node_count, edge_count, num_subgraphs)


def _norms(
    graph: CSCGraph, node_count: Tensor, edge_count: Tensor, num_subgraphs: int
) -> SAINTNorm:
    target_by_id = torch.empty(graph.num_edges, dtype=torch.int64, device=graph.device)
    target_by_id[graph.edge_ids()] = expand_ptr(graph.indptr, graph.num_edges)
    edge_norm = (node_count[target_by_id] / edge_count).clamp(0, 1e4)
    edge_norm[edge_norm.isnan()] = 0.1
    node_count[node_count == 0] = 0.1
    node_norm = num_subgraphs / (node_count * graph.num_nodes)
    return SAINTNorm(node_norm.float(), edge_norm.float(), num_subgraphs)


def _check_positive(where: str, name: str, value: int) -> None:
    if value < 1:
        raise ValueError(f"{where}: {name} must be >= 1, got {value}")


def _check_has_nodes(where: str, graph: CSCGraph) -> None:
    if graph.num_nodes == 0:
        raise ValueError(f"{where}: the graph has no nodes to draw")


class EgoSubgraphs(NamedTuple):
    """What :class:`ShaDowSampler` returns for a batch of roots: ego graph ``i`` holds the
    vertices ``nodes[ptr[i] : ptr[i+1]]`` (ascending) and the edges ``edge_ptr[i] :
    edge_ptr[i+1]``; ``edge_index`` indexes ``nodes`` (the batch's rows, PyG orientation: row 0
    the source), ``eid`` names the graph's edges and ``root_index`` is each root's row."""

    nodes: Tensor
    ptr: Tensor
    edge_index: Tensor
    eid: Tensor
    edge_ptr: Tensor
    root_index: Tensor


class ShaDowSampler:
    """ShaDow's localized subgraphs (Zeng et al., Decoupling the Depth and Scope of Graph Neural
    Networks, NeurIPS 2021, §3): for every root, ``depth`` hops of neighbor sampling
    (``num_neighbors`` in-neighbors a vertex a hop, ``-1`` all; one tree per root, so roots
    never share vertices), then the subgraph induced on the vertices reached, root included. A
    GNN of any depth runs on the ego graphs and reads out at the roots. The neighbors are
    :func:`fastgl.sampling.neighbor_sample`'s (disjoint), the ego graphs
    :meth:`fastgl.CSCGraph.induced_subgraphs`'.

    Example:
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> graph = CSCGraph.from_edge_index(torch.cat([ring, ring.flip(0)], 1))
        >>> egos = ShaDowSampler(graph, depth=1, num_neighbors=-1).sample(torch.tensor([0, 3]))
        >>> egos.nodes.tolist(), egos.ptr.tolist(), egos.root_index.tolist()
        ([0, 1, 5, 2, 3, 4], [0, 3, 6], [0, 4])
        >>> egos.nodes[egos.edge_index].tolist()   # within each ego graph: no 1-5 edge
        [[5, 1, 0, 0, 3, 2, 4, 3], [0, 0, 1, 5, 2, 3, 3, 4]]
    """

    def __init__(
        self, graph: CSCGraph, depth: int, num_neighbors: int, replace: bool = False
    ) -> None:
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise TypeError(f"{type(self).__name__}: depth must be an int, got {depth!r}")
        _check_positive(type(self).__name__, "depth", depth)
        if num_neighbors < -1 or num_neighbors == 0:
            raise ValueError(
                f"{type(self).__name__}: num_neighbors must be -1 (all) or >= 1, got "
                f"{num_neighbors}"
            )
        self.graph = graph
        self.depth = depth
        self.num_neighbors = num_neighbors
        self.replace = replace

    def sample(self, roots: Tensor, generator: torch.Generator | None = None) -> EgoSubgraphs:
        """The ego graphs of ``roots`` (int ids; one per root, repeats included)."""
        fanouts = [self.num_neighbors] * self.depth
        tree = neighbor_sample(
            self.graph, roots, fanouts, replace=self.replace, generator=generator, disjoint=True
        )
        nodes, ptr = distinct_per_tree(tree.nodes, tree.batch, roots.numel(), self.graph.num_nodes)
        row, col, eid, edge_ptr = self.graph.induced_subgraphs(nodes, ptr)
        first = ptr[:-1].repeat_interleave(edge_ptr.diff())
        span = max(self.graph.num_nodes, 1)
        keys = expand_ptr(ptr, nodes.numel()) * span + nodes
        root_keys = torch.arange(roots.numel(), device=nodes.device) * span + roots.to(nodes)
        root_index = torch.searchsorted(keys, root_keys)
        return EgoSubgraphs(nodes, ptr, torch.stack([row, col]) + first, eid, edge_ptr, root_index)


def distinct_per_tree(
    nodes: Tensor, tree: Tensor, num_trees: int, num_nodes: int
) -> tuple[Tensor, Tensor]:
    """Each tree's distinct ``nodes`` (``tree[i]`` owns ``nodes[i]``), ascending, as ``(nodes,
    ptr)``: one sort of (tree, node) keys."""
    span = max(num_nodes, 1)
    keys = torch.unique(tree * span + nodes)
    tree_of = torch.div(keys, span, rounding_mode="floor")
    return keys - tree_of * span, sizes_to_ptr(torch.bincount(tree_of, minlength=num_trees))
