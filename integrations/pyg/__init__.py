"""fastgl for PyG users, without ``pyg-lib`` or ``torch-sparse``.

* ``NeighborLoader``, ``LinkNeighborLoader``: PyG's loaders with fastgl's sampler.
* ``NeighborSampler``: a ``torch_geometric.sampler.NeighborSampler`` to pass as
  ``neighbor_sampler=`` to PyG's own loaders.
* ``GCNConv``, ``SAGEConv``, ``GINConv``, ``GATConv``: fastgl's conv layers (PyG's arguments,
  state-dict keys and outputs; ``edge_index``, ``EdgeIndex`` or sparse ``adj_t`` inputs).

Example:
    >>> from fastgl.integrations.pyg import NeighborLoader, SAGEConv
    >>> loader = NeighborLoader(data, num_neighbors=[25, 10], batch_size=1024, shuffle=True,
    ...                         input_nodes=data.train_mask)
"""

from fastgl.nn import GATConv, GCNConv, GINConv, SAGEConv

from .loader import LinkNeighborLoader, NeighborLoader
from .sampler import NeighborSampler

__all__ = [
    "GATConv",
    "GCNConv",
    "GINConv",
    "LinkNeighborLoader",
    "NeighborLoader",
    "NeighborSampler",
    "SAGEConv",
]
