"""What a sampler returns: a PyG-layout sampled subgraph, and its DGL-style blocks
(:class:`fastgl.Block`)."""

from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from fastgl.graph import Block, sorted_target_offsets


@dataclass(frozen=True)
class SampledSubgraph:
    """A multi-hop neighbor sample, laid out like a PyG ``NeighborLoader`` batch. Frozen: its
    blocks are built once from these fields, on first access.

    Attributes:
        nodes: global ids; the (deduplicated) seeds first in the given order, then the nodes new
            at hop 1, hop 2, ... each in first-occurrence order.
        row: local index of each sampled neighbor (the message source).
        col: local index of the node it was sampled for (the target).
        eid: global edge id of each sampled edge (its column in the original ``edge_index``).
        num_sampled_nodes: ``L+1`` counts: seeds, then nodes new at each hop.
        num_sampled_edges: ``L`` counts: edges sampled at each hop (edges are grouped by hop).
        seed_index: local index of every given seed (duplicates map to their first occurrence).
        in_degrees: in-degree of every node of ``nodes`` in the whole graph sampled from (not
            in the sample), or ``None``.
        batch: for disjoint sampling, the seed (position in the batch) each node belongs to;
            ``None`` otherwise.
        indptr: ``[len(nodes) + 1]`` CSC offsets of ``col`` (node ``v``'s sampled in-edges at
            ``indptr[v] .. indptr[v+1]``) when the sampler gives them, or ``None``: the blocks
            then derive them from ``col`` when it is grouped by target in node order. A
            subgraph whose edges are replaced (``dataclasses.replace(sub, row=..., col=...)``)
            must drop it (``indptr=None``) or give the new one.
    """

    nodes: Tensor
    row: Tensor
    col: Tensor
    eid: Tensor
    num_sampled_nodes: list[int]
    num_sampled_edges: list[int]
    seed_index: Tensor
    in_degrees: Tensor | None = None
    batch: Tensor | None = None
    indptr: Tensor | None = None

    @property
    def batch_size(self) -> int:
        """Number of distinct seeds (the first rows of any output)."""
        return self.num_sampled_nodes[0]

    @property
    def edge_index(self) -> Tensor:
        """``[2, E]`` local edges, PyG orientation (row 0 = source)."""
        return torch.stack([self.row, self.col])

    @cached_property
    def blocks(self) -> list[Block]:
        """The message-flow graphs for an ``L``-layer GNN, input layer first (DGL order), built
        on first access (an attribute, as on a loader batch).

        Block ``i`` carries the edges sampled at hops ``1 .. L-i``: its destinations are the nodes
        of hops ``0 .. L-i-1`` and its sources add the nodes of hop ``L-i``. Every node therefore
        aggregates the same sampled neighbors in every layer, and the last block's destinations
        are the seeds.
        """
        num_layers = len(self.num_sampled_edges)
        node_ends = torch.tensor(self.num_sampled_nodes).cumsum(0).tolist()
        edge_ends = torch.tensor([0] + self.num_sampled_edges).cumsum(0).tolist()
        indptr = self._target_offsets(node_ends, edge_ends)
        blocks = []
        for layer in range(num_layers):
            hops = num_layers - layer  # edges of hops 1..hops
            num_edges, num_src = edge_ends[hops], node_ends[hops]
            blocks.append(
                Block(
                    src=self.row[:num_edges],
                    dst=self.col[:num_edges],
                    eid=self.eid[:num_edges],
                    src_nodes=self.nodes[:num_src],
                    num_src_nodes=num_src,
                    num_dst_nodes=node_ends[hops - 1],
                    src_in_degrees=None if self.in_degrees is None else self.in_degrees[:num_src],
                    indptr=None if indptr is None else indptr[: node_ends[hops - 1] + 1],
                )
            )
        return blocks

    def _target_offsets(self, node_ends: list[int], edge_ends: list[int]) -> Tensor | None:
        """CSC offsets of every node's sampled in-edges when the edges are grouped by target in
        node order and each hop's edges target the nodes of the hop before (a sampler's are:
        transits draw in turn), else ``None``. Every block's destinations are then a prefix of
        the nodes and its edges a prefix of the edges, so one array serves all blocks, and the
        blocks need not each rebuild it for aggregation. The sampler's own offsets, when it
        gives them, are used as they are: reading them back to check them would cost a
        synchronization on a GPU."""
        if self.indptr is not None:
            return self.indptr
        indptr = sorted_target_offsets(self.col, self.nodes.numel())
        if indptr is None or indptr[node_ends[:-1]].tolist() != edge_ends[1:]:
            return None
        return indptr
