"""GraphSAINT's node, edge and random-walk samplers (fastgl.sampling.saint) and the normalization
estimated from them: the distributions they draw from (chi-square), the subgraphs they induce
(exactly the graph's edges among the drawn vertices), determinism, bad input, and the estimators
the normalization makes unbiased."""

import pytest
import torch
from reference import (
    assert_chi_square_fits,
    hub_edge_index,
    induced_subgraphs_reference,
    random_edge_index,
)

from fastgl import CSCGraph
from fastgl.sampling import (
    FrontierSampler,
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTRandomWalkSampler,
    saint_normalization,
)


def undirected(num_nodes: int, num_edges: int, seed: int = 0) -> torch.Tensor:
    edge_index = random_edge_index(num_nodes, num_edges, seed=seed)
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    return torch.cat([edge_index, edge_index.flip(0)], 1)


def samplers(graph: CSCGraph) -> dict:
    return {
        "node": SAINTNodeSampler(graph, budget=12),
        "edge": SAINTEdgeSampler(graph, budget=6),
        "walk": SAINTRandomWalkSampler(graph, num_roots=3, walk_length=3),
        "frontier": FrontierSampler(graph, frontier_size=3, budget=10),
    }


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("mode", ["node", "edge", "walk", "frontier"])
def test_a_subgraph_is_induced_on_its_nodes(mode):
    """Every edge of the graph between a subgraph's nodes, once, with its id; no other edge."""
    edge_index = torch.cat([undirected(40, 120), random_edge_index(40, 30, seed=3)], 1)
    graph = CSCGraph.from_edge_index(edge_index, 40)
    for sub in samplers(graph)[mode].sample(20, generator=gen(1)):
        nodes = sub.nodes
        assert nodes.unique().numel() == nodes.numel() > 0
        inside = torch.isin(edge_index, nodes).all(0)
        assert sorted(sub.eid.tolist()) == inside.nonzero().view(-1).tolist()
        assert torch.equal(nodes[sub.edge_index], edge_index[:, sub.eid])
        assert sub.num_sampled_nodes == [nodes.numel(), 0]
        assert sub.num_sampled_edges == [sub.eid.numel()]
        assert torch.equal(sub.seed_index, torch.arange(nodes.numel()))
        block = sub.blocks[0]
        assert block.num_src == block.num_dst == nodes.numel()


@pytest.mark.parametrize("mode", ["node", "edge", "walk"])
def test_saint_samplers_are_deterministic_for_a_seed(mode):
    graph = CSCGraph.from_edge_index(undirected(50, 200), 50)
    sampler = samplers(graph)[mode]
    a, b, c = (sampler.sample(4, generator=gen(s)) for s in (7, 7, 8))
    assert all(torch.equal(x.nodes, y.nodes) and torch.equal(x.eid, y.eid) for x, y in zip(a, b))
    assert any(not torch.equal(x.nodes, z.nodes) for x, z in zip(a, c))
    assert all(torch.equal(sub.nodes, sub.nodes.sort().values) for sub in a)


def test_the_node_sampler_draws_in_proportion_to_out_degree_at_least_one():
    out_degrees = [5, 1, 0, 3, 8, 0, 2]
    sources = torch.cat([torch.full((d,), v) for v, d in enumerate(out_degrees)])
    targets = (sources + 1) % len(out_degrees)
    graph = CSCGraph.from_edge_index(torch.stack([sources, targets]), len(out_degrees))
    subs = SAINTNodeSampler(graph, budget=1).sample(6000, generator=gen(2))
    drawn = torch.bincount(torch.cat([s.nodes for s in subs]), minlength=len(out_degrees))
    assert_chi_square_fits(drawn, [max(d, 1) for d in out_degrees], "node sampler")


def test_the_edge_sampler_draws_in_proportion_to_inverse_degrees():
    """Each edge u -> v of a graph without reverse edges, self-loops or repeats, with
    probability proportional to 1/out_degree(u) + 1/in_degree(v): one draw's subgraph holds
    exactly the edge drawn."""
    pairs = {(u, v) for u, v in random_edge_index(12, 60, seed=5).t().tolist() if u < v}
    edge_index = torch.tensor(sorted(pairs)).t()
    graph = CSCGraph.from_edge_index(edge_index, 12)
    subs = SAINTEdgeSampler(graph, budget=1).sample(8000, generator=gen(3))
    assert all(sub.eid.numel() == 1 for sub in subs)
    drawn = torch.bincount(torch.cat([s.eid for s in subs]), minlength=edge_index.shape[1])
    out_degree = torch.bincount(edge_index[0], minlength=12).double()
    in_degree = torch.bincount(edge_index[1], minlength=12).double()
    weight = 1 / out_degree[edge_index[0]] + 1 / in_degree[edge_index[1]]
    assert_chi_square_fits(drawn, weight, "edge sampler")


