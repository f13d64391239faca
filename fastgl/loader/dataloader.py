"""The training pipeline: sample a window of mini-batches, reorder them, assemble each one's
features with Match while the previous one computes, and measure every phase.

One epoch, for every window of ``reorder`` batches:

1. **sample** the window in one :meth:`~fastgl.NeighborSampler.sample_batches` call (one
   compiled call; each hop draws and relabels with Fused-Map in one fused pass; the layer-wise
   samplers of :mod:`fastgl.sampling.layer` draw each layer of the window in one call);
2. **reorder** it with Algorithm 1 of FastGL (ASPLOS '24, §4.1) when the window holds more than
   one batch;
3. for each batch in that order, **load**: :meth:`FeatureStore.assemble` builds its feature
   buffer from the previous batch's buffer (Match), the device cache and the host.

With ``prefetch=True`` (the default) this runs in a background thread — on a side CUDA stream
on a GPU — while the caller computes on the batch before; at most two batches' buffers exist at
once (the one being computed and the one being assembled). The caller marks its compute with
:meth:`DataLoader.compute`, so the records hold every phase (:class:`~fastgl.loader.stats
.BatchRecord`).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import Tensor

from fastgl.graph import Block, CSCGraph
from fastgl.loader.features import Cache, FeatureBuffer, FeatureStore
from fastgl.loader.reuse import MAX_WINDOW, greedy_order, match_degree
from fastgl.loader.stats import BatchRecord, PipelineStats
from fastgl.sampling import (
    LayerSampledSubgraph,
    NeighborSampler,
    SampledSubgraph,
    SubgraphSampler,
)

Sample = SampledSubgraph | LayerSampledSubgraph


class Sampler(Protocol):
    """What the loader draws batches with: fastgl's homogeneous samplers."""

    graph: CSCGraph

    def sample_batches(
        self, seed_batches: Sequence[Tensor], generator: torch.Generator | None = None
    ) -> list[Sample]: ...


@dataclass
class MiniBatch:
    """One mini-batch, ready for the model.

    Attributes:
        nodes: global ids of the sampled nodes, seeds first (rows of ``x``).
        blocks: message-flow graphs on the device, input layer first.
        x: ``[len(nodes), ...]`` features of ``nodes`` on the device.
        y: labels of the seeds on the device (``None`` without labels).
        batch_size: number of seeds (the first rows of the model's output).
        record: this batch's measurements (filled in as the pipeline goes).
        ready: on a GPU with prefetching, the event after which the batch's tensors are ready
            (the loader makes the stream current at hand-over wait for it: compute on that one).

    Treat ``x`` as read-only: the next batch copies the rows it shares with this one from it
    (Match), so an in-place change would leak into the next batch.
    """

    nodes: Tensor
    blocks: list[Block]
    x: Tensor
    y: Tensor | None
    batch_size: int
    record: BatchRecord
    ready: object | None = field(default=None, repr=False)

    @property
    def seeds(self) -> Tensor:
        """Global ids of the seeds."""
        return self.nodes[: self.batch_size]


