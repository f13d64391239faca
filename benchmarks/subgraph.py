"""Subgraphs per second of the frontier sampler: the Dashboard's pop against the straightforward
scan.

Question: how many subgraphs, and sampled vertices, per second does fastgl's frontier sampler
(Zeng et al., Accurate, Efficient and Scalable Graph Embedding, IPDPS 2019, §IV) draw when it
pops through the Dashboard, against the O(m)-per-pop scan of the walkers the paper starts from
(§IV-A), and how does it scale from one thread to two (many samplers at once, the paper's
inter-subgraph parallelism)?

Usage::

    python -m benchmarks.subgraph                                   # R-MAT products, Slashdot
    python -m benchmarks.subgraph --graphs slashdot --budgets 4000 --thread-counts 2

What is measured, in one run on the CPU:

* graphs: ``rmat-products`` (the ogbn-products-sized undirected R-MAT of
  :mod:`fastgl.data.rmat`, 2.45M nodes, 124M edges) and ``slashdot`` (SNAP soc-Slashdot0902
  from ``--data-dir``, directed: walkers follow in-edges; skipped with the reason when absent);
  ``rmat-tiny`` for tests;
* the sampler: ``--frontier-size`` walkers (the paper's m = 1000), each budget of ``--budgets``
  (n: ``n - m`` moves), ``--subgraphs`` subgraphs a call (:func:`fastgl.ops.frontier_sample`,
  the trace only: building the induced subgraphs is not timed), ``--eta`` and ``--max-entries``;
* pops: ``dashboard`` and ``scan`` (the baseline), for every thread count of
  ``--thread-counts``, each call once untimed and then ``--repeat`` interleaved timed rounds; the
  median counts.

``subgraphs/s`` is subgraphs a call over its time, ``vertices/s`` the distinct vertices those
subgraphs hold over it, ``vs scan`` the Dashboard's rate over the scan's at the same budget and
thread count, ``1->N threads`` a row's rate over its rate at one thread. The JSON goes to
``benchmarks/results/subgraph-<device tag>.json`` unless ``--out`` is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from benchmarks import harness
from benchmarks.dgl_sampler import DEFAULT_DATA_DIR, available_graphs
from fastgl import CSCGraph
from fastgl.data.rmat import RMAT_PRESETS
from fastgl.ops import frontier_sample
from fastgl.sampling.saint import sampled_vertices

GRAPHS = tuple(f"rmat-{preset}" for preset in RMAT_PRESETS) + ("slashdot",)
DEFAULT_GRAPHS = ["rmat-products", "slashdot"]
POPS = ("dashboard", "scan")


def measure(graph: CSCGraph, budget: int, args) -> dict[str, dict]:
    """Both pops' rates at one budget: distinct vertices from an untimed first call, then the
    median of ``args.repeat`` interleaved timed rounds."""
    calls = {
        pop: (
            lambda pop=pop: frontier_sample(
                graph,
                args.subgraphs,
                args.frontier_size,
                budget,
                eta=args.eta,
                max_entries=args.max_entries,
                pop=pop,
                generator=torch.Generator().manual_seed(args.seed),
            )
        )
        for pop in POPS
    }
    vertices = {}
    for pop, call in calls.items():
        trace = call()
        vertices[pop] = sum(
            sampled_vertices(f, a).numel() for f, a in zip(trace.frontier, trace.added)
        )
    timings = harness.time_interleaved(calls, repeat=args.repeat, warmup=0)
    return {
        pop: {
            "median_s": t.median,
            "times_s": t.times,
            "vertices": vertices[pop],
            "subgraphs_per_s": args.subgraphs / t.median,
            "vertices_per_s": vertices[pop] / t.median,
        }
        for pop, t in timings.items()
    }


def rows_for(name: str, graph: CSCGraph, args) -> list[dict]:
    rows = []
    threads_before = torch.get_num_threads()
    try:
        for threads in args.thread_counts:
            torch.set_num_threads(threads)
            for budget in args.budgets:
                results = measure(graph, budget, args)
                scan = results["scan"]["subgraphs_per_s"]
                rates = ", ".join(f"{p} {r['subgraphs_per_s']:.1f}" for p, r in results.items())
                print(
                    f"{name}, budget {budget}, {threads} threads: subgraphs/s {rates}", flush=True
                )
                rows += [
                    dict(
                        graph=name,
                        budget=budget,
                        pop=pop,
                        threads=threads,
                        subgraphs=args.subgraphs,
                        **r,
                        vs_scan=r["subgraphs_per_s"] / scan,
                    )
                    for pop, r in results.items()
                ]
    finally:
        torch.set_num_threads(threads_before)
    harness.add_thread_speedups(rows, ("budget", "pop"), "subgraphs_per_s")
    return rows


def parse_args(argv: Sequence[str] | None = None):
    parser = harness.argument_parser("subgraph", __doc__)
    parser.add_argument("--graphs", nargs="+", choices=GRAPHS, default=DEFAULT_GRAPHS)
    parser.add_argument("--frontier-size", type=int, default=1000, help="walkers, m")
    parser.add_argument(
        "--budgets", type=int, nargs="+", default=[2000, 4000, 8000], help="vertex budgets, n"
    )
    parser.add_argument("--subgraphs", type=int, default=16, help="subgraphs a call")
    parser.add_argument("--eta", type=float, default=2.0, help="the Dashboard's enlargement")
    parser.add_argument(
        "--max-entries", type=int, default=None, help="cap on a vertex's entries (None: degree)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds")
    parser.add_argument("--thread-counts", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--data-dir", default=str(DEFAULT_DATA_DIR), help="folder holding snap_soc-Slashdot0902/"
    )
    harness.add_seed_and_out_arguments(parser, "graph and sampler seed", "subgraph-<device>.json")
    parser.set_defaults(device="cpu")  # the sampler has no CUDA kernel yet
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    _, note, env = harness.start_run("subgraph", args)
    rows, graphs, skipped = [], {}, []
    for name, graph in available_graphs(args, graphs, skipped):
        csc = CSCGraph.from_edge_index(graph.pop("edge_index"), num_nodes=graph["num_nodes"])
        rows += rows_for(name, csc, args)
        del csc
    harness.print_table(
        rows,
        [
            ("graph", "graph", ""),
            ("budget", "budget", ""),
            ("pop", "pop", ""),
            ("threads", "threads", ""),
            ("subgraphs_per_s", "subgraphs/s", ".1f"),
            ("vertices_per_s", "vertices/s", ".3g"),
            ("vs_scan", "vs scan", ".2f"),
            ("speedup_vs_1_thread", "1->N threads", ".2f"),
        ],
        title=f"Frontier sampler, m = {args.frontier_size}, {args.subgraphs} subgraphs a call, "
        f"eta = {args.eta}, median of {args.repeat} interleaved rounds",
    )
    payload = {
        "benchmark": "subgraph",
        "environment": env,
        "note": note,
        "args": vars(args),
        "graphs": graphs,
        "skipped": skipped,
        "rows": rows,
    }
    harness.save_results("subgraph", payload, torch.device("cpu"), args)
    return payload


if __name__ == "__main__":
    main()
