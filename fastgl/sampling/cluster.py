"""ClusterGCN (Chiang et al., Cluster-GCN: An Efficient Algorithm for Training Deep and Large
Graph Convolutional Networks, KDD 2019, §3.1 and §3.2): the graph's nodes are partitioned once by
METIS into clusters with few edges between them, and each batch is the subgraph induced on a few
clusters drawn at random ("stochastic multiple partitions"), the edges between the drawn clusters
included, on which a complete GNN trains.

METIS runs through pymetis (``pip install pymetis``), on the graph made undirected without self
loops (METIS's input); its partition is cached on disk when asked, keyed by the graph's arrays.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch
from torch import Tensor

from fastgl.graph import CSCGraph, range_slots

from .saint import (
    SAINTNorm,
    SubgraphSampler,
    _check_has_nodes,
    _check_positive,
    distinct_per_tree,
    sizes_to_ptr,
)
from .subgraph import SampledSubgraph


def metis_parts(
    graph: CSCGraph,
    num_parts: int,
    *,
    recursive: bool = False,
    seed: int = 0,
    cache_dir: str | Path | None = None,
) -> Tensor:
    """The METIS partition of ``graph``'s nodes into ``num_parts`` parts: ``[num_nodes]`` int64,
    the part of each node (every part id below ``num_parts``; METIS may leave a part empty).

    Args:
        graph: the graph; its edges are taken in both directions, self loops dropped.
        num_parts: parts, ``1 <= num_parts <= num_nodes``.
        recursive: METIS's recursive bisection instead of its k-way partitioning.
        seed: METIS's random seed: the same seed, graph and arguments give the same parts.
        cache_dir: where to keep the partition (a file named by the graph's digest and the
            arguments), and find it when computed before.

    Example:
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> parts = metis_parts(CSCGraph.from_edge_index(ring, 6), 2)
        >>> sorted(torch.bincount(parts).tolist())
        [3, 3]
    """
    where = "metis_parts"
    _check_positive(where, "num_parts", num_parts)
    _check_has_nodes(where, graph)
    if num_parts > graph.num_nodes:
        raise ValueError(
            f"{where}: num_parts must be at most the graph's {graph.num_nodes} nodes, got "
            f"{num_parts}"
        )
    cache = _cache_file(graph, num_parts, recursive, seed, cache_dir)
    if cache is not None and cache.exists():
        return torch.load(cache).to(graph.device)
    if num_parts == 1:
        parts = torch.zeros(graph.num_nodes, dtype=torch.int64)
    else:
        parts = _run_metis(graph, num_parts, recursive, seed)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        torch.save(parts, cache)
    return parts.to(graph.device)


def _run_metis(graph: CSCGraph, num_parts: int, recursive: bool, seed: int) -> Tensor:
    try:
        import pymetis
    except ImportError as error:
        raise ImportError("ClusterGCN's partition needs pymetis: pip install pymetis") from error
    indptr, adjacent = _undirected_csr(graph)
    partition = pymetis.part_graph(
        num_parts,
        pymetis.CSRAdjacency(indptr.numpy(), adjacent.numpy()),
        recursive=recursive,
        options=pymetis.Options(seed=seed),
    )
    return torch.as_tensor(partition.vertex_part, dtype=torch.int64)


def _undirected_csr(graph: CSCGraph) -> tuple[Tensor, Tensor]:
    """``graph``'s edges in both directions, self loops and repeats dropped, as CSR on the CPU."""
    source = graph.indices.to(torch.int64).cpu()
    target = graph.dst_index().to(torch.int64).cpu()
    keep = source != target
    source, target = source[keep], target[keep]
    keys = torch.unique(
        torch.cat([source * graph.num_nodes + target, target * graph.num_nodes + source])
    )
    rows = torch.div(keys, graph.num_nodes, rounding_mode="floor")
    indptr = sizes_to_ptr(torch.bincount(rows, minlength=graph.num_nodes))
    return indptr, keys - rows * graph.num_nodes


def _cache_file(
    graph: CSCGraph, num_parts: int, recursive: bool, seed: int, cache_dir: str | Path | None
) -> Path | None:
    if cache_dir is None:
        return None
    digest = hashlib.sha1()
    for array in (graph.indptr, graph.indices):
        digest.update(array.to(torch.int64).cpu().numpy().tobytes())
    method = "recursive" if recursive else "kway"
    name = f"metis-{digest.hexdigest()[:16]}-{num_parts}-{method}-seed{seed}.pt"
    return Path(cache_dir) / name


