"""Mini-batches per second: fastgl's DGL drop-in sampler against DGL's own NeighborSampler.

Question: a DGL user swaps ``dgl.dataloading.NeighborSampler`` for
``fastgl.integrations.dgl.NeighborSampler`` (one import line): how many more mini-batches per
second does the sampler produce on the same graph, fanouts and thread count?

Usage (in the DGL environment, which ``make bench-dgl`` sets up and runs)::

    python -m benchmarks.dgl_sampler                         # R-MAT products-scale + Slashdot
    python -m benchmarks.dgl_sampler --graphs slashdot --batches 50

What is measured, in one run:

* graphs: ``rmat-products`` (the ogbn-products-sized R-MAT of :mod:`fastgl.data.rmat`, 2.45M
  nodes, 124M edges) and ``slashdot`` (SNAP soc-Slashdot0902 from ``--data-dir``, skipped with
  the reason when absent);
* seeds: ``--batches`` batches of ``--batch-size`` nodes drawn without repetition (fixed seed);
* ``dgl``: ``dgl.dataloading.NeighborSampler(fanouts).sample(g, seeds)`` (DGL's default path, its
  fused CPU sampler when it has more than one thread), the baseline; ``fastgl``: the drop-in's
  ``sample`` on the same graph object. Both with ``--fanouts`` in DGL's order (input layer
  first) and the same number of threads (torch's and DGL's OpenMP pool set alike). Each sampler
  samples the graph once before timing (DGL builds its CSC, fastgl caches its own);
  ``--repeat`` interleaved rounds, each timing all batches; the median round counts.
  Sampled edges per batch are recorded for both, so the rates compare equal work.

Without DGL (e.g. on a GPU machine, where DGL has no wheels) the DGL rows are skipped with that
reason, and the run measures the PyG drop-in's sampler instead
(``fastgl.integrations.pyg.NeighborSampler.sample_from_nodes``, hop fanouts reversed) on
``--device`` against the same sampler on the CPU.

The JSON goes to ``benchmarks/results/dgl_sampler-<device>[-<threads>t].json`` unless ``--out``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import torch

from benchmarks import harness
from benchmarks.aggregate import SLASHDOT_FILE, read_snap_edge_list
from fastgl.data.rmat import RMAT_PRESETS, rmat_edge_index

GRAPHS = tuple(f"rmat-{preset}" for preset in RMAT_PRESETS) + ("slashdot",)
DEFAULT_GRAPHS = ["rmat-products", "slashdot"]
DEFAULT_DATA_DIR = harness.REPO_ROOT.parent / "shared" / "data"


def load_graph(name: str, args) -> Optional[Dict]:
    """``{"edge_index", "num_nodes", "source"}``, or ``None`` (with a message) when absent."""
    started = time.perf_counter()
    if name == "slashdot":
        path = Path(args.data_dir) / SLASHDOT_FILE
        if not path.exists():
            return None
        edge_index, num_nodes = read_snap_edge_list(path)
        source = f"SNAP soc-Slashdot0902 ({path.name})"
    else:
        preset = dict(RMAT_PRESETS[name.split("-", 1)[1]])
        edge_index, num_nodes = rmat_edge_index(**preset, seed=args.seed), preset["num_nodes"]
        source = f"R-MAT {preset}"
    print(f"{name}: {num_nodes:,} nodes, {edge_index.shape[1]:,} edges "
          f"({time.perf_counter() - started:.1f} s to load)", flush=True)
    return {"edge_index": edge_index, "num_nodes": num_nodes, "source": source}


def seed_batches(num_nodes: int, args) -> List[torch.Tensor]:
    generator = torch.Generator().manual_seed(args.seed)
    count = min(args.batches * args.batch_size, num_nodes)
    return list(torch.randperm(num_nodes, generator=generator)[:count].split(args.batch_size))


def measure(samplers: Dict[str, Callable], batches: List[torch.Tensor], args,
            device) -> Dict[str, Dict]:
    """Batches/s of every sampler (interleaved rounds over all batches) and its edges/batch."""
    edges = {}
    for name, sample in samplers.items():  # the untimed first pass builds the CSC caches
        edges[name] = sum(sample(b) for b in batches) / len(batches)
    calls = {name: (lambda sample=sample: [sample(b) for b in batches])
             for name, sample in samplers.items()}
    timings = harness.time_interleaved(calls, repeat=args.repeat, warmup=0, device=device)
    return {name: {"median_s": t.median, "times_s": t.times,
                   "batches_per_s": len(batches) / t.median, "edges_per_batch": edges[name]}
            for name, t in timings.items()}


def dgl_samplers(graph: Dict, args) -> Dict[str, Callable]:
    import dgl

    from fastgl.integrations.dgl import NeighborSampler as FastglSampler

    g = dgl.graph((graph["edge_index"][0], graph["edge_index"][1]), num_nodes=graph["num_nodes"])

    def edges_of(sampler):
        return lambda seeds: sum(b.num_edges() for b in sampler.sample(g, seeds)[2])

    return {"dgl": edges_of(dgl.dataloading.NeighborSampler(args.fanouts)),
            "fastgl": edges_of(FastglSampler(args.fanouts))}


def pyg_samplers(graph: Dict, args, device) -> Dict[str, Callable]:
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


def rows_for(name: str, graph: Dict, args, device, with_dgl: bool) -> List[Dict]:
    batches = seed_batches(graph["num_nodes"], args)
    if with_dgl:
        samplers, baseline = dgl_samplers(graph, args), "dgl"
    else:
        samplers, baseline = pyg_samplers(graph, args, device), "pyg-dropin-cpu"
    results = measure(samplers, batches, args, device)
    base_rate = results[baseline]["batches_per_s"]
    return [dict(graph=name, sampler=sampler, batches=len(batches), **r,
                 vs_baseline=r["batches_per_s"] / base_rate, baseline=baseline)
            for sampler, r in results.items()]


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dgl_sampler",
                                     description=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--graphs", nargs="+", choices=GRAPHS, default=DEFAULT_GRAPHS)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[5, 10, 15],
                        help="neighbors per node per layer, input layer first (DGL's order)")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--batches", type=int, default=20, help="batches timed per round")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="device of the PyG drop-in rows (used when DGL is absent)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for torch and DGL (default: torch's choice)")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="folder holding snap_soc-Slashdot0902/")
    parser.add_argument("--seed", type=int, default=0, help="graph and seed-batch seed")
    parser.add_argument("--out", default=None, help="JSON path (default: benchmarks/results/"
                                                    "dgl_sampler-<device>[-<threads>t].json)")
    return parser.parse_args(argv)


def _dgl_version() -> Optional[str]:
    try:
        import dgl
    except ImportError:
        return None
    dgl.utils.set_num_threads(torch.get_num_threads())  # the same pool size as torch's
    return dgl.__version__


def main(argv: Optional[Sequence[str]] = None) -> Dict:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    dgl_version = _dgl_version()
    device, note, env = harness.start_run("dgl_sampler", args,
                                          {"dgl": dgl_version or "not installed"})
    skipped = []
    if dgl_version is None:
        skipped.append({"rows": "dgl", "reason": "DGL is not installed here (its wheels stop at "
                                                 "torch 2.2-2.4): measuring the PyG drop-in"})
        print(f"note: {skipped[-1]['reason']}")
    rows, graphs = [], {}
    for name in args.graphs:
        graph = load_graph(name, args)
        if graph is None:
            skipped.append({"graph": name, "reason": f"{SLASHDOT_FILE} not in {args.data_dir}"})
            print(f"skipping {name}: {skipped[-1]['reason']}")
            continue
        graphs[name] = {"source": graph["source"], "num_nodes": graph["num_nodes"],
                        "num_edges": graph["edge_index"].shape[1]}
        rows += rows_for(name, graph, args, device, dgl_version is not None)
        del graph

    harness.print_table(
        [dict(r, median_ms=r["median_s"] * 1e3 / r["batches"]) for r in rows],
        [("graph", "graph", ""), ("sampler", "sampler", ""), ("median_ms", "ms/batch", ".1f"),
         ("batches_per_s", "batches/s", ".2f"), ("vs_baseline", "vs baseline", ".2f"),
         ("edges_per_batch", "edges/batch", ",.0f")],
        title=f"Neighbor sampling, fanouts {args.fanouts} (input layer first), batch "
              f"{args.batch_size}, {env['torch_threads']} threads (median of {args.repeat} "
              f"interleaved rounds)")
    payload = {"benchmark": "dgl_sampler", "environment": env, "note": note, "args": vars(args),
               "graphs": graphs, "skipped": skipped, "rows": rows}
    harness.save_results("dgl_sampler", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
