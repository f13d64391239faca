"""The DGL random-walk drop-ins against DGL 2.1's own functions and the exact walk distributions.

Runs in the DGL environment (``make test`` runs it there); skipped where DGL is not installed.
Layouts (shapes, dtypes, padding, edge ids, types, the neighbor graphs) are compared with DGL's
output on the same graph; distributions (first and second steps, walk lengths, visit counts)
are checked by chi-square against the exact probabilities, which DGL's own walks must fit too
(so the drop-in's semantics are DGL's, not just self-consistent).
"""

import doctest

import pytest
import torch

dgl = pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from reference import assert_chi_square_fits, walk_step_probabilities  # noqa: E402

from fastgl.integrations.dgl import (  # noqa: E402
    PinSAGESampler,
    RandomWalkNeighborSampler,
    node2vec_random_walk,
    random_walk,
    walks,
)
from fastgl.integrations.dgl.walks import _most_visited  # noqa: E402

IDTYPES = [torch.int32, torch.int64]


def random_graph(num_nodes=60, num_edges=400, idtype=torch.int64, seed=0, num_sinks=5):
    """A random directed graph whose last ``num_sinks`` nodes have no out-edges, with a positive
    float edge feature ``"w"``."""
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes - num_sinks, (num_edges,), generator=generator)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    g = dgl.graph((src, dst), num_nodes=num_nodes, idtype=idtype)
    g.edata["w"] = torch.rand(num_edges, generator=generator) + 0.1
    return g


def undirected_graph(num_nodes=12, num_edges=30, seed=1):
    """A random graph with every edge in both directions (node2vec's setting) and no self
    loops or repeated edges."""
    generator = torch.Generator().manual_seed(seed)
    pairs = torch.randint(0, num_nodes, (2, num_edges), generator=generator)
    pairs = pairs[:, pairs[0] != pairs[1]]
    both = torch.cat([pairs, pairs.flip(0)], dim=1).unique(dim=1)
    return dgl.graph((both[0], both[1]), num_nodes=num_nodes)


def cycle_graph(num_nodes):
    """``i -> i + 1 (mod num_nodes)``: a walk of ``t`` steps from ``s`` ends at ``s + t``."""
    nodes = torch.arange(num_nodes)
    return dgl.graph((nodes, (nodes + 1) % num_nodes))


def edge_index_of(g):
    src, dst = g.edges(order="eid")
    return torch.stack([src.long(), dst.long()])


def check_walks(g, nodes, traces, eids, prob=None, restarts=False):
    """Every walk starts at its node, every step is the edge ``eids`` names from one trace entry
    to the next, -1 pads a suffix of traces and eids alike, and (without restarts) a walk ends
    only at a node with no out-edge it could draw."""
    assert torch.equal(traces[:, 0], nodes)
    taken = eids >= 0
    assert torch.equal(taken, traces[:, 1:] >= 0)
    assert torch.equal(taken, taken.int().cummin(1).values.bool()), "-1 must pad a suffix"
    src, dst = g.find_edges(eids[taken])
    assert torch.equal(src, traces[:, :-1][taken]) and torch.equal(dst, traces[:, 1:][taken])
    if restarts:
        return
    weight = torch.ones(g.num_edges()) if prob is None else g.edata[prob]
    steps = taken.sum(1)
    ended = steps < eids.shape[1]
    last = traces[torch.arange(traces.shape[0])[ended], steps[ended]]
    out_weight = torch.zeros(g.num_nodes()).index_add_(0, g.edges()[0].long(), weight.float())
    assert bool((out_weight[last.long()] == 0).all()), "a walk ended at a node it could leave"


def assert_same_layout(ours, theirs):
    assert type(ours) is type(theirs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)


