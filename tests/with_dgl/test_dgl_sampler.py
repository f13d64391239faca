"""fastgl.integrations.dgl.NeighborSampler against DGL's own sampler and DGL's conventions.

Runs in the DGL environment (``make test`` runs it there); skipped where DGL is not installed.
"""

import collections

import pytest
import torch

dgl = pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")
stats = pytest.importorskip("scipy.stats")

from fastgl.integrations.dgl import MultiLayerFullNeighborSampler, NeighborSampler  # noqa: E402
from fastgl.integrations.dgl import sampler as sampler_module  # noqa: E402


def random_graph(num_nodes=300, num_edges=3000, idtype=torch.int64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    g = dgl.graph((src, dst), num_nodes=num_nodes, idtype=idtype)
    g.ndata["feat"] = torch.randn(num_nodes, 4, generator=generator)
    g.ndata["label"] = torch.randint(0, 5, (num_nodes,), generator=generator)
    g.edata["w"] = torch.rand(num_edges, generator=generator)
    return g


def star_graph(num_leaves, idtype=torch.int64):
    """Node 0 has one in-edge from each of nodes 1..num_leaves (edge id = leaf - 1)."""
    leaves = torch.arange(1, num_leaves + 1)
    return dgl.graph((leaves, torch.zeros_like(leaves)), num_nodes=num_leaves + 1, idtype=idtype)


def check_block_layout(g, blocks, seeds):
    """DGL's conventions: global NID/EID, destinations = prefix of sources, chained layers."""
    assert torch.equal(blocks[-1].dstdata[dgl.NID], seeds)
    for i, block in enumerate(blocks):
        src_nid, dst_nid = block.srcdata[dgl.NID], block.dstdata[dgl.NID]
        assert src_nid.dtype == dst_nid.dtype == block.edata[dgl.EID].dtype == g.idtype
        assert block.idtype == g.idtype
        assert torch.equal(src_nid[: block.num_dst_nodes()], dst_nid)
        assert src_nid.unique().numel() == src_nid.numel()
        src, dst = block.edges()
        u, v = g.find_edges(block.edata[dgl.EID])
        assert torch.equal(src_nid[src.long()], u) and torch.equal(dst_nid[dst.long()], v)
        if i + 1 < len(blocks):
            assert torch.equal(blocks[i + 1].srcdata[dgl.NID], dst_nid)


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_blocks_follow_dgl_conventions_and_fanout_order(idtype):
    g = random_graph(idtype=idtype)
    seeds = torch.tensor([3, 17, 250, 99], dtype=idtype)
    fanouts = [2, 7]  # input layer first, as in DGL
    input_nodes, output_nodes, blocks = NeighborSampler(fanouts).sample(g, seeds)
    check_block_layout(g, blocks, seeds)
    assert torch.equal(output_nodes, seeds)
    assert torch.equal(input_nodes, blocks[0].srcdata[dgl.NID])
    in_degrees = g.in_degrees()
    for block, fanout in zip(blocks, fanouts):
        dst_nid = block.dstdata[dgl.NID].long()
        assert torch.equal(block.in_degrees().long(), in_degrees[dst_nid].clamp(max=fanout).long())
        eids = block.edata[dgl.EID]
        assert eids.unique().numel() == eids.numel()  # without replacement


def test_same_block_shapes_as_dgl_and_full_sampler_gives_dgl_edges():
    g = random_graph()
    seeds = torch.tensor([5, 6, 7, 123])
    ours = MultiLayerFullNeighborSampler(2).sample(g, seeds)[2]
    theirs = dgl.dataloading.MultiLayerFullNeighborSampler(2).sample(g, seeds)[2]
    assert len(ours) == len(theirs) == 2
    assert torch.equal(ours[-1].dstdata[dgl.NID], theirs[-1].dstdata[dgl.NID])
    for a, b in zip(ours, theirs):  # new sources may come in another order than DGL's
        assert set(a.dstdata[dgl.NID].tolist()) == set(b.dstdata[dgl.NID].tolist())
        assert set(a.srcdata[dgl.NID].tolist()) == set(b.srcdata[dgl.NID].tolist())
        assert sorted(a.edata[dgl.EID].tolist()) == sorted(b.edata[dgl.EID].tolist())


def test_every_layer_draws_fresh_neighbors_like_dgl():
    # DGL's semantics: the seeds get fanouts[-1] in-edges in the last block and fanouts[0]
    # (independently drawn) in the first one.
    g = star_graph(50)
    blocks = NeighborSampler([3, 9]).sample(g, torch.tensor([0]))[2]
    assert blocks[1].num_edges() == 9 and blocks[0].in_degrees()[0] == 3


def test_uniform_draws_are_uniform():
    g = star_graph(12)
    sampler = NeighborSampler([4])
    counts = collections.Counter()
    torch.manual_seed(0)
    for _ in range(600):
        counts.update(sampler.sample(g, torch.tensor([0]))[2][0].edata[dgl.EID].tolist())
    observed = [counts[e] for e in range(12)]
    assert stats.chisquare(observed).pvalue > 1e-3


def test_prob_draws_proportionally_and_never_zero_probability_edges():
    g = star_graph(6)
    g.edata["p"] = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 0.0])
    sampler = NeighborSampler([2], prob="p", replace=True)
    counts = collections.Counter()
    torch.manual_seed(1)
    for _ in range(1500):
        counts.update(sampler.sample(g, torch.tensor([0]))[2][0].edata[dgl.EID].tolist())
    assert counts[0] == counts[5] == 0
    observed = [counts[e] for e in range(1, 5)]
    expected = [3000 * p / 10 for p in (1, 2, 3, 4)]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_mask_keeps_masked_edges_out():
    g = random_graph()
    g.edata["keep"] = torch.arange(g.num_edges()) % 3 != 0
    blocks = NeighborSampler([10, 10], mask="keep").sample(g, torch.arange(0, 300, 7))[2]
    for block in blocks:
        assert bool(g.edata["keep"][block.edata[dgl.EID]].all())


