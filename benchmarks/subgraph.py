"""Subgraphs per second of graph-sampling training's samplers: the frontier sampler's Dashboard
against the straightforward scan, and GraphSAINT's node, edge and walk samplers against DGL's.

Questions: how many subgraphs, and sampled vertices, per second does fastgl's frontier sampler
(Zeng et al., Accurate, Efficient and Scalable Graph Embedding, IPDPS 2019, §IV) draw when it
pops through the Dashboard, against the O(m)-per-pop scan of the walkers the paper starts from
(§IV-A), and how does it scale from one thread to two (many samplers at once, the paper's
inter-subgraph parallelism)? How fast are fastgl's GraphSAINT samplers
(:mod:`fastgl.sampling.saint`) against DGL's ``SAINTSampler`` on the same graph, induced
subgraphs included?

Usage::

    python -m benchmarks.subgraph                                   # R-MAT products, Slashdot
    python -m benchmarks.subgraph --graphs slashdot --budgets 4000 --thread-counts 2
    python -m benchmarks.subgraph --device cuda --subgraphs 1024 --modes   # Dashboards on a GPU

What is measured, in one run on the CPU:

* graphs: ``rmat-products`` (the ogbn-products-sized undirected R-MAT of
  :mod:`fastgl.data.rmat`, 2.45M nodes, 124M edges) and ``slashdot`` (SNAP soc-Slashdot0902
  from ``--data-dir``, directed: walkers follow in-edges; skipped with the reason when absent);
  ``rmat-tiny`` for tests;
* the sampler: ``--frontier-size`` walkers (the paper's m = 1000), each budget of ``--budgets``
  (n: ``n - m`` moves), ``--subgraphs`` subgraphs a call (:func:`fastgl.ops.frontier_sample`,
  the trace only: building the induced subgraphs is not timed), ``--eta`` and ``--max-entries``;
* pops (``--pops``): ``dashboard`` (fastgl's: an entry per mean in-degree), ``paper`` (the
  paper's Dashboard: an entry per unit of degree) and ``scan`` (the baseline), for every thread
  count of
  ``--thread-counts``, each call once untimed and then ``--repeat`` interleaved timed rounds; the
  median counts. With ``--device cuda`` the Dashboards run on the GPU (a warp per sampler) and
  the scan, which has no CUDA kernel, stays on the CPU as the baseline; each row names its
  device.

* GraphSAINT's modes (``--modes``): ``node`` (``--node-budget`` vertex draws), ``edge``
  (``--edge-budget`` edge draws) and ``walk`` (``--walk-roots`` walks of ``--walk-length``),
  DGL's example settings; fastgl's sampler draws ``--subgraphs`` induced subgraphs in one
  ``sample`` call, ``dgl`` (where DGL is installed: ``make bench-dgl DGL_BENCH=subgraph``)
  calls ``SAINTSampler(mode, budget).sample`` as many times, on a DGL graph of the same edges;
  torch's and DGL's thread pools are set alike.

``subgraphs/s`` is subgraphs a call over its time, ``vertices/s`` the distinct vertices those
subgraphs hold over it, ``vs scan`` a pop's rate over the scan's at the same budget and thread
count, ``vs dgl`` fastgl's rate over DGL's, ``1->N threads`` a row's rate over its rate
at one thread. The JSON goes to
``benchmarks/results/subgraph-<device tag>.json`` unless ``--out`` is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from benchmarks import harness
from benchmarks.dgl_sampler import DEFAULT_DATA_DIR, _dgl_version, available_graphs, set_threads
from fastgl import CSCGraph
from fastgl.data.rmat import RMAT_PRESETS
from fastgl.ops import frontier_sample
from fastgl.sampling import (
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTRandomWalkSampler,
    SampledSubgraph,
)
from fastgl.sampling.saint import sampled_vertices

GRAPHS = tuple(f"rmat-{preset}" for preset in RMAT_PRESETS) + ("slashdot",)
DEFAULT_GRAPHS = ["rmat-products", "slashdot"]
#: pop name -> (frontier_sample's pop, entry_weight): "paper" is the paper's Dashboard, an entry
#: per unit of weight; "dashboard" fastgl's default, an entry per mean in-degree.
POPS = {"dashboard": ("dashboard", None), "paper": ("dashboard", 1), "scan": ("scan", None)}
MODES = ("node", "edge", "walk")


def pop_device(pop: str, args) -> torch.device:
    """Where a pop runs: ``--device``, but the scan (CPU only) on the CPU."""
    return torch.device("cpu") if POPS[pop][0] == "scan" else torch.device(args.device)


def measure(graphs: dict[torch.device, CSCGraph], budget: int, args) -> dict[str, dict]:
    """The pops' rates at one budget (the trace only), each pop on its device's graph."""
    calls = {}
    for name in args.pops:
        device = pop_device(name, args)
        calls[name] = lambda name=name, device=device: frontier_sample(
            graphs[device],
            args.subgraphs,
            args.frontier_size,
            budget,
            eta=args.eta,
            max_entries=args.max_entries,
            pop=POPS[name][0],
            entry_weight=POPS[name][1],
            generator=torch.Generator(device).manual_seed(args.seed),
        )
    return measure_calls(calls, args, trace_vertices)


def trace_vertices(trace) -> int:
    """Distinct vertices of a frontier trace's subgraphs."""
    return sum(sampled_vertices(f, a).numel() for f, a in zip(trace.frontier, trace.added))


