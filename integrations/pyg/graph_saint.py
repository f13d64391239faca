"""PyG's GraphSAINT loaders (``torch_geometric.loader.GraphSAINTNodeSampler``,
``GraphSAINTEdgeSampler``, ``GraphSAINTRandomWalkSampler``) on fastgl's samplers: PyG's own
classes need ``torch-sparse``, which has no wheels for current PyTorch.

Same signatures and batches: each batch is a ``Data`` of one sampled subgraph with
``num_nodes``, the local ``edge_index``, every node attribute sliced to its nodes and every edge
attribute to its edges, and with ``sample_coverage > 0`` the normalization ``node_norm`` and
``edge_norm`` (:class:`fastgl.sampling.SAINTNorm`), saved to and loaded from ``save_dir``.
"""

from __future__ import annotations

import os.path as osp

import torch
from torch_geometric.data import Data

from fastgl.graph import CSCGraph
from fastgl.sampling import (
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTRandomWalkSampler,
    SampledSubgraph,
    SubgraphSampler,
    saint_normalization,
)


class GraphSAINTSampler(torch.utils.data.DataLoader):
    """The base of the three loaders, like ``torch_geometric.loader.GraphSAINTSampler``: an
    iterable of ``num_steps`` subgraph batches per epoch (PyG's arguments; ``**kwargs`` go to
    ``torch.utils.data.DataLoader``, e.g. ``num_workers``). Draws use torch's global generator,
    so ``torch.manual_seed`` reproduces an epoch (with ``num_workers=0``).

    Args:
        data: the graph, a ``Data`` with ``edge_index`` on the CPU.
        batch_size: the sampler's budget (see each loader).
        num_steps: batches per epoch.
        sample_coverage: with ``> 0``, estimate the normalization from subgraphs holding this
            many times the graph's nodes (:func:`fastgl.sampling.saint_normalization`).
        save_dir: where to save the normalization, and load it from when saved before.
        log: show the estimate's progress.
    """

    def __init__(
        self,
        data: Data,
        batch_size: int,
        num_steps: int = 1,
        sample_coverage: int = 0,
        save_dir: str | None = None,
        log: bool = True,
        **kwargs,
    ) -> None:
        # PyTorch Lightning passes these back in; the loader sets them itself.
        kwargs.pop("dataset", None)
        kwargs.pop("collate_fn", None)
        _check_data(type(self).__name__, data)
        self.num_steps = num_steps
        self._batch_size = batch_size
        self.sample_coverage = sample_coverage
        self.save_dir = save_dir
        self.log = log
        self.N, self.E = data.num_nodes, data.num_edges
        self.data = data
        self.graph = CSCGraph.from_edge_index(data.edge_index, self.N)
        self.subgraph_sampler = self._build_sampler(batch_size)
        super().__init__(self, batch_size=1, collate_fn=self._collate, **kwargs)
        if sample_coverage > 0:
            self.node_norm, self.edge_norm = self._normalization()

    def _build_sampler(self, batch_size: int) -> SubgraphSampler:
        raise NotImplementedError

    @property
    def _filename(self) -> str:
        return f"{type(self).__name__.lower()}_{self.sample_coverage}.pt"

    def __len__(self) -> int:
        return self.num_steps

    def __getitem__(self, idx: int) -> SampledSubgraph:
        return self.subgraph_sampler.sample(1)[0]

    def _collate(self, data_list: list[SampledSubgraph]) -> Data:
        (sub,) = data_list
        batch = self.data.__class__()
        batch.num_nodes = sub.nodes.numel()
        batch.edge_index = sub.edge_index
        for key, item in self.data:
            if key in ("edge_index", "num_nodes"):
                continue
            if isinstance(item, torch.Tensor) and item.size(0) == self.N:
                batch[key] = item[sub.nodes]
            elif isinstance(item, torch.Tensor) and item.size(0) == self.E:
                batch[key] = item[sub.eid]
            else:
                batch[key] = item
        if self.sample_coverage > 0:
            batch.node_norm = self.node_norm[sub.nodes]
            batch.edge_norm = self.edge_norm[sub.eid]
        return batch

    def _normalization(self) -> tuple[torch.Tensor, torch.Tensor]:
        path = osp.join(self.save_dir or "", self._filename)
        if self.save_dir is not None and osp.exists(path):
            node_norm, edge_norm = torch.load(path, weights_only=True)
            return node_norm, edge_norm
        norm = saint_normalization(self.subgraph_sampler, self.sample_coverage, progress=self.log)
        if self.save_dir is not None:
            torch.save((norm.node_norm, norm.edge_norm), path)
        return norm.node_norm, norm.edge_norm


