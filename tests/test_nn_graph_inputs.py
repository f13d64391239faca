"""fastgl.nn layers on PyG's other graph inputs: ``torch_geometric.EdgeIndex`` and torch sparse
``adj_t`` (``[num_dst, num_src]``, entry ``(dst, src)`` = an edge) in COO, CSR and CSC layout.

Every layer gets PyG's parameters (``load_state_dict(strict=True)``) and must then give PyG
2.8.1's outputs and gradients (to 1e-5; w.r.t. the parameters, the node features and, where PyG
uses them, the sparse values) on the same input. PyG's own layers run here on all these inputs
without torch-sparse or pyg-lib, so PyG itself is the reference throughout (no dense-math
reference is needed), except where PyG refuses an input or a gradient that fastgl gives; there
the reference is PyG on the same matrix in a form it takes:

* a CSC ``adj_t`` in ``GCNConv(normalize=True)`` (``gcn_norm`` raises NotImplementedError) and in
  ``GATConv`` (``remove_self_loops``/``softmax`` raise ValueError): PyG on the CSR;
* an uncoalesced COO in ``GATConv(add_self_loops=False)`` (PyG raises "Cannot get indices on an
  uncoalesced tensor"): PyG on the coalesced COO;
* gradients w.r.t. the values of a CSC (torch's ``sparse.mm`` has no backward for a CSC matrix)
  and of a COO in ``GCNConv(normalize=True)`` (``to_edge_index``'s ``_coalesced_`` has no
  derivative): PyG on the CSR;
* a non-square ``adj_t`` in ``GCNConv`` (``gcn_norm`` asserts a square matrix): PyG on the square
  matrix of ``num_src`` nodes (extra rows empty), first ``num_dst`` rows;
* one feature tensor ``x`` with a non-square ``adj_t`` (PyG adds the root term of all rows, a
  shape error; fastgl's destinations are the first ``num_dst`` rows): PyG on ``(x, x[:num_dst])``.
"""

import warnings

import pytest
import torch
from test_nn import layer_pair

import fastgl.nn as fnn

pyg = pytest.importorskip("torch_geometric")
pyg_nn = pytest.importorskip("torch_geometric.nn")
EdgeIndex = pyg.EdgeIndex

# PyG warns that it converts a COO to CSR, torch that sparse CSR is in beta.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

IN, OUT = 16, 8
N, N_DST = 40, 15
TOL = dict(atol=1e-5, rtol=1e-5)


def _gin_nn(channels):
    return torch.nn.Sequential(
        torch.nn.Linear(channels, 16), torch.nn.ReLU(), torch.nn.Linear(16, OUT)
    )


# name -> factory(module, in_channels); module is torch_geometric.nn or fastgl.nn.
LAYERS = {
    "gcn": lambda m, c: m.GCNConv(c, OUT),
    "gcn-improved": lambda m, c: m.GCNConv(c, OUT, improved=True),
    "gcn-no-loops": lambda m, c: m.GCNConv(c, OUT, add_self_loops=False),
    "gcn-raw": lambda m, c: m.GCNConv(c, OUT, normalize=False),
    "gcn-cached": lambda m, c: m.GCNConv(c, OUT, cached=True),
    "sage-mean": lambda m, c: m.SAGEConv(c, OUT),
    "sage-sum": lambda m, c: m.SAGEConv(c, OUT, aggr="sum"),
    "sage-max": lambda m, c: m.SAGEConv(c, OUT, aggr="max"),
    "sage-no-root": lambda m, c: m.SAGEConv(c, 32, root_weight=False),
    "gin": lambda m, c: m.GINConv(_gin_nn(IN), eps=0.25, train_eps=True),
    "gat": lambda m, c: m.GATConv(c, OUT, heads=2),
    "gat-mean": lambda m, c: m.GATConv(c, OUT, heads=3, concat=False),
    "gat-no-loops": lambda m, c: m.GATConv(c, OUT, heads=2, add_self_loops=False),
}
GCN = [name for name in LAYERS if name.startswith("gcn")]
BIPARTITE = [name for name in LAYERS if not name.startswith("gcn")]


