"""Heterogeneous (and temporal) sampling on the device sampling engine, checked on the CPU.

``fastgl::_hetero_sample_hops`` runs the CUDA backend's stages on CPU threads (the engine's host
harness, DESIGN.md §7); ``HeteroNeighborSampler._sample(..., engine=True)`` calls it. Its samples
must equal the hops composed from ``sample_ranges`` and ``id_map`` (the reference, what the CPU
runs) bit for bit: on Hypothesis graphs, on rows of degree f - 1, f, f + 1 around the lanes'
widths, weighted and with replacement, with fanout -1, with node or edge times (both strategies)
and with every hop waiting for its exact size. Then the op's own checks of its inputs."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hetero_sampling import hetero_case

from fastgl import HeteroCSCGraph
from fastgl.sampling import HeteroNeighborSampler

FIELDS = ("nodes", "row", "col", "eid", "seed_index", "batch")


def assert_same_sample(got, expected):
    for field in FIELDS:
        g, e = getattr(got, field), getattr(expected, field)
        assert (g is None) == (e is None), field
        assert (g or {}).keys() == (e or {}).keys(), field
        for key in e or {}:
            assert torch.equal(g[key], e[key]), f"{field}[{key}] differs"
    assert got.num_sampled_nodes == expected.num_sampled_nodes
    assert got.num_sampled_edges == expected.num_sampled_edges
    assert got.hop_indptr.keys() == expected.hop_indptr.keys()
    for etype, hops in expected.hop_indptr.items():
        for g, e in zip(got.hop_indptr[etype], hops):
            assert (g is None) == (e is None), f"hop_indptr[{etype}]"
            assert e is None or torch.equal(g, e), f"hop_indptr[{etype}] differs"
    for got_layer, expected_layer in zip(got.blocks, expected.blocks):
        for etype, block in expected_layer.items():
            assert torch.equal(got_layer[etype].indptr, block.indptr)


def engine_equals_reference(sampler, seeds, key, edge_weight=None):
    expected = sampler._sample(seeds, key, edge_weight=edge_weight, engine=False)
    got = sampler._sample(seeds, key, edge_weight=edge_weight, engine=True)
    assert_same_sample(got, expected)
    return got


@settings(max_examples=60, deadline=None)
@given(
    case=hetero_case(),
    layerwise=st.booleans(),
    disjoint=st.booleans(),
    replace=st.booleans(),
    key=st.integers(0, 2**62),
)
def test_random_graphs(case, layerwise, disjoint, replace, key):
    edges, num_nodes, seeds, fanouts, num_hops = case
    graph = HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)
    options = dict(layerwise=layerwise, disjoint=disjoint, replace=replace)
    sampler = HeteroNeighborSampler(graph, fanouts if edges else [2] * num_hops, **options)
    engine_equals_reference(sampler, seeds, key)


@settings(max_examples=30, deadline=None)
@given(case=hetero_case(), replace=st.booleans(), key=st.integers(0, 2**62), data=st.data())
def test_random_graphs_weighted(case, replace, key, data):
    """Per-batch edge weights (zeros included: never drawn), as DGL's drop-in passes them."""
    edges, num_nodes, seeds, fanouts, num_hops = case
    graph = HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)
    num_edges = graph.combined.indices.numel()
    weight = torch.tensor(
        data.draw(
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=num_edges, max_size=num_edges)
        ),
        dtype=torch.float64,
    )
    sampler = HeteroNeighborSampler(graph, fanouts if edges else [2] * num_hops, replace=replace)
    engine_equals_reference(sampler, seeds, key, edge_weight=weight)


def _times(data, count, floating):
    """Times with repeats, negatives and (as floats) both zeros."""
    values = [-2, -1, 0, 1, 2, 3] if not floating else [-1.5, -0.0, 0.0, 0.5, 2.0, float("inf")]
    drawn = data.draw(st.lists(st.sampled_from(values), min_size=count, max_size=count))
    return torch.tensor(drawn, dtype=torch.float64 if floating else torch.int64)


