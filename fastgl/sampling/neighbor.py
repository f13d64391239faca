"""Multi-hop neighbor sampling on a CSCGraph, one mini-batch or many at once."""

import operator
import re
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from fastgl.graph import CSCGraph
from fastgl.ops import sample_hops
from fastgl.ops._random import draw_key

from .subgraph import SampledSubgraph


class NeighborSampler:
    """Samples ``fanouts[h]`` in-neighbors per node at hop ``h+1`` (hop 1 first, like PyG).

    Args:
        graph: the graph; sampling runs on its device.
        fanouts: neighbors per node at each hop, seeds outward (PyG's order; the DGL drop-in's
            sampler takes DGL's, input layer first); ``-1`` takes all neighbors, ``0`` none (the
            hop's block has no edges).
        replace: sample with replacement (``False``: truly without).
        weighted: draw proportionally to ``graph.weight``.
        disjoint: every seed grows its own tree (PyG's ``disjoint=True``): nodes are shared by
            no two seeds, a node reached from two seeds appears twice, and the result's
            ``batch`` says which seed each node belongs to.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sampler = NeighborSampler(graph, [2, 1])
        >>> sub = sampler.sample(torch.tensor([1, 2]), generator=torch.Generator().manual_seed(0))
        >>> sub.nodes, sub.num_sampled_nodes
        (tensor([1, 2, 0, 3]), [2, 2, 0])
        >>> blocks = sub.blocks            # input layer first
        >>> [(b.num_src_nodes, b.num_dst_nodes) for b in blocks]
        [(4, 4), (4, 2)]
        >>> batch_a, batch_b = torch.tensor([0, 3]), torch.tensor([1])
        >>> subs = sampler.sample_batches([batch_a, batch_b])   # one compiled call for both
        >>> [s.batch_size for s in subs]
        [2, 1]
    """

    def __init__(
        self,
        graph: CSCGraph,
        fanouts: Sequence[int],
        replace: bool = False,
        weighted: bool = False,
        disjoint: bool = False,
    ) -> None:
        fanouts = checked_fanouts("neighbor_sample", fanouts)
        if weighted and graph.weight is None:
            raise ValueError("neighbor_sample: weighted=True needs a graph with edge weights")
        self.graph = graph
        self.fanouts = fanouts
        self.replace = replace
        self.weighted = weighted
        self.disjoint = disjoint

    def sample(self, seeds: Tensor, generator: torch.Generator | None = None) -> SampledSubgraph:
        """Samples one mini-batch around ``seeds`` (1-D int tensor of node ids)."""
        return self.sample_batches([seeds], generator)[0]

    def sample_batches(
        self,
        seed_batches: Sequence[Tensor],
        generator: torch.Generator | None = None,
    ) -> list[SampledSubgraph]:
        """Samples one subgraph per seed tensor, all batches in one compiled call.

        Nodes are deduplicated within each batch, never across batches; each result has the
        layout and distribution of :meth:`sample` on that batch. The first batch draws exactly
        what :meth:`sample` draws with the same generator state; the others draw from random
        streams of their own. One compiled call samples the whole window (on the GPU, each hop
        of all batches in one pass).
        """
        seed_batches = [self._check_seeds(s) for s in seed_batches]
        if not seed_batches:
            return []
        key = draw_key(generator, self.graph.device)
        return _sample_batches(self, seed_batches, key)

    def _check_seeds(self, seeds: Tensor) -> Tensor:
        if self.graph.device.type == "cuda":
            # The op checks each seed as its kernel inserts it: no read-back here.
            check_id_tensor("neighbor_sample", "seeds", seeds, self.graph.device)
            return seeds.to(torch.int64)
        return checked_seeds("neighbor_sample", self.graph, seeds)


def neighbor_sample(
    graph: CSCGraph,
    seeds: Tensor,
    fanouts: Sequence[int],
    replace: bool = False,
    weighted: bool = False,
    generator: torch.Generator | None = None,
    disjoint: bool = False,
) -> SampledSubgraph:
    """Samples a multi-hop neighborhood of ``seeds``; see :class:`NeighborSampler`.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> sub = fastgl.sampling.neighbor_sample(graph, torch.tensor([3, 1]), [10, 5])
        >>> sub.nodes[:2], sub.num_sampled_nodes, sub.blocks[0].num_src_nodes
        (tensor([3, 1]), [2, 2, 0], 4)
    """
    return NeighborSampler(graph, fanouts, replace, weighted, disjoint).sample(seeds, generator)


