"""fastgl for PyG users, without ``pyg-lib`` or ``torch-sparse``.

* ``NeighborLoader``, ``LinkNeighborLoader``: PyG's loaders with fastgl's sampler.
* ``NeighborSampler``: a ``torch_geometric.sampler.NeighborSampler`` to pass as
  ``neighbor_sampler=`` to PyG's own loaders.
* ``GCNConv``, ``SAGEConv``, ``GINConv``, ``GATConv``: ``fastgl.nn``'s conv layers (PyG's
  arguments, state-dict keys and outputs; ``edge_index``, ``EdgeIndex`` or sparse ``adj_t``
  inputs) that are also ``torch_geometric.nn.MessagePassing`` instances, so that PyG's
  ``to_hetero`` sums their outputs per destination type as for its own layers (what needs
  PyG's per-edge messages, such as message hooks or explainer edge masks, raises
  ``NotImplementedError``; see :mod:`.conv`).
* ``GraphSAINTNodeSampler``, ``GraphSAINTEdgeSampler``, ``GraphSAINTRandomWalkSampler``: PyG's
  GraphSAINT loaders (batches with ``node_norm`` and ``edge_norm``) on fastgl's samplers, which
  PyG's own classes cannot run without ``torch-sparse``; ``ShaDowKHopSampler`` likewise.
* ``ClusterData``, ``ClusterLoader``: PyG's ClusterGCN loaders on fastgl's METIS partition
  (pymetis), where PyG's own need ``pyg-lib`` or ``torch-sparse``.
* ``Node2Vec``: PyG's ``Node2Vec`` (constructor, ``loader``, batches, ``loss``, ``test``) on
  fastgl's random walks, without ``pyg-lib`` and with ``p`` and ``q`` honoured.

Example:
    >>> from fastgl.integrations.pyg import NeighborLoader, SAGEConv
    >>> loader = NeighborLoader(data, num_neighbors=[25, 10], batch_size=1024, shuffle=True,
    ...                         input_nodes=data.train_mask)
    >>> model = torch_geometric.nn.to_hetero(model, hetero_data.metadata())  # model of SAGEConvs
"""

from .cluster import ClusterData, ClusterLoader
from .conv import GATConv, GCNConv, GINConv, SAGEConv
from .graph_saint import (
    GraphSAINTEdgeSampler,
    GraphSAINTNodeSampler,
    GraphSAINTRandomWalkSampler,
    GraphSAINTSampler,
)
from .loader import LinkNeighborLoader, NeighborLoader
from .node2vec import Node2Vec
from .sampler import NeighborSampler
from .shadow import ShaDowKHopSampler

__all__ = [
    "ClusterData",
    "ClusterLoader",
    "GATConv",
    "GCNConv",
    "GINConv",
    "GraphSAINTEdgeSampler",
    "GraphSAINTNodeSampler",
    "GraphSAINTRandomWalkSampler",
    "GraphSAINTSampler",
    "LinkNeighborLoader",
    "NeighborLoader",
    "NeighborSampler",
    "Node2Vec",
    "SAGEConv",
    "ShaDowKHopSampler",
]
