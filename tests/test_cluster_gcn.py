"""ClusterGCN: METIS's partition through pymetis (valid, deterministic, cached, far fewer cut edges
than a random partition) and the sampler's batches (exactly the induced subgraphs of whole
clusters, every cluster once an epoch, clusters drawn uniformly)."""

import sys
from pathlib import Path

import pytest
import torch
from reference import assert_chi_square_fits, induced_subgraphs_reference, random_edge_index

from fastgl import CSCGraph
from fastgl.sampling import ClusterGCNSampler, metis_parts, saint_normalization
from fastgl.sampling import cluster as cluster_module

PLANETOID = Path(__file__).resolve().parents[2] / "shared" / "data" / "planetoid" / "raw"


def two_cliques(size: int = 6) -> CSCGraph:
    """Two cliques of ``size`` nodes (0.. and size..), both directions, joined by one edge."""
    pairs = [(a, b) for a in range(size) for b in range(size) if a != b]
    edges = pairs + [(a + size, b + size) for a, b in pairs] + [(0, size), (size, 0)]
    return CSCGraph.from_edge_index(torch.tensor(edges).t(), 2 * size)


def cut_fraction(graph: CSCGraph, parts: torch.Tensor) -> float:
    source, target = graph.indices.to(torch.int64), graph.dst_index()
    return float((parts[source] != parts[target]).float().mean())


def test_metis_separates_two_cliques():
    parts = metis_parts(two_cliques(), 2)
    assert parts.dtype == torch.int64 and parts.shape == (12,)
    assert len(set(parts[:6].tolist())) == 1 and len(set(parts[6:].tolist())) == 1
    assert parts[0] != parts[6]


def test_metis_parts_are_valid_and_deterministic_for_a_seed():
    graph = CSCGraph.from_edge_index(random_edge_index(500, 4000, seed=1), 500)
    parts = metis_parts(graph, 8, seed=3)
    assert int(parts.min()) >= 0 and int(parts.max()) < 8
    assert torch.equal(parts, metis_parts(graph, 8, seed=3))
    assert torch.equal(metis_parts(graph, 1), torch.zeros(500, dtype=torch.int64))
    recursive = metis_parts(graph, 8, recursive=True)
    assert int(recursive.min()) >= 0 and int(recursive.max()) < 8
    # The seed reaches METIS: some other seed partitions this graph otherwise.
    assert any(not torch.equal(parts, metis_parts(graph, 8, seed=s)) for s in range(4, 8))


def test_metis_cuts_fewer_edges_than_a_random_partition():
    """A graph of 20 dense communities, sparsely joined: METIS's 20 parts cut a small fraction of
    the edges, a random assignment 95 % of them."""
    communities, size = 20, 50
    edges = random_edge_index(size, 20 * size * communities, seed=2).view(2, communities, -1)
    edges = (edges + torch.arange(communities).view(1, -1, 1) * size).reshape(2, -1)
    edges = torch.cat([edges, random_edge_index(communities * size, 200, seed=3)], 1)
    graph = CSCGraph.from_edge_index(edges, communities * size)
    random_parts = torch.randint(0, communities, (graph.num_nodes,), generator=torch.manual_seed(0))
    assert cut_fraction(graph, metis_parts(graph, communities)) < 0.05
    assert cut_fraction(graph, random_parts) > 0.9


def test_the_partition_is_cached_on_disk(tmp_path, monkeypatch):
    graph = two_cliques()
    parts = metis_parts(graph, 2, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("metis-*-2-kway-seed0.pt"))) == 1

    def no_metis(*args):
        raise AssertionError("METIS ran although the partition is cached")

    monkeypatch.setattr(cluster_module, "_run_metis", no_metis)
    assert torch.equal(metis_parts(graph, 2, cache_dir=tmp_path), parts)
    with pytest.raises(AssertionError, match="METIS ran"):
        metis_parts(graph, 2, cache_dir=tmp_path, seed=1)  # another seed is another file


def test_without_pymetis_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)
    with pytest.raises(ImportError, match="pip install pymetis"):
        metis_parts(two_cliques(), 2)


@pytest.mark.parametrize(
    "num_parts, match",
    [(0, "num_parts must be >= 1"), (13, "num_parts must be at most the graph's 12 nodes")],
)
def test_bad_part_counts_are_rejected(num_parts, match):
    with pytest.raises(ValueError, match=match):
        metis_parts(two_cliques(), num_parts)


def test_a_graph_without_nodes_is_rejected():
    empty = CSCGraph.from_edge_index(torch.zeros(2, 0, dtype=torch.int64), 0)
    with pytest.raises(ValueError, match="metis_parts"):
        metis_parts(empty, 1)


def assert_induced(graph: CSCGraph, sub) -> None:
    ptr = torch.tensor([0, sub.nodes.numel()])
    row, col, eid, _ = induced_subgraphs_reference(
        graph.indptr, graph.indices, graph.edge_ids(), sub.nodes.cpu(), ptr
    )
    assert torch.equal(sub.row.cpu(), row) and torch.equal(sub.col.cpu(), col)
    assert torch.equal(sub.eid.cpu(), eid)


