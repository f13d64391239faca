"""Node features and labels for mini-batch training, and the assembly of a batch's buffer.

A :class:`FeatureStore` holds the feature matrix in host memory (pinned when the device is a
GPU), on the device, or split: the rows of the hottest nodes (highest in-degree, GNNLab-style)
in a device cache sized by a memory budget, the rest on the host. :meth:`FeatureStore.assemble`
builds the feature buffer of a mini-batch, row ``i`` = features of ``nodes[i]``, from three
sources in this order:

1. the previous batch's buffer (FastGL's Match: rows it already holds are copied on the device);
2. the device cache;
3. the host: a parallel compiled gather into a pinned staging buffer, then an asynchronous
   transfer on the loader's stream (``transfer="copy"``), or a zero-copy gather in which the GPU
   reads the rows from the pinned feature matrix itself (``transfer="uva"``).

Whatever the mix, the buffer equals ``x[nodes]`` row for row. Device memory: the two batch
buffers (previous and next) and the cache, nothing else: when every row is loaded, the staging
buffer is copied into the new buffer by the copy engine; when some rows are reused or cached,
the GPU reads the staged rows (contiguous, pinned) and writes each to its row itself, so no
device staging area is needed. With ``device="cpu"`` the same path runs and only the copy
engine differs: rows are gathered straight into the buffer.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import torch
from torch import Tensor

from fastgl.loader.reuse import match
from fastgl.loader.stats import BatchRecord
from fastgl.ops import gather_rows

Cache = int | float | str | None
TRANSFERS = ("copy", "uva")
SLOT_BYTES = 8  # one int64 cache slot per node


@dataclass(frozen=True)
class FeatureBuffer:
    """A batch's features on the device: ``x[i]`` holds the features of ``nodes[i]``."""

    nodes: Tensor
    x: Tensor


