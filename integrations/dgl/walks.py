"""Drop-ins for DGL's random walks: ``dgl.sampling.random_walk``, ``node2vec_random_walk``,
``RandomWalkNeighborSampler`` and ``PinSAGESampler``, walking with :func:`fastgl.ops.random_walk`.

Same arguments and outputs as DGL 2.1: traces of the graph's idtype padded with -1 after a walk
ends, DGL's edge ids when asked, on the graph's device (a GPU graph walks on the GPU, node2vec
included, which DGL runs on the CPU only; a pinned graph walks on the CPU and the results go to
the nodes' device). The walks follow out-edges, as DGL's do.

What differs from DGL, on purpose:

* ``random_walk`` walks homogeneous graphs only: a ``metapath`` or a heterogeneous graph raises
  a clear error (use ``dgl.sampling.random_walk`` for those).
* ``prob`` naming an edge feature the graph lacks raises an error; DGL's ``random_walk`` then
  walks uniformly without a word. A node whose out-edges all have probability 0 ends the walk
  (DGL leaves that case undefined).
* node2vec's "distance 1" test looks for the edge ``t -> x`` (previous node to candidate, the
  node2vec paper's ``d_tx``); DGL's looks for ``x -> t``. On undirected graphs, node2vec's
  setting, the two are the same walk distribution.
* The samplers walk a heterogeneous graph only along a metapath that leaves each node type by
  one edge type (PinSAGE's ``[fw, bw]`` is one): the walk then is a homogeneous walk on the
  metapath's relations, which fastgl's engine carries.
* Randomness comes from torch's generator of the graph's device (``torch.manual_seed``), not
  from ``dgl.seed``.

Example:
    >>> from fastgl.integrations.dgl import random_walk      # instead of dgl.sampling's
    >>> g = dgl.graph(([0, 1, 1, 2, 3], [1, 2, 3, 0, 0]))
    >>> traces, types = random_walk(g, torch.tensor([0, 1, 2, 0]), length=4)
    >>> traces.shape, types
    (torch.Size([4, 5]), tensor([0, 0, 0, 0, 0]))
"""

import math
import numbers
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import dgl
import torch
from torch import Tensor

from fastgl.graph import CSCGraph
from fastgl.ops import random_walk as walk_op

from .sampler import _slot_weights

__all__ = ["PinSAGESampler", "RandomWalkNeighborSampler", "node2vec_random_walk", "random_walk"]


# ---------------------------------------------------------------------------------------------
# The graph fastgl walks


@dataclass
class _WalkGraph:
    """A DGL graph as the walk op reads it, with what it was built from."""

    structure: weakref.ref  # the graph's index; DGL replaces it when edges are added or removed
    prob_source: tuple | None  # name, identity and version of the prob edge feature
    graph: CSCGraph


# One cached CSCGraph per DGL graph (dropped with the graph), so that a walk per mini-batch does
# not rebuild the out-edge structure.
_WALK_GRAPHS: "weakref.WeakKeyDictionary[dgl.DGLGraph, _WalkGraph]" = weakref.WeakKeyDictionary()


def _walk_graph(g: dgl.DGLGraph, prob: str | None, where: str) -> CSCGraph:
    """``g``'s in-edge CSC with DGL's edge ids (the walk op reads its out-edge view, built once
    and cached with it) and, with ``prob``, that edge feature as weights; rebuilt when the
    graph's edges or the feature change."""
    data = None
    if prob is not None:
        if prob not in g.edata:
            raise ValueError(
                f"{where}: the graph has no edge feature {prob!r} (edge features: "
                f"{list(g.edata.keys())})"
            )
        data = g.edata[prob]
    source = None if data is None else (prob, id(data), data._version)
    cached = _WALK_GRAPHS.get(g)
    if cached is None or cached.structure() is not g._graph or cached.prob_source != source:
        indptr, indices, eid = g.adj_tensors("csc")
        eid = eid.to(torch.int64)
        weight = None
        if data is not None:
            weight = _slot_weights(data, eid, g.num_edges(), prob, where=where)
        cached = _WalkGraph(weakref.ref(g._graph), source, CSCGraph(indptr, indices, eid, weight))
        _WALK_GRAPHS[g] = cached
    return cached.graph


