"""A drop-in for ``dgl.dataloading.ClusterGCNSampler`` that partitions with fastgl's METIS
(:func:`fastgl.sampling.metis_parts`, through pymetis).

Same arguments, cache file and output: the partition is kept in ``cache_path`` as DGL keeps it
(a pickle of ``(partition_offset, partition_node_ids)``), so either library reads the other's;
``sample(g, partition_ids)`` returns ``g.subgraph`` of the partitions' nodes, in the order the
ids give, with ``dgl.NID``/``dgl.EID`` and the requested features prefetched lazily by
``dgl.dataloading.DataLoader``.

What differs from DGL: METIS's balancing options (``balance_ntypes``, ``balance_edges``) are not
supported (a clear error when the partition is computed), and the partition comes from
pymetis's METIS, whose parts may differ from those of DGL's bundled METIS.
"""

import os
import pickle

import dgl
import torch
from dgl.dataloading import Sampler
from dgl.dataloading.base import set_edge_lazy_features, set_node_lazy_features

from fastgl.graph import range_slots
from fastgl.sampling import metis_parts
from fastgl.sampling.saint import sizes_to_ptr

from .walks import _walk_graph

_WHERE = "fastgl ClusterGCNSampler"
MODES = {"k-way": False, "recursive": True}


class ClusterGCNSampler(Sampler):
    """``dgl.dataloading.ClusterGCNSampler`` on fastgl (same signature and output).

    Args:
        g: the graph, homogeneous.
        k: partitions.
        cache_path: the partition's file: read when it exists (it must hold ``k`` partitions of
            ``g``'s nodes), written otherwise.
        balance_ntypes, balance_edges: DGL's METIS balancing; only their defaults are supported.
        mode: ``"k-way"`` or ``"recursive"`` (METIS's recursive bisection).
        prefetch_ndata, prefetch_edata: node and edge features the DataLoader fetches.
        output_device: where the subgraph goes.

    Example:
        >>> from fastgl.integrations.dgl import ClusterGCNSampler   # instead of dgl.dataloading's
        >>> sampler = ClusterGCNSampler(g, 100, prefetch_ndata=["feat", "label"])
        >>> loader = dgl.dataloading.DataLoader(g, torch.arange(100), sampler, batch_size=20,
        ...                                     shuffle=True)
    """

    def __init__(
        self,
        g,
        k,
        cache_path="cluster_gcn.pkl",
        balance_ntypes=None,
        balance_edges=False,
        mode="k-way",
        prefetch_ndata=None,
        prefetch_edata=None,
        output_device=None,
    ) -> None:
        super().__init__()
        if os.path.exists(cache_path):  # as DGL: the cache stands, whatever the METIS options
            self.partition_offset, self.partition_node_ids = _read_cache(cache_path, g, k)
        else:
            parts = _partition(g, k, balance_ntypes, balance_edges, mode).cpu()
            self.partition_node_ids = torch.sort(parts, stable=True).indices
            self.partition_offset = sizes_to_ptr(torch.bincount(parts, minlength=k))
            with open(cache_path, "wb") as f:
                pickle.dump((self.partition_offset, self.partition_node_ids), f)
        self.prefetch_ndata = prefetch_ndata or []
        self.prefetch_edata = prefetch_edata or []
        self.output_device = output_device

    def sample(self, g, partition_ids):
        """The subgraph of ``g`` induced on the nodes of ``partition_ids`` (a 1-D tensor)."""
        ids = torch.as_tensor(partition_ids, dtype=torch.int64).cpu()
        starts = self.partition_offset[ids]
        counts = self.partition_offset[ids + 1] - starts
        slots, _ = range_slots(starts, counts)
        nodes = self.partition_node_ids[slots]
        sg = g.subgraph(nodes.to(g.idtype), relabel_nodes=True, output_device=self.output_device)
        set_node_lazy_features(sg, self.prefetch_ndata)
        set_edge_lazy_features(sg, self.prefetch_edata)
        return sg


def _partition(g, k: int, balance_ntypes, balance_edges: bool, mode: str) -> torch.Tensor:
    if balance_ntypes is not None or balance_edges:
        raise NotImplementedError(f"{_WHERE}: balance_ntypes and balance_edges are not supported")
    if mode not in MODES:
        raise dgl.DGLError(f"{_WHERE}: mode must be 'k-way' or 'recursive', got {mode!r}")
    if len(g.ntypes) > 1 or len(g.canonical_etypes) > 1:
        raise ValueError(
            f"{_WHERE}: homogeneous graphs only (one node and one edge type); this graph has "
            f"node types {g.ntypes} and edge types {g.canonical_etypes}"
        )
    return metis_parts(_walk_graph(g, None, _WHERE), k, recursive=MODES[mode])


def _read_cache(path: str, g, k: int):
    try:
        with open(path, "rb") as f:
            offset, node_ids = pickle.load(f)
    except (EOFError, TypeError, ValueError, pickle.UnpicklingError) as error:
        raise dgl.DGLError(f"{_WHERE}: the cache file {path} is invalid; remove it") from error
    offset, node_ids = torch.as_tensor(offset), torch.as_tensor(node_ids)
    if offset.numel() != k + 1:
        raise dgl.DGLError(
            f"{_WHERE}: the cache file {path} holds {offset.numel() - 1} partitions, not k = {k}"
        )
    if node_ids.numel() != g.num_nodes():
        raise dgl.DGLError(
            f"{_WHERE}: the cache file {path} holds {node_ids.numel()} nodes, the graph "
            f"{g.num_nodes()}"
        )
    return offset.to(torch.int64), node_ids.to(torch.int64)
