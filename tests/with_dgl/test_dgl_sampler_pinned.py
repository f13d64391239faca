"""Pinned blocks of the DGL drop-in for a fixed ``torch.manual_seed``.

The digests were recorded before sampling moved to one fused compiled pass per layer; they show
that the drop-in still draws the same neighbors in the same block layout.
"""

import hashlib

import pytest
import torch

dgl = pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from fastgl.integrations.dgl import NeighborSampler  # noqa: E402

NUM_NODES = 2000


def pinned_graph(idtype):
    """A skewed graph from integer arithmetic alone (no RNG stream that could change)."""
    i = torch.arange(30_000, dtype=torch.int64)
    mix = (i * 2654435761) % (1 << 32)
    dst = (mix * mix % (1 << 32)) * NUM_NODES // (1 << 32) * (mix % 89) // 89
    src = (i * 40503 + 11) % NUM_NODES
    g = dgl.graph((src, dst), num_nodes=NUM_NODES, idtype=idtype)
    g.edata["p"] = ((i * 7919) % 11).to(torch.float32)  # zeros included
    return g


def block_digest(input_nodes, blocks) -> str:
    h = hashlib.sha256(input_nodes.to(torch.int64).numpy().tobytes())
    for block in blocks:
        src, dst = block.edges()
        for t in (block.srcdata[dgl.NID], block.dstdata[dgl.NID], src, dst, block.edata[dgl.EID]):
            h.update(t.to(torch.int64).numpy().tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize(
    "idtype,options,expected",
    [
        (torch.int64, dict(fanouts=[5, 10, 15]), "51fb6b0f10c971b6"),
        (torch.int32, dict(fanouts=[3, 8]), "738dad2554c7d1a9"),
        (torch.int64, dict(fanouts=[4, 6], replace=True), "dca60afbff17a89e"),
        (torch.int64, dict(fanouts=[4, 6], prob="p"), "f2f6bf897fac5376"),
        (torch.int64, dict(fanouts=[-1, 2]), "09704c36a8d842d4"),
    ],
)
def test_blocks_are_pinned(idtype, options, expected):
    g = pinned_graph(idtype)
    seeds = ((torch.arange(50) * 41) % NUM_NODES).to(idtype)
    torch.manual_seed(77)
    input_nodes, _, blocks = NeighborSampler(**options).sample(g, seeds)
    assert block_digest(input_nodes, blocks) == expected
