"""Neighbor aggregation (weighted sum over in-edges): fastgl against torch.sparse and PyG.

Question: how fast is
``fastgl.nn.functional.aggregate(structure, x, edge_weight, reduce="sum")``, forward and
forward+backward, on sampled blocks and on whole graphs, compared with what a PyTorch user
has without fastgl: ``torch.sparse.mm`` on a CSR matrix, and PyG's ``MessagePassing`` path
(gather ``x_j``, multiply by the edge weight, scatter-add), which is how ``GCNConv`` aggregates?

Usage::

    python -m benchmarks.aggregate                     # preset "small": blocks of the 100k-node
                                                       # R-MAT graph, whole R-MAT small graph,
                                                       # whole soc-Slashdot0902; about 5 min on
                                                       # two CPU cores, 5.2 GB RAM at peak
    python -m benchmarks.aggregate --preset products --cases blocks
                                                       # blocks of the ogbn-products-sized R-MAT
                                                       # graph (2.45M nodes, 124M edges): about
                                                       # 1 min on two cores, 4.2 GB RAM (graph)
    python -m benchmarks.aggregate --device cuda --preset products --peak-bandwidth-gbs 3350
    python -m benchmarks.aggregate --dims 32 128 --repeat 10 --weight-grad

Cases (``--cases``):

* ``blocks``: the largest block (``blocks[0]``, the input layer) of
  ``NeighborSampler(graph, fanouts).sample(seeds)`` on the R-MAT graph of ``--preset``, with
  ``--batch-size`` seeds drawn without repetition (fixed seed);
* ``rmat``: a whole R-MAT graph as a ``CSCGraph``, of ``--whole-preset`` (default ``small``:
  a whole products graph does not fit, as PyG materializes ``E x d`` messages: 124M x 256 x 4 B
  = 127 GB at d = 256, and fastgl alone needs over 10 GB there);
* ``slashdot``: SNAP soc-Slashdot0902 (82,168 nodes, 948,464 directed edges ``u -> v``, ids
  relabelled to ``0..N-1`` in sorted order) read from ``--data-dir``; skipped, with the reason
  printed, when the file is absent.

Methods, all on the same structure, ``x [num_src, d]`` (standard normal) and fp32 edge weights
(uniform in [0, 1)), all in one run on one device:

* ``fastgl``: ``fastgl.nn.functional.aggregate(structure, x, edge_weight)``; on a block (a fresh
  copy per call, as a sampled block serves one training step) this includes checking the
  ``indptr`` the sampler's block carries (``SampledSubgraph.blocks`` builds it, once for all
  of a sample's blocks, outside the timing, as torch.sparse's CSR is) and, for the backward,
  building the transposed structure on every call; a whole graph keeps the transpose cached on
  it across calls (and epochs);
* ``torch.sparse``: ``torch.sparse.mm(torch.sparse_csr_tensor(indptr, indices, w), x)``, the
  ``indptr`` precomputed and each row's columns sorted once (torch's CSR backward for the
  values assumes sorted columns; the tensor itself is wrapped in every call, which is free).
  Repeated ``(dst, src)`` entries are kept, not summed, so that all methods do the same work;
  torch's invariant checker would reject that, but its forward and its backward for ``x``
  handle it (the output check below confirms). Backward is autograd's. Where CSR backward
  cannot do the job, forward+backward uses COO instead
  (``torch.sparse_coo_tensor(stack([dst, src]), w)``, left uncoalesced so that repeated entries
  keep their own weight gradients; ``torch.sparse.mm`` coalesces on every call), and the output
  says so in the ``layout`` column and a note: when CSR backward fails the start-up probe on a
  tiny matrix, or with ``--weight-grad`` on a structure with repeated entries (CSR then returns
  one value gradient per distinct entry and autograd rejects its shape). With
  ``--weight-grad`` on the CPU, torch 2.13 computes the value gradient (CSR and COO alike) as a
  dense ``num_dst x num_src`` matrix, masked afterwards, so that row is usually skipped for
  memory (see below);
* ``pyg``: a minimal ``MessagePassing(aggr="add")`` whose ``message`` is
  ``x_j * edge_weight.view(-1, 1)`` (exactly ``GCNConv``'s aggregation, without its linear layer
  and normalization), on ``edge_index = stack([src, dst])`` with ``size=(num_src, num_dst)``.

Passes: ``forward`` (under ``torch.no_grad``) and ``forward+backward``: the forward, then
``torch.autograd.grad`` of the output against a fixed random ``grad_out`` for ``x`` (and for
the edge weights with ``--weight-grad``; GCN's weights are constants, GAT's are not).

Before anything is timed, every method's output (and, for forward+backward, its gradients) is
checked against fastgl's: ``|out - ref| <= 1e-5 * bound + 1e-6``, where ``bound`` is the sum of
the terms' absolute values (fastgl run on ``|x|`` and ``|w|``); fp32 sums in any order stay far
inside it, while a single dropped or doubled edge does not.

Figures: median and fastest seconds over ``--repeat`` interleaved rounds (per round, each method
gets ``--warmup`` untimed calls and one timed call), GFLOP/s = flops / median seconds with
flops = 2 E d per spmm (forward: 1 spmm; forward+backward: 2, plus one sddmm of 2 E d with
``--weight-grad``), and the ratios ``vs torch.sparse`` and ``vs pyg``: the baseline's median
time over the method's (> 1: faster than the baseline), and ``best vs`` the same for the fastest
calls, the steadier figure on a shared machine. On CUDA also the fraction of the memory
bandwidth roofline: bytes / seconds / ``--peak-bandwidth-gbs`` with bytes = E (4 d + 8) + 4 d
per output row for every spmm (forward: output ``num_dst`` rows; backward: ``num_src`` rows) and
E (8 d + 8) for the sddmm. The model counts every edge's feature row as read from memory; cache
reuse of hub rows can push the fraction above 1.

A (method, d, pass) whose estimated memory exceeds ``--memory-budget-gb`` (default: half the
available RAM, or 80% of the free GPU memory) is skipped with its reason. The tables go to
stdout; the JSON with the environment goes to
``benchmarks/results/aggregate-<device tag>-<preset>[-<threads>t].json`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import gzip
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import torch
from torch import Tensor

from benchmarks import harness
from fastgl import Block, CSCGraph, NeighborSampler
from fastgl.data.rmat import RMAT_PRESETS, rmat_graph
from fastgl.nn.functional import aggregate

CASES = ("blocks", "rmat", "slashdot")
METHODS = ("fastgl", "torch.sparse", "pyg")
PASSES = ("forward", "forward+backward")
DEFAULT_DATA_DIR = harness.REPO_ROOT.parent / "shared" / "data"
SLASHDOT_FILE = Path("snap_soc-Slashdot0902") / "soc-Slashdot0902.txt.gz"
# The flop and byte models, recorded in the result file next to the numbers they produced.
FLOP_MODEL = (
    "2*E*d per spmm; forward = 1 spmm, forward+backward = 2 spmm "
    "(+ 1 sddmm of 2*E*d with --weight-grad)"
)
BYTE_MODEL = (
    "per spmm E*(4d+8) + 4d*output_rows (forward: num_dst rows, backward: num_src "
    "rows); sddmm E*(8d+8)"
)


def _pyg_sum_aggregation():
    """A ``MessagePassing`` doing exactly GCNConv's aggregation: ``sum_j w_ji * x_j``."""
    from torch_geometric.nn import MessagePassing

    class WeightedSum(MessagePassing):
        def __init__(self) -> None:
            super().__init__(aggr="add")

        def forward(
            self, x: Tensor, edge_index: Tensor, edge_weight: Tensor, size: tuple[int, int]
        ) -> Tensor:
            return self.propagate(edge_index, x=x, edge_weight=edge_weight, size=size)

        def message(self, x_j: Tensor, edge_weight: Tensor) -> Tensor:
            return x_j * edge_weight.view(-1, 1)

    return WeightedSum()