def test_docstring_examples_run():
    torch.manual_seed(0)
    result = doctest.testmod(walks, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 15 and result.failed == 0


# ---------------------------------------------------------------------------------------------
# random_walk and node2vec_random_walk: layout


@pytest.mark.parametrize("idtype", IDTYPES)
@pytest.mark.parametrize("return_eids", [False, True])
def test_random_walk_returns_dgl_layout(idtype, return_eids):
    g = random_graph(idtype=idtype)
    nodes = torch.tensor([0, 7, 7, 59, 30], dtype=idtype)  # 59 has no out-edges
    ours = random_walk(g, nodes, length=6, return_eids=return_eids)
    theirs = dgl.sampling.random_walk(g, nodes, length=6, return_eids=return_eids)
    assert_same_layout(ours, theirs)
    assert torch.equal(ours[-1], theirs[-1])  # the node types: all 0
    traces, eids, _ = random_walk(g, nodes, length=6, return_eids=True)
    check_walks(g, nodes, traces, eids)
    assert bool((traces[3, 1:] == -1).all())


@pytest.mark.parametrize("idtype", IDTYPES)
@pytest.mark.parametrize("return_eids", [False, True])
def test_node2vec_returns_dgl_layout(idtype, return_eids):
    g = random_graph(idtype=idtype)
    nodes = torch.tensor([1, 2, 59], dtype=idtype)
    ours = node2vec_random_walk(g, nodes, 2.0, 0.5, 5, return_eids=return_eids)
    theirs = dgl.sampling.node2vec_random_walk(g, nodes, 2.0, 0.5, 5, return_eids=return_eids)
    assert_same_layout(ours, theirs)
    traces, eids = node2vec_random_walk(g, nodes, 2.0, 0.5, 5, prob="w", return_eids=True)
    check_walks(g, nodes, traces, eids, prob="w")


def test_nodes_as_dgl_takes_them():
    g = random_graph(idtype=torch.int32)
    traces, types = random_walk(g, [3, 4], length=2)  # a list, converted to the idtype
    assert traces.dtype == types.dtype == torch.int32 and traces[:, 0].tolist() == [3, 4]
    assert random_walk(g, torch.tensor([], dtype=torch.int32), length=3)[0].shape == (0, 4)
    assert random_walk(g, [5], length=0)[0].tolist() == [[5]]


def test_zero_probability_edges_are_never_taken():
    g = random_graph()
    g.edata["p"] = (torch.arange(g.num_edges()) % 3 != 0).float()
    nodes = torch.arange(g.num_nodes()).repeat(20)
    traces, eids, _ = random_walk(g, nodes, length=8, prob="p", return_eids=True)
    check_walks(g, nodes, traces, eids, prob="p")
    assert bool((g.edata["p"][eids[eids >= 0].long()] > 0).all())


def test_same_torch_seed_same_walks():
    g = random_graph()
    nodes = torch.arange(40)
    walks = []
    for _ in range(2):
        torch.manual_seed(7)
        walks.append(node2vec_random_walk(g, nodes, 2.0, 0.5, 10, return_eids=True))
    assert all(torch.equal(a, b) for a, b in zip(*walks))


def test_walk_graph_follows_edge_and_prob_changes():
    g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])), num_nodes=4)
    assert random_walk(g, [0], length=3)[0].tolist() == [[0, 1, 2, -1]]
    g.add_edges(torch.tensor([2]), torch.tensor([3]))  # DGL replaces the graph's structure
    assert random_walk(g, [0], length=3)[0].tolist() == [[0, 1, 2, 3]]
    g.edata["p"] = torch.ones(3)
    assert random_walk(g, [0], length=3, prob="p")[0].tolist() == [[0, 1, 2, 3]]
    g.edata["p"][1] = 0  # in place: node 1 can no longer leave
    assert random_walk(g, [0], length=3, prob="p")[0].tolist() == [[0, 1, -1, -1]]


# ---------------------------------------------------------------------------------------------
# Distributions: exact probabilities, which DGL's own walks fit too


def two_step_counts(g, eids):
    """Counts of the first two steps' edge pairs, indexed ``first * E + second``."""
    pairs = eids[:, 0].long() * g.num_edges() + eids[:, 1].long()
    return torch.bincount(pairs, minlength=g.num_edges() ** 2)


def expected_two_steps(g, start, p=1.0, q=1.0, prob=None):
    """Exact probabilities of the pairs ``(first step, second step)`` of walks from ``start``,
    indexed as :func:`two_step_counts` counts them (the reference's steps, chained)."""
    edge_index, num_edges = edge_index_of(g), g.num_edges()
    weight = None if prob is None else g.edata[prob].double()
    expected = torch.zeros(num_edges**2, dtype=torch.float64)
    first = walk_step_probabilities(edge_index, start, start, weight=weight)
    for (node, edge), chance in first.items():
        second = walk_step_probabilities(edge_index, start, node, start, p=p, q=q, weight=weight)
        for (_, next_edge), next_chance in second.items():
            expected[edge * num_edges + next_edge] = chance * next_chance
    return expected


