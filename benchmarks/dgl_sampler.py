"""Sampled edges per second: fastgl's samplers against DGL's own NeighborSampler.

Question: a DGL user swaps ``dgl.dataloading.NeighborSampler`` for
``fastgl.integrations.dgl.NeighborSampler`` (one import line), or samples with fastgl's own
``NeighborSampler``: how many more sampled edges per second, on the same graph, fanouts and
thread count, and how does each scale from one thread to two?

Usage (in the DGL environment, which ``make bench-dgl`` sets up and runs)::

    python -m benchmarks.dgl_sampler                     # R-MAT products, Slashdot, skewed, hetero
    python -m benchmarks.dgl_sampler --graphs slashdot --batches 50 --thread-counts 2

What is measured, in one run:

* graphs: ``rmat-products`` (the ogbn-products-sized R-MAT of :mod:`fastgl.data.rmat`, 2.45M
  nodes, 124M edges), ``slashdot`` (SNAP soc-Slashdot0902 from ``--data-dir``, skipped with
  the reason when absent) and ``skewed`` (a directed R-MAT of 1M nodes and 20M edges with
  a = 0.65, b = c = 0.15: a few nodes have hundreds of thousands of in-edges) and ``hetero``
  (a heterogeneous graph of :data:`HETERO_PRESETS`: users, items and tags, four relations
  ``user-follows-user``, ``user-buys-item``, its reverse ``item-bought-by-user`` and
  ``tag-tags-item``, each an R-MAT of its own seed; the seeds are users; ``hetero-tiny`` is
  its small version for tests);
* seeds: ``--batches`` batches of ``--batch-size`` nodes drawn without repetition (fixed seed);
* samplers, with ``--fanouts`` in DGL's order (input layer first):

  - ``dgl``: ``dgl.dataloading.NeighborSampler(fanouts).sample(g, seeds)``, DGL's default path
    (its fused CPU sampler), the baseline;
  - ``fastgl-dgl``: the drop-in's ``sample`` on the same graph object (DGL's layer-wise
    semantics, so the same work per batch as ``dgl``);
  - ``fastgl``: ``fastgl.NeighborSampler(graph, hop fanouts).sample(seeds)`` on a CSCGraph of
    the same edges (PyG's hop-wise semantics: only new nodes draw, so fewer edges per batch);
  - ``torch``: the vectorized pure-PyTorch hop-wise sampler of :mod:`benchmarks.sampling`, the
    baseline of ``fastgl``'s ``vs torch``;

* for every thread count of ``--thread-counts`` (torch's and DGL's pools set alike): every
  sampler samples the graph once before timing (DGL builds its CSC, fastgl caches its own),
  then ``--repeat`` interleaved rounds each time all batches; the median round counts.

On ``hetero`` the fanouts apply to every relation (DGL's int fanout per layer), ``dgl`` and
``fastgl-dgl`` sample the same DGL heterograph with seeds ``{"user": ids}``, ``fastgl`` is
:class:`fastgl.sampling.HeteroNeighborSampler` (hop-wise) on a
:class:`fastgl.HeteroCSCGraph` of the same edges, and there is no ``torch`` row.

Rates are sampled edges per second (each sampler's own edges), so samplers with different
semantics compare by work done; ``vs baseline`` divides by ``dgl``'s rate at the same thread
count, ``vs torch`` ``fastgl``'s by ``torch``'s, and ``1->N threads`` is a sampler's rate at N
threads over its rate at one.

Without DGL (e.g. on a GPU machine, where DGL has no wheels) the DGL rows are skipped with that
reason, and the run measures the PyG drop-in's sampler instead
(``fastgl.integrations.pyg.NeighborSampler.sample_from_nodes``, hop fanouts reversed) on
``--device`` against the same sampler on the CPU; on ``hetero``, fastgl's layer-wise
:class:`fastgl.sampling.HeteroNeighborSampler` (whose draws the DGL drop-in makes) on
``--device`` against the CPU.

The JSON goes to ``benchmarks/results/dgl_sampler-<device>.json`` unless ``--out``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import torch

from benchmarks import harness
from benchmarks.aggregate import SLASHDOT_FILE, read_snap_edge_list
from fastgl.data.rmat import RMAT_PRESETS, rmat_edge_index

#: In-degrees far more skewed than the R-MAT presets': the hubs stress per-transit work.
SKEWED_RMAT = dict(scale=20, num_nodes=1_000_000, num_edges=20_000_000, a=0.65, b=0.15, c=0.15)
#: Heterogeneous graphs: nodes per type, edges per relation (R-MAT, seed + relation index), the
#: reverses (the same edges turned around) and the node type the seeds are drawn from.
#: ``hetero`` (48M edges) takes about 35 s with the default arguments on two cores, generation
#: included, and 4.6 GB at peak.
HETERO_PRESETS = {
    "hetero": dict(
        num_nodes={"user": 2_000_000, "item": 800_000, "tag": 50_000},
        num_edges={
            ("user", "follows", "user"): 20_000_000,
            ("user", "buys", "item"): 12_000_000,
            ("tag", "tags", "item"): 4_000_000,
        },
        reverse={("user", "buys", "item"): ("item", "bought-by", "user")},
        seed_type="user",
    ),
    "hetero-tiny": dict(
        num_nodes={"user": 1_000, "item": 400, "tag": 50},
        num_edges={
            ("user", "follows", "user"): 8_000,
            ("user", "buys", "item"): 5_000,
            ("tag", "tags", "item"): 2_000,
        },
        reverse={("user", "buys", "item"): ("item", "bought-by", "user")},
        seed_type="user",
    ),
}
GRAPHS = (
    tuple(f"rmat-{preset}" for preset in RMAT_PRESETS)
    + ("slashdot", "skewed")
    + tuple(HETERO_PRESETS)
)
DEFAULT_GRAPHS = ["rmat-products", "slashdot", "skewed", "hetero"]
DEFAULT_DATA_DIR = harness.REPO_ROOT.parent / "shared" / "data"


def load_graph(name: str, args) -> dict | None:
    """``{"edge_index", "num_nodes", "source"}`` (heterogeneous: ``{"edge_index_dict",
    "num_nodes_dict", "seed_type", "source"}``), or ``None`` (with a message) when absent."""
    started = time.perf_counter()
    if name in HETERO_PRESETS:
        graph = hetero_graph(HETERO_PRESETS[name], args.seed)
        print(
            f"{name}: {graph['num_nodes_dict']} nodes, "
            f"{sum(e.shape[1] for e in graph['edge_index_dict'].values()):,} edges in "
            f"{len(graph['edge_index_dict'])} relations "
            f"({time.perf_counter() - started:.1f} s to generate)",
            flush=True,
        )
        return graph
    if name == "slashdot":
        path = Path(args.data_dir) / SLASHDOT_FILE
        if not path.exists():
            return None
        edge_index, num_nodes = read_snap_edge_list(path)
        source = f"SNAP soc-Slashdot0902 ({path.name})"
    else:
        preset = dict(SKEWED_RMAT if name == "skewed" else RMAT_PRESETS[name.split("-", 1)[1]])
        edge_index, num_nodes = rmat_edge_index(**preset, seed=args.seed), preset["num_nodes"]
        source = f"R-MAT {preset}"
    print(
        f"{name}: {num_nodes:,} nodes, {edge_index.shape[1]:,} edges "
        f"({time.perf_counter() - started:.1f} s to load)",
        flush=True,
    )
    return {"edge_index": edge_index, "num_nodes": num_nodes, "source": source}


def available_graphs(args, summaries: dict, skipped: list) -> Iterator[tuple[str, dict]]:
    """``(name, graph)`` for every graph of ``args.graphs`` that loads (:func:`load_graph`), its
    summary recorded in ``summaries``; an absent one is reported and recorded in ``skipped``."""
    for name in args.graphs:
        graph = load_graph(name, args)
        if graph is None:
            skipped.append({"graph": name, "reason": f"{SLASHDOT_FILE} not in {args.data_dir}"})
            print(f"skipping {name}: {skipped[-1]['reason']}")
            continue
        summaries[name] = graph_summary(graph)
        yield name, graph


def hetero_graph(preset: dict, seed: int) -> dict:
    """The relations of a :data:`HETERO_PRESETS` entry: relation ``r`` is an R-MAT over
    ``max(num_src, num_dst)`` nodes (seed ``seed + r``) with sources taken modulo ``num_src``
    and destinations modulo ``num_dst``; a reverse relation holds the same edges turned
    around."""
    num_nodes = preset["num_nodes"]
    edge_index_dict = {}
    for r, (etype, num_edges) in enumerate(preset["num_edges"].items()):
        src_type, _, dst_type = etype
        n = max(num_nodes[src_type], num_nodes[dst_type])
        edge_index = rmat_edge_index(
            max(n - 1, 1).bit_length(), num_edges=num_edges, num_nodes=n, seed=seed + r
        )
        edge_index[0] %= num_nodes[src_type]
        edge_index[1] %= num_nodes[dst_type]
        edge_index_dict[etype] = edge_index
        if etype in preset["reverse"]:
            edge_index_dict[preset["reverse"][etype]] = edge_index.flip(0)
    return {
        "edge_index_dict": edge_index_dict,
        "num_nodes_dict": dict(num_nodes),
        "seed_type": preset["seed_type"],
        "source": f"R-MAT per relation {preset} (seed {seed} + relation index)",
    }


def graph_summary(graph: dict) -> dict:
    """The JSON record of a graph: its source and sizes (per type and relation when
    heterogeneous)."""
    if "edge_index_dict" not in graph:
        return {
            "source": graph["source"],
            "num_nodes": graph["num_nodes"],
            "num_edges": graph["edge_index"].shape[1],
        }
    edges = {"-".join(etype): e.shape[1] for etype, e in graph["edge_index_dict"].items()}
    return {
        "source": graph["source"],
        "num_nodes": sum(graph["num_nodes_dict"].values()),
        "num_edges": sum(edges.values()),
        "num_nodes_per_type": graph["num_nodes_dict"],
        "num_edges_per_relation": edges,
        "seed_type": graph["seed_type"],
    }


def seed_batches(num_nodes: int, args) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(args.seed)
    count = min(args.batches * args.batch_size, num_nodes)
    return list(torch.randperm(num_nodes, generator=generator)[:count].split(args.batch_size))


def measure(
    samplers: dict[str, Callable], batches: list[torch.Tensor], args, device
) -> dict[str, dict]:
    """Edges/s of every sampler (interleaved rounds over all batches) and its edges/batch."""
    edges = {}
    for name, sample in samplers.items():  # the untimed first pass builds the CSC caches
        edges[name] = sum(sample(b) for b in batches) / len(batches)
    calls = {
        name: (lambda sample=sample: [sample(b) for b in batches])
        for name, sample in samplers.items()
    }
    timings = harness.time_interleaved(calls, repeat=args.repeat, warmup=0, device=device)
    return {
        name: {
            "median_s": t.median,
            "times_s": t.times,
            "batches_per_s": len(batches) / t.median,
            "edges_per_batch": edges[name],
            "edges_per_s": edges[name] * len(batches) / t.median,
        }
        for name, t in timings.items()
    }


def dgl_samplers(graph: dict, args) -> dict[str, Callable]:
    import dgl

    from benchmarks.sampling import TorchNeighborSampler
    from fastgl import CSCGraph, NeighborSampler
    from fastgl.integrations.dgl import NeighborSampler as DropInSampler

    g = dgl.graph((graph["edge_index"][0], graph["edge_index"][1]), num_nodes=graph["num_nodes"])
    csc = CSCGraph.from_edge_index(graph["edge_index"], num_nodes=graph["num_nodes"])
    hop_fanouts = list(reversed(args.fanouts))

    def blocks_edges(sampler):
        return lambda seeds: sum(b.num_edges() for b in sampler.sample(g, seeds)[2])

    def subgraph_edges(sampler):
        return lambda seeds: sampler.sample(seeds).row.numel()

    return {
        "dgl": blocks_edges(dgl.dataloading.NeighborSampler(args.fanouts)),
        "fastgl-dgl": blocks_edges(DropInSampler(args.fanouts)),
        "fastgl": subgraph_edges(NeighborSampler(csc, hop_fanouts)),
        "torch": subgraph_edges(TorchNeighborSampler(csc, hop_fanouts)),
    }


def dgl_hetero_samplers(graph: dict, args) -> dict[str, Callable]:
    """DGL's sampler, the drop-in and fastgl's own hop-wise sampler on one heterograph."""
    import dgl

    from fastgl import HeteroCSCGraph
    from fastgl.integrations.dgl import NeighborSampler as DropInSampler
    from fastgl.sampling.hetero import HeteroNeighborSampler

    edges = graph["edge_index_dict"]
    g = dgl.heterograph(
        {etype: (e[0], e[1]) for etype, e in edges.items()}, num_nodes_dict=graph["num_nodes_dict"]
    )
    hetero = HeteroCSCGraph.from_edge_index_dict(edges, graph["num_nodes_dict"])
    native = HeteroNeighborSampler(hetero, list(reversed(args.fanouts)))
    seed_type = graph["seed_type"]

    def blocks_edges(sampler):
        return lambda seeds: sum(b.num_edges() for b in sampler.sample(g, {seed_type: seeds})[2])

    def native_edges(seeds):
        return sum(sum(c) for c in native.sample({seed_type: seeds}).num_sampled_edges.values())

    return {
        "dgl": blocks_edges(dgl.dataloading.NeighborSampler(args.fanouts)),
        "fastgl-dgl": blocks_edges(DropInSampler(args.fanouts)),
        "fastgl": native_edges,
    }


def hetero_samplers(graph: dict, args, device) -> dict[str, Callable]:
    """Without DGL: fastgl's layer-wise heterogeneous sampler (the drop-in's) on the CPU and on
    ``device``."""
    from fastgl import HeteroCSCGraph
    from fastgl.sampling.hetero import HeteroNeighborSampler

    hetero = HeteroCSCGraph.from_edge_index_dict(graph["edge_index_dict"], graph["num_nodes_dict"])
    samplers = {}
    for where in dict.fromkeys(["cpu", str(device)]):
        sampler = HeteroNeighborSampler(
            hetero if torch.device(where) == hetero.device else hetero.to(where),
            list(reversed(args.fanouts)),
            layerwise=True,
        )

        def sample(seeds, sampler=sampler, where=where):
            sub = sampler.sample({graph["seed_type"]: seeds.to(where)})
            return sum(sum(c) for c in sub.num_sampled_edges.values())

        samplers[f"fastgl-layerwise-{where}"] = sample
    return samplers


def pyg_samplers(graph: dict, args, device) -> dict[str, Callable]:
    from torch_geometric.data import Data
    from torch_geometric.sampler import NodeSamplerInput

    from fastgl.integrations.pyg import NeighborSampler

    hop_fanouts = list(reversed(args.fanouts))
    samplers = {}
    for where in dict.fromkeys(["cpu", str(device)]):
        data = Data(edge_index=graph["edge_index"].to(where), num_nodes=graph["num_nodes"])
        sampler = NeighborSampler(data, hop_fanouts)

        def sample(seeds, sampler=sampler):
            out = sampler.sample_from_nodes(NodeSamplerInput(None, seeds))
            return out.row.numel()

        samplers[f"pyg-dropin-{where}"] = sample
    return samplers


def set_threads(count: int, with_dgl: bool) -> None:
    """Sets torch's (and DGL's) thread pool to ``count`` threads."""
    torch.set_num_threads(count)
    if with_dgl:
        import dgl

        dgl.utils.set_num_threads(count)


def rows_for(name: str, graph: dict, args, device, with_dgl: bool) -> list[dict]:
    if "edge_index_dict" in graph:
        batches = seed_batches(graph["num_nodes_dict"][graph["seed_type"]], args)
        if with_dgl:
            samplers, baseline = dgl_hetero_samplers(graph, args), "dgl"
        else:
            samplers = hetero_samplers(graph, args, device)
            baseline = "fastgl-layerwise-cpu"
    elif with_dgl:
        batches = seed_batches(graph["num_nodes"], args)
        samplers, baseline = dgl_samplers(graph, args), "dgl"
    else:
        batches = seed_batches(graph["num_nodes"], args)
        samplers, baseline = pyg_samplers(graph, args, device), "pyg-dropin-cpu"
    rows = []
    threads_before = torch.get_num_threads()
    try:
        for threads in args.thread_counts:
            set_threads(threads, with_dgl)
            results = measure(samplers, batches, args, device)
            base_rate = results[baseline]["edges_per_s"]
            rows += [
                dict(
                    graph=name,
                    sampler=sampler,
                    threads=threads,
                    batches=len(batches),
                    **r,
                    vs_baseline=r["edges_per_s"] / base_rate,
                    baseline=baseline,
                )
                for sampler, r in results.items()
            ]
    finally:
        set_threads(threads_before, with_dgl)
    by_key = {(r["sampler"], r["threads"]): r for r in rows}
    for row in rows:
        one_thread = by_key.get((row["sampler"], 1))
        row["speedup_vs_1_thread"] = (
            row["edges_per_s"] / one_thread["edges_per_s"] if one_thread else None
        )
        torch_row = by_key.get(("torch", row["threads"]))
        row["vs_torch"] = (
            row["edges_per_s"] / torch_row["edges_per_s"]
            if torch_row and row["sampler"] == "fastgl"
            else None
        )
    return rows


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("dgl_sampler", __doc__)
    parser.add_argument("--graphs", nargs="+", choices=GRAPHS, default=DEFAULT_GRAPHS)
    parser.add_argument(
        "--fanouts",
        type=int,
        nargs="+",
        default=[5, 10, 15],
        help="neighbors per node per layer, input layer first (DGL's order)",
    )
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--batches", type=int, default=20, help="batches timed per round")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds")
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="device of the PyG drop-in rows (used when DGL is absent)",
    )
    parser.add_argument(
        "--thread-counts",
        type=int,
        nargs="+",
        default=[1, 2],
        help="thread counts to measure at, each for torch and DGL alike",
    )
    parser.add_argument(
        "--data-dir", default=str(DEFAULT_DATA_DIR), help="folder holding snap_soc-Slashdot0902/"
    )
    harness.add_seed_and_out_arguments(
        parser, "graph and seed-batch seed", "dgl_sampler-<device>.json"
    )
    return parser.parse_args(argv)


def _dgl_version() -> str | None:
    try:
        import dgl
    except ImportError:
        return None
    return dgl.__version__


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    dgl_version = _dgl_version()
    device, note, env = harness.start_run(
        "dgl_sampler", args, {"dgl": dgl_version or "not installed"}
    )
    skipped = []
    if dgl_version is None:
        skipped.append(
            {
                "rows": "dgl",
                "reason": "DGL is not installed here (its wheels stop at "
                "torch 2.2-2.4): measuring the PyG drop-in",
            }
        )
        print(f"note: {skipped[-1]['reason']}")
    rows, graphs = [], {}
    for name, graph in available_graphs(args, graphs, skipped):
        rows += rows_for(name, graph, args, device, dgl_version is not None)
        del graph

    harness.print_table(
        [
            dict(
                r, median_ms=r["median_s"] * 1e3 / r["batches"], medges_per_s=r["edges_per_s"] / 1e6
            )
            for r in rows
        ],
        [
            ("graph", "graph", ""),
            ("sampler", "sampler", ""),
            ("threads", "threads", "d"),
            ("median_ms", "ms/batch", ".1f"),
            ("edges_per_batch", "edges/batch", ",.0f"),
            ("medges_per_s", "M edges/s", ".2f"),
            ("vs_baseline", "vs baseline", ".2f"),
            ("vs_torch", "vs torch", ".2f"),
            ("speedup_vs_1_thread", "1->N threads", ".2f"),
        ],
        title=f"Neighbor sampling, fanouts {args.fanouts} (input layer first), batch "
        f"{args.batch_size} (median of {args.repeat} interleaved rounds; baseline "
        f"{' / '.join(dict.fromkeys(r['baseline'] for r in rows)) or '-'} at the same thread "
        "count)",
    )
    payload = {
        "benchmark": "dgl_sampler",
        "environment": env,
        "note": note,
        "args": vars(args),
        "graphs": graphs,
        "skipped": skipped,
        "rows": rows,
    }
    harness.save_results("dgl_sampler", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
