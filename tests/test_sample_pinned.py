"""Pinned samples: the exact output of the samplers for fixed generator seeds.

The digests were recorded before sampling moved to one fused compiled pass per hop, so these
tests show the rewrite draws the same neighbors, in the same layout, as the op-by-op pipeline
it replaced (same Philox streams, same first-occurrence order). A change that alters what a seed
draws must be deliberate: update the digests and say why.
"""

import hashlib

import pytest
import torch

from fastgl import CSCGraph, NeighborSampler

NUM_NODES = 3000


def pinned_graph(weighted: bool = False, int32: bool = False) -> CSCGraph:
    """A skewed graph made by integer arithmetic alone (no RNG whose stream could change):
    targets crowd at low ids, so some nodes have hundreds of in-edges and many have none."""
    i = torch.arange(40_000, dtype=torch.int64)
    mix = (i * 2654435761) % (1 << 32)
    dst = (mix * mix % (1 << 32)) * NUM_NODES // (1 << 32) * (mix % 97) // 97
    src = (i * 40503 + 17) % NUM_NODES
    edge_index = torch.stack([src, dst])
    if int32:
        edge_index = edge_index.to(torch.int32)
    weight = ((i * 7919) % 13).to(torch.float64) if weighted else None  # zeros included
    return CSCGraph.from_edge_index(edge_index, num_nodes=NUM_NODES, edge_weight=weight)


def seeds(count: int = 64, offset: int = 0) -> torch.Tensor:
    return (torch.arange(count) * 37 + offset) % NUM_NODES


def digest(sub) -> str:
    parts = [
        sub.nodes,
        sub.row,
        sub.col,
        sub.eid,
        sub.seed_index,
        sub.in_degrees,
        torch.tensor(sub.num_sampled_nodes),
        torch.tensor(sub.num_sampled_edges),
    ]
    if sub.batch is not None:
        parts.append(sub.batch)
    h = hashlib.sha256()
    for part in parts:
        h.update(part.to(torch.int64).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


CASES = {
    # name: (sampler options, graph options, pinned digest)
    "uniform": (dict(fanouts=[15, 10, 5]), {}, "dd061a5ff302999b"),
    "uniform-replace": (dict(fanouts=[15, 10, 5], replace=True), {}, "703c38f693bfeb11"),
    "weighted": (dict(fanouts=[15, 10], weighted=True), dict(weighted=True), "1f9f6c93ae047dbf"),
    "weighted-replace": (
        dict(fanouts=[15, 10], weighted=True, replace=True),
        dict(weighted=True),
        "a5b34db667ad843b",
    ),
    "all-neighbors": (dict(fanouts=[-1, 3]), {}, "a3e8c01a23d9cc20"),
    "int32": (dict(fanouts=[10, 5]), dict(int32=True), "bfa58792ac656be9"),
    "disjoint": (dict(fanouts=[5, 3], disjoint=True), {}, "2530732de6cb7bcb"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_is_pinned(name):
    options, graph_options, expected = CASES[name]
    sampler = NeighborSampler(pinned_graph(**graph_options), **options)
    sub = sampler.sample(
        torch.cat([seeds(), seeds(4)]),  # with duplicate seeds
        generator=torch.Generator().manual_seed(1234),
    )
    assert digest(sub) == expected