class Structure:
    """One aggregation problem in every method's layout.

    ``fastgl`` is the Block or CSCGraph given to ``aggregate``; edge ``e`` of its own order runs
    from ``src[e]`` to ``dst[e]`` (the PyG ``edge_index``); ``csr_perm`` (``None`` when the
    identity) puts that order into the ``(indptr, indices)`` CSR over destinations.
    """

    def __init__(
        self,
        name: str,
        fastgl_structure,
        src: Tensor,
        dst: Tensor,
        num_src: int,
        num_dst: int,
        info: dict,
    ) -> None:
        self.name, self.fastgl = name, fastgl_structure
        self.src, self.dst, self.num_src, self.num_dst = src, dst, num_src, num_dst
        self.num_edges = src.numel()
        # torch's CSR wants the columns of a row sorted (its value gradients come out in sorted
        # order); repeated entries are kept, so every method does the same E multiply-adds.
        keys = dst * max(num_src, 1) + src
        if keys.numel() < 2 or bool((keys[1:] >= keys[:-1]).all()):
            self.csr_perm, self.indices = None, src
        else:
            self.csr_perm = torch.argsort(keys, stable=True)
            self.indices = src[self.csr_perm]
        counts = torch.bincount(dst, minlength=num_dst)
        self.indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
        self.edge_index = torch.stack([src, dst])
        num_distinct = torch.unique(keys).numel()
        self.has_repeated_entries = num_distinct < self.num_edges
        self.info = dict(
            info,
            num_src=num_src,
            num_dst=num_dst,
            num_edges=self.num_edges,
            max_in_degree=int(counts.max()) if num_dst else 0,
            repeated_entry_fraction=1 - num_distinct / max(self.num_edges, 1),
        )


