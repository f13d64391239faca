"""The ClusterGCNSampler drop-in against DGL 2.1's own: the same cache file (either reads the
other's) and, for the same partition, the same subgraphs; every node once an epoch through
DGL's DataLoader. Runs in the DGL environment; skipped where DGL is not installed."""

import pytest
import torch

dgl = pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from fastgl.integrations.dgl import ClusterGCNSampler  # noqa: E402


def random_graph(idtype=torch.int64, seed=0) -> "dgl.DGLGraph":
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 60, (300,), generator=generator)
    dst = torch.randint(0, 60, (300,), generator=generator)
    g = dgl.graph((src, dst), num_nodes=60, idtype=idtype)
    g.ndata["feat"] = torch.randn(60, 3, generator=generator)
    g.edata["w"] = torch.rand(300, generator=generator)
    return g


def assert_same_subgraph(a, b) -> None:
    """The same subgraph, ids compared as int64 (the graphs' id types may differ)."""
    assert torch.equal(a.ndata[dgl.NID].long(), b.ndata[dgl.NID].long())
    assert torch.equal(a.edata[dgl.EID].long(), b.edata[dgl.EID].long())
    assert all(torch.equal(x.long(), y.long()) for x, y in zip(a.edges(), b.edges()))
    assert torch.equal(a.ndata["feat"], b.ndata["feat"]) and torch.equal(a.edata["w"], b.edata["w"])


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_dgl_reads_our_partition_and_draws_the_same_subgraphs(tmp_path, idtype):
    """On an int32 graph DGL 2.1's own sampler fails (it hands g.subgraph int64 ids); the
    drop-in does not, and draws what DGL's draws from the same graph as int64."""
    g, cache = random_graph(idtype), str(tmp_path / "parts.pkl")
    ours = ClusterGCNSampler(g, 6, cache_path=cache)
    theirs = dgl.dataloading.ClusterGCNSampler(g, 6, cache_path=cache)
    assert torch.equal(torch.as_tensor(theirs.partition_offset), ours.partition_offset)
    if idtype == torch.int32:
        with pytest.raises(dgl.DGLError, match="to have data type torch.int32"):
            theirs.sample(g, torch.tensor([0]))
    for ids in ([0], [3, 1], [5, 2, 4]):
        sub = ours.sample(g, torch.tensor(ids))
        assert sub.idtype == idtype
        assert_same_subgraph(sub, theirs.sample(g.long(), torch.tensor(ids)))


def test_we_read_dgls_partition(tmp_path):
    g, cache = random_graph(), str(tmp_path / "parts.pkl")
    try:
        theirs = dgl.dataloading.ClusterGCNSampler(g, 4, cache_path=cache)
    except dgl.DGLError as error:  # a DGL build without METIS
        pytest.skip(f"DGL's own METIS does not run here: {error}")
    ours = ClusterGCNSampler(g, 4, cache_path=cache)
    assert torch.equal(ours.partition_node_ids, torch.as_tensor(theirs.partition_node_ids))
    assert_same_subgraph(
        ours.sample(g, torch.tensor([2, 0])), theirs.sample(g, torch.tensor([2, 0]))
    )


def test_an_epoch_through_dgls_dataloader_holds_every_node_once(tmp_path):
    g = random_graph()
    sampler = ClusterGCNSampler(g, 6, cache_path=str(tmp_path / "p.pkl"), prefetch_ndata=["feat"])
    loader = dgl.dataloading.DataLoader(g, torch.arange(6), sampler, batch_size=4, shuffle=True)
    nodes = []
    for sg in loader:
        ids = sg.ndata[dgl.NID]
        assert torch.equal(sg.ndata["feat"], g.ndata["feat"][ids])
        src, dst = g.edges()
        inside = torch.isin(src, ids) & torch.isin(dst, ids)
        assert sorted(sg.edata[dgl.EID].tolist()) == inside.nonzero().view(-1).tolist()
        nodes += ids.tolist()
    assert sorted(nodes) == list(range(60))


def test_bad_arguments_and_caches_are_rejected(tmp_path):
    g, cache = random_graph(), str(tmp_path / "parts.pkl")
    with pytest.raises(NotImplementedError, match="balance_ntypes and balance_edges"):
        ClusterGCNSampler(g, 4, cache_path=cache, balance_edges=True)
    with pytest.raises(dgl.DGLError, match="mode must be 'k-way' or 'recursive'"):
        ClusterGCNSampler(g, 4, cache_path=cache, mode="spectral")
    ClusterGCNSampler(g, 4, cache_path=cache)
    ClusterGCNSampler(g, 4, cache_path=cache, balance_edges=True)  # as DGL: the cache stands
    with pytest.raises(dgl.DGLError, match="holds 4 partitions, not k = 5"):
        ClusterGCNSampler(g, 5, cache_path=cache)
    with pytest.raises(dgl.DGLError, match="holds 60 nodes, the graph 61"):
        ClusterGCNSampler(dgl.add_nodes(g, 1), 4, cache_path=cache)
    (tmp_path / "bad.pkl").write_bytes(b"not a pickle")
    with pytest.raises(dgl.DGLError, match="is invalid"):
        ClusterGCNSampler(g, 4, cache_path=str(tmp_path / "bad.pkl"))
    hetero = dgl.heterograph({("a", "r", "b"): ([0], [1])})
    with pytest.raises(ValueError, match="fastgl ClusterGCNSampler: homogeneous graphs only"):
        ClusterGCNSampler(hetero, 1, cache_path=str(tmp_path / "h.pkl"))
