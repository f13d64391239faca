"""Reader for the Planetoid citation datasets (Cora, CiteSeer, PubMed) in their raw format.

The raw format (Yang et al. 2016, as distributed with Kipf & Welling's GCN code) is a set of
Python-2 pickles ``ind.<name>.<part>``:

* ``allx`` / ``ally``: features (scipy CSR) and one-hot labels of the non-test nodes ``0 .. A-1``;
* ``x`` / ``y``: the labelled training nodes, which are the first ``len(y)`` rows of ``allx``;
* ``tx`` / ``ty``: features and labels of the test nodes, row ``i`` belonging to the node id on
  line ``i`` of ``test.index`` (a text file, one id a line, not sorted);
* ``graph``: a dict from node id to the list of its neighbours.

The split is the standard one (same as Kipf & Welling and PyG's ``Planetoid``): train is
``range(len(y))`` (20 nodes per class), val the next 500 nodes, test the ids in ``test.index``.
CiteSeer's ``test.index`` skips a few ids (isolated nodes with no features or labels in the
files); those nodes are kept with all-zero features and label 0, and belong to no split, exactly
as in PyG.
"""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from fastgl.data.dataset import NodeDataset
from fastgl.data.utils import to_simple_undirected

#: Files the reader needs. ``ind.<name>.x`` is not among them: its rows are the first rows of
#: ``allx`` and nothing else is taken from it.
PLANETOID_PARTS = ("allx", "ally", "tx", "ty", "y", "graph", "test.index")

#: Number of validation nodes in the standard split.
NUM_VAL = 500


def read_planetoid(root: str | Path, name: str, *, normalize_features: bool = False) -> NodeDataset:
    """Read a Planetoid dataset from its raw files ``root/ind.<name>.*``.

    Args:
        root: folder holding the raw files (e.g. ``path/to/planetoid/raw``).
        name: dataset prefix, case-insensitive: ``"cora"``, ``"citeseer"`` or ``"pubmed"``.
        normalize_features: divide each feature row by its sum (rows summing to 0 stay 0).
            Off by default: the raw bag-of-words values are returned.

    Returns:
        A :class:`NodeDataset`: undirected ``edge_index`` without self loops or duplicates, sorted
        by (source, target); float32 features; int64 labels; the standard split.

    Raises:
        FileNotFoundError: a needed raw file is absent (every absent file is named). For example
            copies of PubMed that lack ``ind.pubmed.allx`` (features of 18,717 of its 19,717
            nodes) cannot be read: the reader does not invent features.
        ValueError: the files are inconsistent (e.g. a neighbour id outside the node range).

    Example:
        >>> ds = read_planetoid("path/to/planetoid/raw", "cora")  # doctest: +SKIP
        >>> ds.num_nodes, ds.num_edges, ds.num_classes  # doctest: +SKIP
        (2708, 10556, 7)
    """
    prefix = name.lower()
    paths = _part_paths(Path(root), prefix)

    allx, tx = _load_pickle(paths["allx"]), _load_pickle(paths["tx"])
    ally, ty = _load_pickle(paths["ally"]), _load_pickle(paths["ty"])
    num_train = int(_load_pickle(paths["y"]).shape[0])
    graph: dict[int, list[int]] = _load_pickle(paths["graph"])
    test_index = _read_test_index(paths["test.index"])

    num_nodes = _count_nodes(prefix, allx.shape[0], test_index)
    x = _place_rows(_dense(allx), _dense(tx), test_index, num_nodes)
    y = _place_rows(np.asarray(ally), np.asarray(ty), test_index, num_nodes).argmax(axis=1)
    if normalize_features:
        x = _row_normalize(x)

    return NodeDataset(
        edge_index=_edges_from_adjacency(graph, num_nodes, prefix),
        x=torch.from_numpy(x),
        y=torch.from_numpy(y).to(torch.int64),
        train_idx=torch.arange(num_train, dtype=torch.int64),
        val_idx=torch.arange(num_train, num_train + NUM_VAL, dtype=torch.int64),
        test_idx=torch.from_numpy(np.sort(test_index)),
        num_classes=int(ally.shape[1]),
        name=name,
    )


