"""A ``torch_geometric.sampler.NeighborSampler`` that samples with fastgl's compiled ops.

PyG's own sampler needs ``pyg-lib`` or ``torch-sparse``, which have no wheels for current torch;
this one needs neither. It returns PyG's ``SamplerOutput`` layout: seeds first, then the nodes
new at each hop in first-occurrence order; ``row`` = local neighbor (message source), ``col`` =
local node it was sampled for; edges grouped by hop; ``edge`` = global edge ids; the per-hop
``num_sampled_nodes`` / ``num_sampled_edges`` that ``trim_to_layer`` needs. Heterogeneous graphs
give PyG's ``HeteroSamplerOutput`` (the same per node type and edge type); temporal and disjoint
sampling add PyG's ``batch`` vector.
"""

import warnings

import torch
from torch import Tensor
from torch_geometric.data import Data, FeatureStore, GraphStore, HeteroData
from torch_geometric.sampler import HeteroSamplerOutput, SamplerOutput
from torch_geometric.sampler import NeighborSampler as PyGNeighborSampler
from torch_geometric.sampler.base import DataType, NumNeighbors, SubgraphType

import fastgl
from fastgl.sampling import HeteroNeighborSampler

from .hetero import (
    checked_times,
    hetero_data_graph,
    hetero_data_time,
    hetero_output,
    relation_fanouts,
    relation_keys,
)
from .stores import (
    hetero_store_graph,
    hetero_store_time,
    is_hetero_store,
    store_edge_attrs,
    store_graph,
    store_time,
)
from .temporal import data_time, temporal_sampler

_WHERE = "fastgl NeighborSampler"
_TIME_AND_WEIGHT = (
    f"{_WHERE}: temporal sampling with weight_attr is not supported yet (fastgl's temporal "
    f"samplers draw 'uniform' or 'last', unweighted)"
)


