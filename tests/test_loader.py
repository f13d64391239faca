"""fastgl.loader: Match-Reorder, the FeatureStore and the prefetching DataLoader (on the CPU,
which runs the whole pipeline; tests/cuda/test_cuda_loader.py repeats the key checks on a GPU)."""

import gc
import threading
import weakref

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgl.data import synthetic_node_classification
from fastgl.graph import CSCGraph
from fastgl.loader import (
    BatchRecord,
    DataLoader,
    FeatureStore,
    greedy_order,
    match,
    match_degree,
    reorder,
)
from fastgl.sampling import NeighborSampler


@pytest.fixture(scope="module")
def dataset():
    return synthetic_node_classification(num_nodes=3000, avg_degree=8, num_features=12, seed=3)


@pytest.fixture(scope="module")
def graph(dataset):
    return CSCGraph.from_edge_index(dataset.edge_index, num_nodes=dataset.num_nodes)


def in_degrees(graph):
    return graph.indptr.diff()


# ---------------------------------------------------------------- Match and Reorder references


def match_degree_reference(sets):
    py = [set(s.tolist()) for s in sets]
    n = len(py)
    out = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        for j in range(n):
            smaller = min(len(py[i]), len(py[j]))
            out[i, j] = len(py[i] & py[j]) / smaller if smaller else 0.0
    return out


def greedy_reference(degree):
    """Algorithm 1 written out: zero the placed batch's row and column, take the first maximum
    among unplaced batches."""
    m = degree.clone().tolist()
    n = len(m)
    order, placed = [0], {0}
    while len(order) < n:
        z = order[-1]
        for k in range(n):
            m[z][k] = m[k][z] = 0.0 if k in placed or k == z else m[z][k]
        candidates = [k for k in range(n) if k not in placed]
        best = max(candidates, key=lambda k: (m[z][k], -k))
        order.append(best)
        placed.add(best)
    return order


node_set = st.lists(st.integers(0, 60), unique=True, max_size=30).map(
    lambda ids: torch.tensor(ids, dtype=torch.int64)
)


@settings(max_examples=80)
@given(st.lists(node_set, min_size=1, max_size=12))
def test_match_degree_and_greedy_order_match_references(sets):
    degree = match_degree(sets)
    assert torch.allclose(degree, match_degree_reference(sets))
    assert greedy_order(degree) == greedy_reference(degree)
    assert reorder(sets) == greedy_order(degree)
    assert sorted(reorder(sets)) == list(range(len(sets)))


def test_reorder_follows_the_paper_example():
    # FastGL (Zhu et al., ASPLOS '24), Figure 6: m13 > m12, so batch 3 runs second.
    sets = [torch.tensor([0, 3, 4, 10]), torch.tensor([20, 21, 22, 0]), torch.tensor([0, 3, 4, 12])]
    assert reorder(sets) == [0, 2, 1]


@settings(max_examples=80)
@given(node_set, st.lists(st.integers(0, 60), max_size=40))
def test_match_splits_rows_between_reuse_and_load(prev, nxt):
    nxt = torch.tensor(nxt, dtype=torch.int64)
    found = match(prev, nxt)
    rows = torch.cat([found.reuse_rows, found.load_rows]).sort().values
    assert torch.equal(rows, torch.arange(nxt.numel()))
    assert torch.equal(prev[found.reuse_from], nxt[found.reuse_rows])
    assert torch.equal(found.load_nodes, nxt[found.load_rows])
    assert not set(found.load_nodes.tolist()) & set(prev.tolist())


def test_window_limits_are_enforced():
    with pytest.raises(ValueError, match="at most 64"):
        match_degree([torch.tensor([1])] * 65)


# ------------------------------------------------------------------------------ FeatureStore


@settings(max_examples=60)
@given(
    st.data(),
    st.sampled_from([None, 0.1, 0.5, "all", 1000]),
    st.sampled_from([torch.float32, torch.float16, torch.bfloat16]),
)
def test_assembled_buffer_equals_a_plain_gather(data, cache, dtype):
    """Any previous buffer, any partial cache, any dtype: row i is x[nodes[i]]."""
    n, f = 50, 5
    x = torch.randn(n, f)
    hotness = torch.tensor(data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
    store = FeatureStore(x, device="cpu", cache=cache, hotness=hotness, dtype=dtype)
    expected = x.to(dtype)
    previous = None
    for _ in range(data.draw(st.integers(1, 4))):
        ids = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        nodes = torch.tensor(ids, dtype=torch.int64)
        record = BatchRecord()
        buffer = store.assemble(nodes, previous, record)
        assert buffer.x.dtype == dtype
        assert torch.equal(buffer.x, expected[nodes])
        assert record.rows_loaded + record.rows_reused + record.rows_cached == nodes.numel()
        assert record.bytes_h2d == record.rows_loaded * store.row_bytes
        previous = buffer


def test_cache_holds_the_hottest_nodes_within_the_budget():
    x = torch.randn(100, 4)  # 16 bytes per row
    hotness = torch.arange(100).flip(0)  # node 0 is the hottest
    store = FeatureStore(x, cache=100 * 8 + 10 * 16, hotness=hotness)  # slot map + 10 rows
    assert store.num_cached == 10
    record = BatchRecord()
    store.assemble(torch.tensor([0, 9, 10, 50]), record=record)
    assert (record.rows_cached, record.rows_loaded) == (2, 2)
    assert FeatureStore(x, cache=0.25, hotness=hotness).num_cached == 25
    assert FeatureStore(x, cache=10**9).num_cached == 100  # everything fits: no hotness needed


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(cache=0.5), "needs hotness"),
        (dict(cache=1.5, hotness=torch.ones(10)), "fraction must lie in"),
        (dict(cache="lots"), "cache must be"),
        (dict(cache=-1), "budget must be >= 0"),
        (dict(transfer="dma"), "transfer must be one of"),
        (dict(dtype=torch.int32), "float32, float16, bfloat16 or float64"),
        (dict(y=torch.zeros(3, dtype=torch.long)), "y must have shape"),
    ],
)
def test_feature_store_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FeatureStore(torch.randn(10, 2), **kwargs)