def _pair(name, in_channels=IN):
    return layer_pair(LAYERS, name, in_channels)


def _compare(ref, ours, run_ref, run_ours, inputs):
    """Outputs, parameter gradients and input gradients agree."""
    out_ref, out_ours = run_ref(ref), run_ours(ours)
    torch.testing.assert_close(out_ours, out_ref, **TOL)
    upstream = torch.randn_like(out_ref)
    wrt_ref, wrt_ours = list(ref.parameters()) + inputs, list(ours.parameters()) + inputs
    # Unused parameters or inputs (GAT's sparse values) get no gradient: compare them as zeros.
    grads_ref = torch.autograd.grad(out_ref, wrt_ref, upstream, allow_unused=True)
    grads_ours = torch.autograd.grad(out_ours, wrt_ours, upstream, allow_unused=True)
    names = [key for key, _ in ours.named_parameters()] + [f"input {i}" for i in range(len(inputs))]
    for key, t, g_ref, g_ours in zip(names, wrt_ours, grads_ref, grads_ours):
        g_ref = torch.zeros_like(t) if g_ref is None else g_ref
        g_ours = torch.zeros_like(t) if g_ours is None else g_ours
        torch.testing.assert_close(
            g_ours, g_ref, **TOL, msg=lambda m, key=key: f"grad of {key}: {m}"
        )


def _edges(num_src, num_dst, num_edges, seed):
    """Distinct edges in random order, with self-loops and an isolated last destination."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.stack(
        [
            torch.randint(0, num_src, (num_edges,), generator=g),
            torch.randint(0, num_dst - 1, (num_edges,), generator=g),
        ]
    )
    loops = torch.tensor([[0, 3, 7], [0, 3, 7]])
    edge_index = torch.unique(torch.cat([edge_index, loops], dim=1), dim=1)
    return edge_index[:, torch.randperm(edge_index.shape[1], generator=g)]


def _multigraph(seed=0):
    """Duplicate edges, self-loops (two on node 0) and an isolated last node."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, N - 1, (2, 200), generator=g)
    loops = torch.tensor([[0, 0, 3, 7], [0, 0, 3, 7]])
    return torch.cat([edge_index, loops, edge_index[:, :10]], dim=1)


def _values(num_edges, weighted, seed=3):
    """Non-unit values that take gradients, or plain ones (fastgl's unweighted path)."""
    if not weighted:
        return torch.ones(num_edges)
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(num_edges, generator=g) + 0.5).requires_grad_()


# A fresh sparse tensor per call: PyG's to_edge_index marks a COO it reads as coalesced in place.
def _coo(edge_index, values, shape):
    """adj_t as an uncoalesced COO, its entries in edge_index order (row = destination)."""
    return torch.sparse_coo_tensor(edge_index.flip(0), values, shape)


SPARSE = {
    "coo": _coo,
    "csr": lambda edge_index, values, shape: _coo(edge_index, values, shape).to_sparse_csr(),
    "csc": lambda edge_index, values, shape: _coo(edge_index, values, shape).to_sparse_csc(),
}


def _pyg_adj(name, layout, values_grad=False):
    """How PyG's layer gets the matrix fastgl gets in ``layout``: the same, except where PyG
    refuses it or its values' gradient (see the module docstring)."""
    normalizes = name.startswith("gcn") and name != "gcn-raw"
    if layout == "csc" and (normalizes or name.startswith("gat") or values_grad):
        return SPARSE["csr"]
    if layout == "coo" and values_grad and normalizes:
        return SPARSE["csr"]
    if layout == "coo" and name == "gat-no-loops":
        return lambda edge_index, values, shape: _coo(edge_index, values, shape).coalesce()
    return SPARSE[layout]


def _compare_on_sparse(name, in_channels, layout, run, inputs, values):
    """``_compare`` of ``run(build_adj_t)`` with fastgl getting ``layout``, PyG what it takes;
    then, if the values take gradients, a second pass for theirs (fresh layers: PyG's cached
    GCN would reuse the first pass's normalization)."""
    ref, ours = _pair(name, in_channels)
    _compare(ref, ours, run(_pyg_adj(name, layout)), run(SPARSE[layout]), inputs)
    if values.requires_grad:
        ref, ours = _pair(name, in_channels)
        _compare(
            ref,
            ours,
            run(_pyg_adj(name, layout, values_grad=True)),
            run(SPARSE[layout]),
            inputs + [values],
        )


