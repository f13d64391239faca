"""Tests for fastgl.data: the synthetic generator and the Planetoid reader."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from fastgl.data import (
    NodeDataset,
    read_planetoid,
    synthetic_node_classification,
    to_simple_undirected,
)

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PLANETOID_RAW = SHARED_DATA / "planetoid" / "raw"

# name -> (nodes, directed edges, features, classes, train, val, test); from the data README
# and PyG's Planetoid documentation.
PLANETOID_COUNTS = {
    "cora": (2708, 10556, 1433, 7, 140, 500, 1000),
    "citeseer": (3327, 9104, 3703, 6, 120, 500, 1000),
}


def edge_keys(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """One sorted int64 key per edge, for comparing edge sets."""
    return torch.sort(edge_index[0] * num_nodes + edge_index[1]).values


def nearest_centroid_accuracy(ds: NodeDataset, features: torch.Tensor) -> float:
    """Test accuracy of classifying each node by the nearest class mean of the training features."""
    train_x, train_y = features[ds.train_idx], ds.y[ds.train_idx]
    centroids = torch.stack([train_x[train_y == c].mean(0) for c in range(ds.num_classes)])
    predicted = torch.cdist(features[ds.test_idx], centroids).argmin(1)
    return (predicted == ds.y[ds.test_idx]).double().mean().item()


def neighbor_mean(ds: NodeDataset) -> torch.Tensor:
    """Mean feature over each node's in-neighbours (zero for isolated nodes)."""
    src, dst = ds.edge_index
    total = torch.zeros_like(ds.x).index_add_(0, dst, ds.x[src])
    return total / torch.bincount(dst, minlength=ds.num_nodes).clamp(min=1).unsqueeze(1)


def assert_simple_undirected(edge_index: torch.Tensor, num_nodes: int) -> None:
    assert edge_index.dtype == torch.int64 and edge_index.shape[0] == 2
    assert int(edge_index.min()) >= 0 and int(edge_index.max()) < num_nodes
    assert not bool((edge_index[0] == edge_index[1]).any()), "self loop"
    keys = edge_keys(edge_index, num_nodes)
    assert keys.unique().numel() == keys.numel(), "duplicate edge"
    assert torch.equal(keys, edge_keys(edge_index.flip(0), num_nodes)), "not symmetric"


# --------------------------------------------------------------------------- synthetic


@pytest.fixture(scope="module")
def synthetic() -> NodeDataset:
    return synthetic_node_classification()


def test_synthetic_shapes_and_dtypes(synthetic: NodeDataset) -> None:
    ds = synthetic
    assert ds.num_nodes == 100_000 and ds.num_classes == 8
    assert ds.x.shape == (100_000, 64) and ds.x.dtype == torch.float32
    assert ds.y.shape == (100_000,) and ds.y.dtype == torch.int64
    assert int(ds.y.min()) == 0 and int(ds.y.max()) == 7
    # Balanced classes: sizes differ by at most one.
    sizes = torch.bincount(ds.y)
    assert int(sizes.max() - sizes.min()) <= 1


def test_synthetic_is_deterministic() -> None:
    a = synthetic_node_classification(num_nodes=2000, seed=3)
    b = synthetic_node_classification(num_nodes=2000, seed=3)
    for field in ("edge_index", "x", "y", "train_idx", "val_idx", "test_idx"):
        assert torch.equal(getattr(a, field), getattr(b, field)), field


def test_synthetic_seed_changes_everything() -> None:
    a = synthetic_node_classification(num_nodes=2000, seed=3)
    b = synthetic_node_classification(num_nodes=2000, seed=4)
    assert not torch.equal(a.y, b.y)
    assert not torch.equal(a.x, b.x)
    assert not torch.equal(a.train_idx, b.train_idx)
    assert a.edge_index.shape != b.edge_index.shape or not torch.equal(a.edge_index, b.edge_index)


def test_synthetic_leaves_global_rng_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    synthetic_node_classification(num_nodes=500)
    assert torch.equal(torch.rand(3), expected)


def test_synthetic_graph_is_simple_and_undirected(synthetic: NodeDataset) -> None:
    assert_simple_undirected(synthetic.edge_index, synthetic.num_nodes)


