"""The pipeline on a GPU: every batch buffer equals a plain gather, with the copy engine and with
UVA, with and without a cache, prefetched on a side stream; the CPU run gives the same batches."""

import pytest
import torch

from fastgl.data import synthetic_node_classification
from fastgl.graph import CSCGraph
from fastgl.loader import DataLoader, FeatureStore


@pytest.fixture(scope="module")
def dataset():
    return synthetic_node_classification(num_nodes=4000, avg_degree=8, num_features=24, seed=5)


@pytest.fixture(scope="module")
def graph(dataset):
    return CSCGraph.from_edge_index(dataset.edge_index, num_nodes=dataset.num_nodes)


def batches(dataset, graph, device, **kwargs):
    loader = DataLoader(
        graph,
        dataset.x,
        dataset.y,
        dataset.train_idx,
        [5, 4],
        batch_size=256,
        shuffle=True,
        device=device,
        generator=torch.Generator().manual_seed(3),
        **kwargs,
    )
    out = []
    for batch in loader:
        with loader.compute():
            checksum = batch.x.float().sum()  # compute on the consumer stream
        out.append((batch.nodes.cpu(), batch.x.cpu(), batch.y.cpu(), float(checksum)))
    return out, loader.stats.totals()


@pytest.mark.parametrize("transfer", ["copy", "uva"])
@pytest.mark.parametrize("cache", [None, 0.3, "all"])
@pytest.mark.parametrize("reorder", [1, 6])
@pytest.mark.parametrize("prefetch", [True, False])
def test_gpu_buffers_equal_plain_gathers(dataset, graph, transfer, cache, reorder, prefetch):
    got, totals = batches(
        dataset, graph, "cuda", transfer=transfer, cache=cache, reorder=reorder, prefetch=prefetch
    )
    for nodes, x, y, checksum in got:
        assert torch.equal(x, dataset.x[nodes])
        assert torch.equal(y, dataset.y[nodes[: y.numel()]])
        assert checksum == pytest.approx(float(dataset.x[nodes].sum()), rel=1e-4)
    if cache != "all":
        assert totals["bytes_h2d"] == totals["rows_loaded"] * dataset.x.shape[1] * 4


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_features(dataset, graph, dtype):
    got, _ = batches(dataset, graph, "cuda", dtype=dtype, cache=0.2)
    for nodes, x, _, _ in got:
        assert x.dtype == dtype and torch.equal(x, dataset.x.to(dtype)[nodes])


def test_cpu_and_gpu_runs_give_the_same_batches(dataset, graph):
    cpu, cpu_totals = batches(dataset, graph, "cpu", reorder=4)
    gpu, gpu_totals = batches(dataset, graph, "cuda", reorder=4)
    assert len(cpu) == len(gpu)
    for (n1, x1, y1, _), (n2, x2, y2, _) in zip(cpu, gpu):
        assert torch.equal(n1, n2) and torch.equal(x1, x2) and torch.equal(y1, y2)
    for key in ("bytes_h2d", "rows_loaded", "rows_reused"):
        assert cpu_totals[key] == gpu_totals[key]


def test_graph_on_the_gpu_samples_there(dataset, graph):
    on_gpu = graph.to("cuda")
    loader = DataLoader(
        on_gpu,
        dataset.x,
        dataset.y,
        dataset.train_idx,
        [5, 4],
        batch_size=256,
        device="cuda",
        reorder=3,
        cache=0.1,
    )
    for batch in loader:
        assert batch.nodes.is_cuda and batch.x.is_cuda
        assert torch.equal(batch.x.cpu(), dataset.x[batch.nodes.cpu()])


def test_host_features_are_pinned_and_cache_is_on_the_gpu(dataset):
    hotness = torch.arange(dataset.num_nodes)
    store = FeatureStore(dataset.x, dataset.y, device="cuda", cache=0.25, hotness=hotness)
    assert store.host_x.is_pinned() and store.cache_x.is_cuda and store.y.is_cuda
    assert store.num_cached == dataset.num_nodes // 4


def test_consumer_waits_for_the_side_stream(dataset, graph, monkeypatch):
    """With the producer's host syncs removed and a long kernel queued before each assembly,
    only the event hand-over keeps the consumer from reading unfinished buffers."""
    from fastgl.loader import dataloader as pipeline

    monkeypatch.setattr(pipeline, "_synchronize", lambda device: None)
    store = FeatureStore(
        dataset.x, dataset.y, device="cuda", transfer="uva", cache=0.2, hotness=graph.indptr.diff()
    )
    assemble = store.assemble

    def slow_assemble(*args, **kwargs):
        torch.cuda._sleep(50_000_000)  # about 25 ms of GPU time on the side stream
        return assemble(*args, **kwargs)

    monkeypatch.setattr(store, "assemble", slow_assemble)
    x_gpu = dataset.x.cuda()
    loader = DataLoader(
        graph,
        store,
        None,
        dataset.train_idx,
        [5, 4],
        batch_size=256,
        reorder=4,
        generator=torch.Generator().manual_seed(1),
    )
    checks = []
    for batch in loader:
        checks.append(torch.equal(batch.x, x_gpu[batch.nodes.cuda()]))  # GPU ops only
    assert checks and all(checks)


def test_side_stream_waits_for_features_still_being_written(dataset, graph):
    """Features whose last write is still queued on the default stream (behind a long kernel)
    when the epoch starts: the prefetching side stream must wait for it before gathering."""
    x_copy, y = dataset.x.cuda(), dataset.y.cuda()  # host copies synchronize: done before
    torch.cuda._sleep(200_000_000)  # about 100 ms of GPU time queued on the default stream
    x_gpu = x_copy * 1  # written only after the sleep; the host does not wait for it
    store = FeatureStore(x_gpu, y, device="cuda")
    loader = DataLoader(
        graph,
        store,
        None,
        dataset.train_idx,
        [5, 4],
        batch_size=256,
        prefetch=True,
        generator=torch.Generator().manual_seed(2),
    )
    first = next(iter(loader))
    assert torch.equal(first.x, x_copy[first.nodes.cuda()])


def test_two_loaders_sharing_a_store_interleave_correctly(dataset, graph):
    store = FeatureStore(dataset.x, dataset.y, device="cuda")
    first = iter(DataLoader(graph, store, None, dataset.train_idx, [5], batch_size=128))
    second = iter(DataLoader(graph, store, None, dataset.val_idx, [5], batch_size=128))
    for a, b in zip(first, second):
        assert torch.equal(a.x.cpu(), dataset.x[a.nodes.cpu()])
        assert torch.equal(b.x.cpu(), dataset.x[b.nodes.cpu()])


def test_features_already_on_the_gpu(dataset, graph):
    loader = DataLoader(
        graph, dataset.x.cuda(), dataset.y, dataset.train_idx, [5], batch_size=256, device="cuda"
    )
    assert loader.store.num_cached == dataset.num_nodes
    for batch in loader:
        assert torch.equal(batch.x.cpu(), dataset.x[batch.nodes.cpu()])
