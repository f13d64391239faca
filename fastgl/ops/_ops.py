"""Typed wrappers over the compiled ops in ``torch.ops.fastgl``, each with its fake kernel.

A wrapper has its op's name and takes the op's arguments in the schema's order
(``csrc/fastgl.cpp``); the functions follow the schemas' order too. Ops without a wrapper are the
backward ops (halves of a gradient, called by autograd: ``edge_softmax_backward`` below,
``spmm_max_backward_x`` and ``spmm_max_backward_weight`` by :mod:`fastgl.nn.functional`) and the
internal ``_transit_schedule``, ``_sample_hops_staged`` (exposed for tests) and
``_hetero_sample_hops`` (:class:`fastgl.sampling.HeteroNeighborSampler` on a GPU); they stay
reachable as ``torch.ops.fastgl.*``.

These are the building blocks; most users want :func:`fastgl.sampling.neighbor_sample` or the
samplers in :mod:`fastgl.sampling`, and :mod:`fastgl.nn.functional` for message passing.
"""

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import torch
from torch import Tensor

from fastgl import _C  # noqa: F401  (loads the compiled ops)

from ._compat import new_dynamic_size, register_autograd, register_fake
from ._random import draw_key


class OutEdgeGraph(Protocol):
    """What :func:`random_walk` reads of a graph: its out-edge view (``indptr``, ``indices``,
    ``eid``, ``weight``), as :meth:`fastgl.CSCGraph.out_csr` returns it. A protocol, not the
    class: the ops sit below :mod:`fastgl.graph`."""

    def out_csr(self) -> Any: ...


class InEdgeGraph(Protocol):
    """What :func:`frontier_sample` and :func:`induced_subgraphs` read of a graph: its CSC of
    in-edges (and its edge ids, ``None`` when slot ``k`` is edge ``k``), as
    :class:`fastgl.CSCGraph` holds them."""

    indptr: Tensor
    indices: Tensor
    eid: Tensor | None


