"""A drop-in for ``dgl.dataloading.SAINTSampler`` that draws its vertex sets with fastgl's
GraphSAINT samplers (:mod:`fastgl.sampling.saint`).

Same arguments, same distributions, same output: ``sample(g, indices)`` returns the subgraph of
``g`` induced on the drawn vertices (``g.subgraph``: ``dgl.NID``/``dgl.EID``, node and edge
features, the requested ones prefetched lazily by ``dgl.dataloading.DataLoader``). DGL draws
them with ``torch.multinomial`` over every vertex or ``dgl.random.choice`` over every edge at
each call; fastgl's draws cost O(budget) without tables (see the samplers).

What differs from DGL: homogeneous graphs only, as DGL's (whose walk mode walks one edge type);
randomness from torch's generator (``torch.manual_seed``), not from ``dgl.seed``.
"""

import weakref

import dgl
from dgl.dataloading import Sampler
from dgl.dataloading.base import set_edge_lazy_features, set_node_lazy_features

from fastgl.sampling import (
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTRandomWalkSampler,
    SubgraphSampler,
)

from .walks import _check_homogeneous, _walk_graph

_WHERE = "fastgl SAINTSampler"
MODES = ("node", "edge", "walk")


class SAINTSampler(Sampler):
    """``dgl.dataloading.SAINTSampler`` on fastgl (same signature and output).

    Args:
        mode: ``"node"`` (``budget`` vertex draws in proportion to out-degree, at least 1),
            ``"edge"`` (``budget`` edge draws in proportion to ``1 / in_degree(target) + 1 /
            out_degree(source)``; the subgraph is induced on their endpoints) or ``"walk"``
            (``budget = (num_roots, walk_length)``: walks from uniform roots).
        budget: see ``mode``.
        cache: keep the sampler built for a graph (rebuilt when another graph, or the same
            graph with other edges, comes); ``False`` builds it at every call, as DGL.
        prefetch_ndata, prefetch_edata: node and edge features the DataLoader fetches for the
            subgraph.
        output_device: where the subgraph goes.

    Example:
        >>> from fastgl.integrations.dgl import SAINTSampler    # instead of dgl.dataloading's
        >>> sampler = SAINTSampler(mode="node", budget=6000)
        >>> loader = dgl.dataloading.DataLoader(g, torch.arange(1000), sampler,
        ...                                     prefetch_ndata=["feat", "label"])
    """

    def __init__(
        self,
        mode: str,
        budget,
        cache: bool = True,
        prefetch_ndata=None,
        prefetch_edata=None,
        output_device="cpu",
    ) -> None:
        super().__init__()
        if mode not in MODES:
            raise dgl.DGLError(f"Expect mode to be 'node', 'edge' or 'walk', got {mode}.")
        _check_budget(mode, budget)
        self.mode = mode
        self.budget = budget
        self.cache = cache
        self.prefetch_ndata = prefetch_ndata or []
        self.prefetch_edata = prefetch_edata or []
        self.output_device = output_device
        self._built: tuple[weakref.ref, SubgraphSampler] | None = None

    def sample(self, g: dgl.DGLGraph, indices) -> dgl.DGLGraph:
        """The subgraph of ``g`` induced on one draw of vertices (``indices`` is unused, as in
        DGL: the DataLoader only counts the batches with it)."""
        nodes, _ = self._sampler(g).sample_nodes(1, None)
        sg = g.subgraph(nodes.to(g.idtype), relabel_nodes=True, output_device=self.output_device)
        set_node_lazy_features(sg, self.prefetch_ndata)
        set_edge_lazy_features(sg, self.prefetch_edata)
        return sg

    def _sampler(self, g: dgl.DGLGraph) -> SubgraphSampler:
        if self.cache and self._built is not None and self._built[0]() is g._graph:
            return self._built[1]
        _check_homogeneous(g, _WHERE)
        graph = _walk_graph(g, None, _WHERE)
        if self.mode == "node":
            sampler = SAINTNodeSampler(graph, self.budget)
        elif self.mode == "edge":
            sampler = SAINTEdgeSampler(graph, self.budget)
        else:
            sampler = SAINTRandomWalkSampler(graph, *self.budget)
        self._built = (weakref.ref(g._graph), sampler)
        return sampler


def _check_budget(mode: str, budget) -> None:
    if mode == "walk":
        if not (
            isinstance(budget, (tuple, list))
            and len(budget) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) for b in budget)
        ):
            raise ValueError(
                f"{_WHERE}: the walk mode's budget is (num_roots, walk_length), got {budget!r}"
            )
        return
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise ValueError(f"{_WHERE}: the {mode} mode's budget is an int, got {budget!r}")