def assert_two_steps_fit(g, walks, start, what, p=1.0, q=1.0, prob=None):
    observed = two_step_counts(g, walks)
    expected = expected_two_steps(g, start, p, q, prob)
    cells = expected > 0
    assert int(observed[~cells].sum()) == 0, f"{what}: a step of probability 0"
    assert_chi_square_fits(observed[cells], expected[cells], what)


def two_step_graph():
    """A small graph where a start has 3 out-edges and each next node 2 to 4, no dead ends."""
    src = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 5])
    dst = torch.tensor([1, 2, 3, 0, 4, 0, 3, 5, 0, 1, 4, 5, 5, 4])
    g = dgl.graph((src, dst), num_nodes=6)
    g.edata["w"] = torch.tensor([1.0, 2.0, 3.0, 1.0, 4.0, 2.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 1, 1])
    return g


@pytest.mark.parametrize("prob", [None, "w"])
def test_first_two_steps_follow_the_exact_distribution_as_dgl_does(prob):
    g = two_step_graph()
    nodes = torch.zeros(12_000, dtype=torch.int64)
    torch.manual_seed(0)
    ours = random_walk(g, nodes, length=2, prob=prob, return_eids=True)[1]
    assert_two_steps_fit(g, ours, 0, f"fastgl, prob={prob}", prob=prob)
    dgl.seed(0)
    theirs = dgl.sampling.random_walk(g, nodes, length=2, prob=prob, return_eids=True)[1]
    assert_two_steps_fit(g, theirs, 0, f"DGL, prob={prob}", prob=prob)


@pytest.mark.parametrize("p, q, prob", [(2.0, 0.5, None), (0.5, 2.0, None), (2.0, 0.5, "w")])
def test_node2vec_second_step_follows_the_exact_distribution_as_dgl_does(p, q, prob):
    g = undirected_graph()  # undirected: DGL's edge test (x -> t) and fastgl's (t -> x) agree
    g.edata["w"] = torch.rand(g.num_edges(), generator=torch.Generator().manual_seed(3)) + 0.5
    start = int(g.out_degrees().argmax())
    nodes = torch.full((20_000,), start)
    torch.manual_seed(1)
    ours = node2vec_random_walk(g, nodes, p, q, 2, prob=prob, return_eids=True)[1]
    assert_two_steps_fit(g, ours, start, f"fastgl node2vec p={p} q={q}", p, q, prob)
    dgl.seed(1)
    theirs = dgl.sampling.node2vec_random_walk(g, nodes, p, q, 2, prob=prob, return_eids=True)[1]
    assert_two_steps_fit(g, theirs, start, f"DGL node2vec p={p} q={q}", p, q, prob)


def length_counts(traces):
    """How many walks took 0, 1, ..., length steps."""
    steps = (traces[:, 1:] >= 0).sum(1)
    return torch.bincount(steps, minlength=traces.shape[1])


def expected_lengths(restart_prob):
    """P(a walk takes exactly t steps) when before step t it ends with ``restart_prob[t]``
    (no dead ends)."""
    survive = torch.cumprod(torch.cat([torch.ones(1), 1 - restart_prob.double()]), 0)
    return torch.cat([survive[:-1] * restart_prob.double(), survive[-1:]])


@pytest.mark.parametrize(
    "restart_prob", [0.3, torch.tensor([0.0, 0.5, 0.2, 0.0, 0.6]), torch.tensor([0.25] * 5)]
)
def test_restarts_end_walks_as_dgl_does(restart_prob):
    g = cycle_graph(9)
    nodes = torch.arange(9).repeat(1_000)
    per_step = restart_prob if isinstance(restart_prob, torch.Tensor) else torch.full((5,), 0.3)
    expected = expected_lengths(per_step)
    torch.manual_seed(2)
    traces, eids, _ = random_walk(g, nodes, length=5, restart_prob=restart_prob, return_eids=True)
    check_walks(g, nodes, traces, eids, restarts=True)
    cells = expected > 0
    assert int(length_counts(traces)[~cells].sum()) == 0
    assert_chi_square_fits(length_counts(traces)[cells], expected[cells], "fastgl lengths")
    dgl.seed(2)
    theirs = dgl.sampling.random_walk(g, nodes, length=5, restart_prob=restart_prob)[0]
    assert_chi_square_fits(length_counts(theirs)[cells], expected[cells], "DGL lengths")