# -------------------------------------------------------------------------------- DataLoader


def make_loader(dataset, graph, **kwargs):
    kwargs.setdefault("generator", torch.Generator().manual_seed(0))
    return DataLoader(
        graph,
        dataset.x,
        dataset.y,
        dataset.train_idx,
        kwargs.pop("fanouts", [4, 3]),
        **{"batch_size": 128, **kwargs},
    )


@pytest.mark.parametrize("batch_size", [1, 97, 500, 5000])
@pytest.mark.parametrize("reorder_window", [1, 3, 8])
@pytest.mark.parametrize("cache", [None, 0.2, "all"])
def test_every_batch_holds_the_right_rows_over_many_epochs(
    dataset, graph, batch_size, reorder_window, cache
):
    loader = make_loader(
        dataset, graph, batch_size=batch_size, reorder=reorder_window, cache=cache, shuffle=True
    )
    for _ in range(3 if batch_size > 1 else 1):
        seen = []
        for batch in loader:
            assert torch.equal(batch.x, dataset.x[batch.nodes])
            assert torch.equal(batch.y, dataset.y[batch.seeds])
            assert batch.blocks[-1].num_dst_nodes == batch.batch_size == batch.seeds.numel()
            assert torch.equal(
                batch.blocks[0].src_nodes, batch.nodes[: batch.blocks[0].num_src_nodes]
            )
            seen.append(batch.seeds)
        assert torch.equal(torch.cat(seen).sort().values, dataset.train_idx.sort().values)


def test_match_reuses_rows_and_reorder_runs_the_greedy_order(dataset, graph):
    plain = make_loader(dataset, graph, match=False)
    list(plain)
    totals = plain.stats.totals()
    assert totals["rows_reused"] == 0 and totals["match_degree"] is None
    matched = make_loader(dataset, graph)
    list(matched)
    assert matched.stats.totals()["rows_reused"] > 0
    assert matched.stats.totals()["bytes_h2d"] < totals["bytes_h2d"]

    # The loader's order within a window is Algorithm 1 on the window's samples: replay them.
    loader = make_loader(dataset, graph, reorder=4, generator=torch.Generator().manual_seed(7))
    yielded = [batch.seeds for batch in loader]
    replay_gen = torch.Generator().manual_seed(7)
    chunks = list(dataset.train_idx.split(128))
    subs = NeighborSampler(graph, [4, 3]).sample_batches(chunks[:4], generator=replay_gen)
    order = greedy_order(match_degree([s.nodes for s in subs]))
    assert [torch.equal(y, chunks[i]) for y, i in zip(yielded[:4], order)] == [True] * 4
    assert all(r.reorder_s > 0 for r in loader.stats.batches[:4])


def test_records_phases_and_counts(dataset, graph):
    loader = make_loader(dataset, graph, reorder=2)
    for batch in loader:
        with loader.compute():
            batch.x.sum()
    for record in loader.stats.batches:
        assert record.sample_s > 0 and record.load_s > 0
        assert record.idmap_s == 0  # Fused-Map runs inside the sampling pass
        assert record.compute_s > 0
        assert record.rows_loaded + record.rows_reused + record.rows_cached == record.num_nodes
    first, *rest = loader.stats.batches
    assert first.match_degree is None and all(0 <= r.match_degree <= 1 for r in rest)
    assert loader.stats.totals()["batches"] == len(loader) == len(loader.stats.batches)
    list(loader)  # a new epoch starts new records
    assert len(loader.stats.batches) == len(loader)


