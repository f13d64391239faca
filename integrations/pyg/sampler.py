"""A ``torch_geometric.sampler.NeighborSampler`` that samples with fastgl's compiled ops.

PyG's own sampler needs ``pyg-lib`` or ``torch-sparse``, which have no wheels for current torch;
this one needs neither. It returns PyG's ``SamplerOutput`` layout: seeds first, then the nodes
new at each hop in first-occurrence order; ``row`` = local neighbor (message source), ``col`` =
local node it was sampled for; edges grouped by hop; ``edge`` = global edge ids; the per-hop
``num_sampled_nodes`` / ``num_sampled_edges`` that ``trim_to_layer`` needs.
"""

import warnings
import weakref

import torch
from torch import Tensor
from torch_geometric.data import Data, FeatureStore, GraphStore, HeteroData
from torch_geometric.data.graph_store import EdgeAttr, EdgeLayout
from torch_geometric.sampler import NeighborSampler as PyGNeighborSampler
from torch_geometric.sampler import SamplerOutput
from torch_geometric.sampler.base import DataType, NumNeighbors, SubgraphType

import fastgl
from fastgl.graph import expand_ptr


class NeighborSampler(PyGNeighborSampler):
    """PyG's ``NeighborSampler`` (same arguments) on fastgl's sampling kernels.

    Pass it to PyG's loaders as ``neighbor_sampler=``, or use
    :class:`fastgl.integrations.pyg.NeighborLoader`, which does. Sampling runs on the device of
    the graph's edges (a GPU graph is sampled on the GPU).

    ``data`` is a homogeneous ``Data`` (one without ``edge_index`` or with no edges samples the
    seeds alone, as PyG does) or PyG's remote-backend pair ``(FeatureStore, GraphStore)`` whose
    graph store holds one homogeneous edge index (``edge_type=None``) in COO, CSR or CSC layout.
    For a store, the edges are read once and fastgl's CSC is built once and cached per graph
    store (a later sampler over the same, unchanged edge tensors reuses it); the node count is
    ``max(EdgeAttr.size)`` as in PyG (or, without a size, the largest of the edges' node ids + 1
    and the feature store's row count); sampled edge ids are positions in the stored layout, as
    PyG's; PyG's loader fetches the node features from the feature store.

    Supported: ``subgraph_type`` ``'directional'``, ``'bidirectional'`` and ``'induced'``,
    ``replace``, ``disjoint`` (not with ``'induced'``: PyG rejects that too), ``weight_attr``
    (draws proportional to a non-negative edge attribute of a ``Data``), ``sample_direction``
    ``'forward'`` and ``'backward'``. Heterogeneous graphs (``HeteroData``, typed graph stores,
    per-edge-type ``num_neighbors``) and temporal sampling (``time_attr``) raise
    ``NotImplementedError``.

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
    """

    def __init__(
        self,
        data: Data | tuple[FeatureStore, GraphStore],
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
        if time_attr is not None:
            raise NotImplementedError(
                "fastgl NeighborSampler: temporal sampling (time_attr) is not supported yet"
            )
        if sample_direction not in ("forward", "backward"):
            raise ValueError(
                f"fastgl NeighborSampler: sample_direction must be 'forward' or "
                f"'backward', got {sample_direction!r}"
            )
        if not directed:
            warnings.warn(
                "fastgl NeighborSampler: 'directed' is deprecated (as in PyG); "
                "use subgraph_type='induced' instead",
                stacklevel=2,
            )
            subgraph_type = SubgraphType.induced
        self.subgraph_type = SubgraphType(subgraph_type)
        if disjoint and self.subgraph_type == SubgraphType.induced:
            raise ValueError(
                "fastgl NeighborSampler: disjoint=True cannot be combined with "
                "subgraph_type='induced' (an induced subgraph would join the trees)"
            )
        self.sample_direction = sample_direction
        transpose = sample_direction == "backward"
        if self.data_type == DataType.remote:
            if weight_attr is not None:
                raise NotImplementedError(
                    "fastgl NeighborSampler: weight_attr is not supported for "
                    "(FeatureStore, GraphStore) inputs (nor is it by PyG's sampler)"
                )
            self.node_types, self.edge_types = [None], [None]  # PyG: a homogeneous store
            self.graph, self.num_nodes = _store_graph(*data, transpose)
        else:
            self.graph = _data_graph(data, weight_attr, transpose)
            self.num_nodes = self.graph.num_nodes
        if share_memory:
            _share_memory(self.graph)
        self.node_time = self.edge_time = None
        self.perm = None  # sampled edge ids are already global
        self.num_neighbors = num_neighbors
        self.replace = replace
        self.disjoint = disjoint
        self.temporal_strategy = temporal_strategy
        self.keep_orig_edges = False
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


def _data_type(data) -> DataType:
    """PyG's data kind of ``data``, for the kinds fastgl samples (heterogeneous ones raise)."""
    if isinstance(data, HeteroData):
        raise NotImplementedError(
            "fastgl NeighborSampler: only homogeneous graphs (Data or a (FeatureStore, "
            "GraphStore) pair without edge types) are supported yet, got HeteroData"
        )
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
        f"fastgl NeighborSampler: data must be a torch_geometric Data or a (FeatureStore, "
        f"GraphStore) pair, got {type(data).__name__}"
    )


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


