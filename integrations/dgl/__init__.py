"""fastgl for DGL users: change the import line, keep the script.

``NeighborSampler`` and ``MultiLayerFullNeighborSampler`` take the arguments of their
``dgl.dataloading`` namesakes and plug into ``dgl.dataloading.DataLoader`` (workers, GPU graphs,
``use_uva``, ``exclude``, ``as_edge_prediction_sampler``), on homogeneous and heterogeneous
graphs (fanouts per edge type, seeds ``{ntype: ids}``, blocks per node and edge type, as in
DGL); ``GraphConv``, ``SAGEConv``, ``GINConv`` and ``GATConv`` take the arguments of their
``dgl.nn`` namesakes and load their state dicts; ``random_walk``, ``node2vec_random_walk``,
``RandomWalkNeighborSampler`` and ``PinSAGESampler`` take those of their ``dgl.sampling``
namesakes (homogeneous walks, on CPU and GPU graphs); ``SAINTSampler`` those of
``dgl.dataloading.SAINTSampler`` (GraphSAINT's node, edge and walk subgraphs) and
``ClusterGCNSampler`` those of its namesake (METIS through pymetis). Needs DGL
(whose wheels support torch up to 2.2-2.4).

Example:
    >>> from fastgl.integrations.dgl import NeighborSampler
    >>> sampler = NeighborSampler([10, 10, 10], prefetch_node_feats=["feat"],
    ...                           prefetch_labels=["label"])
    >>> loader = dgl.dataloading.DataLoader(g, train_nids, sampler, batch_size=1024,
    ...                                     shuffle=True)
    >>> hetero = NeighborSampler([{"writes": 5, "cites": 10}] * 2)   # per edge type
    >>> loader = dgl.dataloading.DataLoader(hg, {"paper": train_nids}, hetero, batch_size=1024)
    >>> traces, types = random_walk(g, train_nids, length=80)   # as dgl.sampling.random_walk
"""

from .cluster import ClusterGCNSampler
from .conv import GATConv, GINConv, GraphConv, SAGEConv
from .saint import SAINTSampler
from .sampler import MultiLayerFullNeighborSampler, NeighborSampler
from .walks import PinSAGESampler, RandomWalkNeighborSampler, node2vec_random_walk, random_walk

__all__ = [
    "ClusterGCNSampler",
    "GATConv",
    "GINConv",
    "GraphConv",
    "MultiLayerFullNeighborSampler",
    "NeighborSampler",
    "PinSAGESampler",
    "RandomWalkNeighborSampler",
    "SAINTSampler",
    "SAGEConv",
    "node2vec_random_walk",
    "random_walk",
]
