"""Host synchronizations per call of fastgl's CUDA ops, against the PyTorch code they replace.

Question: how often does each op make the CPU wait for the GPU, and how many kernels does it
launch? Every wait stalls the launch queue, and a sampler that waits once per hop cannot overlap
its hops with training; every launch costs microseconds of fixed overhead.

Usage::

    python -m benchmarks.syncs --device cuda                  # R-MAT small on the GPU

Method: each op runs once untimed, then once under ``torch.cuda.set_sync_debug_mode("warn")``,
and its "called a synchronizing CUDA operation" warnings are counted: those that reach Python's
``warnings`` and those PyTorch's C++ handler prints to stderr directly (stderr goes to a file
for that call). That catches the waits made through PyTorch (``Tensor.item``, copies to the
host, ``nonzero``, ``torch.unique``, stream synchronization), which is how every fastgl op reads
a size or an error flag back; a raw ``cudaMemcpy`` in a launcher would not be counted (fastgl
has none). Kernel launches are the device events of a ``torch.profiler`` trace of a third call,
copies and memsets counted apart (``benchmarks/device_counts.py``).
Baselines in the same run: the vectorized PyTorch sampler of ``benchmarks.sampling``, the
``torch.unique`` relabel of ``benchmarks.id_map``, ``torch.sparse.mm``, and for heterogeneous
(the graph split in two node types) and temporal sampling the samplers' own hops composed of
``sample_ranges`` and ``id_map``. On the CPU there is
nothing to count; the benchmark says so and exits. The JSON goes to
``benchmarks/results/syncs-<device tag>-<preset>.json`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace

import torch

from benchmarks import harness
from benchmarks.aggregate import Structure
from benchmarks.device_counts import count_kernels, count_syncs
from benchmarks.id_map import torch_ordered_relabel
from benchmarks.sampling import TorchNeighborSampler
from fastgl import HeteroCSCGraph, NeighborSampler, TemporalNeighborSampler
from fastgl.data.rmat import rmat_graph
from fastgl.nn.functional import aggregate, es_spmm
from fastgl.ops import id_map, random_walk
from fastgl.sampling import HeteroNeighborSampler
from fastgl.sampling.temporal import _sample_temporal


def cases(graph, args) -> list[tuple[str, str, int, Callable[[], object]]]:
    """``(op, implementation, hops, call)``: hops > 0 for samplers (syncs per hop are reported)."""
    device = graph.indptr.device
    generator = torch.Generator().manual_seed(args.seed)
    seeds = torch.randperm(graph.num_nodes, generator=generator)[: args.batch_size].to(device)
    hops = len(args.fanouts)
    fastgl_sampler = NeighborSampler(graph, args.fanouts)
    torch_sampler = TorchNeighborSampler(graph, args.fanouts)
    batches = list(seeds.chunk(8))
    sub = fastgl_sampler.sample(seeds)
    block = sub.blocks[0]
    x = torch.randn(block.num_src_nodes, args.dim, device=device, requires_grad=True)
    prefix, ids = seeds, sub.nodes[seeds.numel() :].repeat(2)

    # A sampled block serves one training step: each call gets a fresh copy, so the checks and
    # structures a block caches are counted as a training step pays for them.
    def fresh_block():
        return replace(block)

    def forward_backward():
        aggregate(fresh_block(), x).sum().backward()

    # A training step's first layer on its own new sample: the block's offsets and sources come
    # from the sampler already checked, so the forward pass should add no synchronization.
    features = torch.randn(graph.num_nodes, args.dim, device=device)

    def sample_then_forward():
        first = fastgl_sampler.sample(seeds).blocks[0]
        return aggregate(first, features.index_select(0, first.src_nodes))

    csr = Structure(
        "block", block, block.src, block.dst, block.num_src_nodes, block.num_dst_nodes, {}
    )
    sparse = torch.sparse_csr_tensor(
        csr.indptr,
        csr.indices,
        torch.ones(block.num_edges, device=device),
        (block.num_dst_nodes, block.num_src_nodes),
    )
    return [
        (
            "neighbor sampling",
            "fastgl NeighborSampler.sample",
            hops,
            lambda: fastgl_sampler.sample(seeds),
        ),
        (
            "neighbor sampling",
            "PyTorch sampler (benchmarks.sampling)",
            hops,
            lambda: torch_sampler.sample(seeds),
        ),
        (
            "neighbor sampling, 8 batches",
            "fastgl NeighborSampler.sample_batches",
            hops,
            lambda: fastgl_sampler.sample_batches(batches),
        ),
        ("relabel", "fastgl id_map (Fused-Map)", 0, lambda: id_map(prefix, ids)),
        ("relabel", "torch.unique ordered relabel", 0, lambda: torch_ordered_relabel(prefix, ids)),
        (
            "aggregation forward",
            "fastgl aggregate",
            0,
            lambda: aggregate(fresh_block(), x.detach()),
        ),
        ("aggregation forward", "torch.sparse.mm", 0, lambda: torch.sparse.mm(sparse, x.detach())),
        ("aggregation forward+backward", "fastgl aggregate", 0, forward_backward),
        (
            "sampling + aggregation forward",
            "fastgl NeighborSampler.sample, aggregate",
            0,
            sample_then_forward,
        ),
        ("ES-SpMM", "fastgl es_spmm width 16", 0, lambda: es_spmm(fresh_block(), x.detach(), 16)),
        *(
            (
                f"{walk}, length 80",
                f"fastgl random_walk, {schedule} schedule",
                0,
                lambda params=params, schedule=schedule: random_walk(
                    graph, seeds, 80, schedule=schedule, **params
                ),
            )
            for walk, params in (("DeepWalk", {}), ("node2vec p=2 q=0.5", dict(p=2.0, q=0.5)))
            for schedule in ("sample", "transit")
        ),
    ]


def two_type_graph(graph) -> HeteroCSCGraph:
    """The graph as a heterogeneous one: its first half of node ids of type "a", the rest of
    type "b", and one relation per (source type, destination type)."""
    half = graph.num_nodes // 2
    dst = torch.repeat_interleave(
        torch.arange(graph.num_nodes, device=graph.indptr.device), graph.indptr.diff()
    )
    src = graph.indices.to(torch.int64)
    edges = {}
    for src_type, src_b in (("a", False), ("b", True)):
        for dst_type, dst_b in (("a", False), ("b", True)):
            keep = ((src >= half) == src_b) & ((dst >= half) == dst_b)
            shift = [[half if src_b else 0], [half if dst_b else 0]]
            shift = torch.tensor(shift, device=src.device)
            edges[(src_type, "to", dst_type)] = torch.stack([src[keep], dst[keep]]) - shift
    return HeteroCSCGraph.from_edge_index_dict(edges, {"a": half, "b": graph.num_nodes - half})


def engine_cases(graph, args) -> list[tuple[str, str, int, Callable[[], object]]]:
    """Heterogeneous sampling of the graph split in two node types (four relations), and
    temporal sampling of the graph: the device engine (one ``_hetero_sample_hops``) against the
    same samplers' hops composed of ``sample_ranges`` and ``id_map`` (their reference, and the
    GPU path before the engine)."""
    hetero = two_type_graph(graph)
    sampler = HeteroNeighborSampler(hetero, args.fanouts)
    generator = torch.Generator().manual_seed(args.seed)
    half = hetero.num_nodes["a"]
    seeds = {
        "a": torch.randperm(half, generator=generator)[: args.batch_size // 2],
        "b": torch.randperm(hetero.num_nodes["b"], generator=generator)[: args.batch_size // 2],
    }
    seeds = {t: s.to(graph.indptr.device) for t, s in seeds.items()}
    hops = len(args.fanouts)
    # Temporal sampling of the homogeneous graph, node times at random, every seed at the middle.
    node_time = torch.randint(0, 1000, (graph.num_nodes,), generator=generator)
    temporal = TemporalNeighborSampler(graph, args.fanouts, node_time=node_time.to(graph.device))
    temporal_seeds = torch.randperm(graph.num_nodes, generator=generator)[: args.batch_size]
    temporal_seeds = temporal_seeds.to(graph.device)
    seed_time = torch.full_like(temporal_seeds, 500)
    engines = (("device engine", True), ("hops composed", False))
    return [
        *(
            (
                "heterogeneous sampling, 2 types",
                f"fastgl HeteroNeighborSampler, {name}",
                hops,
                lambda engine=engine: sampler._sample(seeds, args.seed, engine=engine),
            )
            for name, engine in engines
        ),
        *(
            (
                "temporal sampling (node times)",
                f"fastgl TemporalNeighborSampler, {name}",
                hops,
                lambda engine=engine: _sample_temporal(
                    temporal, temporal_seeds, seed_time, args.seed, engine=engine
                ),
            )
            for name, engine in engines
        ),
    ]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("syncs", __doc__)
    harness.add_preset_argument(parser, "small", "R-MAT graph")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    parser.add_argument("--fanouts", type=int, nargs="+", default=[15, 10, 5])
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=64, help="feature size of the aggregations")
    harness.add_seed_and_out_arguments(
        parser, "graph and seeds seed", "syncs-<device>-<preset>.json"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict | None:
    args = parse_args(argv)
    device, note, env = harness.start_run("syncs", args)
    if device.type != "cuda":
        print("nothing to count without a GPU")
        return None
    graph = rmat_graph(args.preset, seed=args.seed).to(device)
    rows = []
    for op, implementation, hops, call in cases(graph, args) + engine_cases(graph, args):
        syncs, launches = count_syncs(call), count_kernels(call)
        rows.append(
            {
                "op": op,
                "implementation": implementation,
                "syncs": syncs,
                "syncs_per_hop": syncs / hops if hops else None,
                "kernels": launches["kernels"],
                "kernels_per_hop": launches["kernels"] / hops if hops else None,
                "copies": launches["copies"],
            }
        )
    harness.print_table(
        rows,
        [
            ("op", "op", ""),
            ("implementation", "implementation", ""),
            ("syncs", "syncs per call", ""),
            ("syncs_per_hop", "per hop", ".2f"),
            ("kernels", "kernels per call", ""),
            ("kernels_per_hop", "per hop", ".1f"),
            ("copies", "copies/memsets", ""),
        ],
        title="host synchronizations (through PyTorch) and device work per call",
    )
    payload = {
        "benchmark": "syncs",
        "environment": env,
        "note": note,
        "arguments": vars(args),
        "rows": rows,
    }
    harness.save_results("syncs", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