# --- sparse adj_t -------------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["ones", "weighted"])
@pytest.mark.parametrize("layout", list(SPARSE))
@pytest.mark.parametrize("name", list(LAYERS))
def test_sparse_adj_t_matches_pyg(name, layout, weighted):
    edge_index = _edges(N, N, 160, seed=1)
    x = torch.randn(N, IN, requires_grad=True)
    values = _values(edge_index.shape[1], weighted)

    def run(build):
        return lambda m: m(x, build(edge_index, values, (N, N)))

    _compare_on_sparse(name, IN, layout, run, [x], values)


@pytest.mark.parametrize("layout", list(SPARSE))
@pytest.mark.parametrize("name", BIPARTITE)
def test_sparse_bipartite_matches_pyg(name, layout):
    edge_index = _edges(N, N_DST, 120, seed=2)
    values = _values(edge_index.shape[1], weighted=True)
    dst_channels = IN if name.startswith("gin") else 12
    x_src = torch.randn(N, IN, requires_grad=True)
    x_dst = torch.randn(N_DST, dst_channels, requires_grad=True)
    in_channels = IN if name.startswith("gin") else (IN, dst_channels)
    # Without destination features: no root term; GAT without a destination score.
    for x, inputs in (((x_src, x_dst), [x_src, x_dst]), ((x_src, None), [x_src])):

        def run(build, x=x):
            return lambda m: m(x, build(edge_index, values, (N_DST, N)))

        _compare_on_sparse(name, in_channels, layout, run, inputs, values)


@pytest.mark.parametrize("layout", list(SPARSE))
@pytest.mark.parametrize("name", BIPARTITE)
def test_sparse_non_square_with_one_feature_tensor(name, layout):
    """Destinations are the first num_dst rows of x: PyG on (x, x[:num_dst])."""
    edge_index = _edges(N, N_DST, 120, seed=4)
    values = _values(edge_index.shape[1], weighted=True)
    x = torch.randn(N, IN, requires_grad=True)
    ref, ours = _pair(name)
    for values_grad in (False, True):
        build = _pyg_adj(name, layout, values_grad)
        _compare(
            ref,
            ours,
            lambda m, build=build: m((x, x[:N_DST]), build(edge_index, values, (N_DST, N))),
            lambda m: m(x, SPARSE[layout](edge_index, values, (N_DST, N))),
            [x, values] if values_grad else [x],
        )


@pytest.mark.parametrize("layout", list(SPARSE))
@pytest.mark.parametrize("name", GCN)
def test_gcn_non_square_adj_t_is_the_padded_square_matrix(name, layout):
    """PyG's gcn_norm takes square sparse matrices only: compare with PyG on the square matrix
    of num_src nodes (rows beyond num_dst empty), first num_dst rows (as fastgl's size=)."""
    edge_index = _edges(N, N_DST, 120, seed=5)
    values = _values(edge_index.shape[1], weighted=True)
    x = torch.randn(N, IN, requires_grad=True)
    for _ in range(2):  # twice: a cached layer must not take the first matrix for the second
        ref, ours = _pair(name)
        _compare(
            ref,
            ours,
            lambda m: m(x, SPARSE["csr"](edge_index, values, (N, N)))[:N_DST],
            lambda m: m(x, SPARSE[layout](edge_index, values, (N_DST, N))),
            [x, values],
        )