class DataLoader:
    """Mini-batches of sampled subgraphs with their features, prefetched with Match-Reorder.

    Args:
        graph: the graph the sampler draws from (its in-degrees pick the cached nodes).
        features: ``[N, ...]`` node features, or a ready :class:`FeatureStore` (then ``labels``,
            ``cache``, ``dtype`` and ``transfer`` come from it).
        labels: ``[N]`` node labels, or ``None``.
        seeds: 1-D ids of the training (or evaluation) nodes, or a boolean mask of ``N``.
        sampler: a :class:`~fastgl.NeighborSampler` or a layer-wise sampler
            (:class:`~fastgl.sampling.LayerSampler`, ``FastGCNSampler``, ``LADIESSampler``:
            anything with ``graph`` and ``sample_batches``), or fanouts (hop 1 first) to build a
            NeighborSampler;
            ``[]`` gives batches of the seeds alone, with no blocks (for a model that passes no
            messages; ``fastgl train`` needs a hop per layer and refuses it).
        batch_size: seeds per mini-batch.
        shuffle: permute the seeds every epoch.
        reorder: window of batches sampled together and reordered (Algorithm 1); 1 keeps the
            sampling order. At most 64.
        match: reuse the previous batch's rows (``False``: gather every row, the plain path).
        cache: device feature cache, see :class:`FeatureStore`.
        device: where batches go (``"cpu"`` runs the same pipeline without a copy engine).
        transfer: ``"copy"`` or ``"uva"``, see :class:`FeatureStore`.
        dtype: feature dtype on the device, see :class:`FeatureStore`.
        prefetch: assemble the next batch in a background thread while the caller computes.
        drop_last: skip a last batch smaller than ``batch_size``.
        generator: drives shuffling and sampling (a CPU generator; for a graph on the GPU it
            seeds one there). Default: one drawn from torch's global generator per epoch, so
            ``torch.manual_seed`` reproduces the run.

    Example:
        >>> import torch.nn.functional as F
        >>> import fastgl
        >>> ds = fastgl.data.synthetic_node_classification(num_nodes=200, num_features=8)
        >>> graph = fastgl.CSCGraph.from_edge_index(ds.edge_index, ds.num_nodes)
        >>> x, y, train_idx = ds.x, ds.y, ds.train_idx
        >>> model = fastgl.nn.GraphSAGE(8, 16, num_layers=3, out_channels=ds.num_classes)
        >>> optimizer = torch.optim.Adam(model.parameters())
        >>> loader = DataLoader(graph, x, y, train_idx, [15, 10, 5], batch_size=32,
        ...                     shuffle=True, reorder=8)   # device="cuda" to train on a GPU
        >>> for batch in loader:
        ...     with loader.compute():
        ...         loss = F.cross_entropy(model(batch.x, batch.blocks), batch.y)
        ...         loss.backward(); optimizer.step(); optimizer.zero_grad()
        >>> loader.stats.totals()["bytes_h2d"], loader.stats.phases()
        (..., {'sample_s': ..., 'idmap_s': ..., 'reorder_s': ..., 'load_s': ..., 'compute_s': ...,
               'wait_s': ...})
    """

    def __init__(
        self,
        graph: CSCGraph,
        features: Tensor | FeatureStore,
        labels: Tensor | None,
        seeds: Tensor,
        sampler: Sampler | Sequence[int],
        batch_size: int = 1024,
        shuffle: bool = False,
        reorder: int = 1,
        match: bool = True,
        cache: Cache = None,
        device: str | torch.device = "cpu",
        transfer: str = "copy",
        dtype: torch.dtype | None = None,
        prefetch: bool = True,
        drop_last: bool = False,
        generator: torch.Generator | None = None,
    ) -> None:
        if not hasattr(sampler, "sample_batches"):
            sampler = NeighborSampler(graph, list(sampler))
        if sampler.graph is not graph:
            raise ValueError("DataLoader: the sampler draws from another graph than `graph`")
        store = _feature_store(graph, features, labels, cache, device, dtype, transfer)
        self.seeds = _seed_ids(seeds, graph.num_nodes)
        _check_loader_args(batch_size, reorder, store, graph, generator)
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last
        self._set_pipeline(graph, store, sampler, reorder, match, prefetch, generator)

    def _set_pipeline(self, graph, store, sampler, reorder, match, prefetch, generator) -> None:
        self.graph, self.store, self.sampler = graph, store, sampler
        self.window, self.match, self.prefetch = reorder, match, prefetch
        self.generator = generator
        self.stats = PipelineStats()
        self._current: BatchRecord | None = None

    @property
    def device(self) -> torch.device:
        return self.store.device

    def __len__(self) -> int:
        full, rest = divmod(self.seeds.numel(), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self) -> Iterator[MiniBatch]:
        self.stats = PipelineStats()
        batches = self._produce(*self._epoch_generators())
        if not self.prefetch:
            return self._consume(batches)
        return self._consume(_Prefetcher(batches, self.device))

    @contextlib.contextmanager
    def compute(self):
        """Marks the caller's compute on the current batch (synchronizing the caller's stream at
        the end, so the time is the compute's, not the next phase's)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.device.type == "cuda":  # the caller's stream only, not the loader's
                torch.cuda.current_stream(self.device).synchronize()
            if self._current is not None:
                self._current.compute_s += time.perf_counter() - start

    def _consume(self, batches) -> Iterator[MiniBatch]:
        iterator = iter(batches)
        try:
            while True:
                start = time.perf_counter()
                try:
                    batch = next(iterator)
                except StopIteration:
                    return
                if self.prefetch:  # without it, waiting is the other phases themselves
                    batch.record.wait_s += time.perf_counter() - start
                self._current = batch.record
                self.stats.batches.append(batch.record)
                yield batch
        finally:
            self._current = None
            if hasattr(iterator, "close"):
                iterator.close()

    def _epoch_generators(self):
        """The epoch's shuffling (CPU) and sampling (graph's device) generators.

        Drawn here, in the caller's thread: the prefetch thread never touches torch's global
        generator, so ``torch.manual_seed`` reproduces an epoch whatever the threads do.
        """
        shuffle_gen = self.generator
        if shuffle_gen is None:
            shuffle_gen = torch.Generator().manual_seed(int(torch.randint(1 << 62, (1,))))
        if torch.device(shuffle_gen.device).type == self.graph.device.type:
            return shuffle_gen, shuffle_gen
        seed = int(torch.randint(1 << 62, (1,), generator=shuffle_gen))
        return shuffle_gen, torch.Generator(device=self.graph.device).manual_seed(seed)

    def _produce(
        self, shuffle_gen: torch.Generator, sample_gen: torch.Generator
    ) -> Iterator[MiniBatch]:
        """Sample, reorder and load, in order; runs in the prefetch thread when prefetching."""
        previous: FeatureBuffer | None = None
        for batch, sub, record in self._sampled(shuffle_gen, sample_gen):
            began = time.perf_counter()
            nodes = sub.nodes
            buffer = self.store.assemble(nodes, previous, record)
            blocks = [block.to(self.device) for block in sub.blocks]
            y = self.store.labels(batch)
            _synchronize(self.device)
            record.load_s += time.perf_counter() - began
            previous = buffer if self.match else None
            yield MiniBatch(
                nodes=nodes,
                blocks=blocks,
                x=buffer.x,
                y=y,
                batch_size=sub.batch_size,
                record=record,
            )

    def _sampled(self, shuffle_gen: torch.Generator, sample_gen: torch.Generator):
        """The epoch's (labelled nodes, subgraph, record) triples in execution order: the seed
        batches, sampled a window at a time."""
        seeds = self.seeds
        if self.shuffle:
            seeds = seeds[torch.randperm(seeds.numel(), generator=shuffle_gen)]
        chunks = list(seeds.split(self.batch_size))
        if self.drop_last and chunks and chunks[-1].numel() < self.batch_size:
            chunks.pop()
        for start in range(0, len(chunks), self.window):
            yield from self._sample_window(chunks[start : start + self.window], sample_gen)

    def _sample_window(self, chunks: list[Tensor], generator: torch.Generator):
        """The window's (seeds, subgraph, record) triples in execution order."""
        on_graph = [c.to(self.graph.device) for c in chunks]
        began = time.perf_counter()
        subs = self.sampler.sample_batches(on_graph, generator=generator)
        return _reordered(on_graph, subs, time.perf_counter() - began)


