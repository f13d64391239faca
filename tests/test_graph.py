"""CSCGraph: from_edge_index against the pure references, eid/weight semantics, validation; the
structure interface it shares with Block."""

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    csc_reference,
    csc_reference_python,
    edge_index_strategy,
    empty_edge_index,
    hub_edge_index,
    out_csr_reference,
    random_edge_index,
    random_weights,
    sorted_by_source,
)

from fastgl import Block, CSCGraph
from fastgl.graph import Structure, expand_ptr
from fastgl.ops import csc_from_coo


def targets_of_slots(graph: CSCGraph) -> torch.Tensor:
    """Target node of every CSC slot."""
    return torch.repeat_interleave(torch.arange(graph.num_nodes), graph.in_degrees())


def assert_matches_reference(graph: CSCGraph, edge_index: torch.Tensor, num_nodes: int) -> None:
    indptr, indices, eid = csc_reference(edge_index, num_nodes)
    assert graph.num_nodes == num_nodes
    assert graph.num_edges == edge_index.shape[1]
    assert graph.indptr.dtype == torch.int64
    assert graph.indices.dtype == edge_index.dtype
    assert graph.eid.dtype == torch.int64
    assert torch.equal(graph.indptr, indptr)
    assert torch.equal(graph.indices, indices)
    assert torch.equal(graph.eid, eid)


# --- conversion vs reference ------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(edge_index_strategy(max_nodes=60, max_edges=400))
def test_from_edge_index_matches_reference(case):
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    assert_matches_reference(graph, edge_index, num_nodes)
    # Second, independent opinion (Python buckets, no torch.sort).
    indptr, indices, eid = csc_reference_python(edge_index, num_nodes)
    assert torch.equal(graph.indptr, indptr)
    assert torch.equal(graph.indices, indices)
    assert torch.equal(graph.eid, eid)


@settings(max_examples=40, deadline=None)
@given(edge_index_strategy(max_nodes=30, max_edges=200, allow_empty=False))
def test_eid_semantics(case):
    """edge_index[:, eid[k]] is (indices[k], target of slot k), and in-degrees match."""
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    eid = graph.edge_ids()
    assert torch.equal(edge_index[0][eid], graph.indices)
    assert torch.equal(edge_index[1][eid].to(torch.int64), targets_of_slots(graph))
    # eid is a permutation of 0..E-1.
    assert torch.equal(torch.sort(eid).values, torch.arange(graph.num_edges))
    # Stable: within a node, slots keep input order.
    for v in range(graph.num_nodes):
        slot = graph.eid[graph.indptr[v] : graph.indptr[v + 1]]
        assert bool((slot[1:] > slot[:-1]).all())
    expected_degrees = torch.bincount(edge_index[1].to(torch.int64), minlength=num_nodes)
    assert torch.equal(graph.in_degrees(), expected_degrees)


def test_default_num_nodes_is_max_id_plus_one():
    edge_index = torch.tensor([[0, 7, 3], [2, 2, 5]])
    graph = CSCGraph.from_edge_index(edge_index)
    assert graph.num_nodes == 8
    assert graph.in_degrees().tolist() == [0, 0, 2, 0, 0, 1, 0, 0]


def test_small_example_exact():
    graph = CSCGraph.from_edge_index(torch.tensor([[0, 1, 2, 3, 0], [1, 2, 0, 1, 1]]))
    assert graph.indptr.tolist() == [0, 1, 4, 5, 5]
    assert graph.indices.tolist() == [2, 0, 3, 0, 1]
    assert graph.eid.tolist() == [2, 0, 3, 4, 1]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_empty_graph(dtype):
    graph = CSCGraph.from_edge_index(empty_edge_index(dtype))
    assert graph.num_nodes == 0 and graph.num_edges == 0
    assert graph.indptr.tolist() == [0]
    assert graph.indices.dtype == dtype
    assert graph.in_degrees().numel() == 0
    # Empty edge list with explicit nodes: all isolated.
    graph = CSCGraph.from_edge_index(empty_edge_index(dtype), num_nodes=5)
    assert graph.indptr.tolist() == [0] * 6
    assert graph.in_degrees().tolist() == [0] * 5


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_int32_and_hub(dtype):
    """A node of in-degree 100_000 among a random graph, both index dtypes."""
    edge_index, num_nodes = hub_edge_index(dtype=dtype)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    assert_matches_reference(graph, edge_index, num_nodes)
    assert int(graph.in_degrees()[0]) >= 100_000