@pytest.mark.parametrize("name", list(LAYERS))
def test_coo_duplicate_entries_are_one_edge(name):
    """An uncoalesced COO's duplicate entries become one edge carrying their summed value, as
    in PyG: its spmm converts the COO to CSR (which coalesces), GATConv's add_self_loops
    coalesces it, and GATConv(add_self_loops=False) refuses an uncoalesced COO."""
    edge_index = _multigraph()
    values = _values(edge_index.shape[1], weighted=True)
    x = torch.randn(N, IN, requires_grad=True)

    def run(build):
        return lambda m: m(x, build(edge_index, values, (N, N)))

    _compare_on_sparse(name, IN, "coo", run, [x], values)


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize("layout", list(SPARSE))
def test_sparse_without_entries(name, layout):
    x = torch.randn(7, IN)
    empty = torch.empty(2, 0, dtype=torch.long)
    ref, ours = _pair(name)
    torch.testing.assert_close(
        ours(x, SPARSE[layout](empty, torch.ones(0), (7, 7))),
        ref(x, _pyg_adj(name, layout)(empty, torch.ones(0), (7, 7))),
        **TOL,
    )


def test_csr_with_int32_indices():
    edge_index = _edges(N, N, 160, seed=6)
    values = _values(edge_index.shape[1], weighted=True).detach()
    csr = SPARSE["csr"](edge_index, values, (N, N))
    csr32 = torch.sparse_csr_tensor(
        csr.crow_indices().int(), csr.col_indices().int(), csr.values(), (N, N)
    )
    x = torch.randn(N, IN)
    for name in ("gcn", "sage-mean", "gat"):
        _, ours = _pair(name)
        torch.testing.assert_close(ours(x, csr32), ours(x, csr), **TOL)


def test_gcn_cached_on_sparse_follows_the_values():
    edge_index = _edges(N, N, 160, seed=7)
    values = _values(edge_index.shape[1], weighted=True).detach()
    adj_t = SPARSE["csr"](edge_index, values, (N, N))
    x = torch.randn(N, IN)
    ref, ours = _pair("gcn")  # PyG uncached: its cache never lets go of the first graph
    ours.cached = True
    torch.testing.assert_close(ours(x, adj_t), ref(x, adj_t), **TOL)
    torch.testing.assert_close(ours(x, adj_t), ref(x, adj_t), **TOL)  # cache hit
    adj_t.values().mul_(2.0)  # modified in place: noticed
    torch.testing.assert_close(ours(x, adj_t), ref(x, adj_t), **TOL)


@pytest.mark.parametrize("name", ["gcn", "sage-max", "gin"])
def test_gradcheck_sparse_values_float64(name):
    edge_index = torch.tensor([[0, 1, 2, 3, 3, 4, 1], [1, 2, 0, 0, 4, 4, 1]])
    torch.manual_seed(8)
    conv = LAYERS[name](fnn, 3).double()
    if name == "gin":
        conv = fnn.GINConv(torch.nn.Linear(3, 2).double())
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    values = (torch.rand(7, dtype=torch.float64) + 0.5).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda t, v: conv(t, SPARSE["csr"](edge_index, v, (5, 5))), (x, values)
    )


# --- EdgeIndex ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sort", [None, "row", "col"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_edge_index_matches_pyg(name, sort):
    edge_index = _multigraph()
    weight = _values(edge_index.shape[1], weighted=True)
    ei, perm = EdgeIndex(edge_index, sparse_size=(N, N)), None
    if sort is not None:
        ei, perm = ei.sort_by(sort)
    x = torch.randn(N, IN, requires_grad=True)
    ref, ours = _pair(name)
    _compare(ref, ours, lambda m: m(x, ei), lambda m: m(x, ei), [x])
    torch.testing.assert_close(ours(x, ei), ours(x, ei.as_tensor()), **TOL)
    if name.startswith("gcn"):  # edge weights in the EdgeIndex's own column order

        def run(m):
            return m(x, ei, weight if perm is None else weight[perm])

        ref, ours = _pair(name)  # fresh: PyG's cached GCN would keep the unweighted graph
        _compare(ref, ours, run, run, [x, weight])


