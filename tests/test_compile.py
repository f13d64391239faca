"""torch.library.opcheck on fastgl's ops and a torch.compile smoke test (fake kernels)."""

import shutil

import pytest
import torch
from reference import random_edge_index, random_weights

import fastgl  # noqa: F401  (registers the ops)
from fastgl import CSCGraph
from fastgl.ops import (
    csc_from_coo,
    gather_rows,
    id_map,
    match,
    overlap_counts,
    sample_neighbors,
    sample_ranges,
)

opcheck = getattr(torch.library, "opcheck", None)
needs_opcheck = pytest.mark.skipif(
    opcheck is None, reason=f"torch.library.opcheck is missing in torch {torch.__version__}"
)

# Every opcheck utility. test_aot_dispatch_static traces with static shapes, and an op whose
# output size depends on the data (sample_neighbors: the number of draws; id_map: the number of
# distinct ids) cannot have a static output shape: the fake kernel allocates an unbacked SymInt
# (ctx.new_dynamic_size()), which static tracing rejects with DynamicOutputShapeException. That
# is inherent to the op, not a bug, so those two ops run every utility but that one.
ALL_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_static",
    "test_aot_dispatch_dynamic",
)
DATA_DEPENDENT_UTILS = tuple(u for u in ALL_UTILS if u != "test_aot_dispatch_static")


def _graph(dtype=torch.int64, weighted=False):
    edge_index = random_edge_index(40, 300, dtype=dtype, seed=1)
    weight = random_weights(300, seed=2) if weighted else None
    return CSCGraph.from_edge_index(edge_index, num_nodes=40, edge_weight=weight)


def _sample_args():
    transits = torch.randint(0, 40, (25,), generator=torch.Generator().manual_seed(3))
    g64, g32, gw = _graph(), _graph(torch.int32), _graph(weighted=True)
    return [
        (g64.indptr, g64.indices, None, transits, 3, False, 7),
        (g64.indptr, g64.indices, None, transits, 3, True, 7),
        (g64.indptr, g64.indices, None, transits, -1, False, 0),
        (g32.indptr, g32.indices, None, transits, 5, False, 1),
        (gw.indptr, gw.indices, gw.weight, transits, 2, False, 2),
        (gw.indptr, gw.indices, gw.weight.double(), transits, 4, True, -5),
        (g64.indptr, g64.indices, None, torch.empty(0, dtype=torch.long), 3, False, 0),
    ]


def _sample_ranges_args():
    g, gw = _graph(), _graph(weighted=True)
    transits = torch.randint(0, 40, (25,), generator=torch.Generator().manual_seed(3))
    starts, ends = g.indptr[transits], g.indptr[transits + 1]
    fanouts = torch.randint(-1, 5, (25,), generator=torch.Generator().manual_seed(4))
    empty = torch.empty(0, dtype=torch.long)
    return [
        (starts, ends, None, fanouts, False, 7),
        (starts, ends, None, fanouts, True, -7),
        (gw.indptr[transits], gw.indptr[transits + 1], gw.weight, fanouts, False, 2),
        (gw.indptr[transits], gw.indptr[transits + 1], gw.weight.double(), fanouts, True, 3),
        (empty, empty, None, empty, False, 0),
    ]


def _random_walk_args():
    g32, gw = _graph(torch.int32).out_csr(), _graph(weighted=True).out_csr()
    starts = torch.randint(0, 40, (20,), generator=torch.Generator().manual_seed(5))
    return [
        (g32.indptr, g32.indices, None, None, starts, 6, 1.0, 1.0, 0.0, False, "sample", 3),
        (
            g32.indptr,
            g32.indices,
            None,
            g32.eid,
            starts.int(),
            5,
            0.5,
            2.0,
            0.2,
            True,
            "transit",
            -3,
        ),
        (gw.indptr, gw.indices, gw.weight, gw.eid, starts, 4, 2.0, 0.5, 0.1, False, "auto", 9),
        (gw.indptr, gw.indices, gw.weight, None, starts[:0], 4, 1.0, 1.0, 0.0, False, "auto", 0),
        (gw.indptr, gw.indices, None, None, starts, 0, 1.0, 1.0, 0.0, True, "sample", 0),
    ]