class FeatureStore:
    """Features (and labels) of every node, placed for fast mini-batch loading.

    Args:
        x: ``[N, ...]`` float features (fp32, fp16 or bf16), on the CPU (or already on
            ``device``, which then holds them all).
        y: optional ``[N]`` labels; kept on ``device`` (small next to the features).
        device: where batches are assembled and computed.
        cache: device memory for features: ``None`` or ``0`` keeps them on the host; ``"all"``
            puts them all on the device; an ``int`` is a budget in bytes (the cache also spends
            8 bytes per node on its slot map) and a ``float`` in ``(0, 1]`` a fraction of the
            rows; either caches the hottest nodes by ``hotness``.
        hotness: ``[N]`` score choosing the cached nodes, highest first (the in-degree;
            :class:`~fastgl.loader.DataLoader` passes it). Needed for a partial cache.
        dtype: store the features in this dtype (``torch.float16``/``bfloat16`` halve the
            traffic); default: keep ``x``'s.
        transfer: ``"copy"`` (pinned staging + asynchronous copy) or ``"uva"`` (zero-copy
            gather by the GPU from pinned host memory). Ignored on the CPU.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> x, y = torch.randn(4, 8), torch.tensor([0, 1, 1, 0])
        >>> # cache=0.5: the hottest half of the rows on the device (device="cuda": the GPU)
        >>> store = FeatureStore(x, y, cache=0.5, hotness=graph.in_degrees())
        >>> nodes, nodes2 = torch.tensor([1, 2, 0]), torch.tensor([0, 3, 1])
        >>> buf = store.assemble(nodes)              # == x[nodes] on the device
        >>> torch.equal(buf.x, x[nodes])
        True
        >>> buf2 = store.assemble(nodes2, previous=buf)   # reuses the rows they share
        >>> torch.equal(buf2.x, x[nodes2])
        True
    """

    def __init__(
        self,
        x: Tensor,
        y: Tensor | None = None,
        *,
        device="cpu",
        cache: Cache = None,
        hotness: Tensor | None = None,
        dtype: torch.dtype | None = None,
        transfer: str = "copy",
    ) -> None:
        self.device = _with_index(torch.device(device))
        _check_store_args(x, y, self.device, transfer, dtype)
        x = x.to(dtype) if dtype is not None else x
        self.num_nodes = int(x.shape[0])
        self.row_shape = tuple(x.shape[1:])
        self.dtype = x.dtype
        self.transfer = transfer
        self.y = None if y is None else y.to(self.device)
        # One pinned staging buffer per loading thread: two loaders may share a store.
        self._thread_local = threading.local()
        self.host_x: Tensor | None = None  # rows not on the device live here
        self.device_x: Tensor | None = None  # all rows, when they fit
        self.cache_x: Tensor | None = None  # the hot rows of a partial cache
        self.cache_slot: Tensor | None = None  # node -> row of cache_x, or -1
        # On the CPU, host and device memory are one: x is the host store, and a cache (or
        # "all") is a separate copy, so the CPU runs the same path as a GPU.
        on_device = x.device == self.device and self.device.type != "cpu"
        rows = _cached_rows(cache, self.num_nodes, self.row_bytes, on_device)
        if rows >= self.num_nodes:
            self.device_x = x.to(self.device).contiguous()
            return
        self.host_x = x.contiguous()
        if self.device.type == "cuda" and not self.host_x.is_pinned():
            self.host_x = self.host_x.pin_memory()
        if rows > 0:
            self._build_cache(rows, hotness)

    @property
    def row_bytes(self) -> int:
        """Bytes of one node's features."""
        return math.prod(self.row_shape) * self.dtype.itemsize

    @property
    def num_cached(self) -> int:
        """Rows held on the device (all of them when the features fit)."""
        if self.device_x is not None:
            return self.num_nodes
        return 0 if self.cache_x is None else int(self.cache_x.shape[0])

    def labels(self, seeds: Tensor) -> Tensor | None:
        """Labels of ``seeds`` on the device (``None`` without labels)."""
        return None if self.y is None else self.y[seeds.to(self.device)]

    def assemble(
        self,
        nodes: Tensor,
        previous: FeatureBuffer | None = None,
        record: BatchRecord | None = None,
    ) -> FeatureBuffer:
        """The features of ``nodes`` (distinct ids) on the device, reusing ``previous``'s rows.

        ``record``, when given, receives the row counts, bytes moved and match degree.
        """
        nodes = nodes.to(torch.int64)
        record = record if record is not None else BatchRecord()
        out = torch.empty((nodes.numel(),) + self.row_shape, dtype=self.dtype, device=self.device)
        pending_nodes, pending_rows = nodes, None  # rows None: all of them, in order
        if previous is not None:
            found = match(previous.nodes.to(nodes.device), nodes)
            self._copy(previous.x, found.reuse_from, out, found.reuse_rows)
            pending_nodes, pending_rows = found.load_nodes, found.load_rows
            record.rows_reused = found.reuse_rows.numel()
            smaller = min(previous.nodes.numel(), nodes.numel())
            record.match_degree = record.rows_reused / smaller if smaller else 0.0
        if self.device_x is not None:
            self._copy(self.device_x, pending_nodes, out, pending_rows)
            record.rows_cached = pending_nodes.numel()
        else:
            if self.cache_slot is not None:
                pending_nodes, pending_rows = self._read_cache(
                    pending_nodes, pending_rows, out, record
                )
            self._load_from_host(pending_nodes, pending_rows, out)
            record.rows_loaded = pending_nodes.numel()
            record.bytes_h2d = record.rows_loaded * self.row_bytes
        record.num_nodes = nodes.numel()
        return FeatureBuffer(nodes=nodes, x=out)

    def _build_cache(self, rows: int, hotness: Tensor | None) -> None:
        if hotness is None or hotness.shape != (self.num_nodes,):
            raise ValueError(
                f"FeatureStore: a partial cache needs hotness of shape "
                f"[{self.num_nodes}] (e.g. in-degrees), got "
                f"{None if hotness is None else tuple(hotness.shape)}"
            )
        # Stable sort: among equally hot nodes the lower id is cached, so the choice is fixed.
        hot = torch.sort(hotness.cpu(), descending=True, stable=True).indices[:rows]
        self.cache_x = gather_rows(self.host_x, hot).to(self.device)
        self.cache_slot = torch.full((self.num_nodes,), -1, dtype=torch.int64, device=self.device)
        self.cache_slot[hot.to(self.device)] = torch.arange(rows, device=self.device)

    def _read_cache(
        self, nodes: Tensor, rows: Tensor | None, out: Tensor, record: BatchRecord
    ) -> tuple:
        """Copies the cached ones of ``nodes`` into ``out``; returns the rest and their rows."""
        rows = torch.arange(nodes.numel(), device=nodes.device) if rows is None else rows
        slot = self.cache_slot[nodes.to(self.device)]
        hit = slot >= 0
        self._copy(self.cache_x, slot[hit], out, rows.to(self.device)[hit])
        record.rows_cached = int(hit.sum())
        miss = ~hit.to(nodes.device)
        return nodes[miss], rows[miss]

    def _load_from_host(self, nodes: Tensor, rows: Tensor | None, out: Tensor) -> None:
        if nodes.numel() == 0:
            return
        if self.device.type == "cpu":
            gather_rows(self.host_x, nodes, out=out, out_index=rows)
        elif self.transfer == "uva":
            self._copy(self.host_x, nodes, out, rows)
        else:
            self._copy_through_staging(nodes, rows, out)

    def _copy_through_staging(self, nodes: Tensor, rows: Tensor | None, out: Tensor) -> None:
        """Parallel gather into pinned staging, then an asynchronous transfer on the current
        stream: the copy engine when the rows fill the buffer in order, else a kernel that reads
        the staged rows from pinned memory and scatters them (no device-side staging)."""
        staging = self._staging_rows(nodes.numel())
        gather_rows(self.host_x, nodes.cpu(), out=staging)
        if rows is None:
            out.copy_(staging, non_blocking=True)
        else:
            gather_rows(staging, None, out=out, out_index=rows.to(self.device))
        # The staging buffer is reused by the next batch: wait until this copy has read it.
        torch.cuda.current_stream(self.device).synchronize()

    def _staging_rows(self, count: int) -> Tensor:
        staging = getattr(self._thread_local, "staging", None)
        if staging is None or staging.shape[0] < count:
            capacity = max(count, 2 * (0 if staging is None else staging.shape[0]))
            staging = torch.empty((capacity,) + self.row_shape, dtype=self.dtype, pin_memory=True)
            self._thread_local.staging = staging
        return staging[:count]

    def _copy(
        self, source: Tensor, source_rows: Tensor, out: Tensor, out_rows: Tensor | None
    ) -> None:
        """``out[out_rows] = source[source_rows]`` with the indices moved to the device."""
        if source_rows.numel() == 0:
            return
        gather_rows(
            source,
            source_rows.to(self.device),
            out=out,
            out_index=None if out_rows is None else out_rows.to(self.device),
        )


