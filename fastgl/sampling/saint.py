"""Graph-sampling training's samplers: each draws a small connected subgraph, on which a complete
GNN trains (Zeng et al., Accurate, Efficient and Scalable Graph Embedding, IPDPS 2019,
Algorithm 1; GraphSAINT after it)."""

from __future__ import annotations

import torch
from torch import Tensor

from fastgl.graph import CSCGraph
from fastgl.ops import frontier_sample, id_map

from .subgraph import SampledSubgraph


class FrontierSampler:
    """Zeng et al.'s frontier sampler (a multidimensional random walk; GraphSAINT's "MRW"):
    subgraphs induced on the vertices that ``frontier_size`` walkers visit in ``budget -
    frontier_size`` moves, each move popping a walker in proportion to its vertex's degree through
    the Dashboard (:func:`fastgl.ops.frontier_sample` has the details). Many subgraphs are drawn
    at once, in parallel: the paper's inter-subgraph parallelism.

    A subgraph is a :class:`SampledSubgraph` of one hop: ``nodes`` (the first frontier, then each
    vertex a move reached, in order; at most ``budget``), every edge of the graph between them
    (``row``, ``col``, local; ``eid``, global), all of its nodes seeds. A complete GNN of any depth
    runs on it: ``sub.edge_index`` in every layer (PyG), or ``sub.blocks[0]`` (DGL style).

    Args:
        graph: the graph; walkers follow in-edges (an undirected graph's neighbors).
        frontier_size: walkers per sampler, ``m`` (the paper uses 1000).
        budget: vertex budget per subgraph, ``n >= m``.
        eta: the Dashboard's enlargement factor (speed only).
        max_entries: cap on a vertex's popping weight (the paper caps at 30 on skewed graphs),
            or ``None``.

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
    ) -> None:
        self.graph = graph
        self.frontier_size = frontier_size
        self.budget = budget
        self.eta = eta
        self.max_entries = max_entries

    def sample(
        self, num_subgraphs: int = 1, generator: torch.Generator | None = None
    ) -> list[SampledSubgraph]:
        """``num_subgraphs`` subgraphs, drawn in parallel; deterministic for a generator's seed."""
        trace = frontier_sample(
            self.graph,
            num_subgraphs,
            self.frontier_size,
            self.budget,
            eta=self.eta,
            max_entries=self.max_entries,
            generator=generator,
        )
        return [
            self.induced(sampled_vertices(frontier, added))
            for frontier, added in zip(trace.frontier, trace.added)
        ]

    def induced(self, nodes: Tensor) -> SampledSubgraph:
        """The subgraph of ``self.graph`` induced on the distinct ``nodes``, as one hop whose
        seeds are all of them."""
        row, col, eid = self.graph.induced_edges(nodes)
        return SampledSubgraph(
            nodes=nodes,
            row=row,
            col=col,
            eid=eid,
            num_sampled_nodes=[nodes.numel(), 0],  # all seeds; hop 1 adds none
            num_sampled_edges=[eid.numel()],
            seed_index=torch.arange(nodes.numel(), device=nodes.device),
        )


def sampled_vertices(frontier: Tensor, added: Tensor) -> Tensor:
    """A sampler's sample: its (distinct) first frontier, then the vertices its moves reached,
    each once, in first-occurrence order (``added`` is -1 after the last move)."""
    return id_map(frontier, added[added >= 0])[0]