def block_case(graph: CSCGraph, args, device) -> Structure:
    """The largest block of one multi-hop sample around ``--batch-size`` random seeds."""
    gen = torch.Generator().manual_seed(args.seed)
    count = args.batch_size
    if count > graph.num_nodes:
        seeds = torch.randint(graph.num_nodes, (count,), generator=gen)
    else:
        seeds = torch.randperm(graph.num_nodes, generator=gen)[:count]
    sampler = NeighborSampler(graph, args.fanouts)
    sample_gen = torch.Generator(device=device).manual_seed(args.seed)
    block: Block = sampler.sample(seeds.to(device), sample_gen).blocks[0]
    info = {
        "source": f"R-MAT {args.preset}, largest block of NeighborSampler(fanouts="
        f"{args.fanouts}), {count} seeds",
        "graph_nodes": graph.num_nodes,
        "graph_edges": graph.num_edges,
    }
    return Structure(
        "blocks", block, block.src, block.dst, block.num_src_nodes, block.num_dst_nodes, info
    )


def graph_case(name: str, graph: CSCGraph, source: str) -> Structure:
    """A whole graph: destinations are all nodes, edges in CSC slot order."""
    degree = graph.indptr[1:] - graph.indptr[:-1]
    dst = torch.repeat_interleave(
        torch.arange(graph.num_nodes, device=graph.device), degree, output_size=graph.num_edges
    )
    return Structure(
        name,
        graph,
        graph.indices.to(torch.int64),
        dst,
        graph.num_nodes,
        graph.num_nodes,
        {"source": source},
    )