def checked_fanouts(
    where: str, fanouts: Sequence[int], name: str = "fanouts", minimum: int = 0
) -> list[int]:
    """``fanouts`` as a list of ints, one per hop, each ``-1`` (all neighbors) or ``>= minimum``
    (``0``: the hop draws nothing); ``[]`` samples no hop (the sample is the distinct seeds).
    ``name`` is the argument's name in errors.

    Raises a ``TypeError`` for anything but a list, tuple or other iterable of integers (a bare
    int, floats such as ``2.5``, bools) and a ``ValueError`` for a value below ``-1`` or between
    ``-1`` and ``minimum``.
    """
    if isinstance(fanouts, (str, bytes)) or not isinstance(fanouts, Iterable):
        raise TypeError(
            f"{where}: {name} must be a list of ints, one per hop (e.g. [15, 10]), "
            f"got {type(fanouts).__name__}"
        )
    checked = []
    for f in fanouts:
        if isinstance(f, bool) or not hasattr(f, "__index__"):
            raise TypeError(f"{where}: {name} must be ints, got {f!r}")
        value = operator.index(f)
        if value < -1 or -1 < value < minimum:
            raise ValueError(f"{where}: {name} must be -1 (all) or >= {minimum}, got {value}")
        checked.append(value)
    return checked


def checked_seeds(where: str, graph: CSCGraph, seeds: Tensor) -> Tensor:
    """``seeds`` as int64, after checking that they are a 1-D int32/int64 tensor of node ids of
    ``graph``, on its device (a ``TypeError`` or ``ValueError`` starting with ``where``)."""
    check_id_tensor(where, "seeds", seeds, graph.device)
    if seeds.numel():
        low, high = torch.stack(torch.aminmax(seeds)).tolist()  # one pass, one read-back
        if low < 0 or high >= graph.num_nodes:
            bad = low if low < 0 else high
            raise ValueError(
                f"{where}: seed id {bad} out of range for a graph of {graph.num_nodes} nodes"
            )
    return seeds.to(torch.int64)


_SEED_FAULT = re.compile(r"^sample_hops: seeds id (-?\d+) ")


def raise_seed_fault(error: RuntimeError, num_nodes: int) -> None:
    """On CUDA the op checks the seeds as its kernel inserts them (a read-back up front would
    cost a synchronization); its error about a seed is raised as the ``ValueError`` that
    :func:`checked_seeds` raises on the CPU, so both devices fail alike. Other errors pass."""
    match = _SEED_FAULT.match(str(error))
    if match:
        raise ValueError(
            f"neighbor_sample: seed id {match.group(1)} out of range for a graph of "
            f"{num_nodes} nodes"
        ) from None


def check_id_tensor(where: str, what: str, ids: Tensor, device: torch.device) -> None:
    """``ids`` (named ``what`` in errors) is a 1-D int32/int64 tensor on ``device``, the graph's;
    its values are the caller's to check."""
    if not isinstance(ids, Tensor):
        raise TypeError(f"{where}: {what} must be a tensor, got {type(ids).__name__}")
    if ids.dim() != 1 or ids.dtype not in (torch.int32, torch.int64):
        raise ValueError(
            f"{where}: {what} must be a 1-D int32/int64 tensor, got {ids.dtype} of shape "
            f"{tuple(ids.shape)}"
        )
    if ids.device != device:
        raise ValueError(
            f"{where}: {what} must be on the graph's device {device}, got {ids.device} (move "
            "with .to(graph.device))"
        )


# csrc/sampling/sample_hops.h's kHopKeyStep: the golden-ratio increment of splitmix64.
_HOP_KEY_STEP = 0x9E3779B97F4A7C15