@settings(max_examples=60, deadline=None)
@given(
    case=hetero_case(),
    by_edge=st.booleans(),
    strategy=st.sampled_from(["uniform", "last"]),
    replace=st.booleans(),
    layerwise=st.booleans(),
    key=st.integers(0, 2**62),
    data=st.data(),
)
def test_random_graphs_temporal(case, by_edge, strategy, replace, layerwise, key, data):
    """Node or edge times on some types or relations, of mixed dtypes (integer and float
    times compare as float64, as the reference's torch promotion does)."""
    edges, num_nodes, seeds, fanouts, num_hops = case
    graph = HeteroCSCGraph.from_edge_index_dict(edges, num_nodes)
    if by_edge:
        keys, sizes = list(edges), {e: ei.shape[1] for e, ei in edges.items()}
    else:
        keys, sizes = list(num_nodes), num_nodes
    timed = [k for k in keys if data.draw(st.booleans())]
    times = {k: _times(data, sizes[k], data.draw(st.booleans())) for k in timed}
    option = {"edge_time" if by_edge else "node_time": times}
    seed_time = {t: _times(data, s.numel(), data.draw(st.booleans())) for t, s in seeds.items()}
    options = dict(replace=replace, strategy=strategy, layerwise=layerwise)
    sampler = HeteroNeighborSampler(
        graph, fanouts if edges else [2] * num_hops, **options, **option
    )
    expected = sampler._sample(seeds, key, seed_time, engine=False)
    got = sampler._sample(seeds, key, seed_time, engine=True)
    assert_same_sample(got, expected)


def _boundary_graph(weighted):
    """Two node types; paper i has 'cites' in-degree DEGREES[i] and 'writes' in-degree 3 * i
    (rows around the lanes' widths: f - 1, f, f + 1 for f = 1, 16, 17, 32, 33)."""
    degrees = sorted({d for f in (1, 16, 17, 32, 33) for d in (f - 1, f, f + 1)})
    g = torch.Generator().manual_seed(7)
    cites = torch.cat(
        [
            torch.stack([torch.randint(0, 200, (d,), generator=g), torch.full((d,), i)])
            for i, d in enumerate(degrees)
        ],
        dim=1,
    )
    writes = torch.cat(
        [
            torch.stack([torch.randint(0, 50, (3 * i,), generator=g), torch.full((3 * i,), i)])
            for i in range(len(degrees))
        ],
        dim=1,
    )
    edges = {("paper", "cites", "paper"): cites, ("author", "writes", "paper"): writes}
    weights = None
    if weighted:
        weights = {
            e: torch.rand(ei.shape[1], generator=g, dtype=torch.float64) + 0.1
            for e, ei in edges.items()
        }
    graph = HeteroCSCGraph.from_edge_index_dict(
        edges, {"author": 50, "paper": 200}, edge_weight_dict=weights
    )
    return graph, len(degrees)


@pytest.mark.parametrize("fanout", [1, 16, 17, 32, 33, -1])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("disjoint", [False, True])
def test_fanout_boundaries(fanout, weighted, replace, disjoint):
    graph, num_rows = _boundary_graph(weighted)
    fanouts = {("paper", "cites", "paper"): [fanout, 5], ("author", "writes", "paper"): [fanout, 0]}
    sampler = HeteroNeighborSampler(
        graph, fanouts, replace=replace, weighted=weighted, disjoint=disjoint
    )
    seeds = {"paper": torch.arange(num_rows).repeat(2)}
    for key in (0, 99, 2**61 + 3):
        engine_equals_reference(sampler, seeds, key)


@pytest.mark.parametrize("fanout", [1, 16, 17, 32, 33, -1])
@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("replace", [False, True])
def test_temporal_fanout_boundaries(fanout, strategy, replace):
    """Temporal draws on rows around the lanes' widths, each seed twice at two times; authors
    carry node times, papers none (their relation draws untimed)."""
    graph, num_rows = _boundary_graph(weighted=False)
    g = torch.Generator().manual_seed(3)
    node_time = {"author": torch.randint(0, 10, (50,), generator=g)}
    fanouts = {("paper", "cites", "paper"): [fanout, 4], ("author", "writes", "paper"): [fanout, 0]}
    sampler = HeteroNeighborSampler(
        graph, fanouts, replace=replace, strategy=strategy, node_time=node_time
    )
    seeds = {"paper": torch.arange(num_rows).repeat(2)}
    seed_time = {"paper": torch.randint(0, 12, (2 * num_rows,), generator=g)}
    for key in (0, 2**61 + 3):
        expected = sampler._sample(seeds, key, seed_time, engine=False)
        got = sampler._sample(seeds, key, seed_time, engine=True)
        assert_same_sample(got, expected)
        writes = ("author", "writes", "paper")
        authors = got.row[writes]
        assert authors.numel() > 0
        author_time = node_time["author"][got.nodes["author"][authors]]
        assert bool((author_time <= seed_time["paper"][got.batch["author"][authors]]).all())