def test_edge_weights_are_permuted_along():
    edge_index = random_edge_index(50, 500, seed=3)
    weight = torch.rand(500, dtype=torch.float64)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=50, edge_weight=weight)
    assert graph.weight.dtype == torch.float64
    assert torch.equal(graph.weight, weight[graph.eid])
    graph32 = CSCGraph.from_edge_index(edge_index, num_nodes=50, edge_weight=weight.float())
    assert graph32.weight.dtype == torch.float32
    assert torch.equal(graph32.weight, weight.float()[graph32.eid])


@settings(max_examples=25, deadline=None)
@given(edge_index_strategy(max_nodes=30, max_edges=200), st.sampled_from(["transpose", "stride"]))
def test_non_contiguous_edge_index(case, layout):
    edge_index, num_nodes = case
    if layout == "transpose":  # [E, 2] storage viewed as [2, E]: rows have stride 2
        view = edge_index.t().contiguous().t()
    else:  # every other column of a wider tensor
        wide = torch.stack([edge_index, torch.zeros_like(edge_index)], dim=2).reshape(2, -1)
        view = wide[:, ::2]
    assert torch.equal(view, edge_index)
    if edge_index.shape[1] > 1:
        assert not view.is_contiguous()
    weight = torch.rand(edge_index.shape[1]).repeat_interleave(2)[::2]  # non-contiguous too
    graph = CSCGraph.from_edge_index(view, num_nodes=num_nodes, edge_weight=weight)
    assert_matches_reference(graph, edge_index, num_nodes)
    assert torch.equal(graph.weight, weight[graph.eid])


def test_two_million_edges():
    num_nodes, num_edges = 200_000, 2_000_000
    gen = torch.Generator().manual_seed(11)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
    order = torch.sort(edge_index[1], stable=True).indices
    assert torch.equal(graph.eid, order)
    assert torch.equal(graph.indices, edge_index[0][order])
    assert torch.equal(
        graph.indptr[1:], torch.cumsum(torch.bincount(edge_index[1], minlength=num_nodes), 0)
    )
    assert int(graph.indptr[0]) == 0