def _sample_hops_args():
    seeds = torch.randint(0, 40, (12,), generator=torch.Generator().manual_seed(4))
    two_batches = torch.tensor([0, 5, 12])
    g64, g32, gw = _graph(), _graph(torch.int32), _graph(weighted=True)
    return [
        (
            g64.indptr,
            g64.indices,
            None,
            g64.eid,
            seeds,
            two_batches,
            [3, 2],
            False,
            False,
            False,
            7,
        ),
        (g64.indptr, g64.indices, None, None, seeds, two_batches, [2, -1], True, True, False, -3),
        (g32.indptr, g32.indices, None, g32.eid, seeds, two_batches, [4], False, False, True, 1),
        (
            gw.indptr,
            gw.indices,
            gw.weight,
            gw.eid,
            seeds,
            torch.tensor([0, 12]),
            [2, 2],
            False,
            False,
            False,
            5,
        ),
        (
            g64.indptr,
            g64.indices,
            None,
            None,
            seeds[:0],
            torch.tensor([0]),
            [3],
            False,
            False,
            False,
            0,
        ),
    ]


def _id_map_args():
    return [
        (torch.tensor([5, 3]), torch.tensor([3, 7, 7, 5])),
        (torch.empty(0, dtype=torch.long), torch.tensor([4, 4, 1, 0], dtype=torch.int32)),
        (torch.tensor([9, 1], dtype=torch.int32), torch.empty(0, dtype=torch.long)),
        (torch.randperm(100)[:30], torch.randint(0, 100, (200,))),
    ]


def _csc_args():
    edge_index = random_edge_index(30, 200, seed=4)
    return [
        (edge_index[0], edge_index[1], 30),
        (edge_index[0].int(), edge_index[1].int(), 35),
        (torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long), 0),
    ]


def _match_args():
    return [
        (torch.tensor([5, 3, 9]), torch.tensor([3, 7, 5])),
        (torch.tensor([5, 3, 9], dtype=torch.int32), torch.tensor([9, 9, 1, 3])),
        (torch.empty(0, dtype=torch.long), torch.tensor([4, 1], dtype=torch.int32)),
        (torch.tensor([2, 8]), torch.empty(0, dtype=torch.long)),
        (torch.randperm(100)[:30], torch.randint(0, 100, (200,))),
    ]


def _overlap_counts_args():
    return [
        (torch.tensor([1, 2, 3, 2, 3, 4]), torch.tensor([0, 3, 6])),
        (torch.tensor([7, 1, 7], dtype=torch.int32), torch.tensor([0, 2, 2, 3])),
        (torch.empty(0, dtype=torch.long), torch.tensor([0])),
        (torch.cat([torch.randperm(50)[:20] for _ in range(64)]), torch.arange(0, 1281, 20)),
    ]


def _gather_rows_args():
    """(x, index, out, out_index): out is mutated (schema Tensor(a!)); out_index never repeats."""
    x = torch.randn(6, 3)
    return [
        (x, torch.tensor([5, 0, 5]), torch.zeros(3, 3), None),
        (x, torch.tensor([1, 2], dtype=torch.int32), torch.zeros(4, 3), torch.tensor([3, 0])),
        (x, None, torch.zeros(8, 3), torch.tensor([7, 1, 2, 0, 4, 5])),
        (x, None, torch.zeros(6, 3), None),
        (torch.arange(5), torch.tensor([4, 4]), torch.zeros(2, dtype=torch.long), None),
        (
            torch.randn(4, 2, 3).half(),
            torch.tensor([3]),
            torch.zeros(2, 2, 3).half(),
            torch.tensor([1]),
        ),
        (x, torch.empty(0, dtype=torch.long), torch.zeros(0, 3), None),
    ]


MATCH_OP_CASES = [
    (name, args)
    for name, cases in (
        ("match", _match_args()),
        ("overlap_counts", _overlap_counts_args()),
        ("gather_rows", _gather_rows_args()),
    )
    for args in cases
]


@needs_opcheck
@pytest.mark.parametrize("name, args", MATCH_OP_CASES, ids=[n for n, _ in MATCH_OP_CASES])
def test_opcheck_match_ops(name, args):
    opcheck(getattr(torch.ops.fastgl, name).default, args, test_utils=ALL_UTILS)


