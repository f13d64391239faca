"""A ``torch_geometric.sampler.NeighborSampler`` that samples with fastgl's compiled ops.

PyG's own sampler needs ``pyg-lib`` or ``torch-sparse``, which have no wheels for current torch;
this one needs neither. It returns PyG's ``SamplerOutput`` layout: seeds first, then the nodes
new at each hop in first-occurrence order; ``row`` = local neighbor (message source), ``col`` =
local node it was sampled for; edges grouped by hop; ``edge`` = global edge ids; the per-hop
``num_sampled_nodes`` / ``num_sampled_edges`` that ``trim_to_layer`` needs.
"""

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.sampler import NeighborSampler as PyGNeighborSampler
from torch_geometric.sampler import SamplerOutput
from torch_geometric.sampler.base import DataType, NumNeighbors, SubgraphType

import fastgl


class NeighborSampler(PyGNeighborSampler):
    """PyG's ``NeighborSampler`` (same arguments) on fastgl's sampling kernels.

    Pass it to PyG's loaders as ``neighbor_sampler=``, or use
    :class:`fastgl.integrations.pyg.NeighborLoader`, which does. Sampling runs on the device of
    ``data.edge_index`` (a GPU graph is sampled on the GPU). Supported: homogeneous ``Data``,
    ``subgraph_type`` ``'directional'``, ``'bidirectional'`` and ``'induced'``, ``replace``,
    ``disjoint``, ``weight_attr`` (draws proportional to a non-negative edge attribute),
    ``sample_direction`` ``'forward'`` and ``'backward'``. Heterogeneous graphs, remote
    feature/graph stores and temporal sampling (``time_attr``) raise ``NotImplementedError``.

    Example:
        >>> from torch_geometric.loader import NeighborLoader
        >>> sampler = NeighborSampler(data, num_neighbors=[15, 10])
        >>> loader = NeighborLoader(data, [15, 10], batch_size=512, neighbor_sampler=sampler)
    """

    def __init__(
        self,
        data: Data,
        num_neighbors,
        subgraph_type="directional",
        replace: bool = False,
        disjoint: bool = False,
        temporal_strategy: str = "uniform",
        time_attr: str | None = None,
        weight_attr: str | None = None,
        is_sorted: bool = False,
        share_memory: bool = False,
        directed: bool = True,
        sample_direction: str = "forward",
    ) -> None:
        # PyG's constructor builds its own CPU CSC for pyg-lib: set up the same attributes here.
        if not isinstance(data, Data):
            raise NotImplementedError(
                f"fastgl NeighborSampler: only homogeneous torch_geometric "
                f"Data is supported yet, got {type(data).__name__}"
            )
        if time_attr is not None:
            raise NotImplementedError(
                "fastgl NeighborSampler: temporal sampling (time_attr) is not supported yet"
            )
        if sample_direction not in ("forward", "backward"):
            raise ValueError(
                f"fastgl NeighborSampler: sample_direction must be 'forward' or "
                f"'backward', got {sample_direction!r}"
            )
        self.data_type = DataType.homogeneous
        self.sample_direction = sample_direction
        self.num_nodes = data.num_nodes
        self.node_time = self.edge_time = None
        self.perm = None  # sampled edge ids are already global
        self.num_neighbors = num_neighbors
        self.replace = replace
        self.subgraph_type = SubgraphType(subgraph_type if directed else "induced")
        self.disjoint = disjoint
        self.temporal_strategy = temporal_strategy
        self.keep_orig_edges = False
        self.graph = _sampling_graph(
            data, weight_attr, sample_direction == "backward", share_memory
        )
        self._fanouts = _fanouts(self.num_neighbors)
        self._sampler = fastgl.NeighborSampler(
            self.graph,
            self._fanouts,
            replace=replace,
            weighted=weight_attr is not None,
            disjoint=disjoint,
        )

    def _sample(self, seed, seed_time=None, **kwargs) -> SamplerOutput:
        if isinstance(seed, dict):
            raise NotImplementedError(
                "fastgl NeighborSampler: heterogeneous graphs are not supported yet"
            )
        if seed_time is not None:
            raise NotImplementedError(
                "fastgl NeighborSampler: temporal sampling is not supported yet"
            )
        seed = seed.to(self.graph.device)
        sub = self._sampler.sample(seed)
        # The sampler's Fused-Map already deduplicated the seeds: no second pass to check them.
        if sub.batch_size != seed.numel():
            raise ValueError(
                "fastgl NeighborSampler: the seeds of a batch must be distinct unless disjoint=True"
            )
        row, col, edge = sub.row, sub.col, sub.eid
        num_sampled_edges = sub.num_sampled_edges
        if self.subgraph_type == SubgraphType.induced:
            row, col, edge = self.graph.induced_edges(sub.nodes)
            num_sampled_edges = None  # induced edges are not grouped by hop
        if self.sample_direction == "backward":
            row, col = col, row
        return SamplerOutput(
            node=sub.nodes,
            row=row,
            col=col,
            edge=edge,
            batch=sub.batch,
            num_sampled_nodes=sub.num_sampled_nodes,
            num_sampled_edges=num_sampled_edges,
        )


def _sampling_graph(
    data: Data, weight_attr: str | None, transpose: bool, share_memory: bool
) -> "fastgl.CSCGraph":
    """The CSC fastgl samples from, on the device of ``data.edge_index`` (out-edges for the
    backward direction)."""
    edge_index = data.edge_index
    if edge_index is None:
        raise ValueError("fastgl NeighborSampler: data has no edge_index")
    if transpose:
        edge_index = edge_index.flip(0)
    weight = None
    if weight_attr is not None:
        weight = data[weight_attr]
        if (
            not isinstance(weight, Tensor)
            or weight.dim() != 1
            or weight.numel() != edge_index.shape[1]
        ):
            raise ValueError(
                f"fastgl NeighborSampler: weight_attr {weight_attr!r} must be an "
                f"edge attribute of shape [{edge_index.shape[1]}]"
            )
        if weight.dtype not in (torch.float32, torch.float64):
            weight = weight.to(torch.float32)
        if bool((weight < 0).any()):
            raise ValueError(
                f"fastgl NeighborSampler: weight_attr {weight_attr!r} must be non-negative"
            )
    graph = fastgl.CSCGraph.from_edge_index(edge_index, data.num_nodes, weight)
    if share_memory:  # workers then read one copy instead of one each
        for name in ("indptr", "indices", "eid", "weight"):
            tensor = getattr(graph, name)
            if tensor is not None and tensor.device.type == "cpu":
                tensor.share_memory_()
    return graph


def _fanouts(num_neighbors: NumNeighbors) -> list:
    values = num_neighbors.values
    if isinstance(values, dict):
        raise NotImplementedError(
            "fastgl NeighborSampler: per-edge-type num_neighbors "
            "(heterogeneous graphs) are not supported yet"
        )
    return [int(v) for v in values]
