"""fastgl for DGL users: change the import line, keep the script.

``NeighborSampler`` and ``MultiLayerFullNeighborSampler`` take the arguments of their
``dgl.dataloading`` namesakes and plug into ``dgl.dataloading.DataLoader`` (workers, GPU graphs,
``use_uva``, ``exclude``, ``as_edge_prediction_sampler``); ``GraphConv``, ``SAGEConv``,
``GINConv`` and ``GATConv`` take the arguments of their ``dgl.nn`` namesakes and load their
state dicts. Needs DGL (whose wheels support torch up to 2.2-2.4).

Example:
    >>> from fastgl.integrations.dgl import NeighborSampler
    >>> sampler = NeighborSampler([10, 10, 10], prefetch_node_feats=["feat"],
    ...                           prefetch_labels=["label"])
    >>> loader = dgl.dataloading.DataLoader(g, train_nids, sampler, batch_size=1024,
    ...                                     shuffle=True)
"""

from .conv import GATConv, GINConv, GraphConv, SAGEConv
from .sampler import MultiLayerFullNeighborSampler, NeighborSampler

__all__ = [
    "GATConv",
    "GINConv",
    "GraphConv",
    "MultiLayerFullNeighborSampler",
    "NeighborSampler",
    "SAGEConv",
]