def test_csc_from_coo_op_mixed_dtypes():
    """int32 sources with int64 targets: indices keep the source dtype."""
    edge_index = random_edge_index(20, 100, seed=5)
    indptr, indices, perm = csc_from_coo(edge_index[0].int(), edge_index[1], 20)
    ref_indptr, ref_indices, ref_eid = csc_reference(edge_index, 20)
    assert indices.dtype == torch.int32
    assert torch.equal(indptr, ref_indptr)
    assert torch.equal(indices.long(), ref_indices)
    assert torch.equal(perm, ref_eid)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_csc_from_coo_is_the_stable_sort_at_any_thread_count(threads, dtype):
    """Enough edges per node for one histogram per thread, and more nodes than one scan range:
    every way of cutting the counting sort gives the stable sort by target."""
    num_nodes, num_edges = 40_000, 400_000
    gen = torch.Generator().manual_seed(threads)
    src = torch.randint(0, num_nodes, (num_edges,), generator=gen, dtype=dtype)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=gen, dtype=dtype)
    dst[: num_edges // 4] = 7  # a hub whose edges every chunk holds
    order = torch.sort(dst.long(), stable=True).indices
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        indptr, indices, perm = csc_from_coo(src, dst, num_nodes)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(perm, order)
    assert indices.dtype == dtype and torch.equal(indices, src[order])
    counts = torch.bincount(dst.long(), minlength=num_nodes)
    assert torch.equal(indptr, torch.cat([counts.new_zeros(1), counts.cumsum(0)]))


@pytest.mark.parametrize("position", [0, 99_999, 150_000, 299_999])
@pytest.mark.parametrize("bad", [-3, 1000])
def test_csc_from_coo_finds_a_bad_id_anywhere_in_a_long_list(position, bad):
    """The range check reduces long lists in parallel parts (one per thread): a bad id in any
    part is found."""
    ids = torch.randint(0, 1000, (300_000,), generator=torch.Generator().manual_seed(0))
    ids[position] = bad
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        with pytest.raises(RuntimeError, match="negative" if bad < 0 else "out of range"):
            csc_from_coo(ids, torch.zeros_like(ids), 1000)
        with pytest.raises(RuntimeError, match="negative" if bad < 0 else "out of range"):
            csc_from_coo(torch.zeros_like(ids).int(), ids.int(), 1000)
    finally:
        torch.set_num_threads(before)


# --- constructor and accessors ----------------------------------------------------------------


def test_constructor_accepts_valid_arrays():
    indptr = torch.tensor([0, 2, 2, 3], dtype=torch.int32)
    indices = torch.tensor([1, 2, 0], dtype=torch.int32)
    graph = CSCGraph(indptr, indices, weight=torch.tensor([1.0, 0.0, 2.0]))
    assert graph.indptr.dtype == torch.int64  # stored as int64
    assert graph.num_nodes == 3 and graph.num_edges == 3
    assert graph.eid is None
    assert torch.equal(graph.edge_ids(), torch.arange(3))
    assert graph.in_degrees().tolist() == [2, 0, 1]
    assert graph.device == torch.device("cpu")
    assert "num_nodes=3" in repr(graph)


RUN_TO_3 = r"indptr must run from 0 to len\(indices\) = 3"


def _valid():
    return dict(indptr=torch.tensor([0, 2, 3, 3]), indices=torch.tensor([1, 2, 0]))


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(indptr=torch.tensor([1, 2, 3, 3])), f"{RUN_TO_3}, got 1 to 3"),
        (dict(indptr=torch.tensor([0, 3, 2, 3])), r"never decrease, but indptr\[2\] = 2 <"),
        (dict(indptr=torch.tensor([0, 2, 3, 4])), f"{RUN_TO_3}, got 0 to 4"),
        (dict(indptr=torch.tensor([0, 2, 3, 2])), f"{RUN_TO_3}, got 0 to 2"),
        (dict(indptr=torch.tensor([], dtype=torch.long)), "num_nodes \\+ 1 >= 1"),
        (dict(indptr=torch.tensor([[0, 2, 3, 3]])), "indptr must be a 1-D tensor"),
        (dict(indices=torch.tensor([1, 3, 0])), "id 3, out of range for a graph of 3 nodes"),
        (dict(indices=torch.tensor([1, -1, 0])), "id -1, out of range"),
        (dict(indptr=torch.tensor([0.0, 2.0, 3.0, 3.0])), "indptr must be int32 or int64"),
        (dict(indices=torch.tensor([1.0, 2.0, 0.0])), "indices must be int32 or int64"),
        (
            dict(indices=torch.tensor([1, 2, 0], dtype=torch.int16)),
            "indices must be int32 or int64",
        ),
        (
            dict(indices=torch.tensor([1, 2, 0], device="meta")),
            "indices is on meta but indptr is on cpu",
        ),
        (dict(eid=torch.tensor([0, 1])), "eid must be int64 of shape \\[3\\]"),
        (dict(eid=torch.tensor([0, 1, 2], dtype=torch.int32)), "eid must be int64"),
        (dict(eid=torch.tensor([0, 1, 2], device="meta")), "eid is on meta"),
        (dict(weight=torch.tensor([1.0, -0.5, 2.0])), "finite and >= 0"),
        (dict(weight=torch.tensor([1.0, float("nan"), 2.0])), "finite and >= 0"),
        (dict(weight=torch.tensor([1.0, float("inf"), 2.0])), "finite and >= 0"),
        (dict(weight=torch.tensor([1.0, 2.0])), "weight must have shape \\[3\\]"),
        (dict(weight=torch.ones(3, 1)), "weight must have shape \\[3\\]"),
        (dict(weight=torch.tensor([1, 2, 3])), "weight must be float32 or float64"),
        (dict(weight=torch.ones(3, device="meta")), "weight is on meta but the graph is on cpu"),
    ],
)
def test_constructor_validation(change, match):
    kwargs = {**_valid(), **change}
    with pytest.raises(ValueError, match=match):
        CSCGraph(**kwargs)
    # The message names the class, so users can find the failing call.
    with pytest.raises(ValueError, match="^CSCGraph"):
        CSCGraph(**kwargs)


@pytest.mark.parametrize(
    "edge_index, match",
    [
        (torch.tensor([0, 1, 2]), r"edge_index must have shape \[2, E\]"),
        (torch.zeros(3, 4, dtype=torch.long), r"edge_index must have shape \[2, E\]"),
        (torch.zeros(2, 4), "edge_index must be int32 or int64"),
        ([[0, 1], [1, 0]], r"edge_index must have shape \[2, E\]"),
    ],
)
def test_from_edge_index_validation(edge_index, match):
    with pytest.raises(ValueError, match=match):
        CSCGraph.from_edge_index(edge_index)


