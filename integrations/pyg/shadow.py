"""PyG's ``torch_geometric.loader.ShaDowKHopSampler`` on fastgl's sampler
(:class:`fastgl.sampling.ShaDowSampler`): PyG's own class needs ``torch-sparse``, which has no
wheels for current PyTorch."""

from __future__ import annotations

import copy

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data

from fastgl.graph import CSCGraph
from fastgl.sampling import ShaDowSampler

_WHERE = "ShaDowKHopSampler"


class ShaDowKHopSampler(torch.utils.data.DataLoader):
    """``torch_geometric.loader.ShaDowKHopSampler`` with fastgl's sampling (same signature and
    batch layout): each batch of roots (``node_idx``, all nodes by default; ``batch_size`` and
    the other ``torch.utils.data.DataLoader`` options in ``**kwargs``) becomes a ``Batch`` of one
    ego graph per root, ``depth`` hops of ``num_neighbors`` in-neighbors then the subgraph they
    induce: ``edge_index`` over the batch's nodes, ``batch`` and ``ptr`` (each node's ego graph),
    ``root_n_id`` (each root's row), ``y`` of the roots, every other node attribute of every
    node and every edge attribute of every edge.

    Where it differs from PyG: ``num_neighbors=-1`` takes every in-neighbor (PyG's kernel then
    takes none); a vertex reached twice in a root's tree (with ``replace=True``, or again at
    depth 3 and more) draws its neighbors once, where PyG draws again for every occurrence; an
    ego graph's edges are grouped by target (PyG sorts them by source; nodes are ascending in
    both); a graph given as ``adj_t`` only is refused (give ``edge_index``); randomness is
    torch's generator (``torch.manual_seed``). As in PyG, an attribute is sliced by its length,
    nodes first: with as many edges as nodes, an edge attribute is sliced as a node one.

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> from fastgl.integrations.pyg import ShaDowKHopSampler   # the only changed line
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> data = Data(x=torch.randn(6, 4), y=torch.arange(6), edge_index=ring)
        >>> loader = ShaDowKHopSampler(data, depth=2, num_neighbors=5, batch_size=3)
        >>> batch = next(iter(loader))
        >>> batch.y.tolist(), batch.root_n_id.tolist(), batch.ptr.tolist()
        ([0, 1, 2], [0, 4, 8], [0, 3, 6, 9])
    """

    def __init__(
        self,
        data: Data,
        depth: int,
        num_neighbors: int,
        node_idx: Tensor | None = None,
        replace: bool = False,
        **kwargs,
    ) -> None:
        if getattr(data, "edge_index", None) is None:
            raise ValueError(f"{_WHERE}: data needs an edge_index (an adj_t alone is not read)")
        self.data = copy.copy(data)
        self.depth, self.num_neighbors, self.replace = depth, num_neighbors, replace
        graph = CSCGraph.from_edge_index(data.edge_index.cpu(), data.num_nodes)
        self.shadow_sampler = ShaDowSampler(graph, depth, num_neighbors, replace)
        if node_idx is None:
            node_idx = torch.arange(data.num_nodes)
        elif node_idx.dtype == torch.bool:
            node_idx = node_idx.nonzero().view(-1)
        self.node_idx = node_idx
        super().__init__(node_idx.tolist(), collate_fn=self._collate, **kwargs)

    def _collate(self, roots: list[int]) -> Batch:
        egos = self.shadow_sampler.sample(torch.tensor(roots, dtype=torch.int64))
        batch = Batch(
            batch=torch.repeat_interleave(torch.arange(len(roots)), egos.ptr.diff()),
            ptr=egos.ptr,
        )
        batch.root_n_id = egos.root_index
        batch.edge_index = egos.edge_index
        for key, value in self.data:
            if key in ("edge_index", "adj_t", "num_nodes", "batch", "ptr"):
                continue
            if key == "y" and value.size(0) == self.data.num_nodes:
                batch[key] = value[egos.nodes][egos.root_index]
            elif isinstance(value, Tensor) and value.size(0) == self.data.num_nodes:
                batch[key] = value[egos.nodes]
            elif isinstance(value, Tensor) and value.size(0) == self.data.num_edges:
                batch[key] = value[egos.eid]
            else:
                batch[key] = value
        return batch