def _check_homogeneous(g: dgl.DGLGraph, where: str) -> None:
    if len(g.ntypes) > 1 or len(g.canonical_etypes) > 1:
        raise ValueError(
            f"{where}: fastgl walks homogeneous graphs (one node and one edge type); this graph "
            f"has node types {g.ntypes} and edge types {g.canonical_etypes}: use dgl.sampling "
            "for metapath walks on heterogeneous graphs"
        )


def _start_nodes(g: dgl.DGLGraph, nodes, where: str, name: str = "nodes") -> Tensor:
    """``nodes`` as DGL takes them: a tensor of the graph's idtype on its device (any device
    when the graph is pinned), or ids in a list or array; one id counts as one walk."""
    if isinstance(nodes, Tensor):
        if nodes.dtype != g.idtype:
            raise ValueError(
                f"{where}: {name} must have the graph's idtype {g.idtype}, got {nodes.dtype}"
            )
        if nodes.device != g.device and not g.is_pinned():
            raise ValueError(
                f"{where}: {name} must be on the graph's device {g.device}, got {nodes.device}"
            )
    else:
        nodes = torch.as_tensor(nodes)
        if nodes.numel() and (nodes.dtype.is_floating_point or nodes.dtype == torch.bool):
            raise ValueError(f"{where}: {name} must be integer node ids, got {nodes.dtype}")
        nodes = nodes.to(device=g.device, dtype=g.idtype)
    if nodes.dim() > 1:
        raise ValueError(f"{where}: {name} must be 1-D, got shape {tuple(nodes.shape)}")
    return nodes.reshape(-1)