class SubgraphLoader(DataLoader):
    """Graph-sampling training's batches (Zeng et al., Accurate, Efficient and Scalable Graph
    Embedding, Algorithm 1): ``num_steps`` subgraphs per epoch from a
    :class:`~fastgl.sampling.SubgraphSampler` (GraphSAINT's or the frontier sampler), on the
    same pipeline as :class:`DataLoader`: a window of ``reorder`` subgraphs drawn in one call
    and reordered by match degree, features assembled with Match, prefetched, every phase
    measured.

    A batch's ``nodes`` are the subgraph's, all of them seeds (``batch_size`` is their number),
    ``y`` their labels, and ``blocks`` one block of the subgraph's edges for every layer to
    share (``batch.blocks * num_layers``); ``batch.blocks[0].eid`` are the edges' global ids,
    for per-edge weights such as GraphSAINT's ``edge_norm``.

    Example:
        >>> import fastgl
        >>> from fastgl.sampling import SAINTRandomWalkSampler
        >>> ds = fastgl.data.synthetic_node_classification(num_nodes=200, num_features=8)
        >>> graph = fastgl.CSCGraph.from_edge_index(ds.edge_index, ds.num_nodes)
        >>> sampler = SAINTRandomWalkSampler(graph, num_roots=20, walk_length=2)
        >>> loader = SubgraphLoader(graph, ds.x, ds.y, sampler, num_steps=4, reorder=4)
        >>> batches = list(loader)
        >>> len(batches), all(b.x.shape[0] == b.batch_size == b.y.numel() for b in batches)
        (4, True)
    """

    def __init__(
        self,
        graph: CSCGraph,
        features: Tensor | FeatureStore,
        labels: Tensor | None,
        sampler: SubgraphSampler,
        num_steps: int,
        reorder: int = 1,
        match: bool = True,
        cache: Cache = None,
        device: str | torch.device = "cpu",
        transfer: str = "copy",
        dtype: torch.dtype | None = None,
        prefetch: bool = True,
        generator: torch.Generator | None = None,
    ) -> None:
        if not isinstance(sampler, SubgraphSampler):
            raise TypeError(
                f"SubgraphLoader: sampler must be a fastgl.sampling.SubgraphSampler (GraphSAINT's "
                f"or the frontier sampler), got {type(sampler).__name__}"
            )
        if sampler.graph is not graph:
            raise ValueError("SubgraphLoader: the sampler draws from another graph than `graph`")
        if num_steps < 1:
            raise ValueError(f"SubgraphLoader: num_steps must be >= 1, got {num_steps}")
        store = _feature_store(graph, features, labels, cache, device, dtype, transfer)
        _check_loader_args(1, reorder, store, graph, generator)
        self.num_steps = num_steps
        self._set_pipeline(graph, store, sampler, reorder, match, prefetch, generator)

    def __len__(self) -> int:
        return self.num_steps

    def _sampled(self, shuffle_gen: torch.Generator, sample_gen: torch.Generator):
        for start in range(0, self.num_steps, self.window):
            began = time.perf_counter()
            subs = self.sampler.sample(min(self.window, self.num_steps - start), sample_gen)
            yield from _reordered([sub.nodes for sub in subs], subs, time.perf_counter() - began)