def test_an_epoch_holds_every_cluster_once_as_induced_subgraphs():
    graph = CSCGraph.from_edge_index(random_edge_index(300, 3000, seed=4), 300)
    sampler = ClusterGCNSampler(graph, 10, 3)
    subgraphs = sampler.epoch(generator=torch.manual_seed(5))
    assert len(subgraphs) == 4  # 3 + 3 + 3 + 1 clusters
    nodes = torch.cat([sub.nodes for sub in subgraphs])
    assert torch.equal(nodes.sort().values, torch.arange(300))
    for sub in subgraphs:
        assert torch.equal(sub.nodes, sub.nodes.sort().values)
        clusters = sampler.parts[sub.nodes].unique()
        assert sub.nodes.numel() == int(sampler.cluster_sizes[clusters].sum())  # whole clusters
        assert_induced(graph, sub)


def test_sampled_batches_join_distinct_clusters_drawn_uniformly():
    graph = CSCGraph.from_edge_index(random_edge_index(200, 1000, seed=6), 200)
    parts = torch.arange(200) % 8  # 25 nodes per cluster
    sampler = ClusterGCNSampler(graph, 8, 3, parts=parts)
    subgraphs = sampler.sample(400, generator=torch.manual_seed(7))
    counts = torch.zeros(8, dtype=torch.int64)
    for sub in subgraphs:
        clusters = parts[sub.nodes].unique()
        assert clusters.numel() == 3 and sub.nodes.numel() == 75
        counts[clusters] += 1
    for sub in subgraphs[:20]:
        assert_induced(graph, sub)
    assert_chi_square_fits(counts, [1.0] * 8, "clusters drawn")
    again = sampler.sample(400, generator=torch.manual_seed(7))
    assert all(torch.equal(a.nodes, b.nodes) for a, b in zip(subgraphs, again))


def test_empty_clusters_give_empty_batches_without_failing():
    graph = two_cliques(3)
    parts = torch.tensor([0, 0, 0, 2, 2, 2])  # clusters 1 and 3 are empty
    sampler = ClusterGCNSampler(graph, 4, 1, parts=parts)
    sizes = [sub.nodes.numel() for sub in sampler.sample(40, generator=torch.manual_seed(0))]
    assert set(sizes) == {0, 3}
    empty = next(sub for sub in sampler.epoch(torch.manual_seed(1)) if sub.nodes.numel() == 0)
    assert empty.edge_index.shape == (2, 0)


def test_the_exact_normalization_is_what_pre_sampling_estimates():
    """GraphSAINT's normalization of ClusterGCN's draws, in closed form, against the estimate
    from many drawn batches."""
    graph = CSCGraph.from_edge_index(random_edge_index(120, 900, seed=9), 120)
    sampler = ClusterGCNSampler(graph, 6, 3, parts=torch.arange(120) % 6)
    exact = sampler.normalization()
    between = (sampler.parts[graph.indices.long()] != sampler.parts[graph.dst_index()]).sum()
    assert torch.allclose(exact.node_norm, torch.full((120,), 6 / (3 * 120)))
    assert int((exact.edge_norm == 2.5).sum()) == int(between)  # (p - 1) / (q - 1)
    assert int((exact.edge_norm == 1).sum()) == 900 - int(between)
    estimate = saint_normalization(sampler, 2000, generator=torch.manual_seed(3))
    assert torch.allclose(estimate.node_norm, exact.node_norm, rtol=0.05)
    assert torch.allclose(estimate.edge_norm, exact.edge_norm, rtol=0.1)
    one = ClusterGCNSampler(graph, 6, 1, parts=torch.arange(120) % 6).normalization()
    assert bool((one.edge_norm == 1).all())  # edges between clusters are never drawn


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_a_gpu_graph_draws_on_the_gpu(tmp_path):
    graph = CSCGraph.from_edge_index(random_edge_index(300, 3000, seed=4), 300)
    parts = metis_parts(graph, 10, cache_dir=tmp_path)
    gpu = graph.to("cuda")
    assert metis_parts(gpu, 10, cache_dir=tmp_path).device.type == "cuda"  # from the cache
    sampler = ClusterGCNSampler(gpu, 10, 3, parts=parts)
    generator = torch.Generator("cuda").manual_seed(0)
    for sub in sampler.sample(4, generator) + sampler.epoch(generator):
        assert sub.nodes.device.type == "cuda"
        assert_induced(graph, sub)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_parts=4, clusters_per_batch=5), "clusters_per_batch must be at most"),
        (dict(num_parts=4, clusters_per_batch=0), "clusters_per_batch must be >= 1"),
        (dict(num_parts=4, parts=torch.zeros(11, dtype=torch.int64)), r"shape \[12\]"),
        (dict(num_parts=4, parts=torch.zeros(12)), "integer tensor"),
        (dict(num_parts=4, parts=torch.full((12,), 4)), r"lie in \[0, 4\)"),
        (dict(num_parts=4, parts=torch.full((12,), -1)), r"lie in \[0, 4\)"),
    ],
)
def test_bad_sampler_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ClusterGCNSampler(two_cliques(), **kwargs)


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
def test_cora_partitions_with_few_cut_edges():
    from fastgl.data import read_planetoid

    dataset = read_planetoid(PLANETOID, "cora")
    graph = CSCGraph.from_edge_index(dataset.edge_index, dataset.num_nodes)
    parts = metis_parts(graph, 32)
    sizes = torch.bincount(parts, minlength=32)
    assert int(sizes.min()) > 0 and int(sizes.max()) < 3 * dataset.num_nodes / 32
    assert cut_fraction(graph, parts) < 0.25  # a random 32-way partition cuts about 97 %