def test_synthetic_mean_degree_near_target(synthetic: NodeDataset) -> None:
    mean_degree = synthetic.num_edges / synthetic.num_nodes
    # Self loops and repeated draws are dropped, so it lands a little below 15.
    assert 13.5 <= mean_degree <= 15.0


def test_synthetic_degrees_are_heavy_tailed(synthetic: NodeDataset) -> None:
    degree = torch.bincount(synthetic.edge_index[1], minlength=synthetic.num_nodes).double()
    mean = degree.mean().item()
    assert degree.max().item() >= 20 * mean  # hubs (about 90x the mean at the defaults)
    assert degree.median().item() < 0.8 * mean  # most nodes below the mean: right-skewed
    # The top 1 % of nodes hold a disproportionate share of edge endpoints.
    top = degree.sort(descending=True).values[: synthetic.num_nodes // 100]
    assert top.sum().item() / degree.sum().item() > 0.08


def test_synthetic_homophily_in_range(synthetic: NodeDataset) -> None:
    src, dst = synthetic.edge_index
    homophily = (synthetic.y[src] == synthetic.y[dst]).double().mean().item()
    assert 0.70 <= homophily <= 0.78


def test_synthetic_homophily_parameter_is_honoured() -> None:
    ds = synthetic_node_classification(num_nodes=5000, homophily=0.2)
    src, dst = ds.edge_index
    homophily = (ds.y[src] == ds.y[dst]).double().mean().item()
    assert 0.15 <= homophily <= 0.25


def test_synthetic_split_is_disjoint_and_covers(synthetic: NodeDataset) -> None:
    ds = synthetic
    parts = (ds.train_idx, ds.val_idx, ds.test_idx)
    assert [p.numel() for p in parts] == [60_000, 20_000, 20_000]
    assert all(p.dtype == torch.int64 for p in parts)
    assert torch.equal(torch.cat(parts).sort().values, torch.arange(ds.num_nodes))


def test_synthetic_features_need_the_graph(synthetic: NodeDataset) -> None:
    """Own features alone are weakly informative; neighbours' features (homophily) are strong."""
    own = nearest_centroid_accuracy(synthetic, synthetic.x)
    neighbors = nearest_centroid_accuracy(synthetic, neighbor_mean(synthetic))
    chance = 1 / synthetic.num_classes
    assert chance + 0.2 < own < 0.75  # about 0.57
    assert neighbors > own + 0.2  # about 0.91


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_nodes": 4, "num_classes": 8},
        {"avg_degree": -1},
        {"homophily": 1.5},
        {"degree_exponent": 0},
        {"split": (0.8, 0.3)},
    ],
)
def test_synthetic_rejects_bad_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="synthetic_node_classification"):
        synthetic_node_classification(**kwargs)


def test_to_simple_undirected() -> None:
    edges = torch.tensor([[0, 1, 2, 2, 0], [1, 0, 2, 0, 1]])
    out = to_simple_undirected(edges, 3)
    assert out.tolist() == [[0, 0, 1, 2], [1, 2, 0, 0]]
    with pytest.raises(ValueError, match="to_simple_undirected"):
        to_simple_undirected(torch.tensor([[0], [3]]), 3)


def test_node_dataset_checks_layout() -> None:
    ok = dict(
        edge_index=torch.zeros(2, 0, dtype=torch.int64),
        x=torch.zeros(3, 2),
        y=torch.zeros(3, dtype=torch.int64),
        train_idx=torch.arange(1),
        val_idx=torch.arange(1),
        test_idx=torch.arange(1),
        num_classes=1,
        name="t",
    )
    assert NodeDataset(**ok).num_nodes == 3
    with pytest.raises(ValueError, match="y must have shape"):
        NodeDataset(**{**ok, "y": torch.zeros(2, dtype=torch.int64)})
    with pytest.raises(ValueError, match="train_idx must be int64"):
        NodeDataset(**{**ok, "train_idx": torch.arange(1, dtype=torch.int32)})


# --------------------------------------------------------------------------- Planetoid


def require_planetoid(name: str) -> Path:
    """Skip unless ``../shared/data/planetoid/raw`` holds the dataset's files."""
    if not (PLANETOID_RAW / f"ind.{name}.graph").is_file():
        pytest.skip(f"Planetoid {name} raw files not found under {PLANETOID_RAW}")
    return PLANETOID_RAW


