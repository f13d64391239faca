"""The PyG ClusterGCN drop-ins (`fastgl.integrations.pyg.ClusterData`, `ClusterLoader`): PyG's
classes with fastgl's METIS, giving PyG's documented layout (consecutive clusters, `partptr`,
`node_perm`, `edge_perm`, the permuted data without `edge_index`), each cluster and each batch
exactly its nodes' edges with every attribute sliced alike (checked against a plain-Python
reference), and PyG's own class failing here."""

import doctest
import importlib.util

import pytest
import torch
from reference import attributed_pyg_data

pytest.importorskip("torch_geometric")
import torch_geometric.loader
from torch_geometric.data import Data

from fastgl.integrations.pyg import ClusterData, ClusterLoader

NUM_NODES = 60


def graph_data() -> Data:
    return attributed_pyg_data(NUM_NODES, 300, seed=8)


def expected_batch(data: Data, cd: ClusterData, clusters: list[int], keep_outside=False) -> dict:
    """The batch in plain Python: the clusters' original nodes in order, and every original edge
    out of them (into them too, unless ``keep_outside``) as (row, col, edge id)."""
    part = cd.partition
    permuted = [int(v) for c in clusters for v in range(part.partptr[c], part.partptr[c + 1])]
    position = {v: i for i, v in enumerate(permuted)}
    new_id = {int(old): new for new, old in enumerate(part.node_perm.tolist())}
    edges = []
    for e, (s, t) in enumerate(data.edge_index.t().tolist()):
        major, minor = (new_id[s], new_id[t])
        if part.sparse_format == "csc":
            major, minor = minor, major
        if major not in position or not (keep_outside or minor in position):
            continue
        minor = minor if keep_outside else position[minor]
        pair = (position[major], minor) if part.sparse_format == "csr" else (minor, position[major])
        edges.append((*pair, e))
    return {"nodes": [int(part.node_perm[v]) for v in permuted], "edges": sorted(edges)}


def assert_batch(batch: Data, data: Data, expected: dict) -> None:
    nodes = torch.tensor(expected["nodes"], dtype=torch.int64)
    assert batch.num_nodes == nodes.numel()
    assert torch.equal(batch.node_id, nodes) and torch.equal(batch.x, data.x[nodes])
    assert torch.equal(batch.y, data.y[nodes]) and batch.title == "a graph"
    got = sorted(zip(*batch.edge_index.tolist(), batch.edge_id.tolist()))
    assert got == expected["edges"]
    assert torch.equal(batch.edge_attr, data.edge_attr[batch.edge_id])


@pytest.mark.parametrize("sparse_format", ["csr", "csc"])
def test_the_partition_makes_clusters_consecutive(sparse_format):
    data = graph_data()
    cd = ClusterData(data, num_parts=5, log=False, sparse_format=sparse_format)
    part = cd.partition
    assert len(cd) == 5 and part.partptr[0] == 0 and part.partptr[-1] == NUM_NODES
    assert torch.equal(part.node_perm.sort().values, torch.arange(NUM_NODES))
    assert torch.equal(part.edge_perm.sort().values, torch.arange(data.num_edges))
    assert cd.data.edge_index is None and torch.equal(cd.data.x, data.x[part.node_perm])
    assert torch.equal(cd.data.edge_attr, data.edge_attr[part.edge_perm])
    assert part.indptr.numel() == NUM_NODES + 1 and part.indptr[-1] == data.num_edges


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("sparse_format", ["csr", "csc"])
def test_each_cluster_is_its_nodes_and_their_edges(sparse_format, keep):
    data = graph_data()
    cd = ClusterData(
        data, num_parts=4, log=False, keep_inter_cluster_edges=keep, sparse_format=sparse_format
    )
    for c in range(len(cd)):
        assert_batch(cd[c], data, expected_batch(data, cd, [c], keep_outside=keep))


def clusters_in_order(cd: ClusterData, batch: Data) -> list[int]:
    """The clusters of a batch's nodes, in the order the batch lays them out."""
    new_id = torch.empty(NUM_NODES, dtype=torch.int64)
    new_id[cd.partition.node_perm] = torch.arange(NUM_NODES)
    cluster = torch.searchsorted(cd.partition.partptr, new_id[batch.node_id], right=True) - 1
    return list(dict.fromkeys(cluster.tolist()))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("sparse_format", ["csr", "csc"])
def test_a_batch_joins_its_clusters_with_the_edges_between_them(sparse_format, shuffle):
    data = graph_data()
    cd = ClusterData(data, num_parts=6, log=False, sparse_format=sparse_format)
    loader = ClusterLoader(cd, batch_size=4, shuffle=shuffle, generator=torch.manual_seed(2))
    batches = list(loader)
    assert len(batches) == len(loader) == 2
    clusters = [clusters_in_order(cd, batch) for batch in batches]
    assert [len(c) for c in clusters] == [4, 2]
    assert sorted(sum(clusters, [])) == list(range(6))  # every cluster once an epoch
    if not shuffle:
        assert clusters == [[0, 1, 2, 3], [4, 5]]
    for batch, batch_clusters in zip(batches, clusters):
        assert_batch(batch, data, expected_batch(data, cd, batch_clusters))


def test_the_partition_is_saved_and_loaded(tmp_path, monkeypatch):
    data = graph_data()
    first = ClusterData(data, num_parts=3, save_dir=str(tmp_path), log=False)
    assert (tmp_path / "part_3" / "metis.pt").exists()
    monkeypatch.setattr("fastgl.integrations.pyg.cluster.metis_parts", None)  # must not run
    again = ClusterData(data, num_parts=3, save_dir=str(tmp_path), log=False)
    assert torch.equal(again.partition.node_perm, first.partition.node_perm)


def test_bad_part_counts_are_rejected():
    with pytest.raises(ValueError, match="metis_parts: num_parts must be at most"):
        ClusterData(graph_data(), NUM_NODES + 1, log=False)
    with pytest.raises(ValueError, match="metis_parts: num_parts must be >= 1"):
        ClusterData(graph_data(), 0, log=False)


def test_the_drop_ins_are_pygs_classes_but_for_metis():
    """Only the METIS call differs from PyG: the rest of the layout is PyG's own code."""
    assert issubclass(ClusterData, torch_geometric.loader.ClusterData)
    assert ClusterLoader is torch_geometric.loader.ClusterLoader
    assert ClusterData._metis is not torch_geometric.loader.ClusterData._metis


@pytest.mark.skipif(
    importlib.util.find_spec("torch_sparse") is not None
    or importlib.util.find_spec("pyg_lib") is not None,
    reason="torch-sparse or pyg-lib is installed: PyG's own ClusterData runs",
)
def test_pyg_own_cluster_data_needs_pyg_lib_or_torch_sparse_here():
    """The drop-in is needed: PyG's class refuses to partition without them."""
    with pytest.raises(ImportError, match="pyg-lib.*torch-sparse"):
        torch_geometric.loader.ClusterData(graph_data(), num_parts=3, log=False)


def test_docstring_examples_run():
    """fastgl's doctest run walks fastgl/ only: run the drop-in module's."""
    from fastgl.integrations.pyg import cluster

    result = doctest.testmod(cluster, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