def test_fake_kernels_of_match_ops_match_real_metadata():
    """match and overlap_counts have static output sizes; gather_rows returns nothing and
    leaves out's metadata alone."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    cases = [(torch.ops.fastgl.match.default, a) for a in _match_args()] + [
        (torch.ops.fastgl.overlap_counts.default, a) for a in _overlap_counts_args()
    ]
    for op, args in cases:
        real = op(*args)
        with FakeTensorMode() as mode:
            fake = op(*[mode.from_tensor(a) for a in args])
        assert fake.dtype == real.dtype and fake.shape == real.shape, (op, fake, real)
    for args in _gather_rows_args():
        with FakeTensorMode() as mode:
            fake_args = [None if a is None else mode.from_tensor(a) for a in args]
            assert torch.ops.fastgl.gather_rows.default(*fake_args) is None
        assert fake_args[2].shape == args[2].shape and fake_args[2].dtype == args[2].dtype


def _match_ops_body(prev, nxt, nodes, offsets, x):
    position = match(prev, nxt)
    counts = overlap_counts(nodes, offsets)
    reused = position >= 0
    out = torch.zeros(nxt.shape[0], x.shape[1])
    gather_rows(x, position[reused], out=out, out_index=torch.arange(nxt.shape[0])[reused])
    return position + 1, counts * 2, out.sum(1)


def test_torch_compile_match_ops():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch.compile is missing in torch {torch.__version__}")
    torch._dynamo.reset()
    compiled = torch.compile(_match_ops_body, backend="aot_eager")
    inputs = (
        torch.tensor([5, 3, 9, 0]),
        torch.tensor([3, 7, 5, 0, 1]),
        torch.tensor([1, 2, 3, 2, 3, 4]),
        torch.tensor([0, 3, 6]),
        torch.randn(4, 3),
    )
    for r, e in zip(compiled(*inputs), _match_ops_body(*inputs)):
        assert torch.equal(r, e)


@needs_opcheck
@pytest.mark.parametrize("args", _csc_args())
def test_opcheck_csc_from_coo(args):
    opcheck(torch.ops.fastgl.csc_from_coo.default, args, test_utils=ALL_UTILS)


@needs_opcheck
@pytest.mark.parametrize("args", _sample_args())
def test_opcheck_sample_neighbors(args):
    opcheck(torch.ops.fastgl.sample_neighbors.default, args, test_utils=DATA_DEPENDENT_UTILS)


@needs_opcheck
@pytest.mark.parametrize("args", _sample_ranges_args())
def test_opcheck_sample_ranges(args):
    opcheck(torch.ops.fastgl.sample_ranges.default, args, test_utils=DATA_DEPENDENT_UTILS)


@needs_opcheck
@pytest.mark.parametrize("args", _random_walk_args())
def test_opcheck_random_walk(args):
    """The walks' shape is known from the arguments: every utility, static tracing included."""
    opcheck(torch.ops.fastgl.random_walk.default, args, test_utils=ALL_UTILS)


@needs_opcheck
@pytest.mark.parametrize("args", _sample_hops_args())
def test_opcheck_sample_hops(args):
    opcheck(torch.ops.fastgl.sample_hops.default, args, test_utils=DATA_DEPENDENT_UTILS)


@needs_opcheck
@pytest.mark.parametrize("args", _id_map_args())
def test_opcheck_id_map(args):
    opcheck(torch.ops.fastgl.id_map.default, args, test_utils=DATA_DEPENDENT_UTILS)


@needs_opcheck
def test_static_tracing_of_data_dependent_op_is_the_known_limit():
    """Documents why test_aot_dispatch_static is left out above: it fails on the data-dependent
    output size, not on anything else (if a future torch handles it, this tells us)."""
    with pytest.raises(Exception) as info:
        opcheck(
            torch.ops.fastgl.id_map.default,
            _id_map_args()[0],
            test_utils="test_aot_dispatch_static",
        )
    chain, error = [], info.value
    while error is not None:
        chain.append(type(error).__name__ + ": " + str(error))
        error = error.__cause__ or error.__context__
    assert any("DynamicOutputShape" in c for c in chain), chain