@pytest.mark.parametrize("bounded", [1, 17])
@pytest.mark.parametrize("layerwise", [False, True])
def test_unbounded_and_bounded_relations_in_one_hop(bounded, layerwise):
    """'writes' (into the first node type) takes every edge while 'cites' draws a few: the hop
    waits for its size, which must count both relations' draws."""
    graph, num_rows = _boundary_graph(weighted=False)
    writes, cites = ("author", "writes", "paper"), ("paper", "cites", "paper")
    for fanouts in ({writes: [-1, 2], cites: [bounded, 3]}, {writes: [bounded, 2], cites: [-1, 3]}):
        sampler = HeteroNeighborSampler(graph, fanouts, layerwise=layerwise)
        sub = engine_equals_reference(sampler, {"paper": torch.arange(num_rows)}, 11)
        assert sub.num_sampled_edges[writes][0] > 0 and sub.num_sampled_edges[cites][0] > 0


@pytest.mark.parametrize("layerwise", [False, True])
def test_every_hop_waiting_for_its_size_gives_the_same_sample(layerwise):
    """Budget 0: every hop reads its exact size back (the path of fanout -1) and the table
    grows between hops; the sample is the worst-case path's."""
    graph, num_rows = _boundary_graph(weighted=False)
    sampler = HeteroNeighborSampler(graph, [3, 4, 2], layerwise=layerwise, disjoint=True)
    seeds, _ = sampler._checked_seeds({"paper": torch.arange(num_rows)})
    combined = graph.combined
    args = (
        combined.indptr,
        combined.indices,
        None,
        combined.eid,
        seeds,
        [0, num_rows],
        sampler._type_offsets,
        sampler._src_types,
        sampler._dst_types,
        sampler._row_base,
        sampler._flat_fanouts,
        sampler.num_hops,
        False,
        layerwise,
        True,
        5,
    )
    planned = torch.ops.fastgl._hetero_sample_hops(*args)
    waiting = torch.ops.fastgl._hetero_sample_hops(*args, 0)
    for a, b in zip(planned, waiting):
        assert torch.equal(a, b)


def test_a_huge_fanout_without_transits_does_not_refuse_the_hop():
    """A hop that waits for its size bounds each relation's draws by its own transits: 'yx'
    (fanout 2^61 with replacement) has none at hop 2, where the hop waits for its size."""
    edges = {
        ("X", "xy", "Y"): torch.zeros(2, 0, dtype=torch.long),
        ("Y", "yy", "Y"): torch.tensor([[1], [0]]),
        ("Y", "yx", "X"): torch.tensor([[0], [0]]),
    }
    graph = HeteroCSCGraph.from_edge_index_dict(edges, {"X": 1, "Y": 2})
    fanouts = {("X", "xy", "Y"): [1, 0], ("Y", "yy", "Y"): [1, 1], ("Y", "yx", "X"): [0, 2**61]}
    sampler = HeteroNeighborSampler(graph, fanouts, replace=True)
    sub = engine_equals_reference(sampler, {"Y": torch.tensor([0])}, 3)
    assert sub.num_sampled_edges[("Y", "yy", "Y")] == [1, 0]


@pytest.mark.parametrize(
    "seeds, error",
    [
        ([torch.tensor([0])], TypeError),
        ({"c": torch.tensor([0])}, ValueError),
        ({"a": torch.tensor([0.5])}, ValueError),
        ({"a": torch.tensor([[0]])}, ValueError),
        ({"a": torch.tensor([0]), "b": torch.tensor([7])}, ValueError),
    ],
)
@pytest.mark.parametrize("temporal", [False, True])
def test_bad_seeds_raise_the_references_errors(seeds, error, temporal):
    edges = {
        ("a", "r", "b"): torch.tensor([[0, 1, 2], [0, 0, 1]]),
        ("b", "s", "a"): torch.tensor([[0, 1], [2, 2]]),
    }
    graph = HeteroCSCGraph.from_edge_index_dict(edges, {"a": 3, "b": 2})
    times = {"node_time": {"a": torch.tensor([1, 2, 3]), "b": torch.tensor([0, 5])}}
    sampler = HeteroNeighborSampler(graph, [2, 2], **(times if temporal else {}))
    messages = []
    for engine in (False, True):
        with pytest.raises(error) as caught:
            sampler._sample(seeds, 1, engine=engine)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_seeds_out_of_range_raise_the_references_error():
    graph, _ = _boundary_graph(weighted=False)
    sampler = HeteroNeighborSampler(graph, [2])
    for engine in (False, True):
        with pytest.raises(ValueError, match=r"seeds\['author'\] has 'author' id 50"):
            sampler._sample({"author": torch.tensor([3, 50])}, 0, engine=engine)


def test_a_negative_weight_is_refused():
    graph, _ = _boundary_graph(weighted=False)
    weight = torch.ones(graph.combined.indices.numel(), dtype=torch.float64)
    weight[0] = -1.0
    sampler = HeteroNeighborSampler(graph, [2])
    with pytest.raises(RuntimeError, match="hetero_sample_hops: .*weight"):
        sampler._sample({"paper": torch.arange(20)}, 0, edge_weight=weight, engine=True)