# ---------------------------------------------------------------------------------------------
# RandomWalkNeighborSampler and PinSAGESampler


@pytest.mark.parametrize("idtype", IDTYPES)
def test_most_visited_selects_as_dgl(idtype):
    from dgl.sampling.pinsage import _select_pinsage_neighbors

    generator = torch.Generator().manual_seed(4)
    for num_seeds, visits_per_seed, num_nodes, k in [(7, 30, 12, 4), (3, 5, 100, 10), (1, 8, 3, 1)]:
        visits = torch.randint(-1, num_nodes, (num_seeds, visits_per_seed), generator=generator)
        visits = visits.to(idtype)  # -1: a walk that ended; many ties in the counts
        seeds = torch.randint(0, num_nodes, (num_seeds,), generator=generator).to(idtype)
        ours = _most_visited(visits, seeds, k, num_nodes)
        theirs = _select_pinsage_neighbors(
            visits.reshape(-1).clone(),  # DGL sorts it in place
            seeds.repeat_interleave(visits_per_seed),
            visits_per_seed,
            k,
        )
        for a, b in zip(ours, theirs):
            assert a.dtype == b.dtype and torch.equal(a, b)


def check_neighbor_graph(frontier, g, seeds, k, ntype="_N", column="weights"):
    """DGL's neighbor-graph layout: every node of ``ntype``, edges ``neighbor -> seed`` grouped
    by seed in seed order, at most ``k`` each, counts descending (ties: larger id first)."""
    assert frontier.ntypes == [ntype] and frontier.num_nodes() == g.num_nodes(ntype)
    assert frontier.idtype == g.idtype and frontier.edata[column].dtype == g.idtype
    src, dst = frontier.edges(order="eid")
    counts = frontier.edata[column]
    assert bool((counts > 0).all())
    start = 0
    for seed in seeds.tolist():
        end = start
        while end < dst.numel() and end - start < k and dst[end] == seed:
            end += 1
        order = sorted(zip(counts[start:end].tolist(), src[start:end].tolist()), reverse=True)
        assert order == list(zip(counts[start:end].tolist(), src[start:end].tolist()))
        start = end
    assert start == dst.numel(), "edges out of seed order or more than k per seed"


@pytest.mark.parametrize("idtype", IDTYPES)
def test_neighbor_sampler_returns_dgl_layout(idtype):
    g = random_graph(idtype=idtype)
    seeds = torch.tensor([3, 17, 59, 3], dtype=idtype)  # 59 has no out-edges: no neighbors
    args = (3, 0.5, 40, 5)
    ours = RandomWalkNeighborSampler(g, *args, weight_column="visits")(seeds)
    theirs = dgl.sampling.RandomWalkNeighborSampler(g, *args, weight_column="visits")(seeds)
    assert ours.canonical_etypes == theirs.canonical_etypes
    for frontier in (ours, theirs):
        check_neighbor_graph(frontier, g, seeds, 5, column="visits")
    assert 59 not in ours.edges()[1].tolist()


def bipartite_graph(num_a=30, num_b=20, num_edges=120, idtype=torch.int64):
    generator = torch.Generator().manual_seed(5)
    a = torch.randint(0, num_a, (num_edges,), generator=generator)
    b = torch.randint(0, num_b, (num_edges,), generator=generator)
    return dgl.heterograph(
        {("A", "AB", "B"): (a, b), ("B", "BA", "A"): (b, a)},
        {"A": num_a, "B": num_b},
        idtype=idtype,
    )