def test_a_walk_subgraph_is_a_uniform_roots_path():
    """On a directed ring a walk of length L from root r visits r .. r+L: the subgraph is that
    arc, its root uniform."""
    n, length = 10, 3
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    graph = CSCGraph.from_edge_index(ring, n)
    subs = SAINTRandomWalkSampler(graph, num_roots=1, walk_length=length).sample(
        3000, generator=gen(4)
    )
    roots = []
    for sub in subs:
        nodes = set(sub.nodes.tolist())
        root = next(r for r in nodes if (r - 1) % n not in nodes)
        assert nodes == {(root + k) % n for k in range(length + 1)}
        roots.append(root)
    assert_chi_square_fits(torch.bincount(torch.tensor(roots), minlength=n), [1.0] * n, "roots")


def test_a_walk_ends_at_a_node_without_out_edges():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]), 4)
    subs = SAINTRandomWalkSampler(graph, num_roots=1, walk_length=5).sample(40, generator=gen(0))
    assert {tuple(s.nodes.tolist()) for s in subs} == {(0, 1, 2), (1, 2), (2,), (3,)}


def test_normalization_counts_what_the_sampler_draws():
    """node_norm = S / (C_v N) and edge_norm = C_target / C_e over the same S subgraphs drawn
    again from the same seed; PyG's values where a count is 0 (an isolated edge's ends are
    rarely drawn by walks of two roots)."""
    edge_index = torch.cat([undirected(30, 50), torch.tensor([[30], [31]])], 1)
    graph = CSCGraph.from_edge_index(edge_index, 32)
    sampler = SAINTRandomWalkSampler(graph, num_roots=2, walk_length=2)
    norm = saint_normalization(sampler, 3, subgraphs_per_call=5, generator=gen(9))
    subs, replay = [], gen(9)
    while sum(s.nodes.numel() for s in subs) < 3 * 32:
        subs += sampler.sample(5, replay)
    assert len(subs) == norm.num_subgraphs
    node_count = torch.bincount(torch.cat([s.nodes for s in subs]), minlength=32).double()
    edge_count = torch.bincount(
        torch.cat([s.eid for s in subs]), minlength=edge_index.shape[1]
    ).double()
    target_count = node_count[edge_index[1]]
    expected_edge = torch.where(
        edge_count > 0,
        target_count / edge_count,
        torch.where(target_count > 0, 1e4, 0.1),
    ).clamp(max=1e4)
    expected_node = len(subs) / (torch.where(node_count == 0, 0.1, node_count) * 32)
    assert (edge_count == 0).any() and (node_count == 0).any()
    assert torch.allclose(norm.edge_norm.double(), expected_edge, rtol=1e-6)
    assert torch.allclose(norm.node_norm.double(), expected_node, rtol=1e-6)
    assert norm.node_norm.dtype == norm.edge_norm.dtype == torch.float32


def estimates(sampler, node_norm, edge_norm, x, num_subgraphs, generator):
    """The mean over subgraphs of the weighted loss sum, and per vertex the mean of its weighted
    aggregation over the subgraphs holding it."""
    num_nodes = sampler.graph.num_nodes
    loss, total, seen = 0.0, torch.zeros(num_nodes), torch.zeros(num_nodes)
    for sub in sampler.sample(num_subgraphs, generator):
        loss += float((node_norm(sub) * x[sub.nodes]).sum())
        messages = edge_norm[sub.eid] * x[sub.nodes[sub.row]]
        total[sub.nodes] += torch.zeros(sub.nodes.numel()).index_add_(0, sub.col, messages)
        seen[sub.nodes] += 1
    return loss / num_subgraphs, total / seen


def relative_error(estimate: torch.Tensor, exact: torch.Tensor) -> float:
    return float((estimate - exact).norm() / exact.norm())


