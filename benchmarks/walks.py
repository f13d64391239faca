"""Random-walk steps per second: fastgl's walk op against DGL's walks and a PyTorch walker.

Question: how many walk steps per second does ``fastgl.ops.random_walk`` take for DeepWalk, PPR
and node2vec (p = 2, q = 0.5, NextDoor's setting), walks of length 80, against DGL's
``random_walk`` and ``node2vec_random_walk`` and a vectorized PyTorch walker on the same graph
and starts, and does transit-parallel scheduling of the same kernel beat sample-parallel
(NextDoor, Jangda et al., EuroSys 2021, §5 and Table 3's question)?

Usage (DGL's rows need the DGL environment: ``make bench-dgl DGL_BENCH=walks``)::

    python -m benchmarks.walks                               # R-MAT products and Slashdot
    python -m benchmarks.walks --graphs slashdot --walks 50000 --thread-counts 2
    python -m benchmarks.walks --device cuda --walks 0       # every node starts a walk

What is measured, in one run:

* graphs: ``rmat-products`` (the ogbn-products-sized undirected R-MAT of
  :mod:`fastgl.data.rmat`, 2.45M nodes, 124M edges) and ``slashdot`` (SNAP soc-Slashdot0902
  from ``--data-dir``, directed, skipped with the reason when absent); ``rmat-tiny`` for tests;
* starts: ``--walks`` nodes drawn uniformly with repetition (fixed seed), or every node once
  with ``--walks 0``; one walk of ``--length`` steps from each;
* algorithms: ``deepwalk`` (uniform first-order walk), ``ppr`` (the same walk ending before each
  step with probability ``--termination-prob``, personalized PageRank's variable-length walk as
  NextDoor and DGL's ``restart_prob`` run it) and ``node2vec`` (``--p``, ``--q``);
* walkers:

  - ``dgl``: ``dgl.sampling.random_walk`` (deepwalk, ppr) or
    ``dgl.sampling.node2vec_random_walk``, the baseline where DGL is installed;
  - ``fastgl-dgl``: the DGL drop-ins (:mod:`fastgl.integrations.dgl.walks`) on the same DGL
    graph;
  - ``fastgl-sample`` and ``fastgl-transit``: ``fastgl.ops.random_walk`` on a
    :class:`fastgl.CSCGraph` of the same edges, sample-parallel (one worker runs a walk to
    its end) and transit-parallel (step by step, walks grouped by their current node);
  - ``torch``: :class:`TorchWalker`, per step a few PyTorch ops over all live walks, the
    baseline without DGL;

* for every thread count of ``--thread-counts`` (torch's and DGL's pools set alike; on a GPU
  the rows run once): every walker walks once untimed (DGL builds its CSR, fastgl caches its
  out-edges, and the steps are counted), then ``--repeat`` interleaved timed rounds; the median
  counts.

A step is a move along an edge: ``steps/s`` is the steps the walks took (entries of the traces
after the start that are not -1) over the time, so walks that end early (PPR, dead ends) count
what they did. ``vs baseline`` divides by ``dgl``'s rate (``torch``'s without DGL) at the same
thread count, ``vs torch`` by ``torch``'s, ``transit/sample`` is ``fastgl-transit`` over
``fastgl-sample`` and ``1->N threads`` a walker's rate at N threads over its rate at one.

DGL's graph (``--dgl-graph``): ``sorted`` (the default) holds the edges sorted by (source,
target) and says so (``row_sorted``, ``col_sorted``), so DGL's node2vec tests an edge by binary
search; DGL scans the previous node's whole row in a CSR it does not know sorted, as from
``csc`` (the fastgl graph's CSC, ``dgl.graph(("csc", ...))``), which costs much on the hubs of
an R-MAT graph. Both share the fastgl graph's arrays where they can (products-scale graphs fill
a small machine's memory otherwise).

Edge ids (``--edge-ids``): both libraries return the id of every edge a walk took. With
``source-order`` (the default) both number the edges in one list sorted by (source, target),
as PyG's coalesced ``edge_index`` and DGL's sorted graph hold them, so the id of a step's edge is
its out-CSR slot for both and neither reads an id array. With ``given`` fastgl numbers them in
the generated (R-MAT) or file (Slashdot) order and reads one id per step from
:meth:`fastgl.CSCGraph.out_csr`'s ``eid``, while DGL keeps its sorted numbering. The JSON goes
to ``benchmarks/results/walks-<device tag>.json`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from benchmarks import harness
from benchmarks.dgl_sampler import (
    DEFAULT_DATA_DIR,
    _dgl_version,
    available_graphs,
    set_threads,
)
from fastgl import CSCGraph
from fastgl.data.rmat import RMAT_PRESETS
from fastgl.ops import random_walk

GRAPHS = tuple(f"rmat-{preset}" for preset in RMAT_PRESETS) + ("slashdot",)
DEFAULT_GRAPHS = ["rmat-products", "slashdot"]
ALGORITHMS = ("deepwalk", "ppr", "node2vec")
SCHEDULES = ("sample", "transit")


class TorchWalker:
    """Random walks along out-edges in vectorized PyTorch, as a careful user would write them
    without a compiled op: per step, one gather of degrees and one of neighbors for all live
    walks at once.

    * first-order steps: a uniform offset ``floor(u * degree)`` into the node's out-edges;
    * node2vec steps (Grover and Leskovec, KDD 2016): rejection sampling over all pending walks
      at once: a uniform candidate ``x``, accepted with probability ``bias(x) / max bias``
      (``1/p`` back to the previous node ``t``, ``1`` if ``t -> x`` is an edge, ``1/q``
      otherwise); the edge test is a ``searchsorted`` in the sorted keys ``source * N +
      target`` of all edges (the out-CSR's order), built once;
    * ``restart_prob``: before each step a walk ends with that probability.

    Returns the traces ``[S, length + 1]`` padded with -1, like the walk op's.
    """

    def __init__(self, graph: CSCGraph) -> None:
        csr = graph.out_csr()
        self.indptr = csr.indptr
        self.indices = csr.indices.to(torch.int64)
        self.num_nodes = graph.num_nodes
        self._edge_keys: Tensor | None = None

    def walk(
        self, starts: Tensor, length: int, p: float = 1.0, q: float = 1.0, restart_prob: float = 0
    ) -> Tensor:
        starts = starts.to(torch.int64)
        traces = torch.full((starts.numel(), length + 1), -1, device=starts.device)
        traces[:, 0] = starts
        walks = torch.arange(starts.numel(), device=starts.device)
        current, previous = starts, None
        second_order = p != 1 or q != 1
        for step in range(length):
            live = torch.ones_like(current, dtype=torch.bool)
            if restart_prob > 0:
                live &= torch.rand(current.shape, device=current.device) >= restart_prob
            first = self.indptr[current]
            degree = self.indptr[current + 1] - first
            live &= degree > 0
            walks, current, first, degree = walks[live], current[live], first[live], degree[live]
            if second_order and step > 0:
                following = self._node2vec_step(first, degree, previous[live], p, q)
            else:
                following = self.indices[first + self._offsets(degree)]
            traces[walks, step + 1] = following
            previous, current = current, following
        return traces

    @staticmethod
    def _offsets(degree: Tensor) -> Tensor:
        """A uniform offset in ``[0, degree)`` per entry."""
        draw = torch.rand(degree.shape, dtype=torch.float64, device=degree.device)
        return torch.minimum((draw * degree).to(torch.int64), degree - 1)

    def _node2vec_step(
        self, first: Tensor, degree: Tensor, previous: Tensor, p: float, q: float
    ) -> Tensor:
        chosen = torch.empty_like(first)
        pending = torch.arange(first.numel(), device=first.device)
        max_bias = max(1 / p, 1.0, 1 / q)
        while pending.numel():
            candidate = self.indices[first[pending] + self._offsets(degree[pending])]
            back = previous[pending]
            bias = torch.where(self._is_edge(back, candidate), 1.0, 1 / q)
            bias = torch.where(candidate == back, 1 / p, bias)
            accept = torch.rand(pending.shape, device=first.device) * max_bias < bias
            chosen[pending[accept]] = candidate[accept]
            pending = pending[~accept]
        return chosen

    def _is_edge(self, source: Tensor, target: Tensor) -> Tensor:
        if self._edge_keys is None:
            degrees = self.indptr.diff()
            sources = torch.repeat_interleave(
                torch.arange(self.num_nodes, device=degrees.device), degrees
            )
            self._edge_keys = sources * self.num_nodes + self.indices
        keys = source * self.num_nodes + target
        found = torch.searchsorted(self._edge_keys, keys).clamp(max=self._edge_keys.numel() - 1)
        return self._edge_keys[found] == keys if self._edge_keys.numel() else keys < 0


def walk_parameters(algorithm: str, args) -> dict:
    """The walk op's ``p``, ``q`` and ``restart_prob`` of an algorithm."""
    return {
        "deepwalk": dict(p=1.0, q=1.0, restart_prob=0.0),
        "ppr": dict(p=1.0, q=1.0, restart_prob=args.termination_prob),
        "node2vec": dict(p=args.p, q=args.q, restart_prob=0.0),
    }[algorithm]


def steps_taken(traces: Tensor) -> int:
    """Moves along an edge: trace entries after the start that are not -1."""
    return int((traces[:, 1:] >= 0).sum())


def fastgl_walkers(graph: CSCGraph, algorithm: str, args) -> dict[str, Callable[[Tensor], Tensor]]:
    params = walk_parameters(algorithm, args)
    walkers = {
        f"fastgl-{schedule}": (
            lambda starts, schedule=schedule: random_walk(
                graph, starts, args.length, schedule=schedule, **params
            )[0]
        )
        for schedule in SCHEDULES
    }
    torch_walker = TorchWalker(graph)
    walkers["torch"] = lambda starts: torch_walker.walk(starts, args.length, **params)
    return walkers


def dgl_walkers(g, algorithm: str, args) -> dict[str, Callable[[Tensor], Tensor]]:
    """DGL's own walk and the drop-in's, on the DGL graph ``g``."""
    import dgl

    from fastgl.integrations.dgl import walks as dropin

    params = walk_parameters(algorithm, args)
    if algorithm == "node2vec":
        return {
            name: (
                lambda starts, module=module: module.node2vec_random_walk(
                    g, starts, params["p"], params["q"], args.length
                )
            )
            for name, module in (("dgl", dgl.sampling), ("fastgl-dgl", dropin))
        }
    restart = params["restart_prob"] or None
    return {
        name: (
            lambda starts, module=module: module.random_walk(
                g, starts, length=args.length, restart_prob=restart
            )[0]
        )
        for name, module in (("dgl", dgl.sampling), ("fastgl-dgl", dropin))
    }


def dgl_graph(csc: CSCGraph, layout: str):
    """DGL's graph of the edges of ``csc`` (see the module docstring's ``--dgl-graph``)."""
    import dgl

    if layout == "csc":
        return dgl.graph(("csc", (csc.indptr, csc.indices, csc.eid)), num_nodes=csc.num_nodes)
    out = csc.out_csr()  # rows in order, targets ascending within each: sorted by (source, target)
    sources = torch.repeat_interleave(torch.arange(csc.num_nodes), out.indptr.diff())
    return dgl.graph(
        (sources, out.indices.to(torch.int64)),
        num_nodes=csc.num_nodes,
        row_sorted=True,
        col_sorted=True,
    )


def numbered_by_source(csc: CSCGraph) -> CSCGraph:
    """``csc`` with its edges renumbered by (source, target): edge ``k`` is out-CSR slot ``k``,
    the numbering DGL's sorted graph gives them (``--edge-ids source-order``)."""
    slot_of_id = torch.empty(csc.num_edges, dtype=torch.int64)
    slot_of_id[csc.out_csr().edge_ids()] = torch.arange(csc.num_edges)
    return CSCGraph(csc.indptr, csc.indices, slot_of_id[csc.edge_ids()], csc.weight, validate=False)


def walk_starts(num_nodes: int, args, device) -> Tensor:
    if args.walks == 0:
        return torch.arange(num_nodes, device=device)
    generator = torch.Generator().manual_seed(args.seed)
    return torch.randint(0, num_nodes, (args.walks,), generator=generator).to(device)


def measure(walkers: dict[str, Callable], starts: Tensor, args, device) -> dict[str, dict]:
    """Steps/s of every walker: the steps of an untimed first walk, over the median time of
    ``args.repeat`` interleaved rounds."""
    steps = {name: steps_taken(walk(starts)) for name, walk in walkers.items()}
    calls = {name: (lambda walk=walk: walk(starts)) for name, walk in walkers.items()}
    timings = harness.time_interleaved(calls, repeat=args.repeat, warmup=0, device=device)
    return {
        name: {
            "median_s": t.median,
            "times_s": t.times,
            "steps": steps[name],
            "steps_per_s": steps[name] / t.median,
        }
        for name, t in timings.items()
    }


def rows_for(name: str, csc: CSCGraph, args, device, with_dgl: bool) -> list[dict]:
    """The rows of every algorithm and thread count on one graph."""
    csc = csc.to(device)
    g = dgl_graph(csc, args.dgl_graph) if with_dgl else None
    starts = walk_starts(csc.num_nodes, args, device)
    thread_counts = args.thread_counts if device.type == "cpu" else [None]
    rows = []
    threads_before = torch.get_num_threads()
    try:
        for threads in thread_counts:
            if threads is not None:
                set_threads(threads, with_dgl)
            for algorithm in args.algorithms:
                walkers = fastgl_walkers(csc, algorithm, args)
                if g is not None:
                    walkers = dict(dgl_walkers(g, algorithm, args), **walkers)
                results = measure(walkers, starts, args, device)
                rates = ", ".join(f"{w} {r['steps_per_s'] / 1e6:.2f}" for w, r in results.items())
                print(f"{name}, {algorithm}, {threads} threads: M steps/s {rates}", flush=True)
                baseline = "torch" if g is None else "dgl"
                rows += algorithm_rows(name, algorithm, threads, starts.numel(), results, baseline)
    finally:
        set_threads(threads_before, with_dgl)
    harness.add_thread_speedups(rows, ("algorithm", "walker"), "steps_per_s")
    return rows


def algorithm_rows(
    graph: str,
    algorithm: str,
    threads: int | None,
    num_walks: int,
    results: dict[str, dict],
    baseline: str,
) -> list[dict]:
    """The rows of one algorithm at one thread count, with their ratios."""
    rate = {walker: r["steps_per_s"] for walker, r in results.items()}
    transit_vs_sample = rate["fastgl-transit"] / rate["fastgl-sample"]
    return [
        dict(
            graph=graph,
            algorithm=algorithm,
            walker=walker,
            threads=threads,
            walks=num_walks,
            **r,
            baseline=baseline,
            vs_baseline=r["steps_per_s"] / rate[baseline],
            vs_torch=r["steps_per_s"] / rate["torch"],
            transit_vs_sample=transit_vs_sample if walker == "fastgl-transit" else None,
        )
        for walker, r in results.items()
    ]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("walks", __doc__)
    parser.add_argument("--graphs", nargs="+", choices=GRAPHS, default=DEFAULT_GRAPHS)
    parser.add_argument("--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS))
    parser.add_argument("--length", type=int, default=80, help="steps per walk")
    parser.add_argument(
        "--walks", type=int, default=131_072, help="walks per run (0: one from every node)"
    )
    parser.add_argument("--p", type=float, default=2.0, help="node2vec's return parameter")
    parser.add_argument("--q", type=float, default=0.5, help="node2vec's in-out parameter")
    parser.add_argument(
        "--termination-prob",
        type=float,
        default=1 / 80,
        help="PPR: probability to end before each step",
    )
    parser.add_argument(
        "--dgl-graph",
        choices=["sorted", "csc"],
        default="sorted",
        help="how DGL's graph is built (see above)",
    )
    parser.add_argument(
        "--edge-ids",
        choices=["source-order", "given"],
        default="source-order",
        help="how the walks' edges are numbered (see above)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument(
        "--thread-counts",
        type=int,
        nargs="+",
        default=[1, 2],
        help="CPU thread counts to measure at, each for torch and DGL alike",
    )
    parser.add_argument(
        "--data-dir", default=str(DEFAULT_DATA_DIR), help="folder holding snap_soc-Slashdot0902/"
    )
    harness.add_seed_and_out_arguments(parser, "graph and start-node seed", "walks-<device>.json")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    dgl_version = _dgl_version()
    device, note, env = harness.start_run("walks", args, {"dgl": dgl_version or "not installed"})
    with_dgl = dgl_version is not None and device.type == "cpu"
    skipped = []
    if not with_dgl:
        reason = (
            "DGL is not installed here (its wheels stop at torch 2.2-2.4)"
            if dgl_version is None
            else "DGL's node2vec runs on the CPU only: the GPU run has no DGL rows"
        )
        skipped.append({"rows": "dgl, fastgl-dgl", "reason": reason})
        print(f"note: {reason}")
    rows, graphs = [], {}
    for name, graph in available_graphs(args, graphs, skipped):
        # The edge list is dropped once the CSC is built: products-scale needs the memory.
        csc = CSCGraph.from_edge_index(graph.pop("edge_index"), num_nodes=graph["num_nodes"])
        if args.edge_ids == "source-order":
            csc = numbered_by_source(csc)
        rows += rows_for(name, csc, args, device, with_dgl)
        del csc
    print_rows(rows, args)
    payload = {
        "benchmark": "walks",
        "environment": env,
        "note": note,
        "args": vars(args),
        "graphs": graphs,
        "skipped": skipped,
        "rows": rows,
    }
    harness.save_results("walks", payload, device, args)
    return payload


def print_rows(rows: list[dict], args) -> None:
    harness.print_table(
        [
            dict(r, msteps_per_s=r["steps_per_s"] / 1e6, steps_per_walk=r["steps"] / r["walks"])
            for r in rows
        ],
        [
            ("graph", "graph", ""),
            ("algorithm", "algorithm", ""),
            ("walker", "walker", ""),
            ("threads", "threads", ""),
            ("steps_per_walk", "steps/walk", ".1f"),
            ("msteps_per_s", "M steps/s", ".2f"),
            ("vs_baseline", "vs baseline", ".2f"),
            ("vs_torch", "vs torch", ".2f"),
            ("transit_vs_sample", "transit/sample", ".2f"),
            ("speedup_vs_1_thread", "1->N threads", ".2f"),
        ],
        title=f"Random walks of length {args.length} (node2vec p = {args.p}, q = {args.q}; PPR "
        f"ends with probability {args.termination_prob:.4g} per step), median of {args.repeat} "
        f"interleaved rounds; baseline "
        f"{' / '.join(dict.fromkeys(r['baseline'] for r in rows)) or '-'} at the same thread count",
    )


if __name__ == "__main__":
    main()