@pytest.mark.parametrize("sort", [None, "col"])
@pytest.mark.parametrize("name", BIPARTITE)
def test_edge_index_bipartite_takes_its_sparse_size(name, sort):
    edge_index = _edges(N, N_DST, 120, seed=9)
    ei = EdgeIndex(edge_index, sparse_size=(N, N_DST))
    if sort is not None:
        ei = ei.sort_by(sort)[0]
    dst_channels = IN if name.startswith("gin") else 12
    x_src = torch.randn(N, IN, requires_grad=True)
    x_dst = torch.randn(N_DST, dst_channels, requires_grad=True)
    ref, ours = _pair(name, IN if name.startswith("gin") else (IN, dst_channels))
    _compare(
        ref, ours, lambda m: m((x_src, x_dst), ei), lambda m: m((x_src, x_dst), ei), [x_src, x_dst]
    )
    # Without x_dst the sparse size says how many destinations there are. PyG's GATConv still
    # counts its self-loops from the size argument (without one: all 40 sources, and 40
    # output rows), so PyG gets size= there.
    size = (N, N_DST) if name.startswith("gat") else None
    _compare(
        ref,
        ours,
        lambda m: m((x_src, None), ei, size=size),
        lambda m: m((x_src, None), ei),
        [x_src],
    )


def test_edge_index_size_fills_in_what_sparse_size_leaves_open():
    edge_index = _edges(N, N_DST, 120, seed=10)
    x_src = torch.randn(N, IN)
    _, ours = _pair("sage-mean")
    expected = ours((x_src, None), edge_index, size=(N, N_DST))
    for sparse_size, size in [
        ((None, N_DST), None),
        ((None, N_DST), (N, None)),
        ((N, None), (None, N_DST)),
        ((None, None), (N, N_DST)),
        ((N, N_DST), (N, N_DST)),
    ]:
        ei = EdgeIndex(edge_index, sparse_size=sparse_size)
        torch.testing.assert_close(ours((x_src, None), ei, size=size), expected, **TOL)


# --- bad input ----------------------------------------------------------------------------------


class SparseTensor:
    """Stands in for torch_sparse.SparseTensor, which does not install here."""

    __module__ = "torch_sparse.tensor"


