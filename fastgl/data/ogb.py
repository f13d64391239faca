"""Reader for OGB node-property-prediction datasets in their published raw layout, without ``ogb``.

A dataset directory as OGB downloads and unpacks it (``dataset/ogbn_arxiv``, ``ogbn_products``)
holds gzipped CSV files without a header:

* ``raw/edge.csv.gz``: one edge ``src,dst`` a line (``E`` lines);
* ``raw/node-feat.csv.gz``: one line of ``F`` comma-separated floats per node, in node order;
* ``raw/node-label.csv.gz``: one label per node, in node order. OGB writes them as ints (``3``)
  or, when some nodes are unlabeled, as floats (``3.0``) with ``nan`` for the unlabeled ones;
* ``raw/num-node-list.csv.gz`` (optional): one int, the node count ``N``. Without it ``N`` is the
  number of feature rows;
* ``split/<scheme>/{train,valid,test}.csv.gz``: one node id a line (``scheme`` is ``time`` for
  ogbn-arxiv, ``sales_ranking`` for ogbn-products).

Blank lines are skipped, as pandas (which OGB's own loader uses) does. Heterogeneous (ogbn-mag)
and multi-label (ogbn-proteins) datasets do not fit a :class:`NodeDataset` and are refused with
an error saying so.

Parsing: the files are decompressed with ``zlib`` in blocks of :data:`BLOCK_BYTES` cut at line
ends, and each block goes through numpy's C CSV parser, ``np.loadtxt`` (rewritten in C in numpy
1.23: on numpy 2.4 it parses floats 1.5x faster than ``np.fromstring(text, sep=",")``, which
besides no longer accepts newlines as separators, and it checks the column count of every line).
Only one block of text is in memory at a time. Measured on a busy two-core machine (numpy 2.4,
files written by ``np.savetxt``, gzip level 1), decompression included:

* edges: 1,000,000 lines ``src,dst`` in 0.15 s (6.5M lines/s; 2M lines with ids up to 2.4M:
  6.0M lines/s), so ogbn-products' 61.9M edge lines take about 10 s;
* features: 200,000 rows x 100 floats written as ``%.6f`` (190 MB of text) in 1.9 s, 10.5M
  values/s, so ogbn-products' 2.45M x 100 take about 25 s. Half of it is decompression.

Memory: features go straight into the returned tensor when ``num-node-list.csv.gz`` gives ``N``
(otherwise the blocks are concatenated once: twice the size of ``x`` at the peak); the edge list
peaks at twice its final size (``2 x 16 E`` bytes) before :func:`to_simple_undirected`.
"""

from __future__ import annotations

import io
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from fastgl.data.dataset import NodeDataset
from fastgl.data.utils import to_simple_undirected

__all__ = ["BLOCK_BYTES", "OGB_SPLITS", "read_ogb_node_dir"]

_WHERE = "read_ogb_node_dir"

#: Decompressed bytes handed to the parser at a time (cut back to the last line end).
BLOCK_BYTES = 64 << 20
# Compressed bytes read from disk at a time.
_COMPRESSED_CHUNK = 4 << 20

#: OGB split file stem -> :class:`NodeDataset` field.
OGB_SPLITS = (("train", "train_idx"), ("valid", "val_idx"), ("test", "test_idx"))