def test_same_seed_same_sample():
    g = random_graph()
    sampler = NeighborSampler([3, 3])
    seeds = torch.arange(20)
    torch.manual_seed(7)
    first = sampler.sample(g, seeds)[2]
    torch.manual_seed(7)
    second = sampler.sample(g, seeds)[2]
    for a, b in zip(first, second):
        assert torch.equal(a.edata[dgl.EID], b.edata[dgl.EID])


def test_dataloader_with_workers_and_lazy_features():
    g = random_graph()
    sampler = NeighborSampler(
        [4, 4], prefetch_node_feats=["feat"], prefetch_labels=["label"], prefetch_edge_feats=["w"]
    )
    seen = []
    for workers in (0, 2):
        loader = dgl.dataloading.DataLoader(
            g, torch.arange(100), sampler, batch_size=16, shuffle=True, num_workers=workers
        )
        seeds = []
        for input_nodes, output_nodes, blocks in loader:
            check_block_layout(g, blocks, output_nodes)
            assert torch.equal(blocks[0].srcdata["feat"], g.ndata["feat"][input_nodes])
            assert torch.equal(blocks[-1].dstdata["label"], g.ndata["label"][output_nodes])
            assert torch.equal(blocks[0].edata["w"], g.edata["w"][blocks[0].edata[dgl.EID]])
            seeds.append(output_nodes)
        seen.append(torch.cat(seeds).sort().values)
    assert all(torch.equal(s, torch.arange(100)) for s in seen)


def test_graph_csc_is_built_once_and_rebuilt_when_prob_changes(monkeypatch):
    calls = []
    build = sampler_module._build_csc
    monkeypatch.setattr(sampler_module, "_build_csc", lambda *a: calls.append(1) or build(*a))
    g = random_graph()
    sampler = NeighborSampler([3], prob="w")
    for start in range(0, 100, 10):
        sampler.sample(g, torch.arange(start, start + 10))
    assert len(calls) == 1
    g.edata["w"][:] = 0  # in place: no edge may be drawn any more
    assert sampler.sample(g, torch.arange(10))[2][0].num_edges() == 0
    assert len(calls) == 2


