"""Sampled edges per second: fastgl's NeighborSampler against a vectorized pure-PyTorch sampler.

Question: how fast does fastgl draw multi-hop neighbor samples (uniform, without replacement,
fanouts hop 1 first), compared with the best one can do in plain PyTorch, and what does
sampling several mini-batches in one pass (``sample_batches``) buy?

Usage::

    python -m benchmarks.sampling                      # preset "small": 100k nodes, 2M edges
    python -m benchmarks.sampling --preset products    # ogbn-products-sized R-MAT: 2.45M nodes,
                                                       # 124M edges; 8.2 GB RAM at peak, about
                                                       # 1.5 min in all on two CPU cores
    python -m benchmarks.sampling --device cuda --preset products
    python -m benchmarks.sampling --batch-sizes 1024 8000 --fanouts 15 10 5 --repeat 5

What is measured, all in one run on one device (``--device cuda`` falls back to the CPU, and
says so in the result, when no GPU is usable):

* the R-MAT graph (:mod:`fastgl.data.rmat`) and the edges/s of ``CSCGraph.from_edge_index``
  against a sort-based PyTorch conversion giving identical arrays;
* for every batch size, seeds drawn uniformly without repetition from all nodes (fixed seed;
  with repetition if the graph has fewer nodes than seeds):

  - ``fastgl``: ``NeighborSampler.sample``;
  - ``torch``: :class:`TorchNeighborSampler` below, the baseline every ratio is against: fully
    vectorized, O(sampled edges) work per hop (Floyd's algorithm run column by column over all
    frontier nodes at once, and a dense-array first-occurrence relabel, no sort);
  - ``torch-sortkeys``: the same with the textbook vectorized draw instead, a random key for
    every in-edge of every frontier node and one sort by (node, key); its work grows with the
    frontier's total degree, not the fanout;

* ``fastgl-batched``: ``sample_batches`` on B = 1, 8, 32 batches of 1024 seeds, edges/s over all
  batches, against ``torch`` at batch 1024;
* on a GPU, per call of every method: its host synchronizations and kernel launches
  (``benchmarks/device_counts.py``), counted outside the timed rounds.

Every method's first sample at every size is checked before timing (edges exist, each frontier
node got ``min(degree, fanout)`` distinct in-edges, the node layout of docs/contracts.md), so the
rates compare equal work. The table goes to stdout; the JSON with the environment goes to
``benchmarks/results/sampling-<device tag>-<preset>[-<threads>t].json`` unless ``--out`` is
given (``-<threads>t`` only with ``--threads``).

On a shared machine the numbers are only as good as its idle time: the result records the load
average, and ``--threads 1`` is far less sensitive to other processes than a thread per core.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import torch
from torch import Tensor

from benchmarks import harness
from benchmarks.device_counts import count_kernels, count_syncs
from fastgl import CSCGraph, NeighborSampler, SampledSubgraph
from fastgl.data.rmat import RMAT_PRESETS, rmat_edge_index

_MAX = torch.iinfo(torch.int64).max
METHODS = ("fastgl", "torch", "torch-sortkeys", "fastgl-batched")
# Above this many edges: one CSC conversion without warm-up (not 1 + 3), no torch-sortkeys.
_LARGE_GRAPH_EDGES = 20_000_000


class TorchNeighborSampler:
    """Multi-hop uniform neighbor sampling without replacement in vectorized PyTorch.

    Same semantics and output layout as :class:`fastgl.NeighborSampler` (``SampledSubgraph``:
    seeds first, then each hop's new nodes in first-occurrence order; edges grouped by hop, each
    frontier node's draws together), written as a careful user would without a compiled op:

    * nodes with ``degree <= fanout`` take all their in-edges (one ``repeat_interleave``);
    * the others draw with Floyd's algorithm vectorized across nodes: ``fanout`` steps, step
      ``m`` draws one uniform in ``[0, degree - fanout + m]`` for every node and replaces a
      repeat by the step's upper bound; O(fanout^2) work per node, independent of its degree.
      ``draw="sortkeys"`` instead gives every in-edge a random key and keeps the ``fanout``
      smallest per node after one sort;
    * relabelling uses a dense ``[num_nodes]`` scratch array: a ``scatter_reduce(amin)`` of
      positions finds each new id's first occurrence in O(n), no ``torch.unique`` sort.

    The scratch arrays make one instance unsafe to share between threads.
    """

    def __init__(self, graph: CSCGraph, fanouts: Sequence[int], draw: str = "floyd") -> None:
        if draw not in ("floyd", "sortkeys"):
            raise ValueError(
                f"TorchNeighborSampler: draw must be 'floyd' or 'sortkeys', got {draw!r}"
            )
        self.graph = graph
        self.fanouts = [int(f) for f in fanouts]
        self.draw = draw
        device = graph.device
        # Scratch, all -1 / MAX between calls: local id of each node, first position of each id.
        self._local = torch.full((graph.num_nodes,), -1, dtype=torch.int64, device=device)
        self._first = torch.full((graph.num_nodes,), _MAX, dtype=torch.int64, device=device)

    def sample(self, seeds: Tensor, generator: torch.Generator | None = None) -> SampledSubgraph:
        seeds = seeds.to(torch.int64)
        node_lists: list[Tensor] = []
        seed_nodes, seed_index = self._relabel(seeds, 0)
        node_lists.append(seed_nodes)
        num_known = seed_nodes.numel()
        frontier, frontier_first = seed_nodes, 0
        rows, cols, eids, edge_counts = [], [], [], []
        for fanout in self.fanouts:
            counts, slots = self._draw(frontier, fanout, generator)
            frontier_local = torch.arange(
                frontier_first, frontier_first + frontier.numel(), device=seeds.device
            )
            cols.append(torch.repeat_interleave(frontier_local, counts, output_size=slots.numel()))
            new_nodes, row = self._relabel(self.graph.indices[slots].to(torch.int64), num_known)
            rows.append(row)
            eids.append(self.graph.eid[slots] if self.graph.eid is not None else slots)
            edge_counts.append(slots.numel())
            node_lists.append(new_nodes)
            frontier, frontier_first = new_nodes, num_known
            num_known += new_nodes.numel()
        nodes = torch.cat(node_lists)
        self._local[nodes] = -1
        return SampledSubgraph(
            nodes=nodes,
            row=torch.cat(rows),
            col=torch.cat(cols),
            eid=torch.cat(eids),
            num_sampled_nodes=[n.numel() for n in node_lists],
            num_sampled_edges=edge_counts,
            seed_index=seed_index,
        )

    def _relabel(self, ids: Tensor, num_known: int):
        """Local ids of ``ids``; new ids get ``num_known, ...`` in first-occurrence order."""
        local = self._local[ids]
        is_new = local < 0
        candidates = ids[is_new]
        positions = torch.arange(candidates.numel(), device=ids.device)
        self._first.scatter_reduce_(0, candidates, positions, "amin")
        new_nodes = candidates[self._first[candidates] == positions]  # first occurrences, in order
        self._first[candidates] = _MAX
        self._local[new_nodes] = torch.arange(
            num_known, num_known + new_nodes.numel(), device=ids.device
        )
        local[is_new] = self._local[candidates]
        return new_nodes, local

    def _draw(self, frontier: Tensor, fanout: int, generator):
        """``(counts [F], slots [sum counts])``: the CSC slots drawn, grouped by frontier node."""
        indptr = self.graph.indptr
        start = indptr[frontier]
        degree = indptr[frontier + 1] - start
        counts = degree if fanout < 0 else degree.clamp(max=fanout)
        out_first = torch.cumsum(counts, 0) - counts
        total = int(counts.sum())
        slots = torch.empty(total, dtype=torch.int64, device=frontier.device)

        takes_all = counts == degree
        all_rows = torch.nonzero(takes_all).squeeze(1)
        all_counts = degree[all_rows]
        num_all = int(all_counts.sum())
        seg = torch.repeat_interleave(
            torch.arange(all_rows.numel(), device=frontier.device), all_counts, output_size=num_all
        )
        within = (
            torch.arange(num_all, device=frontier.device)
            - (torch.cumsum(all_counts, 0) - all_counts)[seg]
        )
        slots[out_first[all_rows][seg] + within] = start[all_rows][seg] + within

        drawn_rows = torch.nonzero(~takes_all).squeeze(1)
        if drawn_rows.numel():
            draw = _floyd_offsets if self.draw == "floyd" else _sortkey_offsets
            offsets = draw(degree[drawn_rows], fanout, generator)
            where = out_first[drawn_rows, None] + torch.arange(fanout, device=frontier.device)
            slots[where] = start[drawn_rows, None] + offsets
        return counts, slots


def _floyd_offsets(degree: Tensor, fanout: int, generator) -> Tensor:
    """``[n, fanout]`` distinct uniform offsets in ``[0, degree)`` per row (degree > fanout)."""
    uniform = torch.rand(
        degree.numel(), fanout, dtype=torch.float64, device=degree.device, generator=generator
    )
    chosen = torch.empty(degree.numel(), fanout, dtype=torch.int64, device=degree.device)
    for m in range(fanout):
        upper = degree - fanout + m  # step m draws from [0, upper]
        pick = torch.minimum((uniform[:, m] * (upper + 1)).to(torch.int64), upper)
        if m:
            repeated = (chosen[:, :m] == pick[:, None]).any(1)
            pick = torch.where(repeated, upper, pick)
        chosen[:, m] = pick
    return chosen


def _sortkey_offsets(degree: Tensor, fanout: int, generator) -> Tensor:
    """Same contract as :func:`_floyd_offsets`: one random key per edge, keep the smallest."""
    device, n = degree.device, degree.numel()
    total = int(degree.sum())
    seg = torch.repeat_interleave(torch.arange(n, device=device), degree, output_size=total)
    seg_first = torch.cumsum(degree, 0) - degree
    keys = (seg << 31) | torch.randint(0, 1 << 31, (total,), device=device, generator=generator)
    order = torch.sort(keys).indices  # node-major, random within a node
    sorted_seg = seg[order]
    rank = torch.arange(total, device=device) - seg_first[sorted_seg]
    keep = rank < fanout
    return (order[keep] - seg_first[sorted_seg[keep]]).view(n, fanout)


def torch_csc(edge_index: Tensor, num_nodes: int):
    """``(indptr, indices, perm)`` like ``csc_from_coo``, with a stable sort by target."""
    src, dst = edge_index[0], edge_index[1]
    perm = torch.sort(dst, stable=True).indices
    indptr = torch.zeros(num_nodes + 1, dtype=torch.int64, device=dst.device)
    torch.cumsum(torch.bincount(dst, minlength=num_nodes), 0, out=indptr[1:])
    return indptr, src[perm], perm


def check_sample(
    graph: CSCGraph,
    sub: SampledSubgraph,
    seeds: Tensor,
    fanouts: Sequence[int],
    slot_of_eid: Tensor | None,
    method: str,
) -> None:
    """Fails loudly unless ``sub`` is a valid sample of ``graph`` around ``seeds``."""

    def require(ok, what):
        if not bool(ok):
            raise AssertionError(f"{method}: invalid sample: {what}")

    nodes = sub.nodes
    unique, inverse = torch.unique(seeds, return_inverse=True)
    first = torch.full_like(unique, seeds.numel()).scatter_reduce_(
        0, inverse, torch.arange(seeds.numel(), device=seeds.device), "amin"
    )
    distinct_seeds = seeds[torch.sort(first).values]  # first-occurrence order
    require(
        sub.num_sampled_nodes[0] == distinct_seeds.numel()
        and torch.equal(nodes[: distinct_seeds.numel()], distinct_seeds),
        "the distinct seeds are not the node prefix",
    )
    require(torch.equal(nodes[sub.seed_index], seeds), "seed_index")
    require(torch.unique(nodes).numel() == nodes.numel(), "repeated nodes")
    slot = slot_of_eid[sub.eid] if slot_of_eid is not None else sub.eid
    require(torch.equal(graph.indices[slot].to(torch.int64), nodes[sub.row]), "row != edge source")
    dst = nodes[sub.col]
    require(
        ((graph.indptr[dst] <= slot) & (slot < graph.indptr[dst + 1])).all(), "col != edge target"
    )
    # Frontier nodes are distinct within and across hops, so repeated edges mean a repeated draw.
    require(torch.unique(slot).numel() == slot.numel(), "an edge drawn twice")
    node_bounds = torch.tensor(sub.num_sampled_nodes).cumsum(0).tolist()
    edge_at, frontier_first = 0, 0
    for hop, fanout in enumerate(fanouts):
        frontier_end = node_bounds[hop]
        frontier = nodes[frontier_first:frontier_end]
        col = sub.col[edge_at : edge_at + sub.num_sampled_edges[hop]]
        degree = graph.indptr[frontier + 1] - graph.indptr[frontier]
        expected = degree if fanout < 0 else degree.clamp(max=fanout)
        require(
            col.numel() == 0
            or (int(col.min()) >= frontier_first and int(col.max()) < frontier_end),
            f"hop {hop + 1} targets",
        )
        got = torch.bincount(col - frontier_first, minlength=frontier.numel())
        require(torch.equal(got, expected), f"hop {hop + 1}: edges per node != min(degree, fanout)")
        edge_at += col.numel()
        frontier_first = frontier_end


def _edges(subs: list[SampledSubgraph]) -> int:
    return sum(sum(sub.num_sampled_edges) for sub in subs)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _measure_interleaved(cases: list[dict], args, device) -> list[dict]:
    """Times every case's ``run(generator)`` in rounds: per round, each case gets ``warmup``
    untimed calls and then one timed call.

    Interleaving spreads a burst of load from other processes over all methods instead of
    landing on one. The untimed calls right before each timed one matter: a call that follows
    a much bigger one (say 32 batches) runs 2-5x slower on the CPU, as the allocator has handed
    the memory back and the call page-faults it in again. Rates: ``edges_per_s`` is the median
    over timed calls of edges / seconds, ``best_edges_per_s`` the fastest call (noise only ever
    adds time).
    """
    for case in cases:
        case["times"], case["edges"] = [], []
    for _ in range(args.repeat):
        for case in cases:
            result = []
            timing = harness.time_it(
                lambda case=case, result=result: result.append(case["run"](case["generator"])),
                warmup=args.warmup,
                repeat=1,
                device=device,
            )
            case["times"].append(timing.times[0])
            case["edges"].append(_edges(result[-1]))
    rows = []
    for case in cases:
        rates = [e / t for e, t in zip(case["edges"], case["times"])]
        kept = ("method", "batch", "num_batches", "batch_size", "syncs", "kernels")
        rows.append({key: case[key] for key in kept})
        rows[-1].update(
            median_s=_median(case["times"]),
            min_s=min(case["times"]),
            times_s=case["times"],
            edges_per_call=sum(case["edges"]) / len(case["edges"]),
            edges_per_s=_median(rates),
            best_edges_per_s=max(rates),
        )
        print(
            f"  {case['method']:15s} batch {case['batch']:>8s}: {_median(rates) / 1e6:9.2f} "
            f"M edges/s (median), {max(rates) / 1e6:9.2f} (best)",
            flush=True,
        )
    return rows


def build_graph(args, device):
    """Generates the preset's R-MAT graph; times and checks the CSC conversion."""
    preset = dict(RMAT_PRESETS[args.preset])
    started = time.perf_counter()
    edge_index = rmat_edge_index(**preset, seed=args.seed)
    generate_s = time.perf_counter() - started
    num_nodes = preset["num_nodes"]
    edge_index = edge_index.to(device)
    num_edges = edge_index.shape[1]
    large = num_edges > _LARGE_GRAPH_EDGES
    warmup, repeat = (0, 1) if large else (1, 3)

    built = {}
    fastgl_t = harness.time_it(
        lambda edge_index=edge_index: built.update(
            graph=CSCGraph.from_edge_index(edge_index, num_nodes=num_nodes)
        ),
        warmup=warmup,
        repeat=repeat,
        device=device,
    )
    graph = built["graph"]
    torch_t = harness.time_it(
        lambda edge_index=edge_index: built.update(reference=torch_csc(edge_index, num_nodes)),
        warmup=warmup,
        repeat=repeat,
        device=device,
    )
    indptr, indices, perm = built.pop("reference")
    if not (
        torch.equal(indptr, graph.indptr)
        and torch.equal(indices, graph.indices)
        and torch.equal(perm, graph.eid)
    ):
        raise AssertionError("CSCGraph.from_edge_index differs from the stable-sort reference")
    del edge_index, indptr, indices, perm

    torch_rate = num_edges / torch_t.median
    csc_rows = [
        {
            "method": "fastgl CSCGraph.from_edge_index",
            "median_s": fastgl_t.median,
            "times_s": fastgl_t.times,
            "edges_per_s": num_edges / fastgl_t.median,
            "vs_torch": num_edges / fastgl_t.median / torch_rate,
        },
        {
            "method": "torch stable sort + bincount",
            "median_s": torch_t.median,
            "times_s": torch_t.times,
            "edges_per_s": torch_rate,
            "vs_torch": 1.0,
        },
    ]
    degree = graph.in_degrees()
    info = {
        "preset": args.preset,
        "rmat_args": preset,
        "seed": args.seed,
        "num_nodes": graph.num_nodes,
        "num_edges": graph.num_edges,
        "max_in_degree": int(degree.max()),
        "mean_in_degree": graph.num_edges / graph.num_nodes,
        "isolated_fraction": float((degree == 0).double().mean()),
        "generate_s": generate_s,
    }
    return graph, info, csc_rows


DEVICE_COST_COLUMNS = [("syncs", "syncs", ""), ("kernels", "kernels", "")]


def device_costs(device, call) -> dict:
    """Host synchronizations and kernel launches of one call on a GPU (``None`` on the CPU),
    counted outside the timed rounds."""
    if device.type != "cuda":
        return {"syncs": None, "kernels": None}
    return {"syncs": count_syncs(call), "kernels": count_kernels(call)["kernels"]}


def sample_rows(graph: CSCGraph, args, device) -> list[dict]:
    fanouts = args.fanouts
    slot_of_eid = None
    if graph.eid is not None:
        slot_of_eid = torch.empty_like(graph.eid)
        slot_of_eid[graph.eid] = torch.arange(graph.num_edges, device=device)
    samplers = {
        "fastgl": NeighborSampler(graph, fanouts),
        "torch": TorchNeighborSampler(graph, fanouts, draw="floyd"),
        "torch-sortkeys": TorchNeighborSampler(graph, fanouts, draw="sortkeys"),
    }
    chosen = args.methods
    if chosen is None:
        chosen = [
            m
            for m in METHODS
            if not (m == "torch-sortkeys" and graph.num_edges > _LARGE_GRAPH_EDGES)
        ]
    methods = [m for m in METHODS if m in chosen]

    def seeds_for(count):
        # Without repetition; with it only when the graph has fewer nodes than seeds (tiny).
        gen = torch.Generator().manual_seed(args.seed + count)
        if count > graph.num_nodes:
            return torch.randint(graph.num_nodes, (count,), generator=gen).to(device)
        return torch.randperm(graph.num_nodes, generator=gen)[:count].to(device)

    def case(method, batch, seed_batches, run):
        """A checked case: its first sample is validated before anything is timed."""
        generator = torch.Generator(device=device).manual_seed(args.seed)
        for seeds, sub in zip(seed_batches, run(generator)):
            check_sample(graph, sub, seeds, fanouts, slot_of_eid, method)
        return {
            "method": method,
            "batch": batch,
            "num_batches": len(seed_batches),
            "batch_size": seed_batches[0].numel(),
            "run": run,
            "generator": generator,
            **device_costs(device, lambda: run(generator)),
        }

    batch_sizes = list(args.batch_sizes)
    if "fastgl-batched" in methods and args.batched_size not in batch_sizes:
        batch_sizes.append(args.batched_size)  # the batched rows' reference
    rows = []
    for size in batch_sizes:
        seeds = seeds_for(size)
        cases = [
            case(
                method,
                str(size),
                [seeds],
                lambda gen, s=samplers[method], x=seeds: [s.sample(x, gen)],
            )
            for method in methods
            if method != "fastgl-batched"
        ]
        if "fastgl-batched" in methods and size == args.batched_size:
            # Measured in the same rounds as their reference, torch at this batch size.
            for count in args.num_batches:
                batches = list(seeds_for(count * size).view(count, size))
                cases.append(
                    case(
                        "fastgl-batched",
                        f"{count}x{size}",
                        batches,
                        lambda gen, b=batches: samplers["fastgl"].sample_batches(b, gen),
                    )
                )
        print(f"batch {size}: {len(cases)} cases, {args.repeat} interleaved rounds", flush=True)
        rows.extend(_measure_interleaved(cases, args, device))

    reference = {r["batch_size"]: r for r in rows if r["method"] == "torch"}
    for row in rows:
        ref = reference.get(row["batch_size"])
        row["vs_torch"] = row["edges_per_s"] / ref["edges_per_s"] if ref else None
        row["vs_torch_best"] = row["best_edges_per_s"] / ref["best_edges_per_s"] if ref else None
    order = {m: i for i, m in enumerate(METHODS)}
    rows.sort(
        key=lambda r: (
            r["method"] == "fastgl-batched",
            batch_sizes.index(r["batch_size"]),
            order[r["method"]],
            r["num_batches"],
        )
    )
    return rows


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("sampling", __doc__)
    harness.add_preset_argument(
        parser, "small", "R-MAT graph size (products: ~1.5 min in all on 2 cores, 8.2 GB RAM)"
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1024, 8000])
    parser.add_argument(
        "--fanouts",
        type=int,
        nargs="+",
        default=[15, 10, 5],
        help="neighbors per node, hop 1 (seeds) first",
    )
    parser.add_argument(
        "--num-batches",
        type=int,
        nargs="+",
        default=[1, 8, 32],
        help="batch counts B for sample_batches",
    )
    parser.add_argument(
        "--batched-size", type=int, default=1024, help="seeds per batch for sample_batches"
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=None,
        help="default: all, except torch-sortkeys on graphs over 20M edges "
        "(it sorts the frontier's whole adjacency: ~10 s a call on products)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per measurement")
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed calls right before every timed call"
    )
    harness.add_threads_argument(parser)
    harness.add_seed_and_out_arguments(
        parser, "graph, seeds and sampling seed", "sampling-<device>-<preset>[-<threads>t].json"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    device, note, env = harness.start_run("sampling", args)

    graph, info, csc_rows = build_graph(args, device)
    print(
        f"graph: {info['num_nodes']:,} nodes, {info['num_edges']:,} edges, max in-degree "
        f"{info['max_in_degree']:,}; generated in {info['generate_s']:.1f} s"
    )
    rows = sample_rows(graph, args, device)

    harness.print_table(
        [dict(r, edges_per_s=r["edges_per_s"] / 1e6) for r in csc_rows],
        [
            ("method", "CSC conversion", ""),
            ("median_s", "seconds", ".3f"),
            ("edges_per_s", "M edges/s", ".1f"),
            ("vs_torch", "vs torch", ".2f"),
        ],
        title=f"CSC conversion ({info['num_edges']:,} edges)",
    )
    harness.print_table(
        [
            dict(
                r,
                edges_per_s=r["edges_per_s"] / 1e6,
                best_edges_per_s=r["best_edges_per_s"] / 1e6,
                median_ms=r["median_s"] * 1e3,
            )
            for r in rows
        ],
        [
            ("method", "method", ""),
            ("batch", "batch", ""),
            ("edges_per_call", "edges/call", ",.0f"),
            ("median_ms", "median ms", ".1f"),
            ("edges_per_s", "M edges/s", ".2f"),
            ("vs_torch", "vs torch", ".2f"),
            ("best_edges_per_s", "best M edges/s", ".2f"),
            ("vs_torch_best", "best vs torch", ".2f"),
            *(DEVICE_COST_COLUMNS if device.type == "cuda" else []),
        ],
        title=f"Neighbor sampling, fanouts {args.fanouts}, without replacement "
        f"({args.repeat} interleaved rounds; median and fastest call)",
    )

    payload = {
        "benchmark": "sampling",
        "environment": env,
        "note": note,
        "args": vars(args),
        "graph": info,
        "csc_conversion": csc_rows,
        "sampling": rows,
    }
    harness.save_results("sampling", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