def _walk(
    graph: CSCGraph,
    g: dgl.DGLGraph,
    starts: Tensor,
    length: int,
    weighted: bool = False,
    p: float = 1.0,
    q: float = 1.0,
    restart_prob: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """``(traces, eids)`` of the walks from ``starts`` on ``graph`` (``g``'s), in ``g``'s idtype
    on the starts' device."""
    traces, eids = walk_op(
        graph,
        starts.to(graph.device),
        length,
        p=p,
        q=q,
        restart_prob=restart_prob,
        weighted=weighted,
    )
    return traces.to(starts.device, g.idtype), eids.to(starts.device, g.idtype)


def _cut_at_restarts(traces: Tensor, eids: Tensor, restart_prob: Tensor) -> None:
    """Ends every walk, in place, before the first transition ``t`` whose draw ``u`` has
    ``u < restart_prob[t]`` (DGL's per-step restart). The draws do not depend on the path, so
    cutting a finished walk gives the distribution of a walk that stopped there."""
    stops = torch.rand(eids.shape, device=eids.device) < restart_prob.to(eids.device)
    ended = stops.cumsum(1, dtype=torch.int32) > 0
    eids.masked_fill_(ended, -1)
    traces[:, 1:].masked_fill_(ended, -1)


def _checked_length(length, where: str, name: str) -> int:
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 0:
        raise ValueError(f"{where}: {name} must be an int >= 0, got {length!r}")
    return int(length)


def _checked_bias_parameter(value, where: str, name: str) -> float:
    """node2vec's p or q: a real number > 0 whose inverse (the bias it gives) is finite."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (math.isfinite(value) and value > 0 and math.isfinite(1 / value))
    ):
        raise ValueError(f"{where}: {name} must be a finite number > 0, got {value!r}")
    return float(value)


def _checked_restart_prob(restart_prob, length: int, where: str) -> float | Tensor:
    """``restart_prob`` as a float (one probability for every step) or a ``[length]`` float
    tensor in [0, 1] (one per step, as DGL takes it)."""
    if restart_prob is None:
        return 0.0
    if isinstance(restart_prob, Tensor):
        if restart_prob.shape != (length,) or not restart_prob.dtype.is_floating_point:
            raise ValueError(
                f"{where}: a restart_prob tensor must hold one float per step, shape "
                f"[{length}], got {restart_prob.dtype} of shape {tuple(restart_prob.shape)}"
            )
        low, high = restart_prob.aminmax() if length else (0, 0)
        if not 0 <= float(low) <= float(high) <= 1:
            raise ValueError(f"{where}: restart_prob must lie in [0, 1], got {restart_prob}")
        return restart_prob
    if isinstance(restart_prob, bool) or not isinstance(restart_prob, numbers.Real):
        raise ValueError(
            f"{where}: restart_prob must be a float or a tensor of one float per step, got "
            f"{type(restart_prob).__name__}"
        )
    return float(restart_prob)


# ---------------------------------------------------------------------------------------------
# The functions


def random_walk(
    g: dgl.DGLGraph,
    nodes,
    *,
    metapath=None,
    length: int | None = None,
    prob: str | None = None,
    restart_prob: float | Tensor | None = None,
    return_eids: bool = False,
):
    """One random walk of ``length`` steps along out-edges from every node of ``nodes``, like
    ``dgl.sampling.random_walk`` on a homogeneous graph.

    Args:
        g: a homogeneous DGL graph, on the CPU, a GPU, or pinned.
        nodes: ``[S]`` start nodes (the graph's idtype; a node given twice walks twice).
        metapath: not supported (a clear error); give ``length``.
        length: steps per walk.
        prob: name of a non-negative float edge feature; steps draw an out-edge proportionally
            to it (uniformly without it).
        restart_prob: before each step the walk ends with this probability: a float, or a
            ``[length]`` tensor of one probability per step.
        return_eids: also return the edge id of every step.

    Returns:
        ``(traces, types)``, or ``(traces, eids, types)`` with ``return_eids``: ``traces``
        ``[S, length + 1]`` (``traces[:, 0] = nodes``), ``eids`` ``[S, length]``, both padded
        with -1 after a walk ends (a node without out-edges, or a restart), and ``types``
        ``[length + 1]`` zeros (the node type of every position), all of the graph's idtype.

    Example:
        >>> g = dgl.graph(([0, 1, 1, 2, 3], [1, 2, 3, 0, 0]))
        >>> traces, eids, types = random_walk(g, [0, 3], length=3, return_eids=True)
        >>> traces.shape, eids.shape, types.tolist()
        (torch.Size([2, 4]), torch.Size([2, 3]), [0, 0, 0, 0])
        >>> src, dst = g.find_edges(eids[0])     # step t went traces[:, t] -> traces[:, t + 1]
        >>> torch.equal(src, traces[0, :-1]) and torch.equal(dst, traces[0, 1:])
        True
    """
    where = "fastgl random_walk"
    if metapath is not None:
        raise ValueError(
            f"{where}: metapath walks are not supported (fastgl walks homogeneous graphs); give "
            "length=, or use dgl.sampling.random_walk for metapaths"
        )
    _check_homogeneous(g, where)
    if length is None:
        raise ValueError(f"{where}: give the walk length (length=)")
    length = _checked_length(length, where, "length")
    restart = _checked_restart_prob(restart_prob, length, where)
    starts = _start_nodes(g, nodes, where)
    graph = _walk_graph(g, prob, where)
    per_step = isinstance(restart, Tensor)
    traces, eids = _walk(
        graph, g, starts, length, prob is not None, restart_prob=0.0 if per_step else restart
    )
    if per_step:
        _cut_at_restarts(traces, eids, restart)
    types = torch.zeros(length + 1, dtype=g.idtype, device=traces.device)
    return (traces, eids, types) if return_eids else (traces, types)


def node2vec_random_walk(
    g: dgl.DGLGraph,
    nodes,
    p: float,
    q: float,
    walk_length: int,
    prob: str | None = None,
    return_eids: bool = False,
):
    """node2vec walks (Grover and Leskovec, "node2vec: Scalable Feature Learning for Networks",
    KDD 2016, §3.2.2) from every node of ``nodes``, like ``dgl.sampling.node2vec_random_walk``,
    on CPU and GPU graphs.

    The first step is uniform (or by ``prob``); every later step from ``v``, having come from
    ``t``, weighs a candidate ``x`` by ``1/p`` if ``x == t``, ``1`` if ``t -> x`` is an edge and
    ``1/q`` otherwise (times ``prob`` when given).

    Args:
        g: a homogeneous DGL graph.
        nodes: ``[S]`` start nodes (the graph's idtype).
        p: return parameter (> 0).
        q: in-out parameter (> 0).
        walk_length: steps per walk.
        prob: name of a non-negative float edge feature weighting the steps.
        return_eids: also return the edge id of every step.

    Returns:
        ``traces`` ``[S, walk_length + 1]``, or ``(traces, eids)`` with ``return_eids``
        (``eids`` ``[S, walk_length]``); -1 after a walk reaches a node without out-edges.

    Example:
        >>> g = dgl.graph(([0, 1, 1, 2, 3], [1, 2, 3, 0, 0]))
        >>> node2vec_random_walk(g, [0, 1], p=2.0, q=0.5, walk_length=4).shape
        torch.Size([2, 5])
    """
    where = "fastgl node2vec_random_walk"
    _check_homogeneous(g, where)
    p = _checked_bias_parameter(p, where, "p")
    q = _checked_bias_parameter(q, where, "q")
    walk_length = _checked_length(walk_length, where, "walk_length")
    starts = _start_nodes(g, nodes, where)
    graph = _walk_graph(g, prob, where)
    traces, eids = _walk(graph, g, starts, walk_length, prob is not None, p=p, q=q)
    return (traces, eids) if return_eids else traces


# ---------------------------------------------------------------------------------------------
# PinSAGE-style neighbor samplers


class RandomWalkNeighborSampler:
    """The most visited nodes of random walks from each seed as its neighbors, like
    ``dgl.sampling.RandomWalkNeighborSampler`` (PinSAGE, Ying et al., "Graph Convolutional Neural
    Networks for Web-Scale Recommender Systems", KDD 2018, §3.2).

    Every seed starts ``num_random_walks`` walks of up to ``num_traversals`` traversals of the
    metapath (one step on a homogeneous graph); before every traversal but the first a walk ends
    with probability ``termination_prob``. The nodes a walk reaches at the end of its
    traversals are counted per seed, and the ``num_neighbors`` most counted become the seed's
    neighbors (ties: the larger node id first, as in DGL).

    Args:
        G: a homogeneous graph, or a heterogeneous one with ``metapath``.
        num_traversals: traversals per walk at most.
        termination_prob: probability to end before each traversal after the first.
        num_random_walks: walks per seed.
        num_neighbors: neighbors kept per seed.
        metapath: edge types (names or canonical triples), starting and ending at one node type,
            that leave each node type by one edge type (PinSAGE's ``[fw, bw]``); ``None`` on a
            homogeneous graph.
        weight_column: name of the edge feature holding the visit counts.

    Calling it with ``[B]`` seeds (the graph's idtype) returns a DGL graph over all nodes of
    the metapath's node type with, per seed in seed order, edges ``neighbor -> seed`` most
    visited first and the visit counts (the graph's idtype) in ``edata[weight_column]``.

    Example:
        >>> g = dgl.graph((torch.tensor([0, 1, 1, 2, 3]), torch.tensor([1, 2, 3, 0, 0])))
        >>> sampler = RandomWalkNeighborSampler(g, num_traversals=3, termination_prob=0.5,
        ...                                     num_random_walks=200, num_neighbors=2)
        >>> frontier = sampler(torch.tensor([0, 2]))
        >>> src, dst = frontier.edges()     # up to 2 neighbors of 0, then of 2
        >>> counts = frontier.edata["weights"]   # visits, most first per seed
        >>> frontier.num_nodes(), dst.tolist(), counts.dtype
        (4, [0, 0, 2, 2], torch.int64)
    """

    def __init__(
        self,
        G: dgl.DGLGraph,
        num_traversals: int,
        termination_prob: float,
        num_random_walks: int,
        num_neighbors: int,
        metapath: Sequence | None = None,
        weight_column: str = "weights",
    ) -> None:
        where = f"fastgl {type(self).__name__}"
        for name, value in [
            ("num_traversals", num_traversals),
            ("num_random_walks", num_random_walks),
            ("num_neighbors", num_neighbors),
        ]:
            if _checked_length(value, where, name) == 0:
                raise ValueError(f"{where}: {name} must be >= 1, got 0")
        if not 0 <= termination_prob <= 1:
            raise ValueError(
                f"{where}: termination_prob must lie in [0, 1], got {termination_prob}"
            )
        self.G = G
        self.num_traversals = num_traversals
        self.num_random_walks = num_random_walks
        self.num_neighbors = num_neighbors
        self.weight_column = weight_column
        self._where = where
        self.metapath = _checked_metapath(G, metapath, where)
        self.ntype = self.metapath[0][0]
        self.metapath_hops = len(self.metapath)
        restart_prob = torch.zeros(self.metapath_hops * num_traversals)
        restart_prob[self.metapath_hops :: self.metapath_hops] = termination_prob
        self.restart_prob = restart_prob
        self._flat: tuple[weakref.ref, CSCGraph] | None = None

    def __call__(self, seed_nodes) -> dgl.DGLGraph:
        seeds = _start_nodes(self.G, seed_nodes, self._where, "seed_nodes")
        graph = self._walk_graph()
        starts = seeds.repeat_interleave(self.num_random_walks)
        traces, eids = _walk(graph, self.G, starts, len(self.restart_prob))
        _cut_at_restarts(traces, eids, self.restart_prob)
        # Positions hops, 2 hops, ...: where the traversals end, on the seeds' node type (which
        # comes first in the walked graph, so its ids are the graph's).
        visits = traces[:, self.metapath_hops :: self.metapath_hops].reshape(
            seeds.numel(), self.num_random_walks * self.num_traversals
        )
        num_nodes = self.G.num_nodes(self.ntype)
        src, dst, counts = _most_visited(visits, seeds, self.num_neighbors, num_nodes)
        neighbors = dgl.heterograph(
            {(self.ntype, "_E", self.ntype): (src, dst)}, {self.ntype: num_nodes}
        )
        neighbors.edata[self.weight_column] = counts
        return neighbors

    def _walk_graph(self) -> CSCGraph:
        """The graph the walks run on: ``G``'s own on a homogeneous graph; else the metapath's
        relations as one homogeneous graph (node types one after another, the seeds' first),
        built once per graph structure."""
        if len(self.G.ntypes) == 1 and len(self.G.canonical_etypes) == 1:
            return _walk_graph(self.G, None, self._where)
        if self._flat is None or self._flat[0]() is not self.G._graph:
            self._flat = (weakref.ref(self.G._graph), _metapath_graph(self.G, self.metapath))
        return self._flat[1]


class PinSAGESampler(RandomWalkNeighborSampler):
    """PinSAGE's neighbor sampler on a bidirectional bipartite graph, like
    ``dgl.sampling.PinSAGESampler``: walks ``ntype -> other_type -> ntype`` (the first edge
    type each way) and keeps each seed's most visited ``ntype`` nodes.

    Args:
        G: a graph with node types ``ntype`` and ``other_type`` and an edge type each way.
        ntype: the node type of the seeds and of the neighbors.
        other_type: the node type walked through.
        num_traversals, termination_prob, num_random_walks, num_neighbors, weight_column: as in
            :class:`RandomWalkNeighborSampler`.

    Example:
        >>> u, v = torch.tensor([0, 0, 1, 2]), torch.tensor([0, 1, 1, 0])   # A -> B
        >>> G = dgl.heterograph({("A", "AB", "B"): (u, v), ("B", "BA", "A"): (v, u)})
        >>> sampler = PinSAGESampler(G, "A", "B", 3, 0.5, 200, 10)
        >>> frontier = sampler(torch.tensor([0, 1]))   # the A nodes most visited from A 0 and 1
        >>> frontier.ntypes, frontier.num_nodes(), sorted(set(frontier.edges()[1].tolist()))
        (['A'], 3, [0, 1])
    """

    def __init__(
        self,
        G: dgl.DGLGraph,
        ntype: str,
        other_type: str,
        num_traversals: int,
        termination_prob: float,
        num_random_walks: int,
        num_neighbors: int,
        weight_column: str = "weights",
    ) -> None:
        forward = [e for e in G.canonical_etypes if e[0] == ntype and e[2] == other_type]
        backward = [e for e in G.canonical_etypes if e[0] == other_type and e[2] == ntype]
        if not forward or not backward:
            raise ValueError(
                f"fastgl PinSAGESampler: the graph needs an edge type from {ntype!r} to "
                f"{other_type!r} and one back; its edge types are {G.canonical_etypes}"
            )
        super().__init__(
            G,
            num_traversals,
            termination_prob,
            num_random_walks,
            num_neighbors,
            metapath=[forward[0], backward[0]],
            weight_column=weight_column,
        )


def _checked_metapath(G: dgl.DGLGraph, metapath, where: str) -> list[tuple[str, str, str]]:
    """``metapath`` as canonical edge types (``G``'s one edge type when ``None``); it must start
    and end at one node type, chain, and leave each node type by one edge type."""
    if metapath is None:
        _check_homogeneous(G, where)
        return [G.canonical_etypes[0]]
    if isinstance(metapath, str) or not metapath:
        raise ValueError(f"{where}: metapath must be a non-empty list of edge types")
    try:
        path = [G.to_canonical_etype(etype) for etype in metapath]
    except dgl.DGLError as error:
        raise ValueError(f"{where}: metapath {metapath}: {error}") from None
    for (_, _, dst_type), (src_type, _, _) in zip(path, path[1:] + path[:1]):
        if dst_type != src_type:
            raise ValueError(
                f"{where}: metapath {path} must chain (each edge type starting where the one "
                "before ends) and end at the node type it starts from"
            )
    leaving = {}
    for etype in path:
        if leaving.setdefault(etype[0], etype) != etype:
            raise ValueError(
                f"{where}: metapath {path} leaves node type {etype[0]!r} by two edge types "
                f"({leaving[etype[0]]} and {etype}); fastgl walks metapaths that leave each "
                "node type by one edge type (such as PinSAGE's [fw, bw]): use "
                "dgl.sampling.RandomWalkNeighborSampler for this one"
            )
    return path


def _metapath_graph(G: dgl.DGLGraph, metapath: list[tuple[str, str, str]]) -> CSCGraph:
    """The metapath's relations as one homogeneous graph: the node types in metapath order
    (the seeds' type first, at offset 0), each relation's edges shifted by its types' offsets.
    Every node type has one out-relation, so a walk on it follows the metapath."""
    relations = list(dict.fromkeys(metapath))
    offset, first = {}, 0
    for src_type, _, _ in relations:
        offset[src_type] = first
        first += G.num_nodes(src_type)
    edges = []
    for etype in relations:
        src, dst = G.edges(etype=etype)
        edges.append(torch.stack([src.long() + offset[etype[0]], dst.long() + offset[etype[2]]]))
    return CSCGraph.from_edge_index(torch.cat(edges, dim=1), num_nodes=first)


def _most_visited(
    visits: Tensor, seeds: Tensor, k: int, num_nodes: int
) -> tuple[Tensor, Tensor, Tensor]:
    """``(src, dst, counts)``: per seed (row of ``visits``, ``[B, M]`` node ids, -1 = none), its
    ``k`` most visited nodes ``src``, most visited first, ties by the larger id first (DGL's
    order), with the seed as ``dst`` and the visit counts, grouped by seed in seed order."""
    num_seeds = visits.shape[0]
    seed_of = torch.arange(num_seeds, device=visits.device).repeat_interleave(visits.shape[1])
    visits = visits.reshape(-1).long()
    visited = visits >= 0
    keys, counts = torch.unique(seed_of[visited] * num_nodes + visits[visited], return_counts=True)
    # Sorted by (seed, node): reversed, then stable sorts by count (descending) and by seed
    # give (seed ascending, count descending, node descending).
    keys, counts = keys.flip(0), counts.flip(0)
    order = torch.sort(counts, descending=True, stable=True).indices
    keys, counts = keys[order], counts[order]
    order = torch.sort(torch.div(keys, num_nodes, rounding_mode="floor"), stable=True).indices
    keys, counts = keys[order], counts[order]
    seed_index = torch.div(keys, num_nodes, rounding_mode="floor")
    per_seed = torch.bincount(seed_index, minlength=num_seeds)
    first_of_seed = torch.cumsum(per_seed, 0) - per_seed
    rank = torch.arange(keys.numel(), device=keys.device) - first_of_seed[seed_index]
    kept = rank < k
    src = (keys[kept] % num_nodes).to(seeds.dtype)
    return src, seeds[seed_index[kept]], counts[kept].to(seeds.dtype)
