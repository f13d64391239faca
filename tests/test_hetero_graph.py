"""HeteroCSCGraph: every relation's CSC against the pure-PyTorch reference, the combined edge
array against the relations, and clear errors for bad input."""

import pytest
import torch
from reference import csc_reference_of, random_weights

from fastgl import Block, CSCGraph
from fastgl.hetero import BipartiteCSC, HeteroCSCGraph
from fastgl.nn import GCNConv, SAGEConv

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
AT = ("paper", "at", "venue")
NONE = ("venue", "hosts", "venue")  # a relation without edges
NUM_NODES = {"author": 7, "paper": 5, "venue": 2, "empty": 0}


def _random_pairs(num_src, num_dst, num_edges, seed, dtype=torch.int64):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    dst = torch.randint(0, num_dst, (num_edges,), generator=g)
    return torch.stack([src, dst]).to(dtype)


def _edge_index_dict(dtype=torch.int64):
    return {
        WRITES: _random_pairs(7, 5, 20, 0, dtype),  # more sources than destinations
        CITES: _random_pairs(5, 5, 12, 1, dtype),
        AT: _random_pairs(5, 2, 9, 2, dtype),
        NONE: torch.zeros(2, 0, dtype=dtype),
    }


@pytest.fixture(scope="module")
def graph():
    return HeteroCSCGraph.from_edge_index_dict(_edge_index_dict(), NUM_NODES)


def test_attributes(graph):
    assert graph.node_types == ["author", "paper", "venue", "empty"]
    assert graph.edge_types == [WRITES, CITES, AT, NONE]
    assert graph.num_nodes == NUM_NODES
    assert graph.num_edges == {WRITES: 20, CITES: 12, AT: 9, NONE: 0}
    assert graph.device == torch.device("cpu")
    assert graph.node_offsets.tolist() == [0, 7, 12, 14, 14]
    assert graph[WRITES] is graph.relation(WRITES)
    assert "HeteroCSCGraph(" in repr(graph) and "BipartiteCSC(" in repr(graph[WRITES])


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_every_relation_is_the_reference_csc(dtype):
    edge_index_dict = _edge_index_dict(dtype)
    graph = HeteroCSCGraph.from_edge_index_dict(edge_index_dict, NUM_NODES)
    for etype, edge_index in edge_index_dict.items():
        src_type, _, dst_type = etype
        rel = graph[etype]
        # A relation within one type is a homogeneous graph; between two, a bipartite CSC.
        assert isinstance(rel, CSCGraph if src_type == dst_type else BipartiteCSC)
        num_dst = NUM_NODES[dst_type]
        indptr, indices, eid = csc_reference_of(edge_index[0], edge_index[1], num_dst)
        assert torch.equal(rel.indptr, indptr)
        assert torch.equal(rel.indices, indices) and rel.indices.dtype == dtype
        assert torch.equal(rel.edge_ids(), eid)
        assert (rel.num_src, rel.num_dst) == (NUM_NODES[src_type], num_dst)


def test_combined_edges_are_the_relations_in_global_ids(graph):
    combined = graph.combined
    offsets = graph.node_offsets.tolist()
    types = graph.node_types
    assert combined.edge_offsets.tolist() == [0, 20, 32, 41, 41]
    for r, etype in enumerate(graph.edge_types):
        rel = graph[etype]
        src_type, _, dst_type = etype
        assert types[int(combined.src_type[r])] == src_type
        assert types[int(combined.dst_type[r])] == dst_type
        for v in range(rel.num_dst):
            # The contract samplers rely on: (relation, destination) -> one contiguous range.
            row = int(combined.indptr_start[r]) + v
            first, last = int(combined.indptr[row]), int(combined.indptr[row + 1])
            own = slice(int(rel.indptr[v]), int(rel.indptr[v + 1]))
            assert first == int(combined.edge_offsets[r]) + own.start
            assert last - first == own.stop - own.start
            expected = rel.indices[own].to(torch.int64) + offsets[types.index(src_type)]
            assert torch.equal(combined.indices[first:last], expected)
            assert torch.equal(combined.eid[first:last], rel.edge_ids()[own])
    assert combined.weight is None


def test_weights_follow_their_edges_and_combine_only_when_complete():
    edge_index_dict = _edge_index_dict()
    weights = {
        WRITES: random_weights(20, seed=3),
        CITES: random_weights(12, seed=4, dtype=torch.float64),
    }
    partial = HeteroCSCGraph.from_edge_index_dict(edge_index_dict, NUM_NODES, weights)
    for etype, weight in weights.items():
        rel = partial[etype]
        assert torch.equal(rel.weight, weight[rel.edge_ids()])
    assert partial[AT].weight is None and partial.combined.weight is None

    weights |= {AT: random_weights(9, seed=5), NONE: torch.zeros(0)}
    full = HeteroCSCGraph.from_edge_index_dict(edge_index_dict, NUM_NODES, weights)
    combined = full.combined
    assert combined.weight.dtype == torch.float64  # the widest of the relations'
    expected = torch.cat([full[e].weight.to(torch.float64) for e in full.edge_types])
    assert torch.equal(combined.weight, expected)


def test_graphs_without_relations_or_nodes():
    graph = HeteroCSCGraph.from_edge_index_dict({}, {"a": 3, "b": 0})
    assert graph.edge_types == [] and graph.combined.indices.numel() == 0
    assert graph.combined.indptr.numel() == 0
    assert HeteroCSCGraph.from_edge_index_dict({}, {}).node_offsets.tolist() == [0]
    assert graph.to("cpu").num_nodes == {"a": 3, "b": 0}