@pytest.mark.parametrize("exclude", ["self", "reverse_id"])
def test_edge_prediction_excludes_seed_edges(exclude):
    num = 200
    src = torch.randint(0, num, (1500,), generator=torch.Generator().manual_seed(3))
    dst = torch.randint(0, num, (1500,), generator=torch.Generator().manual_seed(4))
    g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=num)
    half = src.numel()
    reverse = torch.cat([torch.arange(half, 2 * half), torch.arange(0, half)])
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        NeighborSampler([-1, -1]),
        exclude=exclude,
        reverse_eids=reverse,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(2),
    )
    loader = dgl.dataloading.DataLoader(g, torch.arange(half), sampler, batch_size=64)
    batches = 0
    for _input_nodes, pair_graph, neg_graph, blocks in loader:
        seed_eids = pair_graph.edata[dgl.EID]
        excluded = set(seed_eids.tolist())
        if exclude == "reverse_id":
            excluded |= set(reverse[seed_eids].tolist())
        for block in blocks:
            assert not excluded & set(block.edata[dgl.EID].tolist())
        check_block_layout(g, blocks, blocks[-1].dstdata[dgl.NID])
        assert neg_graph.num_edges() == 2 * pair_graph.num_edges()
        batches += 1
    assert batches == -(-half // 64)
    # Excluding is per batch: the next plain sample sees every edge again.
    full = NeighborSampler([-1]).sample(g, torch.arange(num))[2][0]
    assert full.num_edges() == g.num_edges()


def test_exclusion_leaves_later_batches_untouched():
    g = random_graph()
    sampler = NeighborSampler([-1])
    seeds = torch.arange(300)
    excluded = torch.arange(0, g.num_edges(), 2)
    kept = sampler.sample(g, seeds, exclude_eids=excluded)[2][0]
    assert set(kept.edata[dgl.EID].tolist()) == set(range(1, g.num_edges(), 2))
    assert sampler.sample(g, seeds)[2][0].num_edges() == g.num_edges()


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_exclusion_ignores_ids_of_no_edge_as_dgl_does(idtype):
    # DGL drops a sampled edge when its id is among the excluded ones, so an id past the last
    # edge (or a negative one) matches nothing; it must not wrap around or crash either.
    g = random_graph(idtype=idtype)
    seeds = torch.arange(0, 300, 3, dtype=idtype)
    num_edges = g.num_edges()
    for excluded in (
        torch.tensor([num_edges, num_edges + 7, 10 * num_edges]),
        torch.tensor([5, num_edges, 17, num_edges + 1, -1, -num_edges]),
        torch.tensor([-1]),
    ):
        excluded = excluded.to(idtype)
        expected = dgl.dataloading.NeighborSampler([-1]).sample(g, seeds, exclude_eids=excluded)
        actual = NeighborSampler([-1]).sample(g, seeds, exclude_eids=excluded)
        assert sorted(actual[2][0].edata[dgl.EID].tolist()) == sorted(
            expected[2][0].edata[dgl.EID].tolist()
        )


def test_bad_arguments_are_rejected():
    g = random_graph()
    with pytest.raises(ValueError, match="edge_dir='in'"):
        NeighborSampler([2], edge_dir="out")
    with pytest.raises(ValueError, match="mutually exclusive"):
        NeighborSampler([2], prob="w", mask="w")
    with pytest.raises(ValueError, match="fanouts"):
        NeighborSampler([2, -3])
    with pytest.raises(ValueError, match="no edge feature 'nope'"):
        NeighborSampler([2], prob="nope").sample(g, torch.arange(3))
    g.edata["neg"] = -torch.ones(g.num_edges())
    with pytest.raises(ValueError, match="non-negative"):
        NeighborSampler([2], prob="neg").sample(g, torch.arange(3))
    with pytest.raises(ValueError, match="duplicate"):
        NeighborSampler([2]).sample(g, torch.tensor([1, 1]))
    with pytest.raises(RuntimeError, match="id 300 out of range"):
        NeighborSampler([2]).sample(g, torch.tensor([1, 300]))
    with pytest.raises(TypeError, match=r"fanouts\[1\] must be an int"):
        NeighborSampler([2, 2.5])
    with pytest.raises(ValueError, match="empty dict"):
        NeighborSampler([2]).sample(g, {})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("mode", ["gpu_graph", "uva"])
def test_gpu_graph_and_uva(mode):
    g = random_graph()
    graph = g.to("cuda") if mode == "gpu_graph" else g
    loader = dgl.dataloading.DataLoader(
        graph,
        torch.arange(64, device="cuda"),
        NeighborSampler([3, 3]),
        batch_size=16,
        device="cuda",
        use_uva=mode == "uva",
    )
    for _input_nodes, output_nodes, blocks in loader:
        assert all(b.device.type == "cuda" for b in blocks)
        check_block_layout(g, [b.to("cpu") for b in blocks], output_nodes.cpu())