@pytest.mark.parametrize("idtype", IDTYPES)
def test_pinsage_sampler_returns_dgl_layout(idtype):
    G = bipartite_graph(idtype=idtype)
    seeds = torch.tensor([0, 4, 9], dtype=idtype)
    ours = PinSAGESampler(G, "A", "B", 3, 0.5, 50, 6)(seeds)
    theirs = dgl.sampling.PinSAGESampler(G, "A", "B", 3, 0.5, 50, 6)(seeds)
    assert ours.canonical_etypes == theirs.canonical_etypes == [("A", "_E", "A")]
    for frontier in (ours, theirs):
        check_neighbor_graph(frontier, G, seeds, 6, ntype="A")
    # Every neighbor is 1 to 3 traversals (A -> B -> A; BA reverses AB) from its seed.
    a_to_b = (G.adj_external(etype="AB").to_dense() > 0).double()
    one = (a_to_b @ a_to_b.t() > 0).double()
    reached = (one + one @ one + one @ one @ one) > 0
    src, dst = ours.edges()
    assert bool(reached[dst.long(), src.long()].all())


def traversal_counts(frontier, seed, num_nodes, num_traversals):
    """On a cycle, the visits of node ``seed + t`` count the walks that made ``t`` traversals;
    returns how many walks made exactly 1, ..., num_traversals."""
    visits = torch.zeros(num_nodes, dtype=torch.int64)
    src = frontier.edges()[0].long()
    visits[src] = frontier.edata["weights"].long()
    reached = visits[(seed + torch.arange(1, num_traversals + 2)) % num_nodes]
    reached[-1] = 0
    return reached[:-1] - reached[1:]


def test_neighbor_samplers_end_walks_between_traversals_as_dgl_does():
    # DGL's restart vector: never before the first traversal, then termination_prob before
    # each later one (and, on a metapath, only between traversals).
    traversals, stop, walks = 4, 0.4, 4_000
    survive = (1 - stop) ** torch.arange(traversals, dtype=torch.float64)
    expected = torch.cat([survive[:-1] * stop, survive[-1:]])
    g = cycle_graph(10)
    nodes = torch.arange(10)
    G = dgl.heterograph(
        {("A", "AB", "B"): (nodes, nodes), ("B", "BA", "A"): (nodes, (nodes + 1) % 10)}
    )
    cases = [
        ("fastgl", RandomWalkNeighborSampler(g, traversals, stop, walks, 10)),
        ("DGL", dgl.sampling.RandomWalkNeighborSampler(g, traversals, stop, walks, 10)),
        ("fastgl PinSAGE", PinSAGESampler(G, "A", "B", traversals, stop, walks, 10)),
        ("DGL PinSAGE", dgl.sampling.PinSAGESampler(G, "A", "B", traversals, stop, walks, 10)),
    ]
    for i, (what, sampler) in enumerate(cases):
        torch.manual_seed(i)
        dgl.seed(i)
        frontier = sampler(torch.tensor([6]))
        observed = traversal_counts(frontier, 6, 10, traversals)
        assert int(observed.sum()) == walks, what
        assert_chi_square_fits(observed, expected, f"{what}: traversals per walk")