def read_ogb_node_dir(
    root: str | Path,
    *,
    scheme: str | None = None,
    undirected: bool = True,
    dtype: torch.dtype = torch.float32,
) -> NodeDataset:
    """Read an OGB node-property-prediction dataset from its raw directory (no ``ogb`` needed).

    Args:
        root: the dataset directory, holding ``raw/`` and ``split/`` (see the module docstring),
            e.g. ``dataset/ogbn_arxiv``.
        scheme: subfolder of ``root/split`` to take the split from (``"time"``,
            ``"sales_ranking"``). ``None`` takes the only one there is.
        undirected: make the graph simple and undirected with :func:`to_simple_undirected`
            (both directions, no self loops, no duplicates, sorted by (source, target)): what
            PyG and DGL users do with ogbn-arxiv, whose raw edges are directed citations. For
            ogbn-products, whose raw file lists each undirected edge once, OGB's own loader adds
            the reverse edges; this gives the same edges, less any self loops or repeats.
            ``False`` keeps the edges exactly as listed in ``edge.csv.gz``.
        dtype: floating dtype of the features (parsed as float32, converted block by block).

    Returns:
        A :class:`NodeDataset` named after the directory (``ogbn_arxiv`` becomes
        ``"ogbn-arxiv"``, OGB's own name): int64 ``edge_index`` ``[2, E]`` (row 0 = source),
        ``x`` ``[N, F]`` in ``dtype``, int64 ``y`` ``[N]``, the split ids in file order and
        ``num_classes = max label + 1``. Unlabeled nodes (``nan`` labels) get label 0, which
        :class:`NodeDataset` needs (labels lie in ``[0, num_classes)``), and are kept out of
        every split: a split file listing one loses it, with a ``UserWarning``.

    Raises:
        FileNotFoundError: a needed file is absent (every absent file is named), or ``split/``
            holds no scheme folder.
        ValueError: several schemes and no ``scheme``; a line with the wrong number of values
            or a value that does not parse (file and line named); a node id out of range; a
            label count, feature row count and ``num-node-list`` that disagree; a label that is
            negative or not an integer; several label columns (multi-label datasets).

    Example:
        >>> ds = read_ogb_node_dir("dataset/ogbn_arxiv")  # doctest: +SKIP
        >>> ds.num_nodes, ds.num_features, ds.num_classes  # doctest: +SKIP
        (169343, 128, 40)
    """
    root = Path(root)
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"{_WHERE}: dtype must be a floating torch.dtype, got {dtype!r}")
    if not root.is_dir():
        raise FileNotFoundError(f"{_WHERE}: no such dataset directory: {root}")
    raw = root / "raw"
    paths = {part: raw / f"{part}.csv.gz" for part in ("edge", "node-feat", "node-label")}
    _require_files(root, list(paths.values()))
    split_dir = _split_dir(root, scheme)
    split_paths = {field: split_dir / f"{stem}.csv.gz" for stem, field in OGB_SPLITS}
    _require_files(root, list(split_paths.values()))

    count_path = raw / "num-node-list.csv.gz"
    num_nodes = _read_num_nodes(count_path) if count_path.is_file() else None
    x = _read_features(paths["node-feat"], num_nodes, dtype)
    num_nodes = int(x.size(0))
    y, labeled = _read_labels(paths["node-label"], num_nodes)
    edge_index = _read_edges(paths["edge"], num_nodes)
    splits = {}
    for field, path in split_paths.items():
        splits[field] = _read_split(path, num_nodes, labeled)
    if undirected:
        edge_index = to_simple_undirected(edge_index, num_nodes)

    num_classes = int(y[labeled].max()) + 1 if bool(labeled.any()) else 1
    return NodeDataset(
        edge_index=edge_index,
        x=x,
        y=y,
        num_classes=num_classes,
        name=_dataset_name(root),
        **splits,
    )


def _dataset_name(root: Path) -> str:
    """Directory name; OGB's folder ``ogbn_arxiv`` is the dataset ``ogbn-arxiv``."""
    name = root.resolve().name
    return name.replace("_", "-") if name.startswith("ogbn_") else name


def _split_dir(root: Path, scheme: str | None) -> Path:
    """``root/split/<scheme>``; with ``scheme=None`` the only folder under ``root/split``."""
    split_root = root / "split"
    choices = []
    if split_root.is_dir():
        choices = sorted(p.name for p in split_root.iterdir() if p.is_dir())
    if scheme is not None:
        if scheme not in choices:
            raise FileNotFoundError(
                f"{_WHERE}: split scheme {scheme!r} not found: no folder {split_root / scheme}; "
                f"schemes there: {choices}"
            )
        return split_root / scheme
    if not choices:
        raise FileNotFoundError(
            f"{_WHERE}: expected one split scheme folder under {split_root}, found none"
        )
    if len(choices) > 1:
        raise ValueError(
            f"{_WHERE}: {split_root} holds {len(choices)} split schemes {choices}; "
            f"pass scheme= to pick one"
        )
    return split_root / choices[0]


def _require_files(root: Path, paths: list[Path]) -> None:
    """Raise ``FileNotFoundError`` naming every absent file (and a hint for known misfits)."""
    missing = [path for path in paths if not path.is_file()]
    if not missing:
        return
    hint = ""
    if (root / "raw" / "relations").is_dir() or (root / "raw" / "node-feat").is_dir():
        hint = " (this looks like a heterogeneous dataset such as ogbn-mag, which is not supported)"
    raise FileNotFoundError(
        f"{_WHERE}: dataset {str(root)!r} needs {len(missing)} file(s) that are not there: "
        f"{', '.join(str(path) for path in missing)}{hint}"
    )