def rows_for(name: str, graph: CSCGraph, args) -> list[dict]:
    rows = []
    graphs = {device: graph.to(device) for device in {pop_device(pop, args) for pop in args.pops}}
    threads_before = torch.get_num_threads()
    try:
        for threads in args.thread_counts:
            torch.set_num_threads(threads)
            for budget in args.budgets:
                results = measure(graphs, budget, args)
                scan = results.get("scan", {}).get("subgraphs_per_s")
                rates = ", ".join(f"{p} {r['subgraphs_per_s']:.1f}" for p, r in results.items())
                print(
                    f"{name}, budget {budget}, {threads} threads: subgraphs/s {rates}", flush=True
                )
                rows += [
                    dict(
                        graph=name,
                        budget=budget,
                        pop=pop,
                        device=str(pop_device(pop, args)),
                        threads=threads,
                        subgraphs=args.subgraphs,
                        **r,
                        vs_scan=r["subgraphs_per_s"] / scan if scan else None,
                    )
                    for pop, r in results.items()
                ]
    finally:
        torch.set_num_threads(threads_before)
    harness.add_thread_speedups(rows, ("budget", "pop"), "subgraphs_per_s")
    return rows


def saint_samplers(graph: CSCGraph, args) -> dict:
    """fastgl's sampler of every mode of ``args.modes``, with its DGL budget."""
    built = {
        "node": (SAINTNodeSampler(graph, args.node_budget), args.node_budget),
        "edge": (SAINTEdgeSampler(graph, args.edge_budget), args.edge_budget),
        "walk": (
            SAINTRandomWalkSampler(graph, args.walk_roots, args.walk_length),
            (args.walk_roots, args.walk_length),
        ),
    }
    return {mode: built[mode] for mode in args.modes}


def saint_rows(name: str, graph: CSCGraph, args, with_dgl: bool) -> list[dict]:
    """fastgl's GraphSAINT samplers (and DGL's) at every thread count."""
    dgl_g = dgl_graph_of(graph) if with_dgl else None
    samplers = saint_samplers(graph, args)
    rows = []
    threads_before = torch.get_num_threads()
    try:
        for threads in args.thread_counts:
            set_threads(threads, with_dgl)
            for mode, (sampler, budget) in samplers.items():
                calls = {"fastgl": lambda sampler=sampler: sampler.sample(args.subgraphs)}
                if with_dgl:
                    calls["dgl"] = dgl_call(dgl_g, mode, budget, args.subgraphs)
                results = measure_calls(calls, args, subgraph_vertices)
                rates = ", ".join(f"{k} {r['subgraphs_per_s']:.1f}" for k, r in results.items())
                print(f"{name}, {mode}, {threads} threads: subgraphs/s {rates}", flush=True)
                dgl_rate = results.get("dgl", {}).get("subgraphs_per_s")
                rows += [
                    dict(
                        graph=name,
                        mode=mode,
                        budget=str(budget),
                        sampler=key,
                        threads=threads,
                        subgraphs=args.subgraphs,
                        **r,
                        vs_dgl=r["subgraphs_per_s"] / dgl_rate if dgl_rate else None,
                    )
                    for key, r in results.items()
                ]
    finally:
        set_threads(threads_before, with_dgl)
    harness.add_thread_speedups(rows, ("mode", "sampler"), "subgraphs_per_s")
    return rows


def measure_calls(calls: dict, args, count_vertices) -> dict[str, dict]:
    """Each call's rate: the distinct vertices ``count_vertices`` finds in the result of an
    untimed first call, then the median of ``args.repeat`` interleaved timed rounds."""
    vertices = {key: count_vertices(call()) for key, call in calls.items()}
    timings = harness.time_interleaved(calls, repeat=args.repeat, warmup=0)
    return {
        key: {
            "median_s": t.median,
            "times_s": t.times,
            "vertices": vertices[key],
            "subgraphs_per_s": args.subgraphs / t.median,
            "vertices_per_s": vertices[key] / t.median,
        }
        for key, t in timings.items()
    }


