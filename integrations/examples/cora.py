"""Cora for the examples: the Planetoid raw files (``ind.cora.*``) as plain tensors.

Both versions of each example import this module, so that they differ by the library import
lines only. Features are row-normalized, the split is the standard one (140/500/1000).
"""

import argparse

from fastgl.data import read_planetoid


def example_arguments(description: str) -> argparse.Namespace:
    """The options every example takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--root", required=True, help="folder with the Planetoid raw files ind.cora.*"
    )
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def load_cora(root: str):
    """``(edge_index [2, E], x [N, 1433], y [N], train_idx, val_idx, test_idx, num_classes)``."""
    ds = read_planetoid(root, "cora", normalize_features=True)
    return ds.edge_index, ds.x, ds.y, ds.train_idx, ds.val_idx, ds.test_idx, ds.num_classes