def _op_args(**changes):
    """A valid call of the op on a two-type graph, with `changes` applied."""
    graph, num_rows = _boundary_graph(weighted=False)
    sampler = HeteroNeighborSampler(graph, [2, 1])
    combined = graph.combined
    args = dict(
        indptr=combined.indptr,
        indices=combined.indices,
        weight=None,
        eid=combined.eid,
        seeds=torch.arange(3) + sampler._type_offsets[1],
        seed_counts=[0, 3],
        type_start=sampler._type_offsets,
        src_type=sampler._src_types,
        dst_type=sampler._dst_types,
        row_base=sampler._row_base,
        fanouts=sampler._flat_fanouts,
        num_hops=2,
        replace=False,
        layerwise=False,
        disjoint=False,
        seed=0,
    )
    args.update(changes)
    return args


def test_the_op_accepts_a_valid_call():
    out = torch.ops.fastgl._hetero_sample_hops(**_op_args())
    assert out[1].tolist()[1][0] == 3  # three paper seeds


@pytest.mark.parametrize(
    "changes, match",
    [
        (dict(type_start=[1, 50, 250]), "type_start must run from 0"),
        (dict(type_start=[0, 60, 50]), "type_start must never decrease"),
        (dict(seed_counts=[3]), "one entry per node type"),
        (dict(seed_counts=[1, 1]), "sum to 2, not len"),
        (dict(seed_counts=[-1, 4]), "non-negative"),
        (dict(src_type=[0, 2]), "joins node types"),
        (dict(dst_type=[1]), "one entry per relation"),
        (dict(row_base=[10**9, 0]), "are not rows of indptr"),
        (dict(fanouts=[2, 1, 1]), "num_hops \\* num_relations"),
        (dict(num_hops=2**40), "num_hops must be in"),
        (dict(fanouts=[2, -2, 1, 1]), "fanout"),
        (dict(seeds=torch.tensor([50, 51, 0])), r"seed 2 \(global id 0\) is not a node of its"),
    ],
)
def test_the_op_refuses_bad_inputs(changes, match):
    with pytest.raises(RuntimeError, match=match):
        torch.ops.fastgl._hetero_sample_hops(**_op_args(**changes))


def test_a_source_of_the_wrong_type_is_a_fault():
    """An edge whose source is not of its relation's source type cannot be relabeled."""
    args = _op_args()
    indices = args["indices"].clone()
    indices[:] = args["type_start"][-1] - 1  # a paper id in every slot, 'writes' included
    args["indices"] = indices
    with pytest.raises(RuntimeError, match="is not a node of its relation's source type"):
        torch.ops.fastgl._hetero_sample_hops(**args)


# ---------------------------------------------------------------------------------------------
# TemporalNeighborSampler (homogeneous) on the engine: one node type, one timed relation
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    num_nodes=st.integers(0, 12),
    num_edges=st.integers(0, 60),
    fanouts=st.lists(st.integers(-1, 4), min_size=0, max_size=3),
    by_edge=st.booleans(),
    floating=st.booleans(),
    strategy=st.sampled_from(["uniform", "last"]),
    replace=st.booleans(),
    key=st.integers(0, 2**62),
    data=st.data(),
)
def test_temporal_sampler_on_the_engine(
    num_nodes, num_edges, fanouts, by_edge, floating, strategy, replace, key, data
):
    from fastgl import CSCGraph
    from fastgl.sampling import TemporalNeighborSampler
    from fastgl.sampling.temporal import _sample_temporal

    num_edges = num_edges if num_nodes else 0
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 2**31 - 1)))
    edge_index = torch.randint(0, max(num_nodes, 1), (2, num_edges), generator=g)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    times = _times(data, num_edges if by_edge else num_nodes, floating)
    option = {"edge_time" if by_edge else "node_time": times}
    sampler = TemporalNeighborSampler(graph, fanouts, strategy=strategy, replace=replace, **option)
    num_seeds = data.draw(st.integers(0, 5)) if num_nodes else 0
    seeds = torch.randint(0, max(num_nodes, 1), (num_seeds,), generator=g)
    seed_time = sampler._checked_seed_time(seeds, _times(data, num_seeds, data.draw(st.booleans())))
    expected = _sample_temporal(sampler, seeds, seed_time, key, engine=False)
    got = _sample_temporal(sampler, seeds, seed_time, key, engine=True)
    for field in ("nodes", "row", "col", "eid", "seed_index", "in_degrees", "batch"):
        assert torch.equal(getattr(got, field), getattr(expected, field)), field
    assert got.num_sampled_nodes == expected.num_sampled_nodes
    assert got.num_sampled_edges == expected.num_sampled_edges