def _reordered(labelled: list[Tensor], subs: list[Sample], seconds: float):
    """A window's (labelled nodes, subgraph, record) triples, sampled in ``seconds``, in the
    order of Algorithm 1 of FastGL (ASPLOS '24, §4.1) when it holds more than one."""
    records = _sampling_records(seconds, subs)
    order = list(range(len(subs)))
    if len(subs) > 1:
        began = time.perf_counter()
        order = greedy_order(match_degree([sub.nodes for sub in subs]))
        share = (time.perf_counter() - began) / len(subs)
        for record in records:
            record.reorder_s = share
    return [(labelled[i], subs[i], records[i]) for i in order]


class _Prefetcher:
    """Runs a batch generator in a background thread, at most one batch ahead of the consumer.

    Two buffers at most: the producer may finish one batch beyond the one being consumed and
    starts the next only when the consumer asks for it. On a GPU the producer works on a side
    stream that first waits for the work the consumer's stream had queued when it asked for the
    first batch; the consumer's stream waits for each batch and its tensors are recorded on the
    consumer's stream so the caching allocator does not hand their memory out early.
    """

    _DONE = object()

    def __init__(self, batches: Iterator[MiniBatch], device: torch.device) -> None:
        self._batches = batches
        self._device = device
        self._queue: queue.Queue = queue.Queue()
        self._slots = threading.Semaphore(1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fastgl-prefetch", daemon=True)
        self._started = False
        self._inputs_written: torch.cuda.Event | None = None

    def __iter__(self):
        return self

    def __next__(self) -> MiniBatch:
        if not self._started:
            self._started = True
            if self._device.type == "cuda":
                # The side stream must not read what the consumer's stream is still writing
                # (features, the cache, a graph moved with non_blocking=True): it starts after
                # everything queued so far.
                self._inputs_written = torch.cuda.Event()
                self._inputs_written.record(torch.cuda.current_stream(self._device))
            self._thread.start()
        else:
            self._slots.release()  # the consumer is done with its last batch
        item = self._queue.get()
        if item is self._DONE:
            self._thread.join()
            raise StopIteration
        if isinstance(item, BaseException):
            self._thread.join()
            raise item
        return self._hand_over(item)

    def close(self) -> None:
        """Stops the producer (also when the consumer leaves the loop early)."""
        self._stop.set()
        self._slots.release()
        if self._started and threading.current_thread() is not self._thread:
            self._thread.join()

    def _run(self) -> None:
        try:
            stream = torch.cuda.Stream(self._device) if self._device.type == "cuda" else None
            context = torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()
            if stream is not None:
                stream.wait_event(self._inputs_written)
            with context:
                for batch in self._batches:
                    if stream is not None:
                        batch.ready = torch.cuda.Event()
                        batch.ready.record(stream)
                    self._queue.put(batch)
                    self._slots.acquire()
                    if self._stop.is_set():
                        return
            self._queue.put(self._DONE)
        except BaseException as error:  # handed to the consumer, raised there
            self._queue.put(error)
        finally:
            self._batches.close()  # frees the producer's previous buffer and sampled window

    def _hand_over(self, batch: MiniBatch) -> MiniBatch:
        if batch.ready is not None:
            consumer = torch.cuda.current_stream(self._device)
            consumer.wait_event(batch.ready)
            for tensor in _tensors_of(batch):
                tensor.record_stream(consumer)
        return batch


def _tensors_of(batch: MiniBatch) -> list[Tensor]:
    tensors = [batch.nodes, batch.x] + ([] if batch.y is None else [batch.y])
    for block in batch.blocks:
        tensors += [block.src, block.dst, block.eid, block.src_nodes]
        optional = (block.src_in_degrees, block.indptr, block.weight)
        tensors += [t for t in optional if t is not None]
    return [t for t in tensors if t.is_cuda]


def _synchronize(device: torch.device) -> None:
    """Waits for the current stream's work so host timers measure it."""
    if device.type == "cuda":
        torch.cuda.current_stream(device).synchronize()


def _feature_store(graph, features, labels, cache, device, dtype, transfer) -> FeatureStore:
    """``features`` if a ready store, else one built of ``features`` and ``labels``."""
    if isinstance(features, FeatureStore):
        return features
    # Each input against the graph first: the store compares labels with features only.
    for name, t in (("features", features), ("labels", labels)):
        if isinstance(t, Tensor) and t.dim() >= 1:
            _check_one_row_per_node(graph, name, t.shape[0])
    return FeatureStore(
        features,
        labels,
        device=device,
        cache=cache,
        dtype=dtype,
        transfer=transfer,
        hotness=graph.in_degrees(),
    )


def _seed_ids(seeds: Tensor, num_nodes: int) -> Tensor:
    if not isinstance(seeds, Tensor):
        raise TypeError(f"DataLoader: seeds must be a tensor, got {type(seeds).__name__}")
    if seeds.dtype == torch.bool:
        if seeds.shape != (num_nodes,):
            raise ValueError(
                f"DataLoader: a seed mask must have shape [{num_nodes}], got {tuple(seeds.shape)}"
            )
        return seeds.nonzero().view(-1).cpu()
    if seeds.dim() != 1 or seeds.dtype not in (torch.int32, torch.int64):
        raise ValueError(
            f"DataLoader: seeds must be 1-D int ids or a bool mask, got "
            f"{seeds.dtype} of shape {tuple(seeds.shape)}"
        )
    return seeds.to(torch.int64).cpu()


def _check_loader_args(
    batch_size: int,
    window: int,
    store: FeatureStore,
    graph: CSCGraph,
    generator: torch.Generator | None,
) -> None:
    if generator is not None and torch.device(generator.device).type != "cpu":
        raise ValueError(
            f"DataLoader: generator must be a CPU generator (it shuffles the seeds "
            f"and seeds the sampler), got one on {generator.device}"
        )
    if batch_size < 1:
        raise ValueError(f"DataLoader: batch_size must be >= 1, got {batch_size}")
    if not 1 <= window <= MAX_WINDOW:
        raise ValueError(
            f"DataLoader: reorder must be a window of 1 to {MAX_WINDOW} batches, got {window}"
        )
    _check_one_row_per_node(graph, "features", store.num_nodes)


def _check_one_row_per_node(graph: CSCGraph, name: str, rows: int) -> None:
    if rows != graph.num_nodes:
        raise ValueError(
            f"DataLoader: {name} have {rows} rows but the graph has {graph.num_nodes} nodes "
            "(one row per node)"
        )


def _sampling_records(seconds: float, subs: Sequence[Sample]) -> list[BatchRecord]:
    """One record per batch of a window sampled in one call: the call's time shared out by the
    batches' numbers of sampled edges. Drawing and Fused-Map relabeling are one pass, so all of
    it is sampling (``idmap_s`` stays 0)."""
    edges = [sum(sub.num_sampled_edges) for sub in subs]
    total = max(sum(edges), 1)
    return [BatchRecord(sample_s=seconds * e / total) for e in edges]
