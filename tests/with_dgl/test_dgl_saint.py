"""The SAINTSampler drop-in against DGL 2.1's own: the same subgraph layout, and draws that fit
the probabilities DGL documents (which DGL's own sampler must fit too). Runs in the DGL
environment; skipped where DGL is not installed."""

import pytest
import torch

dgl = pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from reference import assert_chi_square_fits  # noqa: E402

from fastgl.integrations.dgl import SAINTSampler  # noqa: E402

BUDGETS = {"node": 8, "edge": 5, "walk": (3, 2)}


def random_graph(idtype=torch.int64, seed=0) -> "dgl.DGLGraph":
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(0, 35, (150,), generator=generator)  # nodes 35..39: no out-edges
    dst = torch.randint(0, 40, (150,), generator=generator)
    g = dgl.graph((src, dst), num_nodes=40, idtype=idtype)
    g.ndata["feat"] = torch.randn(40, 3, generator=generator)
    g.ndata["label"] = torch.arange(40)
    g.edata["w"] = torch.rand(150, generator=generator)
    return g


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("mode", list(BUDGETS))
def test_the_subgraph_has_dgls_layout(mode, idtype):
    g = random_graph(idtype)
    ours = SAINTSampler(mode, BUDGETS[mode]).sample(g, None)
    dgls = dgl.dataloading.SAINTSampler(mode, BUDGETS[mode])
    if mode == "walk" and idtype == torch.int32:  # DGL 2.1 walks int64 roots on any graph
        with pytest.raises(dgl.DGLError, match='"nodes" to have data type torch.int32'):
            dgls.sample(g, None)
        theirs = ours
    else:
        theirs = dgls.sample(g, None)
    for sg in (ours, theirs):
        assert sg.idtype == idtype
        assert set(sg.ndata.keys()) == {"feat", "label", dgl.NID}
        assert set(sg.edata.keys()) == {"w", dgl.EID}
    nodes, edges = ours.ndata[dgl.NID], ours.edata[dgl.EID]
    assert torch.equal(nodes, nodes.unique())
    assert torch.equal(ours.ndata["feat"], g.ndata["feat"][nodes.long()])
    src, dst = g.edges()
    inside = torch.isin(src, nodes) & torch.isin(dst, nodes)
    assert sorted(edges.tolist()) == inside.nonzero().view(-1).tolist()
    local_src, local_dst = ours.edges()
    assert torch.equal(nodes[local_src.long()], src[edges.long()])
    assert torch.equal(nodes[local_dst.long()], dst[edges.long()])


def draws(sampler, g, count: int) -> list:
    return [sampler.sample(g, None) for _ in range(count)]


@pytest.mark.parametrize("which", ["fastgl", "dgl"])
def test_node_draws_follow_out_degree_at_least_one(which):
    g = random_graph()
    cls = SAINTSampler if which == "fastgl" else dgl.dataloading.SAINTSampler
    torch.manual_seed(0)
    subs = draws(cls("node", 1), g, 4000)
    drawn = torch.bincount(torch.cat([sg.ndata[dgl.NID] for sg in subs]), minlength=40)
    assert_chi_square_fits(drawn, g.out_degrees().clamp(min=1).double(), f"{which} node mode")


@pytest.mark.parametrize("which", ["fastgl", "dgl"])
def test_edge_draws_follow_inverse_degrees(which):
    """On a graph without reverse edges, self-loops or repeats a one-edge draw's subgraph holds
    exactly the edge drawn."""
    ends = torch.randint(0, 12, (60, 2), generator=torch.Generator().manual_seed(5))
    pairs = sorted({(u, v) for u, v in ends.tolist() if u < v})
    src, dst = torch.tensor(pairs).t()
    g = dgl.graph((src, dst), num_nodes=12)
    cls = SAINTSampler if which == "fastgl" else dgl.dataloading.SAINTSampler
    torch.manual_seed(1)
    subs = draws(cls("edge", 1), g, 6000)
    drawn = torch.bincount(torch.cat([sg.edata[dgl.EID] for sg in subs]), minlength=len(pairs))
    weight = 1 / g.out_degrees()[src].double() + 1 / g.in_degrees()[dst].double()
    assert_chi_square_fits(drawn, weight, f"{which} edge mode")


def test_walk_subgraphs_are_the_walks_vertices():
    """On a directed ring a walk of length L from root r visits r .. r+L."""
    g = dgl.graph((torch.arange(10), (torch.arange(10) + 1) % 10))
    torch.manual_seed(2)
    for sg in draws(SAINTSampler("walk", (1, 3)), g, 50):
        nodes = set(sg.ndata[dgl.NID].tolist())
        root = next(r for r in nodes if (r - 1) % 10 not in nodes)
        assert nodes == {(root + k) % 10 for k in range(4)}


def test_it_plugs_into_dgls_dataloader_with_prefetching():
    g = random_graph()
    sampler = SAINTSampler("walk", (4, 2), prefetch_ndata=["feat"], prefetch_edata=["w"])
    loader = dgl.dataloading.DataLoader(g, torch.arange(5), sampler, batch_size=1)
    subs = list(loader)
    assert len(subs) == 5
    for sg in subs:
        assert torch.equal(sg.ndata["feat"], g.ndata["feat"][sg.ndata[dgl.NID]])
        assert torch.equal(sg.edata["w"], g.edata["w"][sg.edata[dgl.EID]])


def test_torch_manual_seed_repeats_and_a_new_graph_rebuilds():
    g, sampler = random_graph(), SAINTSampler("node", 6)
    torch.manual_seed(3)
    first = sampler.sample(g, None).ndata[dgl.NID]
    torch.manual_seed(3)
    assert torch.equal(sampler.sample(g, None).ndata[dgl.NID], first)
    isolated = dgl.graph(([0], [1]), num_nodes=2)
    assert set(sampler.sample(isolated, None).ndata[dgl.NID].tolist()) <= {0, 1}


@pytest.mark.parametrize(
    "mode, budget, error, match",
    [
        ("layer", 5, dgl.DGLError, "Expect mode to be 'node', 'edge' or 'walk', got layer."),
        ("walk", 5, ValueError, r"budget is \(num_roots, walk_length\), got 5"),
        ("node", (5, 2), ValueError, "the node mode's budget is an int"),
    ],
)
def test_bad_arguments_are_refused(mode, budget, error, match):
    with pytest.raises(error, match=match):
        SAINTSampler(mode, budget)


def test_bad_budgets_and_graphs_are_refused_at_the_first_draw():
    g = random_graph()
    with pytest.raises(ValueError, match="SAINTNodeSampler: budget must be >= 1, got 0"):
        SAINTSampler("node", 0).sample(g, None)
    hetero = dgl.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(ValueError, match="fastgl SAINTSampler: fastgl walks homogeneous graphs"):
        SAINTSampler("walk", (1, 2)).sample(hetero, None)