def read_snap_edge_list(path: Path) -> tuple[Tensor, int]:
    """A SNAP edge list (gzip or text; ``#`` comment lines, then ``u<TAB>v``) as ``[2, E]``
    int64 ``u -> v`` with ids relabelled to ``0..N-1`` in sorted order; returns ``(edges, N)``."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as lines:
        tokens = [tok for line in lines if not line.startswith("#") for tok in line.split()]
    if len(tokens) % 2:
        raise ValueError(f"{path}: odd number of ids; expected 'u<TAB>v' lines")
    ids = torch.tensor([int(tok) for tok in tokens], dtype=torch.int64)
    unique, local = torch.unique(ids, return_inverse=True)
    return local.view(-1, 2).t().contiguous(), unique.numel()


def build_cases(args, device) -> tuple[list[Structure], list[dict]]:
    """The requested structures, and a record of every case skipped (with why)."""
    graphs: dict[str, CSCGraph] = {}

    def rmat(preset: str) -> CSCGraph:
        if preset not in graphs:
            started = time.perf_counter()
            graphs[preset] = rmat_graph(preset, seed=args.seed).to(device)
            print(
                f"R-MAT {preset}: {graphs[preset].num_nodes:,} nodes, "
                f"{graphs[preset].num_edges:,} edges ({time.perf_counter() - started:.1f} s)",
                flush=True,
            )
        return graphs[preset]

    structures, skipped = [], []
    for case in args.cases:
        if case == "blocks":
            structures.append(block_case(rmat(args.preset), args, device))
        elif case == "rmat":
            if args.whole_preset != args.preset:
                print(
                    f"note: the whole-graph R-MAT case uses preset {args.whole_preset!r} "
                    f"(--whole-preset), not {args.preset!r}",
                    flush=True,
                )
            structures.append(
                graph_case(
                    "rmat", rmat(args.whole_preset), f"whole R-MAT {args.whole_preset} graph"
                )
            )
        elif case == "slashdot":
            path = Path(args.data_dir) / SLASHDOT_FILE
            if not path.exists():
                reason = (
                    f"{harness.portable_path(str(path))} not found "
                    "(download SNAP soc-Slashdot0902; see --data-dir)"
                )
                print(f"skipping slashdot: {reason}", flush=True)
                skipped.append({"case": "slashdot", "reason": reason})
                continue
            edges, num_nodes = read_snap_edge_list(path)
            graph = CSCGraph.from_edge_index(edges, num_nodes=num_nodes).to(device)
            structures.append(
                graph_case("slashdot", graph, f"whole SNAP soc-Slashdot0902 ({path.name})")
            )
    for s in structures:
        print(
            f"case {s.name}: {s.info['source']}; {s.num_src:,} sources, {s.num_dst:,} "
            f"destinations, {s.num_edges:,} edges, max in-degree {s.info['max_in_degree']:,}",
            flush=True,
        )
    return structures, skipped


def csr_backward_support(device) -> dict[str, bool]:
    """Whether autograd through ``torch.sparse.mm`` on CSR gives correct gradients on ``device``
    for ``x`` and for the values (probed on a 2 x 3 matrix without repeated entries)."""
    indptr = torch.tensor([0, 2, 3], device=device)
    indices = torch.tensor([0, 2, 1], device=device)
    values = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    x = torch.arange(12.0, device=device).view(3, 4).requires_grad_()
    dense = torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], device=device)
    grad_out = torch.ones(2, 4, device=device)
    support = {}
    for name, wrt in (("x", x), ("values", values)):
        try:
            out = torch.sparse.mm(torch.sparse_csr_tensor(indptr, indices, values, size=(2, 3)), x)
            (grad,) = torch.autograd.grad(out, wrt, grad_out)
            expected = (
                dense.t() @ grad_out
                if name == "x"
                else (grad_out[[0, 0, 1]] * x.detach()[indices]).sum(1)
            )
            support[name] = bool(torch.allclose(grad, expected))
        except (RuntimeError, NotImplementedError):
            support[name] = False
    return support


def backward_layout(s: Structure, support: dict[str, bool], weight_grad: bool) -> tuple[str, str]:
    """The torch.sparse layout for forward+backward on ``s`` and why."""
    if not support["x"]:
        return "coo", "torch.sparse CSR backward w.r.t. x is not supported on this device"
    if weight_grad and not support["values"]:
        return "coo", "torch.sparse CSR backward w.r.t. the values is not supported here"
    if weight_grad and s.has_repeated_entries:
        # autograd returns one gradient per distinct (row, col) and then rejects its shape
        return "coo", (
            "torch.sparse CSR backward w.r.t. the values fails on repeated "
            "(dst, src) entries, which this structure has"
        )
    return "csr", ""


def make_methods(s: Structure) -> dict[str, Callable[[Tensor, Tensor], Tensor]]:
    """``method -> fn(x, edge_weight)``, ``edge_weight`` in the structure's own edge order;
    ``torch.sparse`` comes as ``torch.sparse/csr`` and ``torch.sparse/coo``."""
    size = (s.num_dst, s.num_src)
    perm = s.csr_perm
    coo_index = torch.stack([s.dst, s.src])

    def fastgl_fn(x, w):
        # A sampled block serves one training step: a fresh copy per call, so that checking its
        # CSC offsets and building its (backward) transposed structure are timed; a whole graph
        # keeps them cached across calls, as it does across epochs.
        structure = replace(s.fastgl) if isinstance(s.fastgl, Block) else s.fastgl
        return aggregate(structure, x, w, reduce="sum")

    def torch_csr_fn(x, w):
        values = w if perm is None else w[perm]
        return torch.sparse.mm(torch.sparse_csr_tensor(s.indptr, s.indices, values, size=size), x)

    def torch_coo_fn(x, w):
        # Not coalesced: coalescing sums repeated entries, which would lose their gradients.
        return torch.sparse.mm(torch.sparse_coo_tensor(coo_index, w, size), x)

    pyg = _pyg_sum_aggregation()
    pyg_size = (s.num_src, s.num_dst)

    def pyg_fn(x, w):
        return pyg(x, s.edge_index, w, pyg_size)

    return {
        "fastgl": fastgl_fn,
        "torch.sparse/csr": torch_csr_fn,
        "torch.sparse/coo": torch_coo_fn,
        "pyg": pyg_fn,
    }


def estimated_bytes(
    method: str, s: Structure, d: int, backward: bool, weight_grad: bool, device
) -> tuple[int, str]:
    """Rough peak of the tensors a call allocates (beyond ``x``, weights and the structure),
    and what dominates it."""
    out, grad_x, messages = 4 * d * s.num_dst, 4 * d * s.num_src, 4 * d * s.num_edges
    if method == "pyg":  # x_j and x_j * w, then their gradients
        return out + (4 * messages + grad_x if backward else 2 * messages), "E x d messages"
    # spmm output; backward: the transposed structure (3 int64 arrays) and grad_x.
    need = out + (24 * s.num_edges + grad_x if backward else 0)
    if method == "torch.sparse" and backward and weight_grad and torch.device(device).type == "cpu":
        # Measured with torch 2.13: on the CPU its value gradient (CSR and COO) is computed as a
        # dense grad_out @ x^T and then masked.
        return need + 4 * s.num_dst * s.num_src, "a dense num_dst x num_src value gradient"
    return need, "outputs and gradients"


def default_memory_budget(device) -> float:
    """Half the available RAM on the CPU, 80% of the free memory on the GPU, in GB."""
    if torch.device(device).type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return 0.8 * free / 1e9
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return 0.5 * int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return 8.0


def flops_and_bytes(s: Structure, d: int, backward: bool, weight_grad: bool) -> tuple[int, int]:
    """The work of one call under :data:`FLOP_MODEL` and :data:`BYTE_MODEL`."""
    spmm_flops = 2 * s.num_edges * d
    edge_bytes = s.num_edges * (4 * d + 8)
    flops, moved = spmm_flops, edge_bytes + 4 * d * s.num_dst
    if backward:
        flops += spmm_flops
        moved += edge_bytes + 4 * d * s.num_src
        if weight_grad:
            flops += spmm_flops
            moved += s.num_edges * (8 * d + 8)
    return flops, moved


def _check_close(method: str, what: str, got: Tensor, ref: Tensor, bound: Tensor) -> float:
    """Fails unless ``got`` matches ``ref`` within fp32 summation error; returns the max error."""
    error = (got.double() - ref.double()).abs()
    if got.shape != ref.shape or not bool((error <= 1e-5 * bound.double() + 1e-6).all()):
        worst = float(error.max()) if got.shape == ref.shape else float("nan")
        raise AssertionError(
            f"{method}: {what} differs from fastgl's "
            f"(shape {tuple(got.shape)} vs {tuple(ref.shape)}, max error {worst})"
        )
    return float(error.max()) if error.numel() else 0.0


def run_pass(fn, x: Tensor, w: Tensor, grad_out: Tensor | None, weight_grad: bool):
    """One call: the output (forward) or the gradients (forward+backward)."""
    if grad_out is None:
        with torch.no_grad():
            return (fn(x, w),)
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_(weight_grad)
    inputs = (x, w) if weight_grad else (x,)
    return torch.autograd.grad(fn(x, w), inputs, grad_out)


def measure_case(
    s: Structure, args, device, support: dict[str, bool], budget_gb: float
) -> list[dict]:
    methods = make_methods(s)
    layout, why = backward_layout(s, support, args.weight_grad)
    s.info["torch_sparse_backward_layout"] = layout
    if why:
        s.info["torch_sparse_backward_note"] = why
        print(
            f"note ({s.name}): {why}; the torch.sparse baseline uses COO (coalesced by "
            f"torch on every call) for forward+backward",
            flush=True,
        )
    chosen = [m for m in METHODS if m in args.methods]
    rows = []
    for d in args.dims:
        gen = torch.Generator().manual_seed(args.seed + d)
        x = torch.randn(s.num_src, d, generator=gen).to(device)
        w = torch.rand(s.num_edges, generator=gen).to(device)
        grad_out = torch.randn(s.num_dst, d, generator=gen).to(device)
        bounds = _error_bounds(s, x, w, grad_out, args.weight_grad)
        for pass_name in args.passes:
            backward = pass_name == "forward+backward"
            g = grad_out if backward else None
            flops, moved = flops_and_bytes(s, d, backward, args.weight_grad)
            cases, reference = [], None
            for method in chosen:
                row = {
                    "case": s.name,
                    "d": d,
                    "pass": pass_name,
                    "method": method,
                    "layout": None,
                    "flops": flops,
                    "bytes": moved,
                    "skipped": None,
                }
                key = method
                if method == "torch.sparse":
                    row["layout"] = layout if backward else "csr"
                    key = f"torch.sparse/{row['layout']}"
                need, what = estimated_bytes(method, s, d, backward, args.weight_grad, device)
                if need / 1e9 > budget_gb:
                    row["skipped"] = (
                        f"needs ~{need / 1e9:.1f} GB ({what}), over the "
                        f"{budget_gb:.1f} GB memory budget"
                    )
                    print(
                        f"  {s.name} d={d} {pass_name} {method}: skipped, {row['skipped']}",
                        flush=True,
                    )
                    rows.append(row)
                    continue
                fn = methods[key]
                result = run_pass(fn, x, w, g, args.weight_grad)  # also the first warm-up
                if reference is None and method == "fastgl":
                    reference = result
                if reference is not None:
                    names = ("output",) if not backward else ("grad x", "grad edge_weight")
                    row["max_abs_error_vs_fastgl"] = max(
                        _check_close(method, name, got, ref, bound)
                        for name, got, ref, bound in zip(
                            names, result, reference, bounds[pass_name]
                        )
                    )
                del result
                cases.append(
                    (row, lambda fn=fn, x=x, w=w, g=g: run_pass(fn, x, w, g, args.weight_grad))
                )
                rows.append(row)
            if reference is None and cases:
                print(f"  note: fastgl not run for {s.name} d={d} {pass_name}; outputs unchecked")
            del reference
            _time_interleaved(cases, args, device)
            _ratios([row for row in rows if row["d"] == d and row["pass"] == pass_name])
            for row, _ in cases:
                print(
                    f"  {s.name:8s} d={d:<4d} {pass_name:16s} {row['method']:12s} "
                    f"{row['median_s'] * 1e3:10.3f} ms {row['gflops']:8.2f} GFLOP/s"
                    + (
                        f"  {row['vs_torch_sparse']:.2f}x torch.sparse"
                        if row.get("vs_torch_sparse")
                        else ""
                    ),
                    flush=True,
                )
        del x, w, grad_out, bounds
    return rows


def _error_bounds(
    s: Structure, x: Tensor, w: Tensor, grad_out: Tensor, weight_grad: bool
) -> dict[str, tuple[Tensor, ...]]:
    """Per entry, the sum of the absolute values of its terms (fastgl on |x|, |w|, |grad_out|)."""
    xa = x.abs().requires_grad_()
    wa = w.abs().requires_grad_(weight_grad)
    out = aggregate(s.fastgl, xa, wa)
    grads = torch.autograd.grad(out, (xa, wa) if weight_grad else (xa,), grad_out.abs())
    return {"forward": (out.detach(),), "forward+backward": grads}


def _time_interleaved(cases, args, device) -> None:
    """Times the cases' calls interleaved (``harness.time_interleaved``) into their rows."""
    timings = harness.time_interleaved(
        {i: call for i, (_, call) in enumerate(cases)}, args.repeat, args.warmup, device
    )
    for i, (row, _) in enumerate(cases):
        timing = timings[i]
        row.update(
            times_s=timing.times,
            median_s=timing.median,
            min_s=timing.min,
            gflops=row["flops"] / timing.median / 1e9,
            gbytes_per_s=row["bytes"] / timing.median / 1e9,
        )
        if torch.device(device).type == "cuda":
            row["roofline_fraction"] = row["gbytes_per_s"] / args.peak_bandwidth_gbs