class NeighborSampler(PyGNeighborSampler):
    """PyG's ``NeighborSampler`` (same arguments) on fastgl's sampling kernels.

    Pass it to PyG's loaders as ``neighbor_sampler=``, or use
    :class:`fastgl.integrations.pyg.NeighborLoader`, which does. Sampling runs on the device of
    the graph's edges (a GPU graph is sampled on the GPU).

    ``data`` is a ``Data`` or a ``HeteroData`` (one without edges samples the seeds alone, as
    PyG does) or PyG's remote-backend pair ``(FeatureStore, GraphStore)``, homogeneous
    (``edge_type=None``) or typed, in COO, CSR or CSC layout. fastgl builds its graph once per
    sampler (a :class:`fastgl.CSCGraph`, or a :class:`fastgl.HeteroCSCGraph` for typed edges);
    for a store, once per graph store (a later sampler over the same, unchanged edge tensors
    reuses it), with PyG's node counts (``max(EdgeAttr.size)`` for a homogeneous store, or
    without a size the largest node id + 1 and the feature store's row count), sampled edge ids
    as positions in the stored layout, and PyG's loader fetching the features.

    Supported: ``subgraph_type`` ``'directional'``, ``'bidirectional'`` and ``'induced'``
    (homogeneous only), ``replace``, ``disjoint`` (not with ``'induced'``: PyG rejects that
    too), ``weight_attr`` (draws proportional to a non-negative edge attribute; for
    ``HeteroData``, edge types without it draw uniformly), ``sample_direction`` ``'forward'``
    and ``'backward'``, per-edge-type ``num_neighbors`` dicts (PyG's ``NumNeighbors``, its
    ``default`` included), and temporal sampling (also backward, which PyG's sampler lacks):
    ``time_attr`` names node-level or edge-level times, as PyG decides (``Data``: a node or an
    edge attribute; ``HeteroData``: held by node types or by edge types, the others untimed and
    unconstrained; a homogeneous store: its feature-store tensor, node-level if named
    ``'time'``; a typed store: its tensors of that name per node or edge type),
    ``temporal_strategy`` ``'uniform'`` or ``'last'``, seed times from the loader's
    ``input_time`` / ``edge_label_time`` (or each seed's node time), always disjoint, with
    PyG's ``batch``. Unlike PyG's, a store's edges need not be sorted by time.

    Not supported (``NotImplementedError``): ``time_attr`` with ``weight_attr``, ``'induced'``
    subgraphs of heterogeneous graphs, and ``weight_attr`` on store inputs (nor in PyG).

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> from torch_geometric.loader import NeighborLoader
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> data = Data(x=torch.randn(4, 8), edge_index=edge_index)
        >>> sampler = NeighborSampler(data, num_neighbors=[2, 2])
        >>> loader = NeighborLoader(data, [2, 2], batch_size=2, neighbor_sampler=sampler)
        >>> batch = next(iter(loader))
        >>> batch.n_id[: batch.batch_size]
        tensor([0, 1])
        >>> bool((data.edge_index[:, batch.e_id] == batch.n_id[batch.edge_index]).all())
        True

        Temporal: node ``v`` at time ``t[v]`` sees only neighbors no later than its seed time.

        >>> data.t = torch.tensor([0, 1, 2, 3])
        >>> sampler = NeighborSampler(data, [-1], time_attr="t")
        >>> loader = NeighborLoader(data, [-1], input_nodes=torch.tensor([1]), time_attr="t",
        ...                         neighbor_sampler=sampler)
        >>> batch = next(iter(loader))
        >>> batch.n_id, batch.batch   # node 1 (time 1) takes its in-neighbor 0, not 2 or 3
        (tensor([1, 0]), tensor([0, 0]))
    """

    def __init__(
        self,
        data: Data | HeteroData | tuple[FeatureStore, GraphStore],
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
        self.data_type = _data_type(data)
        if sample_direction not in ("forward", "backward"):
            raise ValueError(
                f"{_WHERE}: sample_direction must be 'forward' or 'backward', "
                f"got {sample_direction!r}"
            )
        self.sample_direction = sample_direction
        self.subgraph_type = _subgraph_type(subgraph_type, directed, disjoint, time_attr)
        self.replace = replace
        self.disjoint = disjoint  # PyG's property: temporal sampling is disjoint as well
        self.temporal_strategy = temporal_strategy
        self.keep_orig_edges = False
        self.perm = None  # sampled edge ids are already global
        self.node_time = self.edge_time = None
        self._weighted = weight_attr is not None
        hetero = self.data_type == DataType.heterogeneous or (
            self.data_type == DataType.remote and is_hetero_store(data[1])
        )
        if hetero:
            self._init_hetero(data, time_attr, weight_attr)
        else:
            self._init_homogeneous(data, time_attr, weight_attr)
        if share_memory:
            _share_memory(self.graph)
        self.num_neighbors = num_neighbors  # builds fastgl's sampler

    def _init_homogeneous(self, data, time_attr: str | None, weight_attr: str | None) -> None:
        transpose = self.sample_direction == "backward"
        if self.data_type == DataType.remote:
            if weight_attr is not None:
                raise NotImplementedError(
                    f"{_WHERE}: weight_attr is not supported for (FeatureStore, GraphStore) "
                    f"inputs (nor is it by PyG's sampler)"
                )
            self.node_types, self.edge_types = [None], [None]  # PyG: a homogeneous store
            self.graph, self.num_nodes = store_graph(*data, transpose)
            if time_attr is not None:
                self.node_time, self.edge_time = store_time(data[0], time_attr)
        else:
            self.graph = _data_graph(data, weight_attr, transpose)
            self.num_nodes = self.graph.num_nodes
            if time_attr is not None:
                self.node_time, self.edge_time = data_time(data, time_attr)
        if time_attr is not None and weight_attr is not None:
            raise NotImplementedError(_TIME_AND_WEIGHT)

    def _init_hetero(self, data, time_attr: str | None, weight_attr: str | None) -> None:
        if self.subgraph_type == SubgraphType.induced:
            raise NotImplementedError(
                f"{_WHERE}: subgraph_type='induced' is not supported yet for heterogeneous "
                f"graphs (fastgl.HeteroCSCGraph has no induced-edges query per relation)"
            )
        backward = self.sample_direction == "backward"
        if self.data_type == DataType.remote:
            if weight_attr is not None:
                raise NotImplementedError(
                    f"{_WHERE}: weight_attr is not supported for (FeatureStore, GraphStore) "
                    f"inputs (nor is it by PyG's sampler)"
                )
            self.edge_types = list(store_edge_attrs(data[1], backward))
            self._relation_of = relation_keys(self.edge_types, backward)
            self.graph, self.num_nodes = hetero_store_graph(*data, self._relation_of, backward)
            self.node_types = list(self.num_nodes)
            if time_attr is not None:
                node_time, edge_time = hetero_store_time(data[0], time_attr)
                edge_time = {e: t for e, t in edge_time.items() if e in self._relation_of}
                self.node_time, self.edge_time = checked_times(time_attr, node_time, edge_time)
        else:
            self.node_types, self.edge_types = data.metadata()
            self._relation_of = relation_keys(self.edge_types, backward)
            self.graph, self.num_nodes = hetero_data_graph(
                data, self._relation_of, backward, weight_attr
            )
            if time_attr is not None:
                self.node_time, self.edge_time = hetero_data_time(
                    data, time_attr, self._relation_of
                )
        if time_attr is not None and weight_attr is not None:
            raise NotImplementedError(_TIME_AND_WEIGHT)

    @property
    def is_hetero(self) -> bool:
        return isinstance(self.graph, fastgl.HeteroCSCGraph)

    @property
    def num_neighbors(self) -> NumNeighbors:
        """PyG's ``NumNeighbors``; setting it (a list, a dict per edge type or a
        ``NumNeighbors``) rebuilds fastgl's sampler, checked against the graph."""
        return self._num_neighbors

    @num_neighbors.setter
    def num_neighbors(self, num_neighbors) -> None:
        if not isinstance(num_neighbors, NumNeighbors):
            num_neighbors = NumNeighbors(num_neighbors)
        if self.is_hetero:
            sampler = HeteroNeighborSampler(
                self.graph,
                relation_fanouts(num_neighbors, self._relation_of),
                replace=self.replace,
                weighted=self._weighted,
                disjoint=self.disjoint,
                **self._hetero_times(),
            )
        elif self.is_temporal:
            sampler = temporal_sampler(
                self.graph,
                _fanouts(num_neighbors),
                self.node_time,
                self.edge_time,
                self.temporal_strategy,
                self.replace,
            )
        else:
            sampler = fastgl.NeighborSampler(
                self.graph,
                _fanouts(num_neighbors),
                replace=self.replace,
                weighted=self._weighted,
                disjoint=self.disjoint,
            )
        self._num_neighbors, self._sampler = num_neighbors, sampler

    def _hetero_times(self) -> dict:
        """The times fastgl's heterogeneous sampler takes: node times per node type or edge
        times per relation, on the graph's device, and the strategy; none if not temporal."""
        if not self.is_temporal:
            return {}
        device = self.graph.device
        if self.node_time is not None:
            return dict(
                node_time={t: time.to(device) for t, time in self.node_time.items()},
                strategy=self.temporal_strategy,
            )
        edge_time = {self._relation_of[e]: time.to(device) for e, time in self.edge_time.items()}
        return dict(edge_time=edge_time, strategy=self.temporal_strategy)

    def _sample(self, seed, seed_time=None, **kwargs) -> SamplerOutput | HeteroSamplerOutput:
        if isinstance(seed, dict):
            if not self.is_hetero:
                raise ValueError(
                    f"{_WHERE}: seeds per node type given, but the graph is homogeneous"
                )
            return self._sample_hetero(seed, seed_time)
        if self.is_hetero:
            raise ValueError(
                f"{_WHERE}: the graph is heterogeneous: give the seeds per node type "
                f"(input_nodes=(node_type, ids))"
            )
        seed = seed.to(self.graph.device)
        if self.is_temporal:  # seed times are ignored otherwise, as in PyG
            if seed_time is not None:
                seed_time = seed_time.to(self.graph.device)
            sub = self._sampler.sample(seed, seed_time)
        else:
            sub = self._sampler.sample(seed)
        # The sampler's Fused-Map already deduplicated the seeds: no second pass to check them.
        if sub.batch_size != seed.numel():
            raise ValueError(
                f"{_WHERE}: the seeds of a batch must be distinct unless disjoint=True"
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

    def _sample_hetero(
        self, seed: dict[str, Tensor], seed_time: dict[str, Tensor] | None
    ) -> HeteroSamplerOutput:
        device = self.graph.device
        seeds = {ntype: ids.to(device) for ntype, ids in seed.items()}
        if self.is_temporal:  # seed times are ignored otherwise, as in PyG
            if seed_time is not None:
                seed_time = {ntype: time.to(device) for ntype, time in seed_time.items()}
            sub = self._sampler.sample(seeds, seed_time=seed_time)
        else:
            sub = self._sampler.sample(seeds)
        if not self.disjoint:
            for ntype, ids in seeds.items():
                if sub.batch_size[ntype] != ids.numel():
                    raise ValueError(
                        f"{_WHERE}: the seeds of a batch must be distinct unless "
                        f"disjoint=True (node type {ntype!r} repeats one)"
                    )
        backward = self.sample_direction == "backward"
        return hetero_output(sub, seeds, self._relation_of, backward, self.graph.node_types)


def _data_type(data) -> DataType:
    """PyG's data kind of ``data``."""
    if isinstance(data, HeteroData):
        return DataType.heterogeneous
    if isinstance(data, Data):
        return DataType.homogeneous
    if (
        isinstance(data, (list, tuple))
        and len(data) == 2
        and isinstance(data[0], FeatureStore)
        and isinstance(data[1], GraphStore)
    ):
        return DataType.remote
    raise ValueError(
        f"{_WHERE}: data must be a torch_geometric Data, HeteroData or a (FeatureStore, "
        f"GraphStore) pair, got {type(data).__name__}"
    )


def _subgraph_type(
    subgraph_type, directed: bool, disjoint: bool, time_attr: str | None
) -> SubgraphType:
    """PyG's subgraph type (``directed=False`` is the deprecated spelling of ``'induced'``),
    rejected where PyG rejects it: induced subgraphs of disjoint trees."""
    if not directed:
        warnings.warn(
            f"{_WHERE}: 'directed' is deprecated (as in PyG); use subgraph_type='induced' instead",
            stacklevel=3,
        )
        subgraph_type = SubgraphType.induced
    subgraph_type = SubgraphType(subgraph_type)
    if subgraph_type == SubgraphType.induced and (disjoint or time_attr is not None):
        why = "disjoint=True" if disjoint else "temporal sampling (always disjoint)"
        raise ValueError(
            f"{_WHERE}: {why} cannot be combined with subgraph_type='induced' (an induced "
            f"subgraph would join the trees)"
        )
    return subgraph_type


def _data_graph(data: Data, weight_attr: str | None, transpose: bool) -> "fastgl.CSCGraph":
    """The CSC fastgl samples from, on the device of ``data.edge_index`` (out-edges for the
    backward direction); a ``Data`` without edges gives a graph of ``data.num_nodes`` isolated
    nodes."""
    edge_index = data.edge_index
    num_nodes = data.num_nodes
    if num_nodes is None:
        raise ValueError(
            "fastgl NeighborSampler: cannot tell the number of nodes of data (set data.num_nodes)"
        )
    if edge_index is None:
        for name in ("adj_t", "adj"):
            if name in data:
                raise ValueError(
                    f"fastgl NeighborSampler: data holds a sparse {name!r} but no "
                    f"edge_index; PyG's loaders sample and filter by edge_index "
                    f"(keep it, e.g. ToSparseTensor(remove_edge_index=False))"
                )
        edge_index = torch.empty(2, 0, dtype=torch.int64, device=_device_of(data))
    if transpose:
        edge_index = edge_index.flip(0)
    weight = None
    if weight_attr is not None:
        weight = data[weight_attr] if weight_attr in data else None
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
    return fastgl.CSCGraph.from_edge_index(edge_index, num_nodes, weight)


def _device_of(data: Data) -> torch.device:
    """The device of ``data``'s first tensor (CPU for one without tensors)."""
    for value in data.to_dict().values():
        if isinstance(value, Tensor):
            return value.device
    return torch.device("cpu")


def _share_memory(graph) -> None:
    """Moves a CPU graph into shared memory: workers then read one copy instead of one each."""
    if isinstance(graph, fastgl.HeteroCSCGraph):
        structures = [graph[etype] for etype in graph.edge_types]
        tensors = [t for t in graph.combined if isinstance(t, Tensor)]
    else:
        structures, tensors = [graph], []
    for structure in structures:
        tensors += [getattr(structure, name) for name in ("indptr", "indices", "eid", "weight")]
    for tensor in tensors:
        if tensor is not None and tensor.device.type == "cpu":
            tensor.share_memory_()


def _fanouts(num_neighbors: NumNeighbors) -> list[int]:
    values = num_neighbors.values
    if isinstance(values, dict):
        raise ValueError(
            f"{_WHERE}: num_neighbors per edge type is for heterogeneous graphs; give a "
            f"homogeneous graph one list"
        )
    return [int(v) for v in values]
