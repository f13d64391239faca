"""Datasets for fastgl: synthetic generators and readers of common on-disk formats.

Every reader and generator returns a :class:`NodeDataset` (edge list, features, labels, split).
"""

from fastgl.data.dataset import NodeDataset
from fastgl.data.npz import read_npz, save_npz
from fastgl.data.ogb import read_ogb_node_dir
from fastgl.data.planetoid import read_planetoid
from fastgl.data.rmat import RMAT_PRESETS, rmat_edge_index, rmat_graph
from fastgl.data.rmat_features import rmat_node_classification
from fastgl.data.synthetic import synthetic_node_classification
from fastgl.data.utils import to_simple_undirected

__all__ = [
    "NodeDataset",
    "RMAT_PRESETS",
    "read_npz",
    "read_ogb_node_dir",
    "read_planetoid",
    "rmat_edge_index",
    "rmat_graph",
    "rmat_node_classification",
    "save_npz",
    "synthetic_node_classification",
    "to_simple_undirected",
]
