"""fastgl::sample_hops, the fused multi-hop sampling op: batch 0 against a reference built from
sample_neighbors and a pure-Python relabel, batch independence, thread independence, bad input.

The distributions of the draws are sample_neighbors' (tests/test_neighbor_sample.py checks them
with chi-square tests); every batch's samples are checked for validity there too, through
NeighborSampler.sample_batches.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    as_op_key,
    edge_index_strategy,
    random_edge_index,
    random_weights,
    sample_hops_reference,
)

from fastgl import CSCGraph
from fastgl.ops import sample_hops, sample_neighbors


def batch_of(out, b: int):
    """Batch ``b`` of a sample_hops result as lists."""
    node_counts, edge_counts = out.node_counts.tolist(), out.edge_counts.tolist()
    n0 = sum(sum(c) for c in node_counts[:b])
    e0 = sum(sum(c) for c in edge_counts[:b])
    nodes = slice(n0, n0 + sum(node_counts[b]))
    edges = slice(e0, e0 + sum(edge_counts[b]))
    return dict(
        nodes=out.nodes[nodes].tolist(),
        node_counts=node_counts[b],
        row=out.row[edges].tolist(),
        col=out.col[edges].tolist(),
        edge_ids=out.edge_ids[edges].tolist(),
        edge_counts=edge_counts[b],
        in_degrees=out.in_degrees[nodes].tolist(),
        tree=out.tree[nodes].tolist() if out.tree.numel() else [],
    )


def run(graph, batches, fanouts, key=5, weighted=False, **options):
    sizes = [len(b) for b in batches]
    seeds = torch.tensor([s for b in batches for s in b], dtype=torch.int64)
    seed_ptr = torch.tensor([0] + sizes).cumsum(0)
    return sample_hops(
        graph.indptr,
        graph.indices,
        graph.weight if weighted else None,
        graph.eid,
        seeds,
        seed_ptr,
        fanouts,
        seed=key,
        **options,
    )


@st.composite
def hops_case(draw):
    edge_index, num_nodes = draw(
        edge_index_strategy(max_nodes=40, max_edges=250, allow_empty=False)
    )
    weighted = draw(st.booleans())
    weight = (
        random_weights(edge_index.shape[1], seed=draw(st.integers(0, 99))) if weighted else None
    )
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes, edge_weight=weight)
    if draw(st.booleans()):
        graph = CSCGraph(graph.indptr, graph.indices, None, graph.weight)  # slots as edge ids
    seeds = draw(st.lists(st.integers(0, num_nodes - 1), max_size=10))
    return dict(
        graph=graph,
        seeds=seeds,
        weighted=weighted,
        fanouts=draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3, 5]), max_size=3)),
        key=draw(st.integers(-(2**63), 2**63 - 1)),
        replace=draw(st.booleans()),
        layerwise=draw(st.booleans()),
        disjoint=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(hops_case())
def test_first_batch_equals_reference(case):
    graph, seeds = case.pop("graph"), case.pop("seeds")
    out = run(graph, [seeds, seeds[::-1]], **case)
    got = batch_of(out, 0)
    key = case.pop("key") % (1 << 64)
    expected = sample_hops_reference(graph, seeds, key=key, **case)
    seed_local = expected.pop("seed_local")
    assert got == expected
    assert out.seed_local[: len(seeds)].tolist() == seed_local


@settings(max_examples=100, deadline=None)
@given(hops_case())
def test_col_ptr_holds_each_batchs_csc_offsets(case):
    """Hop-wise, batch b's n_b + 1 offsets: local node v's in-edges are its edges
    col_ptr_b[v] .. col_ptr_b[v + 1]; layer-wise, none."""
    graph, seeds = case.pop("graph"), case.pop("seeds")
    batches = [seeds, [], seeds[::-1]]
    out = run(graph, batches, **case)
    if case["layerwise"]:
        assert out.col_ptr.numel() == 0
        return
    node_sizes, edge_sizes = out.node_counts.sum(1).tolist(), out.edge_counts.sum(1).tolist()
    per_ptr = out.col_ptr.split([n + 1 for n in node_sizes])
    for ptr, col, num_nodes in zip(per_ptr, out.col.split(edge_sizes), node_sizes):
        in_edges = [[e for e, c in enumerate(col.tolist()) if c == v] for v in range(num_nodes)]
        starts = [0] + [len(edges) for edges in in_edges]
        assert ptr.tolist() == torch.tensor(starts).cumsum(0).tolist()
        assert all(
            edges == list(range(start, start + len(edges)))
            for edges, start in zip(in_edges, ptr.tolist())
        )


def test_a_batch_does_not_depend_on_the_others():
    graph = CSCGraph.from_edge_index(random_edge_index(300, 4000, seed=1), num_nodes=300)
    a, b, c = [list(range(i, 300, 37)) for i in (0, 5, 11)]
    for layerwise in (False, True):
        first = run(graph, [a, b], [4, 3], layerwise=layerwise)
        second = run(graph, [c, b], [4, 3], layerwise=layerwise)
        assert batch_of(first, 1) == batch_of(second, 1)
        # ... but it is not the same sample as the first batch's on the same seeds.
        assert batch_of(run(graph, [b, a], [4, 3], layerwise=layerwise), 0) != batch_of(first, 1)


@pytest.mark.parametrize("num_batches", [1, 3, 8])
def test_result_does_not_depend_on_the_thread_count(num_batches):
    graph = CSCGraph.from_edge_index(random_edge_index(2000, 60000, seed=2), num_nodes=2000)
    batches = [list(range(b, 2000, 7))[:300] for b in range(num_batches)]
    threads = torch.get_num_threads()
    try:
        results = []
        for count in (1, 2, 3):
            torch.set_num_threads(count)
            results.append(run(graph, batches, [10, 5, 3]))
    finally:
        torch.set_num_threads(threads)
    for other in results[1:]:
        assert all(torch.equal(x, y) for x, y in zip(results[0], other))


def test_disjoint_trees_number_their_nodes():
    graph = CSCGraph.from_edge_index(random_edge_index(50, 400, seed=3), num_nodes=50)
    out = run(graph, [[4, 4, 9]], [3, 2], disjoint=True)
    assert out.seed_local.tolist() == [0, 1, 2]  # a repeated seed grows a tree of its own
    tree = out.tree.tolist()
    assert tree[:3] == [0, 1, 2]
    # Each edge stays inside one tree.
    assert [tree[r] for r in out.row.tolist()] == [tree[c] for c in out.col.tolist()]


def test_empty_window_and_empty_batches():
    graph = CSCGraph.from_edge_index(random_edge_index(20, 100, seed=4), num_nodes=20)
    out = run(graph, [], [2, 2])
    assert out.node_counts.shape == (0, 3) and out.edge_counts.shape == (0, 2)
    assert out.nodes.numel() == out.row.numel() == 0
    out = run(graph, [[], [3], []], [2])
    assert out.node_counts[:, 0].tolist() == [0, 1, 0]
    assert out.edge_counts[[0, 2]].tolist() == [[0], [0]]


def test_no_hops_returns_the_distinct_seeds():
    graph = CSCGraph.from_edge_index(random_edge_index(20, 100, seed=5), num_nodes=20)
    out = run(graph, [[3, 1, 3]], [])
    assert out.nodes.tolist() == [3, 1] and out.seed_local.tolist() == [0, 1, 0]
    assert out.edge_counts.shape == (1, 0)


@pytest.fixture
def graph():
    return CSCGraph.from_edge_index(random_edge_index(30, 200, seed=6), num_nodes=30)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(seeds=torch.tensor([0, 30])), "sample_hops: seeds id 30 out of range"),
        (dict(seeds=torch.tensor([-1])), "sample_hops: seeds id -1 is negative"),
        (dict(seeds=torch.tensor([[1]])), "sample_hops: seeds must be 1-D"),
        (dict(seed_ptr=torch.tensor([0, 1])), "sample_hops: seed_ptr must run from 0 to"),
        (dict(seed_ptr=torch.tensor([1, 2])), "sample_hops: seed_ptr must run from 0 to"),
        (dict(seed_ptr=torch.tensor([0, 2, 1, 2])), "sample_hops: seed_ptr must never decrease"),
        (dict(seed_ptr=torch.tensor([0, 2], dtype=torch.int32)), "sample_hops: seed_ptr must be"),
        (dict(seed_ptr=torch.empty(0, dtype=torch.long)), "sample_hops: seed_ptr must have"),
        (dict(fanouts=[2, -2]), "sample_hops: fanout must be -1"),
        (dict(eid=torch.arange(5)), "sample_hops: eid has 5 entries but the graph has 200"),
        (dict(eid=torch.arange(200, dtype=torch.int32)), "sample_hops: eid must be Long"),
        (dict(weight=torch.ones(3)), "sample_hops: weight has 3 entries but the graph has 200"),
        (dict(indices="out of range"), "sample_hops: indices id 99 out of range"),
        (dict(fanouts=[2**62], replace=True), "sample_hops: 2 transits drawing up to"),
        (dict(indptr="malformed"), "sample_hops: indptr is not a valid CSC offset array"),
    ],
)
def test_bad_input(graph, change, match):
    args = dict(
        indptr=graph.indptr,
        indices=graph.indices,
        seeds=torch.tensor([1, 2]),
        seed_ptr=None,
        fanouts=[2, 2],
        eid=None,
        weight=None,
        disjoint=False,
        replace=False,
    )
    args.update(change)
    if isinstance(args["indices"], str):  # a neighbor id past the graph: the next hop's transit
        args["indices"] = graph.indices.clone().fill_(99)
    if isinstance(args["indptr"], str):
        args["indptr"] = graph.indptr.flip(0)
    if args["seed_ptr"] is None:
        args["seed_ptr"] = torch.tensor([0, args["seeds"].reshape(-1).numel()])
    with pytest.raises(RuntimeError, match=match):
        sample_hops(
            args["indptr"],
            args["indices"],
            args["weight"],
            args["eid"],
            args["seeds"],
            args["seed_ptr"],
            args["fanouts"],
            disjoint=args["disjoint"],
            replace=args["replace"],
        )


def test_sample_neighbors_rejects_draw_counts_past_int64(graph):
    transits = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="sample_neighbors: 2 transits drawing up to"):
        sample_neighbors(graph.indptr, graph.indices, None, transits, 2**62, replace=True)


def test_signed_and_unsigned_keys_agree():
    graph = CSCGraph.from_edge_index(random_edge_index(40, 300, seed=7), num_nodes=40)
    key = (1 << 63) + 12345
    assert batch_of(run(graph, [[1, 2, 3]], [3, 3], key=as_op_key(key)), 0) == {
        k: v
        for k, v in sample_hops_reference(graph, [1, 2, 3], [3, 3], key).items()
        if k != "seed_local"
    }


def test_bad_indices_found_while_other_threads_draw_raise():
    """A malformed neighbor id found in one chunk while others are being drawn and relabeled
    stops the whole pass with the error (no hang, no crash)."""
    graph = CSCGraph.from_edge_index(random_edge_index(3000, 30000, seed=8), num_nodes=3000)
    broken = graph.indices.clone()
    broken[-100:] = 5000  # only the last nodes' in-edges, reached by a late chunk
    seeds = torch.arange(3000)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with pytest.raises(RuntimeError, match="sample_hops: indices id 5000 out of range"):
            sample_hops(graph.indptr, broken, None, None, seeds, torch.tensor([0, 3000]), [-1])
    finally:
        torch.set_num_threads(threads)
