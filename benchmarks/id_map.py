"""Fused-Map ID mapping against a ``torch.unique``-based relabel.

Question (FastGL, §4.1 "Fused-Map"): how much faster does ``fastgl.ops.id_map`` turn a hop's
sampled neighbor ids into local ids than the relabel a PyTorch user writes with ``torch.unique``?

Usage::

    python -m benchmarks.id_map                                  # R-MAT small, CPU
    python -m benchmarks.id_map --device cuda --preset products

Method: on the preset's R-MAT graph, ``--batch-sizes`` seeds (distinct, fixed per size) are
sampled hop by hop with ``--fanouts``; hop ``h``'s input is the ``prefix`` (the nodes known so far:
the seeds, then every node reached) and the ``ids`` of the neighbors drawn at that hop. Every
method returns the same thing (checked before timing): ``unique_nodes`` = ``prefix`` followed by
the new ids in first-occurrence order, and each id's position in it.

* ``fastgl``: ``fastgl.ops.id_map`` (one hash-table pass that inserts, dedupes and numbers);
* ``torch.unique ordered``: ``torch.unique(cat(prefix, ids), return_inverse=True)``, the first
  occurrence of each unique id by ``scatter_reduce(amin)``, an ``argsort`` of those to restore
  first-occurrence order and a gather through the resulting rank: the same output;
* ``torch.unique``: ``torch.unique(..., return_inverse=True)`` alone, sorted order, a lower bound
  on what any ``torch.unique`` relabel costs (its numbering does not keep the prefix first).

Times are medians over ``--repeat`` interleaved rounds; ``vs ordered`` and ``vs unique`` are those
baselines' median time over fastgl's (> 1: fastgl faster). The JSON (environment, arguments, rows)
goes to ``benchmarks/results/id_map-<device tag>-<preset>.json`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial

import torch
from torch import Tensor

from benchmarks import harness
from fastgl.data.rmat import rmat_graph
from fastgl.ops import id_map, sample_neighbors


def torch_ordered_relabel(prefix: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
    """``id_map``'s contract in plain PyTorch: ``torch.unique``, then first-occurrence order."""
    everything = torch.cat([prefix, ids])
    unique, inverse = torch.unique(everything, return_inverse=True)
    position = torch.arange(everything.numel(), device=everything.device)
    first = torch.full((unique.numel(),), everything.numel(), device=everything.device)
    first.scatter_reduce_(0, inverse, position, reduce="amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=order.device)
    return unique[order], rank[inverse[prefix.numel() :]]


def torch_unique_relabel(prefix: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
    unique, inverse = torch.unique(torch.cat([prefix, ids]), return_inverse=True)
    return unique, inverse[prefix.numel() :]


METHODS = {
    "fastgl": id_map,
    "torch.unique ordered": torch_ordered_relabel,
    "torch.unique": torch_unique_relabel,
}


def hop_inputs(graph, batch: int, fanouts: Sequence[int], seed: int) -> list[tuple[Tensor, Tensor]]:
    """``(prefix, ids)`` of every hop of one sample of ``batch`` seeds."""
    generator = torch.Generator().manual_seed(seed + batch)
    seeds = torch.randperm(graph.num_nodes, generator=generator)[:batch].to(graph.indptr.device)
    prefix, frontier, inputs = seeds, seeds, []
    for hop, fanout in enumerate(fanouts):
        _, ids, _ = sample_neighbors(
            graph.indptr, graph.indices, None, frontier, fanout, seed=seed + hop
        )
        inputs.append((prefix, ids))
        known, _ = id_map(prefix, ids)
        prefix, frontier = known, known[prefix.numel() :]
    return inputs


def check_same_output(prefix: Tensor, ids: Tensor) -> None:
    nodes, local = id_map(prefix, ids)
    ref_nodes, ref_local = torch_ordered_relabel(prefix, ids)
    if not (torch.equal(nodes, ref_nodes) and torch.equal(local, ref_local)):
        raise AssertionError("id_map differs from the torch.unique ordered relabel")
    unique, inverse = torch_unique_relabel(prefix, ids)
    if not torch.equal(unique[inverse], ids):
        raise AssertionError("the torch.unique relabel does not reproduce its ids")


def measure(graph, args, device) -> list[dict]:
    rows = []
    for batch in args.batch_sizes:
        for hop, (prefix, ids) in enumerate(hop_inputs(graph, batch, args.fanouts, args.seed)):
            if ids.numel() == 0:  # every node is known already (a graph smaller than the batch)
                continue
            check_same_output(prefix, ids)
            calls = {name: partial(f, prefix, ids) for name, f in METHODS.items()}
            timings = harness.time_interleaved(calls, args.repeat, args.warmup, device)
            for name, timing in timings.items():
                rows.append(
                    {
                        "batch_size": batch,
                        "hop": hop + 1,
                        "prefix": prefix.numel(),
                        "ids": ids.numel(),
                        "method": name,
                        "median_s": timing.median,
                        "times_s": timing.times,
                        "ids_per_s": ids.numel() / timing.median,
                        "vs_ordered": timings["torch.unique ordered"].median / timing.median,
                        "vs_unique": timings["torch.unique"].median / timing.median,
                    }
                )
    return rows


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("id_map", __doc__)
    harness.add_preset_argument(parser, "small", "R-MAT graph the hops are sampled from")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1024, 8000])
    parser.add_argument(
        "--fanouts", type=int, nargs="+", default=[15, 10, 5], help="neighbors per node per hop"
    )
    parser.add_argument("--repeat", type=int, default=10, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=1, help="untimed calls before each timed")
    harness.add_threads_argument(parser)
    harness.add_seed_and_out_arguments(
        parser, "graph, seeds and sampling seed", "id_map-<device>-<preset>[-<threads>t].json"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    device, note, env = harness.start_run("id_map", args)
    graph = rmat_graph(args.preset, seed=args.seed).to(device)
    rows = measure(graph, args, device)
    harness.print_table(
        rows,
        [
            ("batch_size", "batch", ""),
            ("hop", "hop", ""),
            ("prefix", "prefix", ""),
            ("ids", "ids", ""),
            ("method", "method", ""),
            ("median_s", "median s", ".2e"),
            ("ids_per_s", "ids/s", ".3g"),
            ("vs_ordered", "vs ordered", ".2f"),
            ("vs_unique", "vs unique", ".2f"),
        ],
        title="relabel of one hop's sampled ids (vs: the baseline's time over the row's)",
    )
    payload = {
        "benchmark": "id_map",
        "environment": env,
        "note": note,
        "arguments": vars(args),
        "graph": {"preset": args.preset, "num_nodes": graph.num_nodes, "edges": graph.num_edges},
        "rows": rows,
    }
    harness.save_results("id_map", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