@pytest.mark.parametrize(
    "weight, match",
    [
        (torch.tensor([1.0, -1.0, 1.0]), "finite and >= 0"),
        (torch.tensor([1.0, 1.0]), r"weight must have shape \[3\]"),
        (torch.tensor([1, 1, 1]), "float32 or float64"),
    ],
)
def test_from_edge_index_weight_validation(weight, match):
    with pytest.raises(ValueError, match="CSCGraph.from_edge_index: .*" + match):
        CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), edge_weight=weight)


@pytest.mark.parametrize(
    "edge_index, num_nodes, match",
    [
        (torch.tensor([[0, 5], [1, 2]]), 3, "out of range for a graph of 3 nodes"),
        (torch.tensor([[0, 1], [1, 4]]), 3, "out of range for a graph of 3 nodes"),
        (torch.tensor([[0, -1], [1, 2]]), 3, "negative"),
        (torch.empty(2, 0, dtype=torch.long), -1, "num_nodes must be >= 0"),
    ],
)
def test_from_edge_index_ids_out_of_range(edge_index, num_nodes, match):
    with pytest.raises((ValueError, RuntimeError), match=match):
        CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)


# --- devices ----------------------------------------------------------------------------------


def test_to_cpu_keeps_everything():
    edge_index = random_edge_index(30, 100, seed=1)
    graph = CSCGraph.from_edge_index(edge_index, edge_weight=torch.rand(100))
    moved = graph.to("cpu")
    assert isinstance(moved, CSCGraph)
    assert moved.device == torch.device("cpu")
    for name in ("indptr", "indices", "eid", "weight"):
        assert torch.equal(getattr(moved, name), getattr(graph, name))


def test_to_other_device_moves_every_array():
    """A device without a GPU: the meta device keeps shapes and dtypes."""
    graph = CSCGraph.from_edge_index(
        random_edge_index(10, 40, dtype=torch.int32), edge_weight=torch.rand(40)
    )
    moved = graph.to("meta")
    assert moved.device.type == "meta"
    for name in ("indptr", "indices", "eid", "weight"):
        t = getattr(moved, name)
        assert t.device.type == "meta"
        assert t.dtype == getattr(graph, name).dtype and t.shape == getattr(graph, name).shape
    assert moved.num_nodes == graph.num_nodes and moved.num_edges == graph.num_edges


@pytest.mark.skipif(not torch.cuda.is_available(), reason="pin_memory needs CUDA")
def test_pin_memory():
    graph = CSCGraph.from_edge_index(
        random_edge_index(30, 100, seed=2), edge_weight=torch.rand(100)
    )
    pinned = graph.pin_memory()
    for name in ("indptr", "indices", "eid", "weight"):
        assert getattr(pinned, name).is_pinned()
        assert torch.equal(getattr(pinned, name), getattr(graph, name))


# --- induced edges ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(edge_index_strategy(max_nodes=40, max_edges=300), st.data())
def test_induced_edges_are_every_edge_between_the_nodes(case, data):
    edge_index, num_nodes = case
    graph = CSCGraph.from_edge_index(edge_index, num_nodes)
    chosen = (
        data.draw(st.lists(st.integers(0, max(num_nodes - 1, 0)), unique=True, max_size=num_nodes))
        if num_nodes
        else []
    )
    nodes = torch.tensor(chosen, dtype=torch.int64)
    row, col, eid = graph.induced_edges(nodes)
    position = {int(n): i for i, n in enumerate(nodes)}
    expected = sorted(
        (position[int(s)], position[int(t)], e)
        for e, (s, t) in enumerate(edge_index.t().tolist())
        if s in position and t in position
    )
    assert sorted(zip(row.tolist(), col.tolist(), eid.tolist())) == expected
    assert bool((col[1:] >= col[:-1]).all())  # grouped by target, in the order of nodes


# --- the out-edge view -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(edge_index_strategy(max_nodes=40, max_edges=300), st.booleans(), st.booleans())
def test_out_csr_matches_reference(case, weighted, sort_edges):
    edge_index, num_nodes = case
    if sort_edges:
        edge_index = sorted_by_source(edge_index)
    weight = random_weights(edge_index.shape[1], seed=num_nodes) if weighted else None
    graph = CSCGraph.from_edge_index(edge_index, num_nodes, edge_weight=weight)
    csr = graph.out_csr()
    indptr, indices, eid, expected_weight = out_csr_reference(edge_index, num_nodes, weight)
    assert csr.indices.dtype == edge_index.dtype and csr.edge_ids().dtype == torch.int64
    assert torch.equal(csr.indptr, indptr)
    assert torch.equal(csr.indices, indices)
    assert torch.equal(csr.edge_ids(), eid)
    # No id array exactly when every slot is its own edge.
    assert (csr.eid is None) == torch.equal(eid, torch.arange(eid.numel()))
    if sort_edges:
        assert csr.eid is None
    assert (csr.weight is None) == (weight is None)
    if weight is not None:
        assert torch.equal(csr.weight, expected_weight)
    assert graph.out_csr() is csr  # built once