def _read_num_nodes(path: Path) -> int:
    counts = _read_table(path, np.int64, ncols=1)
    if counts.size != 1 or int(counts[0, 0]) < 0:
        raise ValueError(
            f"{_WHERE}: {path} must hold one non-negative node count (a node-prediction dataset "
            f"has one graph), got {counts.reshape(-1)[:5].tolist()}"
            f"{' ...' if counts.size > 5 else ''}"
        )
    return int(counts[0, 0])


def _read_features(path: Path, num_nodes: int | None, dtype: torch.dtype) -> Tensor:
    """``[N, F]`` features in ``dtype``, filled in place into one tensor when ``N`` is known."""
    out: Tensor | None = None
    parts: list[Tensor] = []
    num_rows = 0
    ncols: int | None = None
    for block in _iter_table(path, np.float32):
        ncols = block.shape[1] if ncols is None else ncols
        rows = torch.from_numpy(block)
        if num_nodes is not None:
            if num_rows + rows.size(0) > num_nodes:
                raise ValueError(
                    f"{_WHERE}: {path} has more than the {num_nodes} feature rows that "
                    f"num-node-list.csv.gz announces"
                )
            if out is None:
                out = torch.empty(num_nodes, ncols, dtype=dtype)
            out[num_rows : num_rows + rows.size(0)].copy_(rows)
        else:
            parts.append(rows.to(dtype))
        num_rows += rows.size(0)
    if num_rows == 0:
        raise ValueError(f"{_WHERE}: {path} holds no feature rows")
    if num_nodes is not None and num_rows != num_nodes:
        raise ValueError(
            f"{_WHERE}: {path} has {num_rows} feature rows, but num-node-list.csv.gz announces "
            f"{num_nodes} nodes"
        )
    if out is not None:
        return out
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def _read_labels(path: Path, num_nodes: int) -> tuple[Tensor, Tensor]:
    """int64 labels ``[N]`` (unlabeled -> 0) and the bool mask of labeled nodes."""
    values = _read_table(path, np.float64)
    if values.shape[1] != 1:
        raise ValueError(
            f"{_WHERE}: {path} must hold one label per line, got {values.shape[1]} columns "
            f"(multi-label datasets such as ogbn-proteins are not supported)"
        )
    values = values[:, 0]
    if values.size != num_nodes:
        raise ValueError(
            f"{_WHERE}: {path} has {values.size} labels for {num_nodes} nodes (one per node "
            f"expected)"
        )
    labeled = ~np.isnan(values)
    known = values[labeled]
    bad = (known < 0) | (known != np.round(known))
    if bad.any():
        node = int(np.flatnonzero(labeled)[np.argmax(bad)])
        raise ValueError(
            f"{_WHERE}: {path}: labels must be non-negative integers (or nan for unlabeled), "
            f"got {values[node]!r} for node {node}"
        )
    y = np.zeros(num_nodes, dtype=np.int64)
    y[labeled] = known.astype(np.int64)
    return torch.from_numpy(y), torch.from_numpy(labeled)


def _read_edges(path: Path, num_nodes: int) -> Tensor:
    """int64 ``[2, E]`` edges as listed (row 0 = source), ids checked against ``num_nodes``."""
    parts = [block.T.copy() for block in _iter_table(path, np.int64, ncols=2)]
    edges = np.concatenate(parts, axis=1) if parts else np.zeros((2, 0), dtype=np.int64)
    del parts
    _check_ids(edges, num_nodes, path, "edge endpoint")
    return torch.from_numpy(edges)


def _read_split(path: Path, num_nodes: int, labeled: Tensor) -> Tensor:
    """int64 node ids of one split, in file order, without unlabeled nodes."""
    ids = _read_table(path, np.int64, ncols=1).reshape(-1)
    _check_ids(ids, num_nodes, path, "node id")
    idx = torch.from_numpy(ids)
    keep = labeled[idx]
    if not bool(keep.all()):
        warnings.warn(
            f"{_WHERE}: {path} lists {int((~keep).sum())} unlabeled node(s) (label nan); they "
            f"are left out of the split",
            stacklevel=3,
        )
        idx = idx[keep]
    return idx


def _check_ids(ids: np.ndarray, num_nodes: int, path: Path, what: str) -> None:
    if ids.size and (ids.min() < 0 or ids.max() >= num_nodes):
        bad = ids[(ids < 0) | (ids >= num_nodes)].reshape(-1)[0]
        raise ValueError(
            f"{_WHERE}: {path}: {what} {int(bad)} out of range for a graph of {num_nodes} nodes "
            f"(ids range over [{int(ids.min())}, {int(ids.max())}])"
        )


