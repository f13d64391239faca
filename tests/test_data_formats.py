"""Tests for the OGB raw-directory reader, the npz format and the R-MAT node-classification data."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

from fastgl.data import (
    RMAT_PRESETS,
    NodeDataset,
    read_npz,
    read_ogb_node_dir,
    rmat_edge_index,
    rmat_node_classification,
    save_npz,
    synthetic_node_classification,
    to_simple_undirected,
)
from fastgl.data import ogb as ogb_module

FIELDS = ("edge_index", "x", "y", "train_idx", "val_idx", "test_idx")


def assert_same_dataset(a: NodeDataset, b: NodeDataset) -> None:
    for field in FIELDS:
        left, right = getattr(a, field), getattr(b, field)
        assert left.dtype == right.dtype, field
        assert torch.equal(left, right), field
    assert (a.num_classes, a.name) == (b.num_classes, b.name)


# --------------------------------------------------------------------------- OGB raw directory


def write_gz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as f:
        f.write(text.encode())


def lines(rows: Sequence) -> str:
    """One CSV line per row (a row is a value or a sequence of values), newline-terminated."""
    out = []
    for row in rows:
        out.append(",".join(map(str, row)) if isinstance(row, (list, tuple)) else str(row))
    return "".join(line + "\n" for line in out)


# Seven nodes, three features; node 5 is unlabeled in the "float labels" variant.
EDGES = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 3), (5, 5), (6, 0), (0, 1)]
FEATURES = np.arange(21, dtype=np.float32).reshape(7, 3) / 8 - 1.25  # exact in text and float32
LABELS = [3, 0, 1, 2, 2, 1, 0]
SPLIT = {"train": [4, 0, 2], "valid": [1, 5], "test": [3, 6]}


def write_ogb(
    root: Path,
    *,
    labels: Sequence[str] | None = None,
    num_nodes: int | None = 7,
    schemes: Sequence[str] = ("time",),
    edges: Sequence = EDGES,
    split: dict | None = None,
) -> Path:
    """Write a small OGB node dataset in its raw layout; returns ``root``."""
    write_gz(root / "raw" / "edge.csv.gz", lines(edges))
    write_gz(root / "raw" / "node-feat.csv.gz", lines(FEATURES.tolist()))
    write_gz(root / "raw" / "node-label.csv.gz", lines(labels or LABELS))
    if num_nodes is not None:
        write_gz(root / "raw" / "num-node-list.csv.gz", f"{num_nodes}\n")
    for scheme in schemes:
        for part, ids in (split or SPLIT).items():
            write_gz(root / "split" / scheme / f"{part}.csv.gz", lines(ids))
    return root


def expected_edges() -> torch.Tensor:
    return torch.tensor(EDGES, dtype=torch.int64).t()


@pytest.mark.parametrize("num_nodes", [7, None], ids=["num-node-list", "no-num-node-list"])
def test_ogb_reads_every_field(tmp_path: Path, num_nodes: int | None) -> None:
    root = write_ogb(tmp_path / "ogbn_arxiv", num_nodes=num_nodes)
    ds = read_ogb_node_dir(root, undirected=False)
    assert ds.name == "ogbn-arxiv"  # OGB's folder name ogbn_arxiv is the dataset ogbn-arxiv
    assert torch.equal(ds.edge_index, expected_edges())  # as listed: loops, repeats, order kept
    assert ds.x.dtype == torch.float32 and torch.equal(ds.x, torch.from_numpy(FEATURES))
    assert ds.y.dtype == torch.int64 and ds.y.tolist() == LABELS
    assert ds.train_idx.tolist() == SPLIT["train"]  # file order
    assert ds.val_idx.tolist() == SPLIT["valid"]
    assert ds.test_idx.tolist() == SPLIT["test"]
    assert all(getattr(ds, f).dtype == torch.int64 for f in ("train_idx", "val_idx", "test_idx"))
    assert ds.num_classes == 4


def test_ogb_undirected(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "ogbn_products")
    ds = read_ogb_node_dir(root)
    assert torch.equal(ds.edge_index, to_simple_undirected(expected_edges(), 7))
    assert ds.edge_index.tolist() == [
        [0, 0, 0, 1, 1, 2, 2, 3, 4, 6],
        [1, 2, 6, 0, 2, 0, 1, 4, 3, 0],
    ]
    assert ds.name == "ogbn-products"


def test_ogb_float_labels_and_unlabeled_nodes(tmp_path: Path) -> None:
    labels = ["3.0", "0.0", "1.0", "2.0", "2.0", "nan", "0.0"]
    root = write_ogb(tmp_path / "papers", labels=labels)
    with pytest.warns(UserWarning, match=r"valid\.csv\.gz lists 1 unlabeled node"):
        ds = read_ogb_node_dir(root)
    assert ds.name == "papers"
    assert ds.y.tolist() == [3, 0, 1, 2, 2, 0, 0]  # unlabeled node 5 -> 0 ...
    assert ds.val_idx.tolist() == [1]  # ... and in no split
    assert ds.train_idx.tolist() == SPLIT["train"] and ds.test_idx.tolist() == SPLIT["test"]
    assert ds.num_classes == 4


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("num_nodes", [7, None])
def test_ogb_feature_dtype(tmp_path: Path, dtype: torch.dtype, num_nodes: int | None) -> None:
    ds = read_ogb_node_dir(write_ogb(tmp_path / "d", num_nodes=num_nodes), dtype=dtype)
    assert ds.x.dtype == dtype
    assert torch.equal(ds.x, torch.from_numpy(FEATURES).to(dtype))


def test_ogb_scheme_choice(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d", schemes=("time", "random"))
    with pytest.raises(ValueError, match=r"2 split schemes \['random', 'time'\].*scheme="):
        read_ogb_node_dir(root)
    assert read_ogb_node_dir(root, scheme="random").train_idx.tolist() == SPLIT["train"]
    with pytest.raises(FileNotFoundError, match=r"'species' not found.*\['random', 'time'\]"):
        read_ogb_node_dir(root, scheme="species")


def test_ogb_no_split_folder(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d", schemes=())
    with pytest.raises(FileNotFoundError, match="split scheme folder.*found none"):
        read_ogb_node_dir(root)


@pytest.mark.parametrize(
    "relative", ["raw/edge.csv.gz", "raw/node-feat.csv.gz", "split/time/valid.csv.gz"]
)
def test_ogb_missing_file_is_named(tmp_path: Path, relative: str) -> None:
    root = write_ogb(tmp_path / "d")
    (root / relative).unlink()
    pattern = "read_ogb_node_dir.*" + relative.replace(".", r"\.")
    with pytest.raises(FileNotFoundError, match=pattern):
        read_ogb_node_dir(root)


def test_ogb_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="read_ogb_node_dir: no such dataset directory"):
        read_ogb_node_dir(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"needs 3 file\(s\).*edge\.csv\.gz.*node-label"):
        read_ogb_node_dir(tmp_path / "empty")


def test_ogb_unlabeled_warning_points_at_the_caller(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d", labels=["nan"] + ["0"] * 6)
    with pytest.warns(UserWarning, match="train.csv.gz lists 1 unlabeled") as record:
        ds = read_ogb_node_dir(root)
    assert record[0].filename == __file__
    assert ds.train_idx.tolist() == [4, 2] and ds.num_classes == 1


def test_ogb_tolerates_crlf_blank_lines_and_multi_member_gzip(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d")
    reference = read_ogb_node_dir(root)
    crlf = lines(FEATURES.tolist()).replace("\n", "\r\n") + "\r\n\n"
    write_gz(root / "raw" / "node-feat.csv.gz", crlf)
    # Two gzip members, one after the other (what `cat a.gz b.gz` gives).
    first, second = lines(EDGES[:3]), "\n" + lines(EDGES[3:])
    (root / "raw" / "edge.csv.gz").write_bytes(
        gzip.compress(first.encode()) + gzip.compress(second.encode())
    )
    assert_same_dataset(read_ogb_node_dir(root), reference)


def test_ogb_small_blocks_give_the_same_result(tmp_path: Path, monkeypatch) -> None:
    """Blocks cut mid-line, lines longer than a block, tiny compressed reads."""
    root = write_ogb(tmp_path / "d")
    reference = read_ogb_node_dir(root, undirected=False)
    monkeypatch.setattr(ogb_module, "BLOCK_BYTES", 5)
    monkeypatch.setattr(ogb_module, "_COMPRESSED_CHUNK", 3)
    assert_same_dataset(read_ogb_node_dir(root, undirected=False), reference)


@pytest.mark.parametrize("block_bytes", [1 << 20, 9])
def test_ogb_ragged_feature_row_names_the_line(
    tmp_path: Path, monkeypatch, block_bytes: int
) -> None:
    monkeypatch.setattr(ogb_module, "BLOCK_BYTES", block_bytes)
    root = write_ogb(tmp_path / "d")
    rows = FEATURES.tolist()
    rows[4] = rows[4][:2]
    write_gz(root / "raw" / "node-feat.csv.gz", lines(rows))
    with pytest.raises(ValueError, match=r"node-feat\.csv\.gz, line 5: expected 3 .*got 2"):
        read_ogb_node_dir(root)


def test_ogb_unparsable_value_names_the_line(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d", edges=[(0, 1), (1, "x2")])
    with pytest.raises(ValueError, match=r"edge\.csv\.gz, line 2: expected an integer, got 'x2'"):
        read_ogb_node_dir(root)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"edges": [(0, 1), (7, 2)]}, r"edge\.csv\.gz: edge endpoint 7 out of range .* 7 nodes"),
        ({"edges": [(0, -1)]}, r"edge endpoint -1 out of range"),
        ({"edges": [(0, 1, 2)]}, r"edge\.csv\.gz, line 1: expected 2 comma-separated .*got 3"),
        ({"split": {**SPLIT, "test": [3, 9]}}, r"test\.csv\.gz: node id 9 out of range"),
        ({"labels": LABELS[:6]}, r"node-label\.csv\.gz has 6 labels for 7 nodes"),
        ({"labels": ["1", "2.5", "0", "0", "0", "0", "0"]}, r"non-negative integers.*2\.5"),
        ({"labels": ["-1"] + ["0"] * 6}, r"non-negative integers.*-1"),
        ({"labels": [(0, 1)] * 7}, r"one label per line, got 2 columns"),
        ({"num_nodes": 8}, r"7 feature rows, but num-node-list\.csv\.gz announces 8 nodes"),
        ({"num_nodes": 6}, r"more than the 6 feature rows"),
    ],
)
def test_ogb_rejects_inconsistent_files(tmp_path: Path, kwargs: dict, match: str) -> None:
    root = write_ogb(tmp_path / "d", **kwargs)
    with pytest.raises(ValueError, match="read_ogb_node_dir.*" + match):
        read_ogb_node_dir(root)


def test_ogb_rejects_broken_gzip(tmp_path: Path) -> None:
    root = write_ogb(tmp_path / "d")
    path = root / "raw" / "edge.csv.gz"
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(ValueError, match=r"edge\.csv\.gz is truncated"):
        read_ogb_node_dir(root)
    path.write_bytes(b"0,1\n1,2\n")
    with pytest.raises(ValueError, match=r"edge\.csv\.gz is not a valid gzip file"):
        read_ogb_node_dir(root)


def test_ogb_rejects_bad_dtype(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read_ogb_node_dir: dtype must be a floating"):
        read_ogb_node_dir(write_ogb(tmp_path / "d"), dtype=torch.int64)


# --------------------------------------------------------------------------- npz


@pytest.fixture
def small_dataset() -> NodeDataset:
    return synthetic_node_classification(num_nodes=300, avg_degree=6, num_features=5, seed=2)


def test_npz_round_trip(tmp_path: Path, small_dataset: NodeDataset) -> None:
    path = tmp_path / "ds.npz"
    save_npz(small_dataset, path)
    assert_same_dataset(read_npz(path), small_dataset)
    # A plain npz, readable without fastgl and without pickles, with exactly the documented keys.
    with np.load(path, allow_pickle=False) as archive:
        assert sorted(archive.files) == sorted([*FIELDS, "num_classes", "name"])
        assert archive["edge_index"].dtype == np.int64 and archive["x"].dtype == np.float32
        assert str(archive["name"]) == small_dataset.name


def test_npz_writes_the_path_as_given(tmp_path: Path, small_dataset: NodeDataset) -> None:
    save_npz(small_dataset, str(tmp_path / "plain"))
    assert (tmp_path / "plain").is_file() and not (tmp_path / "plain.npz").exists()
    assert_same_dataset(read_npz(tmp_path / "plain"), small_dataset)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_npz_feature_dtypes(tmp_path: Path, small_dataset: NodeDataset, dtype) -> None:
    small_dataset.x = small_dataset.x.to(dtype)
    save_npz(small_dataset, tmp_path / "ds.npz")
    back = read_npz(tmp_path / "ds.npz")
    # bfloat16 comes back as float32 (numpy has no bfloat16), with the same values.
    assert back.x.dtype == (torch.float32 if dtype == torch.bfloat16 else dtype)
    assert torch.equal(back.x.to(dtype), small_dataset.x)


def test_npz_masks_and_aliases(tmp_path: Path, small_dataset: NodeDataset) -> None:
    ds = small_dataset
    masks = {}
    for field, stem in (("train_idx", "train"), ("val_idx", "val"), ("test_idx", "test")):
        mask = np.zeros(ds.num_nodes, dtype=bool)
        mask[getattr(ds, field).numpy()] = True
        masks[f"{stem}_mask"] = mask
    masks["test_mask"] = masks["test_mask"].astype(np.uint8)  # 0/1 integers work too
    path = tmp_path / "dgl_export.npz"
    np.savez(
        path,
        edge_index=ds.edge_index.numpy().astype(np.int32),
        feat=ds.x.numpy(),
        label=ds.y.numpy().astype(np.int32)[:, None],  # OGB's [N, 1]
        **masks,
    )
    back = read_npz(path)
    assert back.name == "dgl_export"
    assert back.num_classes == int(ds.y.max()) + 1
    for field in FIELDS:  # masks come back as sorted ids; the synthetic split is sorted
        assert getattr(back, field).dtype == getattr(ds, field).dtype, field
        assert torch.equal(getattr(back, field), getattr(ds, field)), field


def test_npz_canonical_keys_win_and_valid_alias(tmp_path: Path) -> None:
    path = tmp_path / "d.npz"
    np.savez(
        path,
        edge_index=np.array([[0, 1], [1, 2]]),
        x=np.ones((3, 2), np.float32),
        feat=np.zeros((3, 2), np.float32),
        y=np.array([0.0, 2.0, 1.0]),
        train_idx=np.array([0]),
        valid_idx=np.array([1]),
        test_idx=np.array([2]),
        num_classes=5,
    )
    ds = read_npz(path)
    assert bool((ds.x == 1).all()) and ds.y.tolist() == [0, 2, 1]
    assert ds.val_idx.tolist() == [1] and ds.num_classes == 5


def write_minimal_npz(path: Path, **changes) -> Path:
    arrays = dict(
        edge_index=np.array([[0, 1], [1, 2]]),
        x=np.zeros((3, 2), np.float32),
        y=np.array([0, 1, 1]),
        train_idx=np.array([0]),
        val_idx=np.array([1]),
        test_idx=np.array([2]),
    )
    arrays.update(changes)
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})
    return path


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"x": None}, r"missing key 'x' \(or its alias 'feat'\); keys present: \['edge_index'"),
        ({"y": None}, r"missing key 'y' \(or its alias 'label'\)"),
        ({"edge_index": None}, r"missing key 'edge_index'"),
        ({"val_idx": None}, r"missing key val_idx or val_mask or valid_idx or valid_mask"),
        ({"edge_index": np.array([[0, 1], [1, 3]])}, r"edge_index ids must lie in \[0, 3\)"),
        ({"edge_index": np.array([0, 1])}, r"edge_index must be an integer array of shape"),
        ({"test_idx": np.array([-1])}, r"test_idx ids must lie in \[0, 3\)"),
        ({"train_idx": None, "train_mask": np.ones(2, bool)}, r"train_mask must have shape \[3\]"),
        ({"train_idx": None, "train_mask": np.array([0, 2, 1])}, r"boolean \(or 0/1\) mask"),
        ({"y": np.array([0, 1])}, r"y must have shape \[3\]"),
        ({"y": np.array([0, -1, 1])}, r"labels must be >= 0"),
        ({"y": np.array([0.5, 1, 1])}, r"whole numbers"),
        ({"num_classes": 1}, r"num_classes is 1 but y holds label 1"),
        ({"x": np.zeros(3, np.float32)}, r"x must have shape \[N, F\]"),
        ({"name": np.array([1, 2])}, r"name must be a string scalar"),
    ],
)
def test_npz_rejects_bad_files(tmp_path: Path, changes: dict, match: str) -> None:
    path = write_minimal_npz(tmp_path / "bad.npz", **changes)
    with pytest.raises(ValueError, match=r"read_npz: .*bad\.npz: .*" + match):
        read_npz(path)


def test_npz_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"read_npz: no such file: .*none\.npz"):
        read_npz(tmp_path / "none.npz")


def test_npz_integer_features_become_float(tmp_path: Path) -> None:
    ds = read_npz(write_minimal_npz(tmp_path / "d.npz", x=np.ones((3, 2), np.int64)))
    assert ds.x.dtype == torch.float32 and ds.num_classes == 2 and ds.name == "d"
    assert read_npz(write_minimal_npz(tmp_path / "e.npz", name=np.array(b"bytes"))).name == "bytes"


# --------------------------------------------------------------------------- R-MAT features


def test_rmat_features_shapes_and_edges() -> None:
    ds = rmat_node_classification("tiny", seed=5)
    assert ds.num_nodes == 1000 and ds.num_features == 100 and ds.num_classes == 16
    assert ds.x.dtype == torch.float32 and ds.y.dtype == torch.int64
    # The edges are rmat_edge_index's, untouched (loops and repeats included).
    assert torch.equal(ds.edge_index, rmat_edge_index(**{**RMAT_PRESETS["tiny"], "seed": 5}))
    assert ds.name == "rmat-tiny-s5"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_rmat_features_dtypes(dtype: torch.dtype) -> None:
    reference = rmat_node_classification("tiny", num_features=8, seed=1)
    ds = rmat_node_classification("tiny", num_features=8, seed=1, dtype=dtype)
    assert ds.x.dtype == dtype
    # Same draws in every dtype: the features are the float32 ones rounded.
    assert torch.equal(ds.x, reference.x.to(dtype))
    for field in ("edge_index", "y", "train_idx", "val_idx", "test_idx"):
        assert torch.equal(getattr(ds, field), getattr(reference, field)), field


def test_rmat_features_deterministic_and_seeded() -> None:
    a = rmat_node_classification("tiny", num_features=8, seed=3)
    b = rmat_node_classification("tiny", num_features=8, seed=3)
    c = rmat_node_classification("tiny", num_features=8, seed=4)
    assert_same_dataset(a, b)
    for field in FIELDS:
        assert not torch.equal(getattr(a, field), getattr(c, field)), field


def test_rmat_features_chunks_do_not_change_the_result(monkeypatch) -> None:
    """Chunked generation writes every row exactly once (chunk size > N vs. several chunks)."""
    from fastgl.data import rmat_features

    ds = rmat_node_classification("tiny", num_features=4, dtype=torch.float16)
    monkeypatch.setattr(rmat_features, "CHUNK_ROWS", 300)
    chunked = rmat_node_classification("tiny", num_features=4, dtype=torch.float16)
    assert chunked.x.shape == ds.x.shape and bool(torch.isfinite(chunked.x).all())
    assert torch.equal(chunked.y, ds.y) and torch.equal(chunked.train_idx, ds.train_idx)
    # Class means agree (the noise draws may be laid out differently across chunk boundaries).
    for c in range(ds.num_classes):
        diff = chunked.x[ds.y == c].float().mean(0) - ds.x[ds.y == c].float().mean(0)
        assert float(diff.abs().max()) < 1.0


def test_rmat_features_split_and_labels() -> None:
    ds = rmat_node_classification("tiny")
    parts = (ds.train_idx, ds.val_idx, ds.test_idx)
    assert [p.numel() for p in parts] == [80, 20, 900]
    assert all(bool((p[1:] > p[:-1]).all()) for p in parts)  # sorted, no repeats
    assert torch.equal(torch.cat(parts).sort().values, torch.arange(ds.num_nodes))
    assert int(ds.y.min()) >= 0 and int(ds.y.max()) < ds.num_classes
    sizes = torch.bincount(ds.y, minlength=ds.num_classes)
    assert int(sizes.max() - sizes.min()) <= 1  # balanced


def test_rmat_features_leave_global_rng_alone() -> None:
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    rmat_node_classification("tiny", num_features=4)
    assert torch.equal(torch.rand(3), expected)


def nearest_centroid_accuracy(ds: NodeDataset) -> float:
    """Test accuracy of classifying each node by the nearest class mean of the training features."""
    train_x, train_y = ds.x[ds.train_idx], ds.y[ds.train_idx]
    centroids = torch.stack([train_x[train_y == c].mean(0) for c in range(ds.num_classes)])
    predicted = torch.cdist(ds.x[ds.test_idx], centroids).argmin(1)
    return (predicted == ds.y[ds.test_idx]).double().mean().item()


def test_rmat_features_carry_class_signal() -> None:
    split = dict(train_fraction=0.5, val_fraction=0.0)
    # Chance is 1/16; about 0.8 measured (the "small" preset with 8 % training nodes: 0.84).
    assert nearest_centroid_accuracy(rmat_node_classification("tiny", **split)) > 0.6
    # Without the class signal the same classifier is at chance.
    flat = rmat_node_classification("tiny", signal=0.0, **split)
    assert nearest_centroid_accuracy(flat) < 0.15


def test_rmat_features_preset_dict_and_overrides() -> None:
    ds = rmat_node_classification(
        dict(scale=8, num_edges=600), num_nodes=200, num_features=3, num_classes=5, seed=2
    )
    assert (ds.num_nodes, ds.num_edges, ds.num_features, ds.num_classes) == (200, 600, 3, 5)
    assert torch.equal(ds.edge_index, rmat_edge_index(8, num_edges=600, num_nodes=200, seed=2))
    assert ds.name == "rmat-n200-e600-s2"
    # A seed inside a dict preset is the edges' seed.
    own = rmat_node_classification(dict(scale=8, num_edges=600, seed=9), num_features=3, seed=2)
    assert torch.equal(own.edge_index, rmat_edge_index(8, num_edges=600, seed=9))


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (("huge",), {}),
        (("tiny",), {"num_classes": 0}),
        (("tiny",), {"num_features": 0}),
        (("tiny",), {"train_fraction": 0.9, "val_fraction": 0.2}),
        (("tiny",), {"train_fraction": -0.1}),
        (("tiny",), {"dtype": torch.int32}),
        (("tiny",), {"signal": -1.0}),
        ((dict(num_edges=10),), {}),
    ],
)
def test_rmat_features_reject_bad_arguments(args: tuple, kwargs: dict) -> None:
    with pytest.raises(ValueError, match="rmat_node_classification"):
        rmat_node_classification(*args, **kwargs)


def test_rmat_features_reject_unknown_override() -> None:
    with pytest.raises(TypeError, match=r"rmat_node_classification: unknown argument.*'avg_deg'"):
        rmat_node_classification("tiny", avg_deg=3)


def test_save_npz_names_swapped_or_wrong_arguments(small_dataset, tmp_path):
    path = tmp_path / "d.npz"
    with pytest.raises(TypeError, match=r"save_npz\(dataset, path\): the arguments are swapped"):
        save_npz(path, small_dataset)
    with pytest.raises(TypeError, match="dataset must be a NodeDataset, got dict"):
        save_npz({}, path)
    assert not path.exists()