def test_out_csr_maps_slots_through_a_given_eid():
    """A graph built from arrays (not from an edge list) maps each CSR slot to its CSC slot's
    eid; without eid, to the CSC slot itself."""
    indptr, indices = torch.tensor([0, 1, 3, 4]), torch.tensor([2, 0, 2, 1])
    given_eid = torch.tensor([10, 11, 12, 13])
    weight = torch.tensor([0.5, 1.5, 2.5, 3.5])
    with_eid = CSCGraph(indptr, indices, given_eid, weight).out_csr()
    assert with_eid.indptr.tolist() == [0, 1, 2, 4]
    assert with_eid.indices.tolist() == [1, 2, 0, 1]  # node 2's targets ascend
    assert with_eid.eid.tolist() == [11, 13, 10, 12]
    assert with_eid.weight.tolist() == [1.5, 3.5, 0.5, 2.5]
    assert CSCGraph(indptr, indices).out_csr().eid.tolist() == [1, 3, 0, 2]
    # Ids that are the CSR slots are left out, as a CSCGraph leaves out its own order's.
    in_slot_order = CSCGraph(indptr, indices, torch.tensor([2, 0, 3, 1])).out_csr()
    assert in_slot_order.eid is None
    assert in_slot_order.edge_ids().tolist() == [0, 1, 2, 3]


# --- the structure interface ------------------------------------------------------------------


def test_expand_ptr_gives_the_row_of_every_slot():
    assert expand_ptr(torch.tensor([0, 2, 2, 5]), 5).tolist() == [0, 0, 2, 2, 2]
    assert expand_ptr(torch.tensor([0], dtype=torch.int32), 0).tolist() == []


def test_graph_and_block_of_the_same_edges_answer_alike():
    """Through the interface, a CSCGraph and a Block (edges unsorted, so its CSC needs a perm)
    describe the same edges; only the order per-edge data comes in differs."""
    edge_index = random_edge_index(20, 80, seed=3)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=20)
    block = Block(
        src=edge_index[0],
        dst=edge_index[1],
        eid=torch.arange(80),
        src_nodes=torch.arange(20),
        num_src_nodes=20,
        num_dst_nodes=20,
    )
    for structure in (graph, block):
        assert isinstance(structure, Structure)
        assert (structure.num_src, structure.num_dst, structure.num_edges) == (20, 20, 80)
        assert structure.device == torch.device("cpu")
        indptr, indices, perm = structure.csc()
        assert torch.equal(indptr, graph.indptr) and torch.equal(indices, graph.indices)
        own = torch.arange(80) if perm is None else perm  # the edge in every slot
        assert torch.equal(structure.src_index()[own], indices)
        assert torch.equal(structure.dst_index()[own], expand_ptr(indptr, 80))
        assert torch.equal(structure.in_degrees(), torch.bincount(edge_index[1], minlength=20))
    # Per-edge data of the layers follows the user's edge list: the graph's eid, the block's own.
    assert torch.equal(graph.original_order, graph.edge_ids())
    assert torch.equal(edge_index[0, graph.original_order], graph.src_index())
    assert block.original_order is None


def test_derived_structures_are_built_once_and_not_carried_over():
    block = Block(
        src=torch.tensor([1, 0]),
        dst=torch.tensor([0, 0]),
        eid=torch.tensor([4, 5]),
        src_nodes=torch.tensor([7, 8]),
        num_src_nodes=2,
        num_dst_nodes=1,
    )
    builds = []
    assert block.cached("key", lambda: builds.append(1) or "built") == "built"
    assert block.cached("key", lambda: builds.append(1) or "again") == "built"
    assert builds == [1]
    assert block.csc() is block.csc()
    assert dataclasses.replace(block, src=torch.tensor([0, 1])).csc()[1].tolist() == [0, 1]
    assert block.to("cpu").cached("key", lambda: "fresh") == "fresh"