@pytest.mark.parametrize("mode", ["walk", "edge"])
def test_the_normalization_makes_loss_and_aggregation_unbiased(mode):
    """GraphSAINT §3.2: the node_norm-weighted loss over a subgraph estimates the mean loss over
    the graph, and edge_norm-weighted aggregation at v (given v sampled) the full aggregation,
    on a graph whose vertices are drawn with very different probabilities (a ring, and hubs
    0-7 that every other vertex links to). The plain subgraph mean and unweighted aggregation
    miss by far more, and so do PyG's edge weights, which divide the count of an edge's source
    instead of its target."""
    ring = torch.stack([torch.arange(40), (torch.arange(40) + 1) % 40])
    spokes = torch.stack([torch.arange(8, 40).repeat(3), torch.arange(96) % 8])
    edge_index = torch.cat([ring, ring.flip(0), spokes, spokes.flip(0)], 1)
    graph = CSCGraph.from_edge_index(edge_index, 40)
    sampler = (
        SAINTRandomWalkSampler(graph, num_roots=2, walk_length=2)
        if mode == "walk"
        else SAINTEdgeSampler(graph, budget=3)
    )
    norm = saint_normalization(sampler, 600, subgraphs_per_call=2048, generator=gen(1))
    # A loss small on the often drawn hubs and large elsewhere.
    x = torch.where(torch.arange(40) < 8, 0.1, 1.0) + 0.5 * torch.rand(40, generator=gen(2))
    full = torch.zeros(40).index_add_(0, edge_index[1], x[edge_index[0]])

    def weighted(sub):
        return norm.node_norm[sub.nodes]

    loss, aggregated = estimates(sampler, weighted, norm.edge_norm, x, 8000, gen(3))
    assert loss == pytest.approx(float(x.mean()), rel=0.03)
    assert relative_error(aggregated, full) < 0.03

    def plain(sub):
        return torch.full((sub.nodes.numel(),), 1 / sub.nodes.numel())

    ones = torch.ones_like(norm.edge_norm)
    plain_loss, plain_aggregated = estimates(sampler, plain, ones, x, 2000, gen(3))
    assert abs(plain_loss / float(x.mean()) - 1) > 0.1
    assert relative_error(plain_aggregated, full) > 0.2

    count = norm.num_subgraphs / (norm.node_norm * 40)  # C_v back from node_norm
    by_source = norm.edge_norm * count[edge_index[0]] / count[edge_index[1]]
    _, pyg_aggregated = estimates(sampler, weighted, by_source, x, 2000, gen(3))
    assert relative_error(pyg_aggregated, full) > 0.1


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda g: SAINTNodeSampler(g, budget=0), "SAINTNodeSampler: budget must be >= 1, got 0"),
        (lambda g: SAINTEdgeSampler(g, budget=-2), "SAINTEdgeSampler: budget must be >= 1"),
        (
            lambda g: SAINTRandomWalkSampler(g, num_roots=0, walk_length=2),
            "SAINTRandomWalkSampler: num_roots must be >= 1, got 0",
        ),
        (
            lambda g: SAINTRandomWalkSampler(g, num_roots=1, walk_length=-1),
            "SAINTRandomWalkSampler: walk_length must be >= 0, got -1",
        ),
        (
            lambda g: SAINTEdgeSampler(
                CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.long), 3), 2
            ),
            "SAINTEdgeSampler: the graph has no edges to draw",
        ),
        (
            lambda g: SAINTNodeSampler(
                CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.long), 0), 2
            ),
            "SAINTNodeSampler: the graph has no nodes to draw",
        ),
        (
            lambda g: SAINTNodeSampler(g, 2).sample(-1),
            "SAINTNodeSampler: num_subgraphs must be >= 0, got -1",
        ),
        (
            lambda g: saint_normalization(SAINTNodeSampler(g, 2), 0),
            "saint_normalization: sample_coverage must be > 0, got 0",
        ),
        (
            lambda g: saint_normalization(SAINTNodeSampler(g, 2), 1, subgraphs_per_call=0),
            "saint_normalization: subgraphs_per_call must be >= 1, got 0",
        ),
    ],
)
def test_bad_arguments_are_refused(build, match):
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 2]]), 3)
    with pytest.raises(ValueError, match=match):
        build(graph)


def test_zero_subgraphs_and_a_graph_of_isolated_nodes():
    busy = CSCGraph.from_edge_index(undirected(20, 60), 20)
    assert all(sampler.sample(0) == [] for sampler in samplers(busy).values())
    graph = CSCGraph.from_edge_index(torch.empty(2, 0, dtype=torch.long), 5)
    assert SAINTNodeSampler(graph, 3).sample(0) == []
    assert SAINTNodeSampler(graph, 50).sample(1, generator=gen(0))[0].nodes.tolist() == [
        0,
        1,
        2,
        3,
        4,
    ]
    sub = SAINTRandomWalkSampler(graph, 2, 4).sample(1, generator=gen(0))[0]
    assert 1 <= sub.nodes.numel() <= 2 and sub.eid.numel() == 0


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_induced_subgraphs_match_the_reference_and_the_search(dtype):
    """The compiled op, the vectorized search (the non-CPU path) and plain Python agree, on
    sets with hubs, self-loops, repeated edges and empty sets."""
    edge_index = torch.cat([random_edge_index(50, 400, seed=8), torch.tensor([[3, 3], [3, 3]])], 1)
    graph = CSCGraph.from_edge_index(edge_index.to(dtype), 50)
    gen = torch.Generator().manual_seed(4)
    sets = [torch.randperm(50, generator=gen)[:size] for size in (0, 1, 20, 50, 7, 0)]
    nodes = torch.cat(sets)
    ptr = torch.tensor([0] + [len(x) for x in sets]).cumsum(0)
    eid = graph.edge_ids()
    assert not torch.equal(eid, torch.arange(eid.numel()))  # ids that differ from slots
    expected = induced_subgraphs_reference(graph.indptr, graph.indices, eid, nodes, ptr)
    compiled = torch.ops.fastgl.induced_subgraphs(graph.indptr, graph.indices, eid, nodes, ptr)
    row, col, slots, edge_ptr = graph._induced_by_search(nodes, ptr)
    searched = (row, col, eid[slots], edge_ptr)
    for got, by_search, want in zip(compiled, searched, expected):
        assert torch.equal(got, want) and torch.equal(by_search, want)
    by_slot = torch.ops.fastgl.induced_subgraphs(graph.indptr, graph.indices, None, nodes, ptr)
    assert torch.equal(by_slot[2], slots)