def test_fake_kernels_match_real_metadata():
    """Under FakeTensorMode each op gives outputs of the real op's dtypes and static sizes."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    cases = (
        [(torch.ops.fastgl.csc_from_coo.default, a) for a in _csc_args()]
        + [(torch.ops.fastgl.sample_neighbors.default, a) for a in _sample_args()]
        + [(torch.ops.fastgl.sample_ranges.default, a) for a in _sample_ranges_args()]
        + [(torch.ops.fastgl.id_map.default, a) for a in _id_map_args()]
        + [(torch.ops.fastgl.sample_hops.default, a) for a in _sample_hops_args()]
        + [(torch.ops.fastgl.random_walk.default, a) for a in _random_walk_args()]
    )
    for op, args in cases:
        real = op(*args)
        with FakeTensorMode(shape_env=ShapeEnv()) as mode:
            fake_args = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
            fake = op(*fake_args)
        assert len(fake) == len(real)
        for f, r in zip(fake, real):
            assert f.dtype == r.dtype, (op, f.dtype, r.dtype)
            assert f.dim() == r.dim()
            for fake_size, real_size in zip(f.shape, r.shape):
                if isinstance(fake_size, int):  # sizes known without the data must be right
                    assert fake_size == real_size, (op, f.shape, r.shape)


def _compiled_body(prefix, ids, indptr, indices, transits, weight):
    unique, local = id_map(prefix, ids)
    ptr, nbr, pos = sample_neighbors(indptr, indices, None, transits, 3, seed=11)
    wptr, wnbr, wpos = sample_neighbors(indptr, indices, weight, transits, 2, replace=True, seed=12)
    # Some ordinary tensor work around the ops, so there is a graph to compile.
    return unique * 2, local + 1, ptr, nbr, pos.sum(), wptr, wnbr, wpos


def _compile_inputs():
    g = _graph(weighted=True)
    transits = torch.randint(0, 40, (30,), generator=torch.Generator().manual_seed(5))
    return (
        torch.tensor([5, 3]),
        torch.tensor([3, 7, 7, 5, 9]),
        g.indptr,
        g.indices,
        transits,
        g.weight,
    )


def _has_cxx_compiler() -> bool:
    return any(shutil.which(c) for c in ("g++", "c++", "clang++"))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_matches_eager(backend):
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch.compile is missing in torch {torch.__version__}")
    if backend == "inductor" and not _has_cxx_compiler():
        pytest.skip("inductor's CPU backend needs a C++ compiler, none found")
    torch._dynamo.reset()
    compiled = torch.compile(_compiled_body, fullgraph=False, backend=backend)
    inputs = _compile_inputs()
    eager = _compiled_body(*inputs)
    result = compiled(*inputs)
    assert len(result) == len(eager)
    for r, e in zip(result, eager):
        assert r.dtype == e.dtype
        assert torch.equal(r, e)
    if backend == "inductor":
        return  # one inductor compile is enough (each costs seconds of C++ compilation)
    # Different data through the same compiled function (sizes change: dynamic shapes).
    other = list(inputs)
    other[1] = torch.tensor([1, 1, 2, 3, 5, 8, 13, 21])
    other[4] = torch.randint(0, 40, (17,), generator=torch.Generator().manual_seed(6))
    for r, e in zip(compiled(*other), _compiled_body(*other)):
        assert torch.equal(r, e)


def test_torch_compile_csc_from_coo():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch.compile is missing in torch {torch.__version__}")
    torch._dynamo.reset()
    fn = torch.compile(lambda s, d: csc_from_coo(s, d, 30), fullgraph=True, backend="aot_eager")
    s, d = _csc_args()[0][:2]
    for r, e in zip(fn(s, d), csc_from_coo(s, d, 30)):
        assert torch.equal(r, e)


def _ranges_body(indptr, transits, fanouts):
    # Ranges from the graph's rows (tensor work around the op), then one draw per pair.
    ptr, slots = sample_ranges(indptr[transits], indptr[transits + 1], None, fanouts, seed=13)
    return ptr * 2, slots + 1


def test_torch_compile_sample_ranges():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch.compile is missing in torch {torch.__version__}")
    torch._dynamo.reset()
    compiled = torch.compile(_ranges_body, fullgraph=True, backend="aot_eager")
    indptr = _graph().indptr
    for seed, pairs in ((5, 30), (6, 17)):  # sizes change: dynamic shapes
        transits = torch.randint(0, 40, (pairs,), generator=torch.Generator().manual_seed(seed))
        fanouts = torch.randint(-1, 4, (pairs,), generator=torch.Generator().manual_seed(seed))
        for r, e in zip(
            compiled(indptr, transits, fanouts), _ranges_body(indptr, transits, fanouts)
        ):
            assert torch.equal(r, e)