class GraphSAINTNodeSampler(GraphSAINTSampler):
    """``torch_geometric.loader.GraphSAINTNodeSampler`` on fastgl: each subgraph is induced on
    ``batch_size`` vertex draws in proportion to out-degree
    (:class:`fastgl.sampling.SAINTNodeSampler`; a vertex without out-edges counts as one, where
    PyG never draws it).

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> from fastgl.integrations.pyg import GraphSAINTNodeSampler   # the only changed line
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> data = Data(x=torch.randn(6, 4), y=torch.arange(6), edge_index=ring)
        >>> loader = GraphSAINTNodeSampler(data, batch_size=4, num_steps=3, sample_coverage=20,
        ...                                log=False)
        >>> batches = list(loader)
        >>> len(batches), sorted(batches[0].keys())
        (3, ['edge_index', 'edge_norm', 'node_norm', 'num_nodes', 'x', 'y'])
        >>> batch = batches[0]   # model(batch.x, batch.edge_index, batch.edge_norm)
        >>> batch.x.shape[0] == batch.num_nodes == batch.node_norm.numel()
        True
    """

    def _build_sampler(self, batch_size: int) -> SubgraphSampler:
        return SAINTNodeSampler(self.graph, batch_size)


class GraphSAINTEdgeSampler(GraphSAINTSampler):
    """``torch_geometric.loader.GraphSAINTEdgeSampler`` on fastgl: each subgraph is induced on
    the endpoints of ``batch_size`` edge draws with GraphSAINT's probabilities, proportional to
    ``1 / out_degree(source) + 1 / in_degree(target)`` (:class:`fastgl.sampling
    .SAINTEdgeSampler`; PyG's inverts the degrees twice and so draws in proportion to the
    degrees themselves)."""

    def _build_sampler(self, batch_size: int) -> SubgraphSampler:
        if self.E == 0:
            raise ValueError(f"{type(self).__name__}: the graph has no edges to draw")
        return SAINTEdgeSampler(self.graph, batch_size)


class GraphSAINTRandomWalkSampler(GraphSAINTSampler):
    """``torch_geometric.loader.GraphSAINTRandomWalkSampler`` on fastgl: each subgraph is
    induced on the vertices of ``batch_size`` random walks of ``walk_length`` steps from uniform
    roots (:class:`fastgl.sampling.SAINTRandomWalkSampler`; a walk that reaches a vertex
    without out-edges ends there, where PyG's stays: the same vertices)."""

    def __init__(
        self,
        data: Data,
        batch_size: int,
        walk_length: int,
        num_steps: int = 1,
        sample_coverage: int = 0,
        save_dir: str | None = None,
        log: bool = True,
        **kwargs,
    ) -> None:
        self.walk_length = walk_length
        super().__init__(data, batch_size, num_steps, sample_coverage, save_dir, log, **kwargs)

    @property
    def _filename(self) -> str:
        return f"{type(self).__name__.lower()}_{self.walk_length}_{self.sample_coverage}.pt"

    def _build_sampler(self, batch_size: int) -> SubgraphSampler:
        return SAINTRandomWalkSampler(self.graph, batch_size, self.walk_length)


def _check_data(where: str, data: Data) -> None:
    if getattr(data, "edge_index", None) is None:
        raise ValueError(f"{where}: data has no edge_index")
    for key in ("node_norm", "edge_norm"):
        if key in data:
            raise ValueError(f"{where}: data already has a {key!r} attribute (the loader sets it)")
    if data.edge_index.is_cuda:
        raise ValueError(f"{where}: data must be on the CPU, as for PyG's GraphSAINT loaders")