def hop_key(key: int, hop: int) -> int:
    """Hop ``hop``'s Philox key (hops count from 0), derived from a call's :func:`draw_key` as
    ``fastgl::sample_hops`` derives its per-hop keys (``hop_key`` in
    csrc/sampling/sample_hops.h), as the signed int64 the op schemas take. Samplers that draw a
    hop at a time with ``sample_ranges`` use it, so their hops draw what ``sample_hops``'s draw.

    Example:
        >>> hop_key(0, 0) == 0x9E3779B97F4A7C15 - (1 << 64)   # wrapped into int64
        True
        >>> hop_key(5, 1)
        4354685564936845359
    """
    derived = (key + (hop + 1) * _HOP_KEY_STEP) & ((1 << 64) - 1)
    return derived - (1 << 64) if derived >= 1 << 63 else derived


def tree_keys(where: str, seeds: Tensor, key_base: int) -> Tensor:
    """Disjoint sampling's node keys for ``seeds`` (int64 ids below ``key_base``): seed ``i``
    grows tree ``i``, and a node ``v`` of that tree has the key ``i * key_base + v``, the layout
    of ``fastgl::sample_hops`` (so one ``id_map`` over keys keeps trees apart). A
    ``ValueError`` starting with ``where`` when the keys would overflow int64.

    Example:
        >>> keys = tree_keys("example", torch.tensor([3, 3, 1]), 10)
        >>> keys
        tensor([ 3, 13, 21])
        >>> split_tree_keys(keys, 10)
        (tensor([0, 1, 2]), tensor([3, 3, 1]))
    """
    if seeds.numel() * key_base > 1 << 63:
        raise ValueError(
            f"{where}: {seeds.numel()} seeds with {key_base} nodes each overflow the int64 node "
            "keys tree * num_nodes + node of disjoint sampling; sample fewer seeds at a time"
        )
    return torch.arange(seeds.numel(), device=seeds.device) * key_base + seeds


def split_tree_keys(keys: Tensor, key_base: int) -> tuple[Tensor, Tensor]:
    """``(tree, node)`` of every key of :func:`tree_keys`."""
    tree = torch.div(keys, key_base, rounding_mode="floor")
    return tree, keys - tree * key_base


def _sample_batches(
    sampler: NeighborSampler,
    seed_batches: list[Tensor],
    key: int,
) -> list[SampledSubgraph]:
    """One compiled call samples every hop of every batch (fastgl::sample_hops), then the flat
    outputs are cut into one subgraph per batch."""
    graph = sampler.graph
    sizes = [s.numel() for s in seed_batches]
    seed_ptr = torch.tensor([0] + sizes).cumsum(0)  # on the host: the op reads it there
    try:
        out = sample_hops(
            graph.indptr,
            graph.indices,
            graph.weight if sampler.weighted else None,
            graph.eid,
            torch.cat(seed_batches),
            seed_ptr,
            sampler.fanouts,
            replace=sampler.replace,
            disjoint=sampler.disjoint,
            seed=key,
        )
    except RuntimeError as error:
        raise_seed_fault(error, graph.num_nodes)
        raise
    node_counts, edge_counts = out.node_counts.tolist(), out.edge_counts.tolist()
    node_sizes, edge_sizes = [sum(c) for c in node_counts], [sum(c) for c in edge_counts]
    per_node = [t.split(node_sizes) for t in (out.nodes, out.in_degrees)]
    per_edge = [t.split(edge_sizes) for t in (out.row, out.col, out.edge_ids)]
    per_seed = out.seed_local.split(sizes)
    per_tree = out.tree.split(node_sizes) if sampler.disjoint else [None] * len(sizes)
    per_ptr = out.col_ptr.split([n + 1 for n in node_sizes])
    return [
        SampledSubgraph(
            nodes=per_node[0][b],
            row=per_edge[0][b],
            col=per_edge[1][b],
            eid=per_edge[2][b],
            num_sampled_nodes=node_counts[b],
            num_sampled_edges=edge_counts[b],
            seed_index=per_seed[b],
            in_degrees=per_node[1][b],
            batch=per_tree[b],
            indptr=per_ptr[b],
        )
        for b in range(len(sizes))
    ]
