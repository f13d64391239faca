"""PyG's ClusterGCN loaders (``torch_geometric.loader.ClusterData`` and ``ClusterLoader``) with
fastgl's METIS partition (:func:`fastgl.sampling.metis_parts`, through pymetis): PyG's own
``ClusterData`` needs ``pyg-lib`` or ``torch-sparse`` for METIS, which have no wheels for current
PyTorch.

``ClusterData`` is PyG's class with only its METIS call replaced, so everything else is PyG's own:
the permuted graph (``partition``: ``indptr``, ``index``, ``partptr``, ``node_perm``,
``edge_perm``), the permuted ``data``, ``cluster_data[i]``, the file under ``save_dir``.
``ClusterLoader`` is PyG's, which needs no METIS.
"""

from __future__ import annotations

import torch_geometric.loader
from torch import Tensor
from torch_geometric.loader import ClusterLoader

from fastgl.graph import CSCGraph
from fastgl.sampling import metis_parts

__all__ = ["ClusterData", "ClusterLoader"]


class ClusterData(torch_geometric.loader.ClusterData):
    """``torch_geometric.loader.ClusterData`` partitioning with fastgl's METIS: the graph made
    undirected without self loops (METIS's input; PyG passes its edges as given), k-way or
    ``recursive``. The parts are pymetis's METIS's, which may differ from those of PyG's METIS
    builds.

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> from fastgl.integrations.pyg import ClusterData, ClusterLoader   # the changed line
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> data = Data(x=torch.randn(6, 4), y=torch.arange(6), edge_index=ring)
        >>> cluster_data = ClusterData(data, num_parts=3, log=False)
        >>> len(cluster_data), sorted(cluster_data[0].keys())
        (3, ['edge_index', 'x', 'y'])
        >>> batch = next(iter(ClusterLoader(cluster_data, batch_size=3)))   # every cluster
        >>> batch.num_nodes, batch.edge_index.shape[1]
        (6, 6)
    """

    def _metis(self, edge_index: Tensor, num_nodes: int) -> Tensor:
        graph = CSCGraph.from_edge_index(edge_index.cpu(), num_nodes)
        parts = metis_parts(graph, self.num_parts, recursive=self.recursive)
        return parts.to(edge_index.device)