def _part_paths(root: Path, prefix: str) -> dict[str, Path]:
    """Map each needed part to its path; raise ``FileNotFoundError`` naming every absent file."""
    paths = {part: root / f"ind.{prefix}.{part}" for part in PLANETOID_PARTS}
    missing = [path for path in paths.values() if not path.is_file()]
    if missing:
        names = ", ".join(str(path) for path in missing)
        raise FileNotFoundError(
            f"read_planetoid: dataset {prefix!r} needs {len(missing)} file(s) that are not "
            f"there: {names}"
        )
    return paths


def _load_pickle(path: Path) -> Any:
    """Load one Python-2 pickle (scipy matrix, numpy array or dict)."""
    try:
        import scipy.sparse  # noqa: F401  (the feature pickles are scipy matrices)
    except ImportError as error:
        raise ImportError(
            "read_planetoid: reading Planetoid files needs scipy (pip install scipy)"
        ) from error
    with open(path, "rb") as f, warnings.catch_warnings():
        # Old pickles name the deprecated ``scipy.sparse.csr`` module; scipy warns but loads them.
        warnings.simplefilter("ignore", DeprecationWarning)
        return pickle.load(f, encoding="latin1")


def _read_test_index(path: Path) -> np.ndarray:
    """Read ``test.index``: one node id a line, in the row order of ``tx``/``ty``."""
    return np.array([int(line) for line in path.read_text().split()], dtype=np.int64)


def _count_nodes(prefix: str, num_allx: int, test_index: np.ndarray) -> int:
    """Return the node count: the non-test nodes ``0 .. num_allx-1``, then the test id range."""
    if test_index.size == 0:
        return num_allx
    if test_index.min() < num_allx:
        raise ValueError(
            f"read_planetoid: dataset {prefix!r}: test ids must follow the {num_allx} rows of "
            f"allx, got test id {int(test_index.min())}"
        )
    if np.unique(test_index).size != test_index.size:
        raise ValueError(f"read_planetoid: dataset {prefix!r}: test.index lists a node id twice")
    return int(test_index.max()) + 1


def _dense(matrix: Any) -> np.ndarray:
    """Return a float32 dense copy of a scipy sparse (or dense) matrix."""
    dense = matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)
    return dense.astype(np.float32, copy=False)


def _place_rows(
    rest: np.ndarray, test: np.ndarray, test_index: np.ndarray, num_nodes: int
) -> np.ndarray:
    """Stack non-test rows (nodes ``0..``) and test rows (node ``test_index[i]`` gets row ``i``).

    Node ids in the test range but missing from ``test_index`` keep all-zero rows.
    """
    out = np.zeros((num_nodes, rest.shape[1]), dtype=rest.dtype)
    out[: rest.shape[0]] = rest
    out[test_index] = test
    return out


def _row_normalize(x: np.ndarray) -> np.ndarray:
    """Divide every row by its sum; rows summing to zero are left as they are."""
    row_sum = x.sum(axis=1, keepdims=True)
    return x / np.where(row_sum == 0, 1, row_sum).astype(x.dtype)


def _edges_from_adjacency(graph: dict[int, list[int]], num_nodes: int, prefix: str) -> Tensor:
    """Turn the adjacency dict into an undirected, simple int64 ``[2, E]`` edge list."""
    keys = np.fromiter(graph.keys(), dtype=np.int64, count=len(graph))
    degrees = np.fromiter((len(nbrs) for nbrs in graph.values()), dtype=np.int64, count=len(graph))
    src = np.repeat(keys, degrees)
    dst = np.fromiter(
        (v for nbrs in graph.values() for v in nbrs), dtype=np.int64, count=int(degrees.sum())
    )
    edge_index = torch.from_numpy(np.stack([src, dst]))
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        raise ValueError(
            f"read_planetoid: dataset {prefix!r}: graph has node ids outside [0, {num_nodes}) "
            f"(range [{int(edge_index.min())}, {int(edge_index.max())}])"
        )
    return to_simple_undirected(edge_index, num_nodes)