def test_to_moves_every_array(graph):
    moved = graph.to("cpu")
    assert moved.edge_types == graph.edge_types
    for field, value in graph.combined._asdict().items():
        if value is not None:
            assert torch.equal(getattr(moved.combined, field), value)
    assert torch.equal(moved[WRITES].indptr, graph[WRITES].indptr)


def test_relations_are_structures_for_the_conv_layers(graph):
    """Full-graph message passing along one relation: SAGEConv takes a bipartite relation with
    (x_src, x_dst) features, GCNConv a relation within one type."""
    torch.manual_seed(0)
    x = {t: torch.randn(n, 4) for t, n in NUM_NODES.items()}
    conv = SAGEConv((4, 4), 3)
    out = conv((x["author"], x["paper"]), graph[WRITES])
    edge_index = _edge_index_dict()[WRITES]
    expected = conv((x["author"], x["paper"]), edge_index, size=(7, 5))
    torch.testing.assert_close(out, expected)
    gcn = GCNConv(4, 3)
    torch.testing.assert_close(
        gcn(x["paper"], graph[CITES]), gcn(x["paper"], _edge_index_dict()[CITES])
    )


def test_bipartite_csc_describes_its_edges(graph):
    rel = graph[AT]
    edge_index = _edge_index_dict()[AT]
    assert torch.equal(edge_index[0][rel.edge_ids()], rel.src_index())
    assert torch.equal(edge_index[1][rel.edge_ids()], rel.dst_index())
    assert rel.src_in_degrees is None and torch.equal(rel.original_order, rel.eid)
    assert torch.equal(rel.in_degrees(), torch.bincount(edge_index[1], minlength=2))
    assert not isinstance(rel, Block)


def _build(edge_index_dict=None, num_nodes=None, weights=None):
    return HeteroCSCGraph.from_edge_index_dict(
        _edge_index_dict() if edge_index_dict is None else edge_index_dict,
        NUM_NODES if num_nodes is None else num_nodes,
        weights,
    )


@pytest.mark.parametrize(
    "change, error, match",
    [
        (
            dict(
                edge_index_dict={("author", "writes", "book"): torch.zeros(2, 0, dtype=torch.int64)}
            ),
            ValueError,
            r"destination type 'book' of edge type \('author', 'writes', 'book'\) is not in "
            r"num_nodes_dict",
        ),
        (
            dict(
                edge_index_dict={("blog", "cites", "paper"): torch.zeros(2, 0, dtype=torch.int64)}
            ),
            ValueError,
            "source type 'blog'",
        ),
        (
            dict(edge_index_dict={WRITES: torch.tensor([[7], [0]])}),
            ValueError,
            r"edge_index_dict\[\('author', 'writes', 'paper'\)\] has source \('author'\) id 7, "
            r"out of range for 7 source \('author'\) nodes",
        ),
        (
            dict(edge_index_dict={WRITES: torch.tensor([[6], [5]])}),
            ValueError,
            r"has destination \('paper'\) id 5, out of range for 5 destination \('paper'\)",
        ),
        (
            dict(edge_index_dict={WRITES: torch.tensor([[-1], [0]])}),
            ValueError,
            r"source \('author'\) id -1",
        ),
        (
            dict(edge_index_dict={WRITES: torch.zeros(3, 2, dtype=torch.int64)}),
            ValueError,
            r"\[2, E\]",
        ),
        (dict(edge_index_dict={WRITES: torch.zeros(2, 2)}), ValueError, "int32 or int64"),
        (
            dict(edge_index_dict={WRITES: torch.zeros(2, 2, dtype=torch.int64, device="meta")}),
            ValueError,
            "meta device",
        ),
        (dict(edge_index_dict={("author", "writes"): torch.zeros(2, 0)}), TypeError, "tuples"),
        (dict(edge_index_dict=[WRITES]), TypeError, "edge_index_dict must be a dict"),
        (dict(num_nodes={"author": -1, "paper": 5}), ValueError, r"num_nodes_dict\['author'\]"),
        (dict(num_nodes={"author": 2.5}), ValueError, "must be an int >= 0"),
        (dict(num_nodes=[7, 5]), TypeError, "num_nodes_dict must be a dict"),
        (
            dict(weights={WRITES: torch.ones(19)}),
            ValueError,
            r"edge_weight_dict\[\('author', 'writes', 'paper'\)\] must have shape \[20\]",
        ),
        (dict(weights={WRITES: -torch.ones(20)}), ValueError, "finite and >= 0"),
        (
            dict(weights={WRITES: torch.ones(20, dtype=torch.int64)}),
            ValueError,
            "float32 or float64",
        ),
        (
            dict(weights={("paper", "reads", "paper"): torch.ones(1)}),
            ValueError,
            "edge_weight_dict has edge types",
        ),
    ],
)
def test_bad_input_is_named(change, error, match):
    with pytest.raises(error, match=match):
        _build(**change)


def test_unknown_relation_lists_the_edge_types(graph):
    with pytest.raises(KeyError, match=r"no relation \('paper', 'writes', 'author'\)"):
        graph["paper", "writes", "author"]


def test_relations_must_span_their_node_types():
    """The constructor takes relation CSCs as they are, so it checks their sizes: a relation
    smaller than its node type would address another relation's rows in the combined array."""
    two_nodes = CSCGraph.from_edge_index(torch.tensor([[0], [1]]))
    with pytest.raises(ValueError, match="has 2 source nodes but node type 'a' has 5"):
        HeteroCSCGraph({("a", "r", "a"): two_nodes}, {"a": 5})
    with pytest.raises(ValueError, match="destination type 'b', which num_nodes lacks"):
        HeteroCSCGraph({("a", "r", "b"): two_nodes}, {"a": 2})
    assert HeteroCSCGraph({("a", "r", "a"): two_nodes}, {"a": 2}).num_edges == {("a", "r", "a"): 1}