@pytest.mark.parametrize("name", sorted(PLANETOID_COUNTS))
def test_planetoid_counts(name: str) -> None:
    ds = read_planetoid(require_planetoid(name), name)
    nodes, edges, features, classes, train, val, test = PLANETOID_COUNTS[name]
    assert (ds.num_nodes, ds.num_edges, ds.num_features, ds.num_classes) == (
        nodes,
        edges,
        features,
        classes,
    )
    assert (ds.train_idx.numel(), ds.val_idx.numel(), ds.test_idx.numel()) == (train, val, test)
    assert ds.x.dtype == torch.float32 and ds.y.dtype == torch.int64
    assert_simple_undirected(ds.edge_index, ds.num_nodes)
    # The standard split: 20 training nodes per class, then 500 val nodes, disjoint from test.
    assert torch.equal(
        torch.bincount(ds.y[ds.train_idx], minlength=classes), torch.full((classes,), 20)
    )
    assert torch.equal(ds.val_idx, torch.arange(train, train + 500))
    assert not bool(torch.isin(ds.test_idx, torch.cat([ds.train_idx, ds.val_idx])).any())


@pytest.mark.parametrize("name", sorted(PLANETOID_COUNTS))
def test_planetoid_matches_pyg(name: str) -> None:
    root = require_planetoid(name)
    pyg_io = pytest.importorskip("torch_geometric.io")
    ref = pyg_io.read_planetoid_data(str(root), name)
    ds = read_planetoid(root, name)
    assert torch.equal(
        edge_keys(ds.edge_index, ds.num_nodes), edge_keys(ref.edge_index, ds.num_nodes)
    )
    assert torch.equal(ds.x, ref.x)
    assert torch.equal(ds.y, ref.y)
    for split in ("train", "val", "test"):
        assert torch.equal(
            getattr(ds, f"{split}_idx"), getattr(ref, f"{split}_mask").nonzero().view(-1)
        ), split


def test_citeseer_missing_test_ids_are_padded() -> None:
    ds = read_planetoid(require_planetoid("citeseer"), "CiteSeer")  # name is case-insensitive
    # 15 ids inside the test range are not in test.index: zero features, label 0, in no split.
    test_range = torch.arange(int(ds.test_idx.min()), int(ds.test_idx.max()) + 1)
    padded = test_range[~torch.isin(test_range, ds.test_idx)]
    assert padded.numel() == 15
    assert bool((ds.x[padded] == 0).all()) and bool((ds.y[padded] == 0).all())
    # All zero-feature nodes are exactly those.
    assert torch.equal((ds.x.sum(1) == 0).nonzero().view(-1), padded)
    # 48 isolated nodes, as documented for CiteSeer.
    degree = torch.bincount(ds.edge_index[1], minlength=ds.num_nodes)
    assert int((degree == 0).sum()) == 48


def test_planetoid_normalize_features() -> None:
    root = require_planetoid("cora")
    raw = read_planetoid(root, "cora")
    normalized = read_planetoid(root, "cora", normalize_features=True)
    torch.testing.assert_close(normalized.x.sum(1), torch.ones(raw.num_nodes))
    torch.testing.assert_close(normalized.x, raw.x / raw.x.sum(1, keepdim=True))
    assert torch.equal(normalized.edge_index, raw.edge_index)


def test_planetoid_missing_file_is_named(tmp_path: Path) -> None:
    root = require_planetoid("cora")
    for path in root.glob("ind.cora.*"):
        if not path.name.endswith(".tx"):
            shutil.copy(path, tmp_path / path.name)
    with pytest.raises(FileNotFoundError, match=r"ind\.cora\.tx"):
        read_planetoid(tmp_path, "cora")


def test_planetoid_missing_directory() -> None:
    with pytest.raises(FileNotFoundError, match=r"ind\.cora\.allx.*ind\.cora\.graph"):
        read_planetoid("/nonexistent/planetoid", "cora")


def test_pubmed_without_allx_fails_clearly() -> None:
    root = require_planetoid("pubmed")
    if (root / "ind.pubmed.allx").is_file():
        ds = read_planetoid(root, "pubmed")
        assert (ds.num_nodes, ds.num_edges, ds.num_features, ds.num_classes) == (
            19717,
            88648,
            500,
            3,
        )
    else:
        with pytest.raises(FileNotFoundError, match=r"ind\.pubmed\.allx"):
            read_planetoid(root, "pubmed")