@pytest.mark.parametrize("prefetch", [True, False])
def test_same_generator_same_batches(dataset, graph, prefetch):
    def run(prefetch_flag):
        loader = make_loader(
            dataset,
            graph,
            shuffle=True,
            reorder=3,
            prefetch=prefetch_flag,
            generator=torch.Generator().manual_seed(11),
        )
        return [b.nodes for b in loader]

    first, second = run(prefetch), run(not prefetch)
    assert len(first) == len(second)
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_no_fanouts_give_batches_of_the_seeds_alone(dataset, graph):
    loader = DataLoader(graph, dataset.x, dataset.y, dataset.train_idx, [], batch_size=500)
    seen = []
    for batch in loader:
        assert batch.blocks == [] and torch.equal(batch.nodes, batch.seeds)
        assert torch.equal(batch.x, dataset.x[batch.seeds])
        assert torch.equal(batch.y, dataset.y[batch.seeds])
        seen.append(batch.seeds)
    assert torch.equal(torch.cat(seen), dataset.train_idx)


def test_seeds_as_mask_and_drop_last(dataset, graph):
    mask = torch.zeros(dataset.num_nodes, dtype=torch.bool)
    mask[dataset.train_idx] = True
    loader = DataLoader(graph, dataset.x, dataset.y, mask, [3], batch_size=1000, drop_last=True)
    sizes = [b.batch_size for b in loader]
    assert sizes == [1000] * (dataset.train_idx.numel() // 1000) == [1000] * len(loader)


def test_leaving_early_stops_the_prefetch_thread(dataset, graph):
    before = threading.active_count()
    for _ in range(5):
        for i, _batch in enumerate(make_loader(dataset, graph)):
            if i == 1:
                break
    gc.collect()
    assert threading.active_count() == before


def test_errors_in_the_pipeline_reach_the_caller(dataset, graph):
    bad = dataset.train_idx.clone()
    bad[5] = dataset.num_nodes + 3  # out of range: the sampler raises in the prefetch thread
    loader = DataLoader(graph, dataset.x, dataset.y, bad, [3], batch_size=64)
    with pytest.raises(ValueError, match="out of range"):
        list(loader)


def test_the_loader_keeps_no_old_batches(dataset, graph):
    """At most the batch in use and the one being assembled hold buffers."""
    loader = make_loader(dataset, graph, batch_size=64)
    refs = []
    for i, batch in enumerate(loader):
        refs.append(weakref.ref(batch.x))
        del batch
        gc.collect()
        # Batch i's buffer may still be the producer's "previous"; every older one is freed.
        assert all(ref() is None for ref in refs[:i])
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_no_growth_over_many_epochs(dataset, graph):
    loader = make_loader(dataset, graph, batch_size=256, reorder=4, cache=0.1)

    def live_tensors():
        gc.collect()
        return sum(1 for obj in gc.get_objects() if isinstance(obj, torch.Tensor))

    for _ in range(3):
        list(loader)
    baseline = live_tensors()
    for _ in range(20):
        for batch in loader:
            with loader.compute():
                batch.x.mean()
    del batch
    assert live_tensors() <= baseline


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(batch_size=0), "batch_size must be >= 1"),
        (dict(reorder=0), "reorder must be a window of 1 to 64"),
        (dict(reorder=65), "reorder must be a window of 1 to 64"),
    ],
)
def test_loader_rejects_bad_arguments(dataset, graph, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_loader(dataset, graph, **kwargs)


def test_loader_rejects_mismatched_inputs(dataset, graph):
    with pytest.raises(ValueError, match="features have 10 rows"):
        DataLoader(graph, torch.randn(10, 2), None, dataset.train_idx, [2])
    # The input that disagrees with the graph is named, not the one that disagrees with it.
    n = graph.num_nodes
    with pytest.raises(ValueError, match=f"DataLoader: features have {n - 1} rows but the graph"):
        DataLoader(graph, torch.randn(n - 1, 2), dataset.y, dataset.train_idx, [2])
    with pytest.raises(ValueError, match=f"DataLoader: labels have {n + 1} rows but the graph"):
        DataLoader(graph, dataset.x, torch.zeros(n + 1, dtype=torch.long), dataset.train_idx, [2])
    store = FeatureStore(torch.randn(n - 2, 2))
    with pytest.raises(ValueError, match=f"DataLoader: features have {n - 2} rows but the graph"):
        DataLoader(graph, store, None, dataset.train_idx, [2])
    other = CSCGraph.from_edge_index(dataset.edge_index, num_nodes=dataset.num_nodes)
    with pytest.raises(ValueError, match="another graph"):
        DataLoader(graph, dataset.x, None, dataset.train_idx, NeighborSampler(other, [2]))
    with pytest.raises(ValueError, match="seed mask must have shape"):
        DataLoader(graph, dataset.x, None, torch.ones(5, dtype=torch.bool), [2])


def test_global_seed_reproduces_an_epoch_without_a_generator(dataset, graph):
    def run():
        torch.manual_seed(5)
        loader = DataLoader(
            graph,
            dataset.x,
            dataset.y,
            dataset.train_idx,
            [4, 3],
            batch_size=128,
            shuffle=True,
            reorder=3,
        )
        return [b.nodes for b in loader]

    first, second = run(), run()
    assert all(torch.equal(a, b) for a, b in zip(first, second)) and len(first) == len(second)