class ClusterGCNSampler(SubgraphSampler):
    """ClusterGCN's batches: subgraphs induced on ``clusters_per_batch`` distinct clusters of a
    METIS partition (:func:`metis_parts`), drawn uniformly, with every edge among their nodes,
    those between two of the clusters included. ``epoch`` draws an epoch as the paper does: a
    random order of all clusters, cut into batches.

    A subgraph's ``nodes`` ascend; its edges are every edge of the graph among them (``row``,
    ``col``, local; ``eid``, global).

    Args:
        graph: the graph.
        num_parts: clusters, ``p`` in the paper.
        clusters_per_batch: clusters a batch joins, ``q`` in the paper (at most ``num_parts``).
        parts: a partition to use instead of METIS's (``[num_nodes]``, ids in
            ``[0, num_parts)``).
        recursive, seed, cache_dir: :func:`metis_parts`'s.

    Example:
        >>> ring = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
        >>> graph = CSCGraph.from_edge_index(ring, 6)
        >>> sampler = ClusterGCNSampler(graph, 3, parts=torch.tensor([0, 0, 1, 1, 2, 2]))
        >>> [sub.nodes.tolist() for sub in sampler.epoch(generator=torch.manual_seed(0))]
        [[4, 5], [0, 1], [2, 3]]
        >>> sub = ClusterGCNSampler(graph, 3, 2, parts=torch.tensor([0, 0, 1, 1, 2, 2])).sample()[0]
        >>> sub.nodes.numel(), sub.edge_index.shape[1]   # two clusters' 4 nodes and 3 edges
        (4, 3)
    """

    def __init__(
        self,
        graph: CSCGraph,
        num_parts: int,
        clusters_per_batch: int = 1,
        *,
        parts: Tensor | None = None,
        recursive: bool = False,
        seed: int = 0,
        cache_dir: str | Path | None = None,
    ) -> None:
        where = type(self).__name__
        _check_positive(where, "clusters_per_batch", clusters_per_batch)
        if clusters_per_batch > num_parts:
            raise ValueError(
                f"{where}: clusters_per_batch must be at most num_parts ({num_parts}), got "
                f"{clusters_per_batch}"
            )
        if parts is None:
            parts = metis_parts(
                graph, num_parts, recursive=recursive, seed=seed, cache_dir=cache_dir
            )
        else:
            _check_parts(where, parts, graph.num_nodes, num_parts)
        self.graph = graph
        self.num_parts = num_parts
        self.clusters_per_batch = clusters_per_batch
        self.parts = parts.to(device=graph.device, dtype=torch.int64)
        self.cluster_nodes = torch.sort(self.parts, stable=True).indices
        self.cluster_sizes = torch.bincount(self.parts, minlength=num_parts)
        self.cluster_ptr = sizes_to_ptr(self.cluster_sizes)

    def sample_nodes(
        self, num_subgraphs: int, generator: torch.Generator | None
    ) -> tuple[Tensor, Tensor]:
        device = self.graph.device
        scores = torch.rand(num_subgraphs, self.num_parts, generator=generator, device=device)
        return self.nodes_of(scores.argsort(dim=1)[:, : self.clusters_per_batch])

    def epoch(self, generator: torch.Generator | None = None) -> list[SampledSubgraph]:
        """An epoch: every cluster once, in random order, ``clusters_per_batch`` a batch (the
        last batch holds the rest)."""
        order = torch.randperm(self.num_parts, generator=generator, device=self.graph.device)
        batches = order.split(self.clusters_per_batch)
        subgraphs = []
        for clusters in batches:
            subgraphs += self.induce(*self.nodes_of(clusters.view(1, -1)))
        return subgraphs

    def nodes_of(self, clusters: Tensor) -> tuple[Tensor, Tensor]:
        """The nodes of each row of ``clusters`` ``[S, k]`` (distinct cluster ids per row), as
        the ascending ``(nodes, ptr)`` of :meth:`SubgraphSampler.sample_nodes`."""
        flat = clusters.reshape(-1)
        slots, owner = range_slots(self.cluster_ptr[flat], self.cluster_sizes[flat])
        subgraph = torch.div(owner, clusters.shape[1], rounding_mode="floor")
        return distinct_per_tree(
            self.cluster_nodes[slots], subgraph, clusters.shape[0], self.graph.num_nodes
        )

    def normalization(
        self, sample_coverage: float = 0, generator: torch.Generator | None = None
    ) -> SAINTNorm:
        """GraphSAINT's normalization, exact, as the draws' probabilities are known (nothing is
        drawn; the arguments are :meth:`SubgraphSampler.normalization`'s): a node is in a batch
        with probability ``q / p`` (``q`` clusters of ``p``), an edge inside a cluster as often
        as its target, one between two clusters ``(q - 1) / (p - 1)`` times as often. So
        ``node_norm = p / (q N)`` for every node and ``edge_norm`` is 1 inside a cluster and
        ``(p - 1) / (q - 1)`` between clusters (1 where ``q = 1``: such edges are never drawn).
        """
        p, q, n = self.num_parts, self.clusters_per_batch, self.graph.num_nodes
        device = self.graph.device
        node_norm = torch.full((n,), p / (q * n), device=device)
        source = self.graph.indices.to(torch.int64)
        slot_between = self.parts[source] != self.parts[self.graph.dst_index()]
        between = (p - 1) / (q - 1) if q > 1 else 1.0
        edge_norm = torch.ones(self.graph.num_edges, device=device)
        edge_norm[self.graph.edge_ids()[slot_between]] = between
        return SAINTNorm(node_norm, edge_norm, num_subgraphs=0)


def _check_parts(where: str, parts: Tensor, num_nodes: int, num_parts: int) -> None:
    if parts.shape != (num_nodes,) or parts.dtype.is_floating_point or parts.dtype == torch.bool:
        raise ValueError(
            f"{where}: parts must be an integer tensor of shape [{num_nodes}] (a part per node), "
            f"got {parts.dtype} of shape {list(parts.shape)}"
        )
    if num_nodes and (int(parts.min()) < 0 or int(parts.max()) >= num_parts):
        raise ValueError(f"{where}: parts must lie in [0, {num_parts}) (num_parts)")