def _ratios(rows: list[dict]) -> None:
    """``vs_<baseline>``: the baseline's median time over the row's (> 1 means faster);
    ``vs_<baseline>_best`` the same for the fastest calls (noise only ever adds time)."""
    timed = {r["method"]: r for r in rows if r.get("median_s")}
    for row in rows:
        for baseline, key in (("torch.sparse", "vs_torch_sparse"), ("pyg", "vs_pyg")):
            ref = timed.get(baseline) if row.get("median_s") else None
            row[key] = ref["median_s"] / row["median_s"] if ref else None
            row[key + "_best"] = ref["min_s"] / row["min_s"] if ref else None


def print_tables(rows: list[dict], structures: list[Structure], device, args) -> None:
    columns = [
        ("d", "d", ""),
        ("pass", "pass", ""),
        ("method", "method", ""),
        ("layout", "layout", ""),
        ("median_ms", "median ms", ".3f"),
        ("min_ms", "min ms", ".3f"),
        ("gflops", "GFLOP/s", ".2f"),
        ("vs_torch_sparse", "vs torch.sparse", ".2f"),
        ("vs_pyg", "vs pyg", ".2f"),
        ("vs_torch_sparse_best", "best vs torch.sparse", ".2f"),
        ("vs_pyg_best", "best vs pyg", ".2f"),
    ]
    if torch.device(device).type == "cuda":
        columns.append(("roofline_pct", "% roofline", ".1f"))
    for s in structures:
        shown = []
        for r in rows:
            if r["case"] != s.name:
                continue
            shown.append(
                dict(
                    r,
                    median_ms=r["median_s"] * 1e3 if r.get("median_s") else None,
                    min_ms=r["min_s"] * 1e3 if r.get("min_s") else None,
                    roofline_pct=(
                        100 * r["roofline_fraction"] if r.get("roofline_fraction") else None
                    ),
                )
            )
        harness.print_table(
            shown,
            columns,
            title=f"{s.name}: {s.info['source']} ({s.num_src:,} src, {s.num_dst:,} dst, "
            f"{s.num_edges:,} edges); {args.repeat} interleaved rounds; vs X = X's median "
            f"time / this one's, best vs X = the same for the fastest calls",
        )
        for r in rows:
            if r["case"] == s.name and r["skipped"]:
                print(f"  skipped: d={r['d']} {r['pass']} {r['method']}: {r['skipped']}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("aggregate", __doc__)
    harness.add_preset_argument(
        parser, "small", "R-MAT graph the blocks are sampled from (products: ~5 GB RAM)"
    )
    parser.add_argument(
        "--whole-preset",
        choices=sorted(RMAT_PRESETS),
        default="small",
        help="R-MAT graph of the whole-graph case (products only with a GPU or "
        "lots of RAM: PyG needs 4*E*d*4 bytes)",
    )
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--passes", nargs="+", choices=PASSES, default=list(PASSES))
    parser.add_argument(
        "--dims", type=int, nargs="+", default=[32, 64, 128, 256], help="feature sizes d"
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument(
        "--fanouts",
        type=int,
        nargs="+",
        default=[15, 10, 5],
        help="neighbors per node, hop 1 (seeds) first",
    )
    parser.add_argument("--batch-size", type=int, default=1024, help="seeds of the sample")
    parser.add_argument(
        "--weight-grad",
        action="store_true",
        help="forward+backward also differentiates the edge weights",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per measurement")
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed calls right before every timed call"
    )
    harness.add_threads_argument(parser)
    parser.add_argument(
        "--peak-bandwidth-gbs",
        type=float,
        default=3350.0,
        help="GPU memory bandwidth for the roofline (3350: H100 SXM HBM3)",
    )
    parser.add_argument(
        "--memory-budget-gb",
        type=float,
        default=None,
        help="skip (method, d, pass) estimated above this (default: half the "
        "available RAM, or 80%% of the free GPU memory)",
    )
    parser.add_argument(
        "--data-dir", default=str(DEFAULT_DATA_DIR), help="folder holding snap_soc-Slashdot0902/"
    )
    harness.add_seed_and_out_arguments(
        parser,
        "graph, seeds, sample and data seed",
        "aggregate-<device>-<preset>[-<threads>t].json",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    # torch.sparse CSR's "beta" and invariant-check notices, once per process; not our news.
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*", category=UserWarning)
    import torch_geometric

    device, note, env = harness.start_run(
        "aggregate", args, {"torch_geometric": torch_geometric.__version__}
    )
    support = csr_backward_support(device)
    budget = args.memory_budget_gb or default_memory_budget(device)

    structures, skipped = build_cases(args, device)
    rows = []
    for s in structures:
        rows.extend(measure_case(s, args, device, support, budget))
    print_tables(rows, structures, device, args)

    payload = {
        "benchmark": "aggregate",
        "environment": env,
        "note": note,
        "args": vars(args),
        "torch_sparse_csr_backward_support": support,
        "memory_budget_gb": budget,
        "peak_bandwidth_gbs": args.peak_bandwidth_gbs if device.type == "cuda" else None,
        "flop_model": FLOP_MODEL,
        "byte_model": BYTE_MODEL,
        "cases": [dict(s.info, case=s.name) for s in structures],
        "skipped_cases": skipped,
        "rows": rows,
    }
    harness.save_results("aggregate", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