@pytest.mark.parametrize("num_sets", [1, 16, 65])
@pytest.mark.parametrize("threads", [1, 2])
def test_induced_subgraphs_of_many_overlapping_sets(num_sets, threads):
    """Many sets sharing their hubs (as the samplers' sets do), split among 1 or 2 threads,
    give the reference's edges; the hub's 700 in-edges span several of the write pass's
    256-edge chunks."""
    edge_index, num_nodes = hub_edge_index(hub_degree=700, num_nodes=60, extra_edges=500, seed=3)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    gen = torch.Generator().manual_seed(num_sets)
    hubs = torch.argsort(graph.in_degrees(), descending=True)[:3]
    sets = []
    for _ in range(num_sets):
        drawn = torch.randperm(num_nodes, generator=gen)[
            : int(torch.randint(0, 30, (1,), generator=gen))
        ]
        sets.append(torch.cat([hubs, drawn[~torch.isin(drawn, hubs)]]))
    nodes = torch.cat(sets)
    ptr = torch.tensor([0] + [len(x) for x in sets]).cumsum(0)
    expected = induced_subgraphs_reference(graph.indptr, graph.indices, graph.eid, nodes, ptr)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = torch.ops.fastgl.induced_subgraphs(graph.indptr, graph.indices, graph.eid, nodes, ptr)
    finally:
        torch.set_num_threads(before)
    for g, e, name in zip(got, expected, ("row", "col", "eid", "edge_ptr")):
        assert torch.equal(g, e), name


def test_induced_subgraphs_name_a_repeat_in_a_later_set():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), 3)
    nodes = torch.tensor([0, 1, 2] * 70 + [2, 2])
    ptr = torch.tensor(list(range(0, 211, 3)) + [212])
    with pytest.raises(RuntimeError, match="induced_subgraphs: node 2 appears twice in set 70"):
        torch.ops.fastgl.induced_subgraphs(graph.indptr, graph.indices, None, nodes, ptr)


@pytest.mark.parametrize(
    "nodes, ptr, match",
    [
        ([0, 1, 0], [0, 3], "node 0 appears twice in set 0"),
        ([0, 5], [0, 2], "nodes id 5 out of range for a graph of 3 nodes"),
        ([0, -1], [0, 2], "nodes id -1 is negative"),
        ([0, 1], [0, 3], r"ptr\[-1\] is 3 but must be 2"),
        ([0, 1], [1, 2], r"ptr\[0\] is 1 but must be 0"),
    ],
)
def test_induced_subgraphs_refuse_bad_sets(nodes, ptr, match):
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), 3)
    with pytest.raises(RuntimeError, match="induced_subgraphs: " + match):
        torch.ops.fastgl.induced_subgraphs(
            graph.indptr, graph.indices, None, torch.tensor(nodes), torch.tensor(ptr)
        )


def test_induced_subgraphs_check_the_rows_they_read():
    indptr, indices = torch.tensor([0, 2, 1, 3]), torch.tensor([1, 2, 0])
    with pytest.raises(RuntimeError, match="induced_subgraphs: indptr is not a valid CSC"):
        torch.ops.fastgl.induced_subgraphs(
            indptr, indices, None, torch.tensor([0, 1]), torch.tensor([0, 2])
        )
    # A bad source after good ones in its row, negative (int32 and int64) or past the last node;
    # the first bad one in the row is named.
    indptr = torch.tensor([0, 1, 4])
    for bad, dtype in (
        (7, torch.int64),
        (-1, torch.int64),
        (-1, torch.int32),
        (2**31 - 1, torch.int32),
    ):
        indices = torch.tensor([1, 0, bad, -5], dtype=dtype)
        with pytest.raises(RuntimeError, match=f"induced_subgraphs: indices id {bad} out of range"):
            torch.ops.fastgl.induced_subgraphs(
                indptr, indices, None, torch.tensor([0, 1]), torch.tensor([0, 2])
            )