def test_bad_graph_inputs_raise_clear_errors():
    edge_index = _edges(N, N, 160, seed=11)
    values = torch.ones(edge_index.shape[1])
    x = torch.randn(N, IN)
    sage, gcn, gat = fnn.SAGEConv(IN, OUT), fnn.GCNConv(IN, OUT), fnn.GATConv(IN, OUT)
    csr = SPARSE["csr"](edge_index, values, (N, N))
    wide = SPARSE["csr"](edge_index, values, (N, N + 5))
    bad_crow = torch.sparse_csr_tensor(
        torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1]), torch.ones(2), (3, 3)
    )
    bad_end = torch.sparse_csr_tensor(
        torch.tensor([0, 1, 1]), torch.tensor([0, 1]), torch.ones(2), (2, 2)
    )
    cases = [
        (lambda: sage(x, wide), ValueError, "SAGEConv: x has 40 rows but the graph has 45 source"),
        (
            lambda: sage((x, x[:10]), csr),
            ValueError,
            "x_dst has 10 rows but the graph has 40 destination",
        ),
        (lambda: gcn(x[:30], csr), ValueError, "GCNConv: x has 30 rows"),
        (lambda: sage(x, csr, size=(N, 20)), ValueError, "disagrees with a sparse adj_t of shape"),
        (
            lambda: sage(x, SPARSE["coo"](edge_index, values, (N + 5, N))),
            ValueError,
            "must not exceed num_src",
        ),
        (lambda: sage(x, csr.to_dense()), ValueError, "dense adjacency matrix is not accepted"),
        (lambda: gat(x, torch.ones(2, 5)), ValueError, "dense adjacency matrix"),
        (
            lambda: sage(x, torch.zeros(N, N, 3).to_sparse()),
            ValueError,
            r"2-D matrix \[num_dst, num_src\].*shape \(40, 40, 3\)",
        ),
        (lambda: sage(x, torch.ones(N, N, 3).to_sparse(2)), ValueError, "1 dense dims"),
        (lambda: sage(x, torch.ones(2, N, N).to_sparse_csr()), ValueError, "2-D matrix"),
        (
            lambda: sage(x, torch.ones(N, N).to_sparse_bsr((2, 2))),
            ValueError,
            "sparse_coo, sparse_csr or sparse_csc layout, got torch.sparse_bsr",
        ),
        (
            lambda: sage(torch.randn(3, IN), bad_crow),
            ValueError,
            r"adj_t.crow_indices\(\) must never decrease, but adj_t.crow_indices\(\)\[2\] = 1 < "
            r"adj_t.crow_indices\(\)\[1\] = 2",
        ),
        (
            lambda: sage(torch.randn(2, IN), bad_end),
            ValueError,
            r"crow_indices\(\) must run from 0 to nnz = 2, got 0 to 1",
        ),
        (
            lambda: gcn(x, csr, torch.ones(edge_index.shape[1])),
            ValueError,
            "edge_weight must be None with a sparse adj_t",
        ),
        (lambda: sage(x, SparseTensor()), TypeError, "torch_sparse.SparseTensor is not supported"),
        (
            lambda: sage(x, EdgeIndex(edge_index, sparse_size=(N, N)), size=(N, 20)),
            ValueError,
            r"disagrees with the EdgeIndex's sparse_size \(40, 40\)",
        ),
        (
            lambda: sage(x[:30], EdgeIndex(edge_index, sparse_size=(N, N))),
            ValueError,
            "x has 30 rows but the graph has 40 source",
        ),
        (
            lambda: sage(x, EdgeIndex(edge_index, sparse_size=(N, 30))),
            ValueError,
            "target id 3[0-9], out of range for 30",
        ),
        (lambda: sage(x, 3.0), TypeError, "torch_geometric.EdgeIndex, a sparse adj_t"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run, error, message in cases:
            with pytest.raises(error, match=message):
                run()


# --- how the structure is built -----------------------------------------------------------------


def test_csr_and_coalesced_coo_are_read_without_sorting():
    """The CSR of adj_t is the graph's CSC: fastgl reads it as it is (same edge order, so the
    values need no reordering); a coalesced COO likewise; a CSC needs one sort."""
    from fastgl.nn._adjacency import adjacency_of

    edge_index = _edges(N, N, 160, seed=12)
    values = _values(edge_index.shape[1], weighted=True).detach()
    x = torch.randn(N, IN)
    csr = SPARSE["csr"](edge_index, values, (N, N))
    _, _, adj = adjacency_of("test", x, csr)
    assert adj.edge_order is None
    assert torch.equal(adj.structure.indptr, csr.crow_indices())
    assert torch.equal(adj.structure.indices, csr.col_indices())
    assert torch.equal(adj.values, csr.values())
    _, _, adj = adjacency_of("test", x, _coo(edge_index, values, (N, N)).coalesce())
    assert adj.edge_order is None and torch.equal(adj.structure.indices, csr.col_indices())
    _, _, adj = adjacency_of("test", x, SPARSE["csc"](edge_index, values, (N, N)))
    assert torch.equal(adj.structure.indices, csr.col_indices())
    assert torch.equal(adj.values, csr.values())
    # Bipartite: a destination-sorted Block with the CSR's edges in their order.
    wide = SPARSE["csr"](
        edge_index[:, edge_index[1] < N_DST],
        1.0 + torch.arange(int((edge_index[1] < N_DST).sum())).float(),
        (N_DST, N),
    )
    _, _, adj = adjacency_of("test", (x, None), wide)
    assert adj.edge_order is None and torch.equal(adj.structure.src, wide.col_indices())
    assert torch.equal(adj.values, wide.values())


def test_wrong_sort_flags_are_not_trusted():
    """A COO flagged coalesced and an EdgeIndex flagged sorted by column that are not sorted
    (PyG's to_edge_index sets that COO flag in place without sorting) still give the right
    answer."""
    edge_index = _edges(N, N, 160, seed=13)
    values = _values(edge_index.shape[1], weighted=True).detach()
    x = torch.randn(N, IN)
    _, ours = _pair("sage-mean")
    expected = ours(x, SPARSE["csr"](edge_index, values, (N, N)))
    lying_coo = torch.sparse_coo_tensor(edge_index.flip(0), values, (N, N), is_coalesced=True)
    torch.testing.assert_close(ours(x, lying_coo), expected, **TOL)
    _, ours = _pair("gcn")
    lying_ei = EdgeIndex(edge_index, sparse_size=(N, N), sort_order="col")
    torch.testing.assert_close(ours(x, lying_ei), ours(x, edge_index), **TOL)