def subgraph_vertices(subgraphs) -> int:
    """Vertices of fastgl's subgraphs (``nodes``) or DGL's (``num_nodes()``)."""
    return sum(
        sub.nodes.numel() if isinstance(sub, SampledSubgraph) else sub.num_nodes()
        for sub in subgraphs
    )


def columns(kind: tuple[str, str], ratio: tuple[str, str]) -> list[tuple[str, str, str]]:
    """A table's columns: the row's kind (pop or sampler) and its ratio to the baseline."""
    return [
        ("graph", "graph", ""),
        ("budget", "budget", ""),
        (*kind, ""),
        ("threads", "threads", ""),
        ("subgraphs_per_s", "subgraphs/s", ".1f"),
        ("vertices_per_s", "vertices/s", ".3g"),
        (*ratio, ".2f"),
        ("speedup_vs_1_thread", "1->N threads", ".2f"),
    ]


def dgl_graph_of(graph: CSCGraph):
    """DGL's graph of the edges of ``graph``, numbered as its edge ids."""
    import dgl

    src, dst = graph.src_index(), graph.dst_index()
    order = torch.empty_like(src)
    order[graph.edge_ids()] = torch.arange(src.numel())
    return dgl.graph((src[order], dst[order]), num_nodes=graph.num_nodes)


def dgl_call(g, mode: str, budget, count: int):
    """``count`` subgraphs from DGL's ``SAINTSampler``."""
    from dgl.dataloading import SAINTSampler

    sampler = SAINTSampler(mode, budget)
    return lambda: [sampler.sample(g, None) for _ in range(count)]


def parse_args(argv: Sequence[str] | None = None):
    parser = harness.argument_parser("subgraph", __doc__)
    parser.add_argument("--graphs", nargs="+", choices=GRAPHS, default=DEFAULT_GRAPHS)
    parser.add_argument(
        "--pops",
        nargs="*",
        choices=list(POPS),
        default=list(POPS),
        help="frontier pops (none: skip)",
    )
    parser.add_argument("--frontier-size", type=int, default=1000, help="walkers, m")
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[2000, 4000, 8000], help="vertex budgets, n"
    )
    parser.add_argument("--subgraphs", type=int, default=16, help="subgraphs a call")
    parser.add_argument("--eta", type=float, default=2.0, help="the Dashboard's enlargement")
    parser.add_argument(
        "--max-entries", type=int, default=None, help="cap on a vertex's entries (None: degree)"
    )
    parser.add_argument("--modes", nargs="*", choices=MODES, default=list(MODES))
    parser.add_argument("--node-budget", type=int, default=6000, help="node mode: vertex draws")
    parser.add_argument("--edge-budget", type=int, default=4000, help="edge mode: edge draws")
    parser.add_argument("--walk-roots", type=int, default=3000, help="walk mode: walks")
    parser.add_argument("--walk-length", type=int, default=2, help="walk mode: steps a walk")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds")
    parser.add_argument("--thread-counts", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--data-dir", default=str(DEFAULT_DATA_DIR), help="folder holding snap_soc-Slashdot0902/"
    )
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where the frontier Dashboards run (the scan and GraphSAINT's samplers: the CPU)",
    )
    harness.add_seed_and_out_arguments(parser, "graph and sampler seed", "subgraph-<device>.json")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    device, note, env = harness.start_run("subgraph", args)
    args.device = device.type  # the CPU, with a note, where no GPU is usable
    with_dgl = _dgl_version() is not None
    rows, saint, graphs, skipped = [], [], {}, []
    for name, graph in available_graphs(args, graphs, skipped):
        csc = CSCGraph.from_edge_index(graph.pop("edge_index"), num_nodes=graph["num_nodes"])
        if args.pops:
            rows += rows_for(name, csc, args)
        saint += saint_rows(name, csc, args, with_dgl)
        del csc
    frontier_columns = columns(("pop", "pop"), ("vs_scan", "vs scan"))
    frontier_columns.insert(3, ("device", "device", ""))
    harness.print_table(
        rows,
        frontier_columns,
        title=f"Frontier sampler, m = {args.frontier_size}, {args.subgraphs} subgraphs a call, "
        f"eta = {args.eta}, median of {args.repeat} interleaved rounds",
    )
    harness.print_table(
        saint,
        [("mode", "mode", ""), *columns(("sampler", "sampler"), ("vs_dgl", "vs dgl"))],
        title=f"GraphSAINT samplers, {args.subgraphs} induced subgraphs a call, median of "
        f"{args.repeat} interleaved rounds",
    )
    payload = {
        "benchmark": "subgraph",
        "environment": env,
        "note": note,
        "args": vars(args),
        "graphs": graphs,
        "skipped": skipped,
        "rows": rows,
        "saint_rows": saint,
        "dgl": _dgl_version(),
    }
    harness.save_results("subgraph", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