def _read_table(path: Path, dtype: type, ncols: int | None = None) -> np.ndarray:
    """The whole file as one ``[rows, cols]`` array (for the small files)."""
    blocks = list(_iter_table(path, dtype, ncols))
    if not blocks:
        return np.zeros((0, ncols or 1), dtype=dtype)
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


def _iter_table(path: Path, dtype: type, ncols: int | None = None) -> Iterator[np.ndarray]:
    """Yield ``[rows, cols]`` arrays, block by block; every line must have ``cols`` values.

    ``ncols=None`` takes the column count of the first line.
    """
    for first_line, text in _iter_line_blocks(path):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "input contained no data"
                block = np.loadtxt(
                    io.BytesIO(text), delimiter=",", dtype=dtype, comments=None, ndmin=2
                )
        except ValueError as error:
            raise _bad_line_error(path, text, first_line, ncols, dtype) or ValueError(
                f"{_WHERE}: {path} (lines from {first_line}): {error}"
            ) from None
        if block.shape[0] == 0:
            continue
        if ncols is None:
            ncols = block.shape[1]
        elif block.shape[1] != ncols:
            raise _bad_line_error(path, text, first_line, ncols, dtype) or ValueError(
                f"{_WHERE}: {path} (lines from {first_line}): expected {ncols} values a line, "
                f"got {block.shape[1]}"
            )
        yield block


def _iter_line_blocks(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(number of its first line, text)`` of about :data:`BLOCK_BYTES`, cut at line ends."""
    line = 1
    carry = b""
    for data in _iter_gunzip(path):
        if carry:
            data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # one line longer than a block: keep reading
            carry = data
            continue
        carry = data[cut:]
        text = data[:cut]
        del data
        yield line, text
        line += text.count(b"\n")
    if carry.strip():
        yield line, carry + b"\n"


def _iter_gunzip(path: Path) -> Iterator[bytes]:
    """Decompressed pieces of at most :data:`BLOCK_BYTES` of a (possibly multi-member) gzip file.

    ``zlib`` directly, fed large compressed chunks: about 1.3x the speed of ``gzip.open().read``.
    """
    decompressor = zlib.decompressobj(wbits=31)  # 31: expect a gzip header and trailer
    fed = False  # whether the current gzip member has started
    pending = b""
    try:
        with open(path, "rb") as f:
            while True:
                if not pending:
                    pending = f.read(_COMPRESSED_CHUNK)
                    if not pending:
                        break
                fed = True
                piece = decompressor.decompress(pending, BLOCK_BYTES)
                pending = decompressor.unconsumed_tail
                if decompressor.eof:  # end of one gzip member; another may follow
                    pending = decompressor.unused_data + pending
                    decompressor = zlib.decompressobj(wbits=31)
                    fed = False
                if piece:
                    yield piece
    except zlib.error as error:
        raise ValueError(f"{_WHERE}: {path} is not a valid gzip file ({error})") from None
    if fed:
        raise ValueError(f"{_WHERE}: {path} is truncated (its gzip stream ends early)")


def _bad_line_error(
    path: Path, text: bytes, first_line: int, ncols: int | None, dtype: type
) -> ValueError | None:
    """Find the first bad line of a block that failed to parse (slow; only on the error path)."""
    parse = int if np.issubdtype(dtype, np.integer) else float
    for offset, line in enumerate(text.split(b"\n")):
        if not line.strip(b"\r"):
            continue  # blank lines are skipped, as by the parser
        fields = line.rstrip(b"\r").split(b",")
        where = f"{_WHERE}: {path}, line {first_line + offset}"
        if ncols is None:
            ncols = len(fields)
        if len(fields) != ncols:
            return ValueError(
                f"{where}: expected {ncols} comma-separated values, got {len(fields)}: "
                f"{_preview(line)}"
            )
        for field in fields:
            try:
                parse(field)
            except ValueError:
                return ValueError(
                    f"{where}: expected {'an integer' if parse is int else 'a number'}, got "
                    f"{field.decode('latin-1')!r}: {_preview(line)}"
                )
    return None


def _preview(line: bytes, limit: int = 80) -> str:
    text = line.decode("latin-1")
    return repr(text if len(text) <= limit else text[:limit] + "...")