def _with_index(device: torch.device) -> torch.device:
    """``cuda`` as ``cuda:<current device>``: tensors and the loader's thread agree on it."""
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def _cached_rows(cache: Cache, num_nodes: int, row_bytes: int, already_on_device: bool) -> int:
    """Rows the device holds for a ``cache`` setting (``num_nodes``: all of them)."""
    if already_on_device or cache == "all":
        return num_nodes
    if cache is None or cache == 0:
        return 0
    if isinstance(cache, bool) or not isinstance(cache, (int, float)):
        raise ValueError(
            f"FeatureStore: cache must be None, 'all', a byte budget (int) or a "
            f"fraction of the rows (float), got {cache!r}"
        )
    if isinstance(cache, float):
        if not 0.0 <= cache <= 1.0:
            raise ValueError(f"FeatureStore: a cache fraction must lie in [0, 1], got {cache}")
        return min(num_nodes, int(cache * num_nodes))
    if cache < 0:
        raise ValueError(f"FeatureStore: a cache budget must be >= 0 bytes, got {cache}")
    if cache >= num_nodes * row_bytes:
        return num_nodes  # everything fits: no slot map needed
    return max(0, (cache - num_nodes * SLOT_BYTES) // max(row_bytes, 1))


def _check_store_args(
    x: Tensor,
    y: Tensor | None,
    device: torch.device,
    transfer: str,
    dtype: torch.dtype | None,
) -> None:
    if not isinstance(x, Tensor) or x.dim() < 1:
        raise ValueError(f"FeatureStore: x must be a tensor [N, ...], got {type(x).__name__}")
    target = dtype or x.dtype
    if target not in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        raise ValueError(
            f"FeatureStore: features must be float32, float16, bfloat16 or float64, got {target}"
        )
    if y is not None and (y.dim() != 1 or y.shape[0] != x.shape[0]):
        raise ValueError(f"FeatureStore: y must have shape [{x.shape[0]}], got {tuple(y.shape)}")
    if transfer not in TRANSFERS:
        raise ValueError(f"FeatureStore: transfer must be one of {TRANSFERS}, got {transfer!r}")
    if x.device.type != "cpu" and x.device != device:
        raise ValueError(f"FeatureStore: x is on {x.device}; keep it on the CPU or on {device}")