# fastgl CSCs built from graph stores: {graph store: {(layout, size, transpose, num_nodes):
# (edge tensors read, their versions, CSCGraph)}}. An entry serves a later sampler only if the
# store returns the very same, unmodified tensors, so a store whose edges changed is read anew.
_STORE_GRAPHS: "weakref.WeakKeyDictionary[GraphStore, dict]" = weakref.WeakKeyDictionary()


def _store_graph(
    feature_store: FeatureStore, graph_store: GraphStore, transpose: bool
) -> tuple["fastgl.CSCGraph", int]:
    """fastgl's CSC of the homogeneous edges of ``graph_store`` (built once per store and
    edge tensors) and the graph's number of nodes."""
    attrs = graph_store.get_all_edge_attrs()
    if any(attr.edge_type is not None for attr in attrs):
        types = sorted({str(attr.edge_type) for attr in attrs})
        raise NotImplementedError(
            f"fastgl NeighborSampler: heterogeneous graph stores (edge types {types}) "
            f"are not supported yet"
        )
    if not attrs:  # no edges: the seeds alone
        num_nodes = _feature_rows(feature_store)
        if num_nodes is None:
            raise ValueError(
                "fastgl NeighborSampler: the graph store holds no edges and the feature "
                "store no node tensor: cannot tell the number of nodes"
            )
        empty = torch.empty(2, 0, dtype=torch.int64)
        return fastgl.CSCGraph.from_edge_index(empty, num_nodes), num_nodes
    attr = attrs[0]  # PyG samples the first edge index of a homogeneous store too
    first, second = graph_store.get_edge_index(attr)
    layout = EdgeLayout(attr.layout)
    num_nodes = _store_num_nodes(feature_store, attr, layout, first, second)
    key = (layout, attr.size, transpose, num_nodes)
    try:
        entries = _STORE_GRAPHS.setdefault(graph_store, {})
    except TypeError:  # a store that cannot be weakly referenced or hashed: no cache
        entries = {}
    versions = (first._version, second._version)
    cached = entries.get(key)
    if cached is not None:
        (cached_first, cached_second), cached_versions, graph = cached
        if cached_first is first and cached_second is second and cached_versions == versions:
            return graph, num_nodes
    graph = _build_store_graph(layout, first, second, transpose, num_nodes)
    entries[key] = ((first, second), versions, graph)
    return graph, num_nodes


def _build_store_graph(
    layout: EdgeLayout, first: Tensor, second: Tensor, transpose: bool, num_nodes: int
) -> "fastgl.CSCGraph":
    """The CSC of one stored edge index: ``(row, col)`` in COO, ``(rowptr, col)`` in CSR,
    ``(row, colptr)`` in CSC; edge ids are positions in the stored order."""
    if layout == EdgeLayout.CSC and not transpose:  # already fastgl's layout: validate, no sort
        padding = num_nodes + 1 - second.numel()
        indptr = torch.cat([second, second[-1:].expand(padding)]) if padding > 0 else second
        return fastgl.CSCGraph(indptr, first)
    if layout == EdgeLayout.CSR:
        row, col = expand_ptr(first, second.numel()), second
    elif layout == EdgeLayout.CSC:
        row, col = first, expand_ptr(second, first.numel())
    else:
        row, col = first, second
    if row.dtype != col.dtype:
        row, col = row.to(torch.int64), col.to(torch.int64)
    edge_index = torch.stack([col, row] if transpose else [row, col])
    return fastgl.CSCGraph.from_edge_index(edge_index, num_nodes)


def _store_num_nodes(
    feature_store: FeatureStore, attr: EdgeAttr, layout: EdgeLayout, first: Tensor, second: Tensor
) -> int:
    """``max(attr.size)`` as PyG takes it; without a size, the largest of the edges' node ids
    + 1 (pointer lengths included) and the feature store's row count."""
    if attr.size is not None:
        return max(attr.size)
    counts = [_feature_rows(feature_store) or 0]
    if layout == EdgeLayout.CSR:
        counts.append(first.numel() - 1)
        ids = [second]
    elif layout == EdgeLayout.CSC:
        counts.append(second.numel() - 1)
        ids = [first]
    else:
        ids = [first, second]
    counts += [int(t.max()) + 1 for t in ids if t.numel() > 0]
    return max(counts)


def _feature_rows(feature_store: FeatureStore) -> int | None:
    """The row count of the feature store's node tensors (``group_name=None``), if it has any."""
    rows = []
    for attr in feature_store.get_all_tensor_attrs():
        if attr.group_name is None:
            size = feature_store.get_tensor_size(attr)
            if size is not None:
                rows.append(int(size[0]))
    return max(rows) if rows else None


def _share_memory(graph: "fastgl.CSCGraph") -> None:
    """Moves a CPU graph into shared memory: workers then read one copy instead of one each."""
    for name in ("indptr", "indices", "eid", "weight"):
        tensor = getattr(graph, name)
        if tensor is not None and tensor.device.type == "cpu":
            tensor.share_memory_()


def _fanouts(num_neighbors: NumNeighbors) -> list:
    values = num_neighbors.values
    if isinstance(values, dict):
        raise NotImplementedError(
            "fastgl NeighborSampler: per-edge-type num_neighbors "
            "(heterogeneous graphs) are not supported yet"
        )
    return [int(v) for v in values]