def test_metapath_leaving_each_type_once_is_walked_on_a_heterograph():
    # "likes" also leaves A, but the metapath does not take it.
    bipartite = bipartite_graph()
    relations = {etype: bipartite.edges(etype=etype) for etype in bipartite.canonical_etypes}
    relations["A", "likes", "A"] = (torch.tensor([0]), torch.tensor([1]))
    G = dgl.heterograph(relations)
    sampler = RandomWalkNeighborSampler(G, 2, 0.0, 30, 8, metapath=["AB", ("B", "BA", "A")])
    frontier = sampler(torch.tensor([2, 3]))
    assert frontier.ntypes == ["A"] and frontier.num_nodes() == G.num_nodes("A")
    assert frontier.num_edges() > 0


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_arguments_are_rejected():
    g = random_graph()
    nodes = torch.tensor([0, 1])
    hetero = bipartite_graph()
    with pytest.raises(ValueError, match="random_walk: metapath walks are not supported"):
        random_walk(g, nodes, metapath=["_E"] * 3)
    with pytest.raises(ValueError, match="homogeneous graphs"):
        random_walk(hetero, nodes, length=3)
    with pytest.raises(ValueError, match="homogeneous graphs"):
        node2vec_random_walk(hetero, nodes, 1.0, 1.0, 3)
    with pytest.raises(ValueError, match="give the walk length"):
        random_walk(g, nodes)
    with pytest.raises(ValueError, match="length must be an int >= 0, got -1"):
        random_walk(g, nodes, length=-1)
    with pytest.raises(ValueError, match=r"shape \[3\], got torch.float32 of shape \(2,\)"):
        random_walk(g, nodes, length=3, restart_prob=torch.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match=r"restart_prob must lie in \[0, 1\]"):
        random_walk(g, nodes, length=2, restart_prob=torch.tensor([0.1, 1.5]))
    with pytest.raises(ValueError, match="restart_prob must be a float"):
        random_walk(g, nodes, length=2, restart_prob="0.5")
    with pytest.raises(RuntimeError, match=r"random_walk: restart_prob must lie in \[0, 1\]"):
        random_walk(g, nodes, length=2, restart_prob=1.5)
    with pytest.raises(ValueError, match="no edge feature 'nope'"):
        random_walk(g, nodes, length=2, prob="nope")
    g.edata["neg"] = -torch.ones(g.num_edges())
    with pytest.raises(ValueError, match="'neg' must be non-negative"):
        node2vec_random_walk(g, nodes, 1.0, 1.0, 2, prob="neg")
    with pytest.raises(ValueError, match="nodes must have the graph's idtype torch.int64"):
        random_walk(g, nodes.int(), length=2)
    with pytest.raises(RuntimeError, match="random_walk: starts id 60 out of range"):
        random_walk(g, torch.tensor([60]), length=2)
    where = "fastgl node2vec_random_walk"
    with pytest.raises(ValueError, match=f"{where}: p must be a finite number > 0, got 0.0"):
        node2vec_random_walk(g, nodes, 0.0, 1.0, 2)
    with pytest.raises(ValueError, match=f"{where}: q must be a finite number > 0, got inf"):
        node2vec_random_walk(g, nodes, 1.0, float("inf"), 2)
    with pytest.raises(ValueError, match=f"{where}: p must be a finite number > 0, got 1e-310"):
        node2vec_random_walk(g, nodes, 1e-310, 1.0, 2)
    with pytest.raises(ValueError, match=f"{where}: q must be a finite number > 0, got '2'"):
        node2vec_random_walk(g, nodes, 1.0, "2", 2)


def test_bad_sampler_arguments_are_rejected():
    g = random_graph()
    hetero = bipartite_graph()
    where = "fastgl RandomWalkNeighborSampler"
    with pytest.raises(ValueError, match=f"{where}: fastgl walks homogeneous graphs"):
        RandomWalkNeighborSampler(hetero, 2, 0.5, 10, 3)
    with pytest.raises(ValueError, match="must chain"):
        RandomWalkNeighborSampler(hetero, 2, 0.5, 10, 3, metapath=["AB", "AB"])
    leaving_twice = dgl.heterograph(
        {
            ("u", "follows", "u"): (torch.tensor([0]), torch.tensor([1])),
            ("u", "views", "i"): (torch.tensor([0]), torch.tensor([0])),
            ("i", "viewed-by", "u"): (torch.tensor([0]), torch.tensor([0])),
        }
    )
    with pytest.raises(ValueError, match="leaves node type 'u' by two edge types"):
        RandomWalkNeighborSampler(
            leaving_twice, 1, 0.5, 10, 3, metapath=["follows", "views", "viewed-by"]
        )
    with pytest.raises(ValueError, match="metapath .*'nope'"):
        RandomWalkNeighborSampler(hetero, 2, 0.5, 10, 3, metapath=["nope"])
    with pytest.raises(ValueError, match="num_neighbors must be >= 1"):
        RandomWalkNeighborSampler(g, 2, 0.5, 10, 0)
    with pytest.raises(ValueError, match=r"termination_prob must lie in \[0, 1\]"):
        RandomWalkNeighborSampler(g, 2, 1.5, 10, 3)
    with pytest.raises(ValueError, match="PinSAGESampler: the graph needs an edge type"):
        PinSAGESampler(hetero, "A", "C", 2, 0.5, 10, 3)
    with pytest.raises(ValueError, match="seed_nodes must have the graph's idtype"):
        RandomWalkNeighborSampler(g, 2, 0.5, 10, 3)(torch.tensor([0], dtype=torch.int32))