def csc_from_coo(src: Tensor, dst: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """Counting-sort an edge list by target into CSC.

    Args:
        src, dst: ``[E]`` int32/int64 source and target of each edge.
        num_nodes: number of nodes ``N``; every id must be below it.

    Returns:
        ``(indptr [N+1] int64, indices [E] (dtype of src), perm [E] int64)`` where ``perm[k]`` is
        the input position of CSC slot ``k``; a node's in-edges keep their input order.
    """
    return torch.ops.fastgl.csc_from_coo(src, dst, num_nodes)


@register_fake("fastgl::csc_from_coo")
def _csc_from_coo_fake(src, dst, num_nodes):
    return (
        src.new_empty(num_nodes + 1, dtype=torch.int64),
        torch.empty_like(src),
        src.new_empty(src.shape[0], dtype=torch.int64),
    )


def sample_neighbors(
    indptr: Tensor,
    indices: Tensor,
    weight: Tensor | None,
    transits: Tensor,
    fanout: int,
    replace: bool = False,
    seed: int = 0,
) -> tuple[Tensor, Tensor, Tensor]:
    """One hop of sampling: pair ``p`` draws up to ``fanout`` in-edges of ``transits[p]``.

    Every draw is a pure function of ``(seed, p, draw index)``, so CPU and CUDA return the same
    sample for the same ``seed``. ``fanout=-1`` takes all edges; with a ``weight`` (``None``:
    uniform) the draws are proportional to it and zero-weight edges are never drawn.

    Returns:
        ``(ptr [P+1], neighbors [S], edge_pos [S])`` int64: pair ``p`` owns ``ptr[p]:ptr[p+1]``;
        ``edge_pos`` is the CSC slot of each drawn edge (``indices[edge_pos] == neighbors``).

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> g = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> seeds = torch.tensor([1, 2])
        >>> ptr, nbr, pos = sample_neighbors(g.indptr, g.indices, None, seeds, 2, seed=1)
        >>> ptr, nbr, pos
        (tensor([0, 2, 3]), tensor([0, 3, 1]), tensor([1, 3, 4]))
    """
    return torch.ops.fastgl.sample_neighbors(
        indptr, indices, weight, transits, fanout, replace, seed
    )


@register_fake("fastgl::sample_neighbors")
def _sample_neighbors_fake(indptr, indices, weight, transits, fanout, replace, seed):
    total = new_dynamic_size()
    return (
        transits.new_empty(transits.shape[0] + 1),
        transits.new_empty(total),
        transits.new_empty(total),
    )


def sample_ranges(
    starts: Tensor,
    ends: Tensor,
    weight: Tensor | None,
    fanouts: Tensor,
    replace: bool = False,
    seed: int = 0,
) -> tuple[Tensor, Tensor]:
    """Draws from explicit slot ranges: pair ``p`` draws from the slots
    ``starts[p] .. ends[p] - 1`` of some edge array (e.g. the part of a CSC row a caller has
    found valid).

    ``fanouts[p] == -1`` takes the whole range, ``0`` nothing, ``k > 0`` draws ``k`` slots:
    ``min(k, size)`` distinct ones without replacement, ``k`` with replacement (none from an
    empty range). With a ``weight`` (one per slot, float32/float64; ``None``: uniform) the draws
    are proportional to ``weight[slot]``, zero-weight slots are never drawn, and every range must
    lie inside ``[0, len(weight)]``. The draws are :func:`sample_neighbors`' (key ``seed``,
    stream ``p``): ranges ``indptr[t] .. indptr[t+1]`` with one fanout give exactly its
    ``edge_pos``, and CPU and CUDA return the same sample.

    Args:
        starts, ends, fanouts: int64 ``[P]`` on one device; ``0 <= starts[p] <= ends[p]``,
            ``fanouts[p] >= -1``.

    Returns:
        ``(ptr [P+1], slots [S])`` int64: pair ``p`` owns ``slots[ptr[p]:ptr[p+1]]``.

    Example:
        >>> starts, ends = torch.tensor([0, 10, 4]), torch.tensor([3, 20, 4])
        >>> ptr, slots = sample_ranges(starts, ends, None, torch.tensor([-1, 2, 5]), seed=1)
        >>> ptr
        tensor([0, 3, 5, 5])
        >>> slots[:3], bool(((slots[3:] >= 10) & (slots[3:] < 20)).all())
        (tensor([0, 1, 2]), True)
    """
    return torch.ops.fastgl.sample_ranges(starts, ends, weight, fanouts, replace, seed)


@register_fake("fastgl::sample_ranges")
def _sample_ranges_fake(starts, ends, weight, fanouts, replace, seed):
    return starts.new_empty(starts.shape[0] + 1), starts.new_empty(new_dynamic_size())


class HopsSample(NamedTuple):
    """What :func:`sample_hops` returns; see there."""

    nodes: Tensor
    node_counts: Tensor
    row: Tensor
    col: Tensor
    edge_ids: Tensor
    edge_counts: Tensor
    seed_local: Tensor
    in_degrees: Tensor
    tree: Tensor
    col_ptr: Tensor


def sample_hops(
    indptr: Tensor,
    indices: Tensor,
    weight: Tensor | None,
    eid: Tensor | None,
    seeds: Tensor,
    seed_ptr: Tensor,
    fanouts: Sequence[int],
    replace: bool = False,
    layerwise: bool = False,
    disjoint: bool = False,
    seed: int = 0,
) -> HopsSample:
    """Every hop of neighbor sampling for a window of batches, each hop one fused compiled pass
    that draws, relabels (FastGL's Fused-Map) and gathers edge ids.

    Batch ``b`` grows from ``seeds[seed_ptr[b]:seed_ptr[b+1]]`` (``seed_ptr`` on the CPU, or on
    the graph's device at the cost of one read-back). Its nodes get local ids: the
    distinct seeds, then the nodes new at each hop, in first-occurrence order. At hop ``h`` each
    node new at hop ``h-1`` (every node so far with ``layerwise=True``, DGL's semantics) draws
    ``fanouts[h]`` in-edges as :func:`sample_neighbors` would (with ``weight``, or uniformly for
    ``None``) with a key derived from ``seed`` for hop ``h``, its draws numbered ``(b << 40) | p``
    for the batch's ``p``-th transit (so batch 0 draws what :func:`sample_neighbors` draws).
    ``disjoint=True`` grows one tree per seed.

    Returns:
        a :class:`HopsSample`, batch-major: ``nodes`` (graph ids), ``node_counts [B, L+1]``
        (on the CPU whatever the device, as ``edge_counts``: a CUDA call reads them back once),
        ``row``/``col`` (local source and target of every drawn edge), ``edge_ids`` (``eid`` of
        each edge's CSC slot, or the slot when ``eid`` is ``None``), ``edge_counts [B, L]``,
        ``seed_local`` (local id of every seed), ``in_degrees`` (of every node in the graph) and
        ``tree`` (disjoint: the seed each node's tree grows from; else empty) and, hop-wise,
        ``col_ptr`` (``n_b + 1`` CSC offsets per batch over its local nodes: a hop's edges
        target the nodes new at the hop before, in order, so ``col`` ascends in each batch and
        the in-edges of batch ``b``'s local node ``v`` are its edges ``col_ptr_b[v]`` to
        ``col_ptr_b[v + 1]``; empty when layer-wise). Hop-wise on a GPU, each block's offsets
        and sources are recorded as valid, so an op over a fresh block reads nothing back to
        check them.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> g = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> seeds = torch.tensor([3, 1, 3])
        >>> window = torch.tensor([0, len(seeds)])
        >>> out = sample_hops(g.indptr, g.indices, None, None, seeds, window, [10, 5])
        >>> out.nodes[: out.node_counts[0, 0]]     # the distinct seeds
        tensor([3, 1])
    """
    return HopsSample(
        *torch.ops.fastgl.sample_hops(
            indptr,
            indices,
            weight,
            eid,
            seeds,
            seed_ptr,
            list(fanouts),
            replace,
            layerwise,
            disjoint,
            seed,
        )
    )


@register_fake("fastgl::sample_hops")
def _sample_hops_fake(
    indptr, indices, weight, eid, seeds, seed_ptr, fanouts, replace, layerwise, disjoint, seed
):
    num_batches, num_hops = seed_ptr.shape[0] - 1, len(fanouts)
    num_nodes, num_edges = new_dynamic_size(), new_dynamic_size()
    nodes = seeds.new_empty(num_nodes, dtype=torch.int64)
    edges = [seeds.new_empty(num_edges, dtype=torch.int64) for _ in range(3)]
    tree = torch.empty_like(nodes) if disjoint else seeds.new_empty(0, dtype=torch.int64)
    col_ptr = seeds.new_empty(0 if layerwise else num_nodes + num_batches, dtype=torch.int64)
    # The counts come back on the host on every device (one read-back sizes the outputs).
    counts = [torch.empty(num_batches, n, dtype=torch.int64) for n in (num_hops + 1, num_hops)]
    return (
        nodes,
        counts[0],
        *edges,
        counts[1],
        seeds.new_empty(seeds.shape[0], dtype=torch.int64),
        torch.empty_like(nodes),
        tree,
        col_ptr,
    )


@register_fake("fastgl::_sample_hops_staged")
def _sample_hops_staged_fake(*args):
    # sample_hops' arguments, then the engine's memory budget: the outputs are sample_hops'.
    return _sample_hops_fake(*args[:-1])


@register_fake("fastgl::_hetero_sample_hops")
def _hetero_sample_hops_fake(
    indptr,
    indices,
    weight,
    eid,
    seeds,
    seed_counts,
    type_start,
    src_type,
    dst_type,
    row_base,
    fanouts,
    num_hops,
    replace,
    layerwise,
    disjoint,
    seed,
    budget_bytes=-1,
    slot_time=None,
    tree_time=None,
    timed=(),
    latest=False,
):
    num_nodes, num_edges = new_dynamic_size(), new_dynamic_size()
    nodes = seeds.new_empty(num_nodes, dtype=torch.int64)
    edges = [seeds.new_empty(num_edges, dtype=torch.int64) for _ in range(3)]
    tree = torch.empty_like(nodes) if disjoint else seeds.new_empty(0, dtype=torch.int64)
    counts = [
        torch.empty(len(seed_counts), num_hops + 1, dtype=torch.int64),
        torch.empty(len(src_type), num_hops, dtype=torch.int64),
    ]
    return (
        nodes,
        counts[0],
        *edges,
        counts[1],
        seeds.new_empty(seeds.shape[0], dtype=torch.int64),
        tree,
        seeds.new_empty(new_dynamic_size(), dtype=torch.int64),
    )


def random_walk(
    graph: OutEdgeGraph,
    starts: Tensor,
    length: int,
    *,
    p: float = 1.0,
    q: float = 1.0,
    restart_prob: float = 0.0,
    ppr: bool = False,
    walks_per_node: int = 1,
    weighted: bool = False,
    schedule: str = "auto",
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """Random walks along out-edges (source to target, as DGL's ``random_walk`` and PyG's
    ``Node2Vec``): DeepWalk, node2vec (``p``, ``q``), restarts and personalized PageRank.

    Walk ``i`` starts at ``starts[i % S0]`` (``walks_per_node`` tiles ``starts`` as PyG's
    ``Node2Vec`` does) and takes ``length`` steps over ``graph.out_csr()``, each to an out-edge
    drawn uniformly, or proportionally to ``graph.weight`` with ``weighted=True``. With ``p`` or
    ``q`` other than 1, a step after a move is node2vec's second-order step (Grover & Leskovec,
    KDD '16, §3.2.2): a candidate ``x`` weighs ``1/p`` if it is the previous node, ``1`` if the
    previous node has an edge to it, ``1/q`` otherwise (drawn exactly, by KnightKing's rejection
    sampling). Before each step, with probability ``restart_prob``, a walk ends; with
    ``ppr=True`` it teleports to its start instead (edge ``-1``), as it also does from a node
    without out-edges. A walk that ends, or reaches a node without (positive-weight) out-edges
    without ``ppr``, is padded with ``-1``. ``schedule`` picks how walks are run in parallel
    (``"sample"``: whole walks; ``"transit"``: step by step grouped by current node, NextDoor's
    transit parallelism; ``"auto"``: sample on the CPU, and on CUDA transit when there are
    at least as many walks as the graph has nodes, sample otherwise); the walks are the same.
    On CUDA a call synchronizes once, at its end, whatever the length.
    The draws depend only on one key from ``generator`` (default: torch's, on the graph's device).

    Args:
        graph: a :class:`fastgl.CSCGraph`; the walks run on its device.
        starts: ``[S0]`` int32/int64 start nodes.
        length: steps per walk, ``>= 0``.

    Returns:
        ``(nodes [S, length+1], edges [S, length])`` int64 with ``S = walks_per_node * S0``:
        ``nodes[:, 0]`` the starts, ``nodes[:, t+1]`` the node after step ``t`` and
        ``edges[:, t]`` the id (position in the user's edge list) of the edge it took.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 1, 2, 3], [1, 2, 3, 0, 1]])
        >>> g = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> gen = torch.Generator().manual_seed(0)
        >>> nodes, edges = random_walk(g, torch.tensor([0, 2]), 4, p=0.5, generator=gen)
        >>> nodes
        tensor([[0, 1, 3, 1, 3],
                [2, 0, 1, 2, 0]])
        >>> edges                   # 0 -> 1 is edge 0, 1 -> 3 edge 2, 3 -> 1 edge 4, ...
        tensor([[0, 2, 4, 2],
                [3, 0, 1, 3]])
    """
    where = "random_walk"
    if isinstance(walks_per_node, bool) or not isinstance(walks_per_node, int):
        raise TypeError(
            f"{where}: walks_per_node must be an int, got {type(walks_per_node).__name__}"
        )
    if walks_per_node < 1:
        raise ValueError(f"{where}: walks_per_node must be >= 1, got {walks_per_node}")
    csr = graph.out_csr()
    if weighted and csr.weight is None:
        raise ValueError(
            f"{where}: weighted=True needs a graph with weights "
            "(CSCGraph.from_edge_index(..., edge_weight=...))"
        )
    if not isinstance(starts, Tensor):
        raise TypeError(f"{where}: starts must be a tensor, got {type(starts).__name__}")
    if starts.dim() != 1:  # repeat() would tile another dimension
        raise ValueError(f"{where}: starts must be 1-D, got shape {tuple(starts.shape)}")
    nodes, edges = torch.ops.fastgl.random_walk(
        csr.indptr,
        csr.indices,
        csr.weight if weighted else None,
        csr.eid,
        starts.repeat(walks_per_node),
        length,
        p,
        q,
        restart_prob,
        ppr,
        schedule,
        draw_key(generator, csr.indptr.device, where),
    )
    return nodes, edges


@register_fake("fastgl::random_walk")
def _random_walk_fake(
    indptr, indices, weight, eid, starts, length, p, q, restart_prob, ppr, schedule, seed
):
    num_walks = starts.shape[0]
    return (
        starts.new_empty(num_walks, length + 1, dtype=torch.int64),
        starts.new_empty(num_walks, length, dtype=torch.int64),
    )


class FrontierTrace(NamedTuple):
    """What :func:`frontier_sample` returns; see there."""

    frontier: Tensor
    popped: Tensor
    added: Tensor


def frontier_sample(
    graph: InEdgeGraph,
    num_subgraphs: int,
    frontier_size: int,
    budget: int,
    *,
    eta: float = 2.0,
    max_entries: int | None = None,
    pop: str = "dashboard",
    generator: torch.Generator | None = None,
    entry_weight: int | None = None,
) -> FrontierTrace:
    """Zeng et al.'s frontier sampler (a multidimensional random walk), ``num_subgraphs``
    samplers at once, each popping through a Dashboard (Accurate, Efficient and Scalable Graph
    Embedding, IPDPS 2019, §III-C, §IV).

    A sampler starts from ``frontier_size`` distinct vertices drawn uniformly, its walkers. Each
    of its ``budget - frontier_size`` moves pops a walker with probability proportional to its
    vertex's in-degree (capped at ``max_entries``; the paper caps hubs at 30 on skewed graphs)
    and moves it to a uniform in-neighbor, which joins the sample: a sample is the first
    frontier plus every vertex a move reached, at most ``budget`` distinct vertices. Walkers on a
    vertex without in-edges never move; once all stand on one the remaining moves are -1. The
    graph's in-edges are followed (``graph.indptr``/``graph.indices``, the CSC): on an undirected
    graph, stored both ways, these are its neighbors. ``eta`` is the Dashboard's enlargement
    factor (its array starts at ``eta * frontier_size`` times the mean in-degree, in entries,
    and a pop probes at most about ``eta`` times as many entries as it keeps; near 1 it compacts
    almost every pop): a speed knob that changes which draws pick which walker, not the
    samples' distribution. So is ``entry_weight``: the paper's Dashboard gives a walker one
    entry per unit of its weight, which makes every add and cleanup write as many entries as a
    hub has in-edges; here an entry stands for ``entry_weight`` units, and a probe on a walker's
    last, partial entry keeps it with probability the share it holds (walkers much lighter than
    an entry cost more probes). ``None`` takes the graph's mean in-degree (capped, between 1 and
    1024); 1 is the paper's Dashboard, draw for draw; a weight above ``max_entries`` counts as
    ``max_entries``.
    ``pop="scan"`` pops by a scan of the walkers' running sum of weights instead, the
    O(frontier_size)-per-pop sampler the paper starts from (§IV-A): the same distribution,
    other draws (CPU only). On the CPU the samplers run in parallel over torch's threads; on
    CUDA a warp runs each sampler, probing 32 of its draws at once, and returns the same
    samples as the CPU for the same seed.

    Returns:
        :class:`FrontierTrace` ``(frontier [S, m], popped [S, K], added [S, K])``, int64, for
        ``S = num_subgraphs``, ``m = frontier_size`` and ``K = budget - m`` moves: each sampler's
        first frontier, the vertex each move popped and the one it moved to.

    Example:
        >>> import fastgl
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> graph = fastgl.CSCGraph.from_edge_index(torch.cat([ring, ring.flip(0)], 1))
        >>> trace = frontier_sample(graph, 4, 2, 5, generator=torch.Generator().manual_seed(0))
        >>> trace.frontier.shape, trace.popped.shape
        (torch.Size([4, 2]), torch.Size([4, 3]))
        >>> sorted(set(((trace.added - trace.popped) % 6).flatten().tolist()))  # ring neighbors
        [1, 5]
    """
    where = "frontier_sample"
    if max_entries is not None and max_entries < 1:
        raise ValueError(f"{where}: max_entries must be >= 1 or None, got {max_entries}")
    if entry_weight is not None and not 1 <= entry_weight <= 1024:
        raise ValueError(f"{where}: entry_weight must be in [1, 1024] or None, got {entry_weight}")
    frontier, popped, added = torch.ops.fastgl.frontier_sample(
        graph.indptr,
        graph.indices,
        num_subgraphs,
        frontier_size,
        budget,
        eta,
        max_entries or 0,
        pop,
        draw_key(generator, graph.indptr.device, where),
        entry_weight or 0,
    )
    return FrontierTrace(frontier, popped, added)


@register_fake("fastgl::frontier_sample")
def _frontier_sample_fake(indptr, indices, num_subgraphs, frontier_size, budget, *settings):
    moves = budget - frontier_size
    return (
        indptr.new_empty(num_subgraphs, frontier_size),
        indptr.new_empty(num_subgraphs, moves),
        indptr.new_empty(num_subgraphs, moves),
    )


def induced_subgraphs(
    graph: InEdgeGraph, nodes: Tensor, ptr: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The subgraphs of ``graph`` induced on many vertex sets at once: set ``s`` is
    ``nodes[ptr[s] : ptr[s+1]]`` (distinct int64 ids). CPU only; most users want
    :meth:`fastgl.CSCGraph.induced_subgraphs`, which runs on any device.

    Returns:
        ``(row, col, eid, edge_ptr)``, int64: set ``s`` owns edges ``edge_ptr[s] :
        edge_ptr[s+1]``, every in-edge of its vertices whose source is in it too, grouped by
        target in the set's order; ``row``/``col`` are the source's and target's positions in
        the set and ``eid`` the edge's id (``graph.eid`` of its CSC slot, or the slot).

    Example:
        >>> import fastgl
        >>> graph = fastgl.CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]))
        >>> induced_subgraphs(graph, torch.tensor([0, 1, 2, 1]), torch.tensor([0, 2, 4]))
        (tensor([0, 1]), tensor([1, 0]), tensor([0, 1]), tensor([0, 1, 2]))
    """
    return torch.ops.fastgl.induced_subgraphs(graph.indptr, graph.indices, graph.eid, nodes, ptr)


@register_fake("fastgl::induced_subgraphs")
def _induced_subgraphs_fake(indptr, indices, eid, nodes, ptr):
    num_edges = new_dynamic_size()
    edges = [nodes.new_empty(num_edges, dtype=torch.int64) for _ in range(3)]
    return (*edges, ptr.new_empty(ptr.shape[0], dtype=torch.int64))


def id_map(prefix: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
    """FastGL's Fused-Map: relabel ``ids`` to local ids after a fixed ``prefix``.

    Args:
        prefix: ``[P]`` distinct ids that keep local ids ``0 .. P-1``.
        ids: ``[n]`` ids (repeats allowed), all ``>= 0``.

    Returns:
        ``(unique_nodes, local_ids)``: ``unique_nodes`` is ``prefix`` followed by the ids not in it
        in first-occurrence order; ``unique_nodes[local_ids] == ids``.

    Example:
        >>> id_map(torch.tensor([5, 3]), torch.tensor([3, 7, 7, 5]))
        (tensor([5, 3, 7]), tensor([1, 2, 2, 0]))
    """
    return torch.ops.fastgl.id_map(prefix, ids)


@register_fake("fastgl::id_map")
def _id_map_fake(prefix, ids):
    num_unique = new_dynamic_size()
    return (
        ids.new_empty(num_unique, dtype=torch.int64),
        ids.new_empty(ids.shape[0], dtype=torch.int64),
    )


# spmm and spmm_max get no registered autograd: the gradient for x is an aggregation over the
# transposed structure, which fastgl.nn.functional.aggregate builds once per graph and caches on
# it. A registered backward sees only the op's tensors, not the graph, so it would rebuild the
# transpose (a counting sort of every edge) on every backward pass; aggregate's autograd.Functions
# keep the cache. Use aggregate for gradients.


def spmm(indptr: Tensor, indices: Tensor, weight: Tensor | None, x: Tensor) -> Tensor:
    """``out[r] = sum_{k in indptr[r]:indptr[r+1]} weight[k] * x[indices[k]]`` (weight 1 if None).

    Shapes: ``indptr [R+1]`` int64, ``indices [E]``, ``weight [E]``, ``x [S, F]`` -> ``[R, F]``.
    Not differentiable itself: :func:`fastgl.nn.functional.aggregate` is.
    """
    return torch.ops.fastgl.spmm(indptr, indices, weight, x)


@register_fake("fastgl::spmm")
def _spmm_fake(indptr, indices, weight, x):
    return x.new_empty(indptr.shape[0] - 1, x.shape[1])


def spmm_max(
    indptr: Tensor, indices: Tensor, weight: Tensor | None, x: Tensor
) -> tuple[Tensor, Tensor]:
    """Per feature, the maximum of ``weight[k] * x[indices[k]]`` over each row's edges
    (weight 1 if None), and the slot ``k`` that won it.

    Ties go to the first edge; a NaN message is the maximum, as in :func:`torch.max`. A row
    without edges gives 0 and slot -1.

    Returns:
        ``(out [R, F], arg [R, F] int64)``. Not differentiable itself:
        :func:`fastgl.nn.functional.aggregate` with ``reduce="max"`` is.
    """
    return torch.ops.fastgl.spmm_max(indptr, indices, weight, x)


@register_fake("fastgl::spmm_max")
def _spmm_max_fake(indptr, indices, weight, x):
    rows = indptr.shape[0] - 1
    return x.new_empty(rows, x.shape[1]), x.new_empty(rows, x.shape[1], dtype=torch.int64)


def es_spmm(
    indptr: Tensor,
    indices: Tensor,
    weight: Tensor | None,
    x: Tensor,
    width: int,
    strategy: str,
    reduce: str = "sum",
) -> Tensor:
    """:func:`spmm` (``reduce="sum"``) or :func:`spmm_max`'s values (``"max"``) over at most
    ``width`` edges of each row (ES-SpMM's cache-first sampling).

    Row ``r`` of degree ``d`` reads its edges ``0 .. min(d, width) - 1`` (``"bucket"``) or
    ``(j * 577) mod d`` for ``j < width`` (``"fastrand"``, when ``d > width``). No autograd;
    :func:`fastgl.nn.functional.es_spmm` runs it over a graph or block.
    """
    return torch.ops.fastgl.es_spmm(indptr, indices, weight, x, width, strategy, reduce)


@register_fake("fastgl::es_spmm")
def _es_spmm_fake(indptr, indices, weight, x, width, strategy, reduce):
    return x.new_empty(indptr.shape[0] - 1, x.shape[1])


@register_fake("fastgl::spmm_max_backward_x")
def _spmm_max_backward_x_fake(t_indptr, t_rows, t_slots, weight, arg, grad):
    return grad.new_empty(t_indptr.shape[0] - 1, grad.shape[1])


@register_fake("fastgl::spmm_max_backward_weight")
def _spmm_max_backward_weight_fake(indptr, indices, x, arg, grad):
    return grad.new_empty(indices.shape[0])


def sddmm(indptr: Tensor, indices: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``out[k] = <a[r], b[indices[k]]>`` for every edge ``k`` of row ``r``; shape ``[E]``."""
    return torch.ops.fastgl.sddmm(indptr, indices, a, b)


@register_fake("fastgl::sddmm")
def _sddmm_fake(indptr, indices, a, b):
    return a.new_empty(indices.shape[0])


def edge_softmax(indptr: Tensor, scores: Tensor) -> Tensor:
    """Softmax of each column of ``scores`` over each row's edges: for every edge ``k`` of row
    ``r``, ``out[k, h] = exp(scores[k, h]) / sum_{j in indptr[r]:indptr[r+1]} exp(scores[j, h])``.

    Shapes: ``indptr [R+1]`` int64, ``scores [E, H]`` floating point (CSC slot order) ->
    ``[E, H]``. Differentiable in ``scores`` (the backward is the op ``edge_softmax_backward``);
    :func:`fastgl.nn.functional.edge_softmax` runs it over a graph or block.
    """
    return torch.ops.fastgl.edge_softmax(indptr, scores)


@register_fake("fastgl::edge_softmax")
def _edge_softmax_fake(indptr, scores):
    return torch.empty_like(scores)


def _edge_softmax_setup_context(ctx, inputs, output):
    indptr, _ = inputs
    ctx.save_for_backward(indptr, output)


def _edge_softmax_grad(ctx, grad):
    """``d scores = out * (grad - row sum of grad * out)``, by ``edge_softmax_backward``."""
    indptr, out = ctx.saved_tensors
    return None, torch.ops.fastgl.edge_softmax_backward(indptr, out, grad.contiguous())


register_autograd(
    "fastgl::edge_softmax", _edge_softmax_grad, setup_context=_edge_softmax_setup_context
)


@register_fake("fastgl::edge_softmax_backward")
def _edge_softmax_backward_fake(indptr, out, grad):
    return torch.empty_like(out)


def match(prev_nodes: Tensor, next_nodes: Tensor) -> Tensor:
    """FastGL's Match: where each node of the next mini-batch sits in the previous one.

    Args:
        prev_nodes: ``[P]`` distinct node ids (the rows of the previous feature buffer).
        next_nodes: ``[n]`` node ids, all ``>= 0``, on the same device.

    Returns:
        int64 ``[n]``: ``position[j]`` is the row of ``prev_nodes`` equal to ``next_nodes[j]``,
        or ``-1`` when it must be loaded.

    Example:
        >>> match(torch.tensor([5, 3, 9]), torch.tensor([3, 7, 5]))
        tensor([ 1, -1,  0])
    """
    return torch.ops.fastgl.match(prev_nodes, next_nodes)


@register_fake("fastgl::match")
def _match_fake(prev_nodes, next_nodes):
    return next_nodes.new_empty(next_nodes.shape[0], dtype=torch.int64)


def overlap_counts(nodes: Tensor, offsets: Tensor) -> Tensor:
    """Pairwise intersection sizes of up to 64 node sets (the numerators of Reorder's
    match-degree matrix).

    Args:
        nodes: the sets one after another; set ``s`` is ``nodes[offsets[s]:offsets[s+1]]`` and
            holds distinct ids ``>= 0``.
        offsets: int64 ``[n+1]`` on the device of ``nodes``, from 0 to ``len(nodes)``.

    Returns:
        int64 ``[n, n]``, symmetric: ``|set i ∩ set j|``, set sizes on the diagonal.

    Example:
        >>> overlap_counts(torch.tensor([1, 2, 3, 2, 3, 4]), torch.tensor([0, 3, 6]))
        tensor([[3, 2],
                [2, 3]])
    """
    return torch.ops.fastgl.overlap_counts(nodes, offsets)


@register_fake("fastgl::overlap_counts")
def _overlap_counts_fake(nodes, offsets):
    num_sets = offsets.shape[0] - 1
    return nodes.new_empty(num_sets, num_sets, dtype=torch.int64)


def gather_rows(
    x: Tensor,
    index: Tensor | None = None,
    out: Tensor | None = None,
    out_index: Tensor | None = None,
) -> Tensor:
    """``out[out_index[i]] = x[index[i]]`` for every ``i``: whole rows, any dtype, parallel.

    A missing ``index`` (``out_index``) means rows ``0, 1, 2, ...`` of ``x`` (``out``). Without
    ``out``, a new tensor of ``len(index)`` rows is returned, on ``index``'s device; with it,
    ``out`` is filled and returned. With ``out`` on a GPU, ``x`` may be on that GPU or in pinned
    host memory: the GPU then reads the rows straight from host memory (zero-copy, UVA); that
    read is asynchronous, so a pinned ``x`` must outlive it (synchronize the stream before
    freeing a temporary one). ``out_index`` must not repeat a row (as for ``index_copy_``, which
    write wins would be undefined), and ``x`` and ``out`` must not share memory.

    Example:
        >>> gather_rows(torch.arange(6.).view(3, 2), torch.tensor([2, 0]))
        tensor([[4., 5.],
                [0., 1.]])
    """
    if out is None:
        if index is None:
            raise ValueError("gather_rows: give index or out")
        out = x.new_empty((index.numel(),) + tuple(x.shape[1:]), device=index.device)
    torch.ops.fastgl.gather_rows(x, index, out, out_index)
    return out


@register_fake("fastgl::gather_rows")
def _gather_rows_fake(x, index, out, out_index):
    return None


@register_fake("fastgl::_transit_schedule")
def _transit_schedule_fake(transits, min_block_pairs, chunk_size):
    num_segments, num_thread_tier, num_items = (new_dynamic_size() for _ in range(3))
    return (
        transits.new_empty(transits.shape[0]),
        transits.new_empty(num_segments),
        transits.new_empty(num_segments + 1),
        transits.new_empty(num_thread_tier),
        transits.new_empty(num_items),
        transits.new_empty(num_items),
    )
