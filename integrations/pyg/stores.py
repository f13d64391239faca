"""PyG's remote-backend input ``(FeatureStore, GraphStore)`` read into fastgl's graphs.

A graph store holds one edge index per edge type (``None`` for a homogeneous graph) in COO,
CSR or CSC layout. fastgl reads the edges once and builds its CSC (or, for typed edges, its
:class:`~fastgl.HeteroCSCGraph`) once per graph store: a later sampler over the same, unchanged
edge tensors reuses it. Edge ids are positions in the stored layout, as PyG's.
"""

import copy
import weakref

import torch
from torch import Tensor
from torch_geometric.data import FeatureStore, GraphStore, remote_backend_utils
from torch_geometric.data.graph_store import EdgeAttr, EdgeLayout

import fastgl
from fastgl.graph import expand_ptr

_WHERE = "fastgl NeighborSampler"

# fastgl graphs built from graph stores: {graph store: {key: (edge tensors read, their versions,
# graph)}}. An entry serves a later sampler only if the store returns the very same, unmodified
# tensors, so a store whose edges changed is read anew.
_STORE_GRAPHS: "weakref.WeakKeyDictionary[GraphStore, dict]" = weakref.WeakKeyDictionary()


def is_hetero_store(graph_store: GraphStore) -> bool:
    """Whether the graph store holds typed edges (PyG's heterogeneous remote backend)."""
    types = {attr.edge_type is None for attr in graph_store.get_all_edge_attrs()}
    if len(types) > 1:
        raise ValueError(
            f"{_WHERE}: the graph store mixes edges without a type (homogeneous) and typed "
            f"edges (heterogeneous); keep one kind"
        )
    return types == {False}


def _cached(graph_store: GraphStore, key, tensors: list[Tensor], build):
    """The graph ``build()`` makes from ``tensors``, built once per graph store, ``key`` and
    unchanged tensors."""
    try:
        entries = _STORE_GRAPHS.setdefault(graph_store, {})
    except TypeError:  # a store that cannot be weakly referenced or hashed: no cache
        entries = {}
    versions = [t._version for t in tensors]
    cached = entries.get(key)
    if cached is not None:
        cached_tensors, cached_versions, graph = cached
        same = len(cached_tensors) == len(tensors) and all(
            a is b for a, b in zip(cached_tensors, tensors)
        )
        if same and cached_versions == versions:
            return graph
    graph = build()
    entries[key] = (tensors, versions, graph)
    return graph


# Homogeneous stores ##############################################################################


def store_graph(
    feature_store: FeatureStore, graph_store: GraphStore, transpose: bool
) -> tuple["fastgl.CSCGraph", int]:
    """fastgl's CSC of the homogeneous edges of ``graph_store`` (built once per store and
    edge tensors) and the graph's number of nodes."""
    attrs = graph_store.get_all_edge_attrs()
    if not attrs:  # no edges: the seeds alone
        num_nodes = feature_rows(feature_store, None)
        if num_nodes is None:
            raise ValueError(
                f"{_WHERE}: the graph store holds no edges and the feature store no node "
                f"tensor: cannot tell the number of nodes"
            )
        empty = torch.empty(2, 0, dtype=torch.int64)
        return fastgl.CSCGraph.from_edge_index(empty, num_nodes), num_nodes
    attr = attrs[0]  # PyG samples the first edge index of a homogeneous store too
    first, second = graph_store.get_edge_index(attr)
    layout = EdgeLayout(attr.layout)
    num_nodes = _store_num_nodes(feature_store, attr, layout, first, second)
    graph = _cached(
        graph_store,
        (layout, attr.size, transpose, num_nodes),
        [first, second],
        lambda: _build_store_graph(layout, first, second, transpose, num_nodes),
    )
    return graph, num_nodes


def _build_store_graph(
    layout: EdgeLayout, first: Tensor, second: Tensor, transpose: bool, num_nodes: int
) -> "fastgl.CSCGraph":
    """The CSC of one stored edge index; edge ids are positions in the stored order."""
    if layout == EdgeLayout.CSC and not transpose:  # already fastgl's layout: validate, no sort
        padding = num_nodes + 1 - second.numel()
        indptr = torch.cat([second, second[-1:].expand(padding)]) if padding > 0 else second
        return fastgl.CSCGraph(indptr, first)
    edge_index = _coo(layout, first, second)
    if transpose:
        edge_index = edge_index.flip(0)
    return fastgl.CSCGraph.from_edge_index(edge_index, num_nodes)


def _coo(layout: EdgeLayout, first: Tensor, second: Tensor) -> Tensor:
    """``[2, E]`` (source, destination) of a stored edge index: ``(row, col)`` in COO,
    ``(rowptr, col)`` in CSR, ``(row, colptr)`` in CSC, in the stored edge order."""
    if layout == EdgeLayout.CSR:
        row, col = expand_ptr(first, second.numel()), second
    elif layout == EdgeLayout.CSC:
        row, col = first, expand_ptr(second, first.numel())
    else:
        row, col = first, second
    if row.dtype != col.dtype:
        row, col = row.to(torch.int64), col.to(torch.int64)
    return torch.stack([row, col])


def _store_num_nodes(
    feature_store: FeatureStore, attr: EdgeAttr, layout: EdgeLayout, first: Tensor, second: Tensor
) -> int:
    """``max(attr.size)`` as PyG takes it; without a size, the largest of the edges' node ids
    + 1 (pointer lengths included) and the feature store's row count."""
    if attr.size is not None:
        return max(attr.size)
    counts = [feature_rows(feature_store, None) or 0]
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


def feature_rows(feature_store: FeatureStore, group_name) -> int | None:
    """The row count of the feature store's tensors of ``group_name`` (``None``: homogeneous
    node tensors), if it has any."""
    rows = []
    for attr in feature_store.get_all_tensor_attrs():
        if attr.group_name == group_name:
            size = feature_store.get_tensor_size(attr)
            if size is not None:
                rows.append(int(size[0]))
    return max(rows) if rows else None


def store_time(feature_store: FeatureStore, time_attr: str) -> tuple[Tensor | None, Tensor | None]:
    """``(node_time, edge_time)`` of a homogeneous store: the feature store's one tensor named
    ``time_attr``, node-level if the name is ``'time'`` and edge-level (in the graph store's
    edge order) otherwise, PyG's rule for homogeneous stores."""
    attrs = [
        copy.copy(attr)
        for attr in feature_store.get_all_tensor_attrs()
        if attr.attr_name == time_attr and attr.group_name is None
    ]
    if len(attrs) != 1:
        raise ValueError(
            f"{_WHERE}: temporal sampling needs one tensor named {time_attr!r} in the feature "
            f"store, found {len(attrs)}"
        )
    attrs[0].index = None  # the whole tensor
    time = feature_store.get_tensor(attrs[0])
    return (time, None) if time_attr == "time" else (None, time)


# Heterogeneous stores ############################################################################


def hetero_store_time(feature_store: FeatureStore, time_attr: str) -> tuple[dict, dict]:
    """``(node times per node type, edge times per edge type)`` found for ``time_attr`` in a
    heterogeneous feature store: its tensors of that name, grouped by node type (a string) or
    edge type (a tuple), as PyG reads them; edge times are in the graph store's edge order."""
    node_time, edge_time = {}, {}
    for attr in feature_store.get_all_tensor_attrs():
        if attr.attr_name != time_attr or attr.group_name is None:
            continue
        attr = copy.copy(attr)
        attr.index = None  # the whole tensor
        times = node_time if isinstance(attr.group_name, str) else edge_time
        times[attr.group_name] = feature_store.get_tensor(attr)
    return node_time, edge_time


# PyG's choice among several stored layouts of one edge type (GraphStore._edges_to_layout): the
# layout it samples from if stored, else COO, then CSC, then CSR. Edge ids follow the choice.
_LAYOUT_PREFERENCE = (EdgeLayout.COO, EdgeLayout.CSC, EdgeLayout.CSR)


def hetero_store_graph(
    feature_store: FeatureStore, graph_store: GraphStore, relation_of: dict, transpose: bool
) -> tuple["fastgl.HeteroCSCGraph", dict[str, int]]:
    """fastgl's :class:`~fastgl.HeteroCSCGraph` of the typed edges of ``graph_store`` (built once
    per store and edge tensors; relation keys from ``relation_of``, edges flipped when
    ``transpose``) and the number of nodes of every node type."""
    attrs = store_edge_attrs(graph_store, transpose)
    edges = {etype: graph_store.get_edge_index(attr) for etype, attr in attrs.items()}
    num_nodes = _hetero_num_nodes(feature_store, graph_store, attrs, edges)
    key = ("hetero", transpose, tuple(num_nodes.items()), tuple(relation_of.items()))
    key += tuple((etype, EdgeLayout(attr.layout)) for etype, attr in attrs.items())
    tensors = [t for pair in edges.values() for t in pair]

    def build() -> "fastgl.HeteroCSCGraph":
        edge_index_dict = {}
        for etype, attr in attrs.items():
            coo = _coo(EdgeLayout(attr.layout), *edges[etype])
            edge_index_dict[relation_of[etype]] = coo.flip(0) if transpose else coo
        return fastgl.HeteroCSCGraph.from_edge_index_dict(edge_index_dict, num_nodes)

    return _cached(graph_store, key, tensors, build), num_nodes


def store_edge_attrs(graph_store: GraphStore, transpose: bool) -> dict:
    """Per edge type (in the store's order), the stored edge index fastgl samples, chosen among
    its layouts as PyG chooses (CSC when sampling forward, CSR backward, else COO, CSC, CSR)."""
    by_type: dict = {}
    for attr in graph_store.get_all_edge_attrs():
        by_type.setdefault(attr.edge_type, []).append(attr)
    chosen = {}
    wanted = EdgeLayout.CSR if transpose else EdgeLayout.CSC
    for etype, attrs in by_type.items():
        layouts = [EdgeLayout(attr.layout) for attr in attrs]
        for layout in (wanted, *_LAYOUT_PREFERENCE):
            if layout in layouts:
                chosen[etype] = attrs[layouts.index(layout)]
                break
    return chosen


def _hetero_num_nodes(
    feature_store: FeatureStore, graph_store: GraphStore, attrs: dict, edges: dict
) -> dict[str, int]:
    """The node types (the feature store's, then the edge types' endpoints) and their node
    counts as PyG tells them (the stored sizes, then the feature rows); a type that neither
    names gets the largest of its ids in the edges + 1."""
    node_types = []
    for attr in feature_store.get_all_tensor_attrs():
        if isinstance(attr.group_name, str) and attr.group_name not in node_types:
            node_types.append(attr.group_name)
    for src, _, dst in attrs:
        node_types += [t for t in (src, dst) if t not in node_types]
    num_nodes = {}
    for ntype in node_types:
        try:
            count = remote_backend_utils.num_nodes(feature_store, graph_store, ntype)
            num_nodes[ntype] = int(count)
        except ValueError:
            num_nodes[ntype] = _largest_id(ntype, attrs, edges) + 1
    return num_nodes


def _largest_id(ntype: str, attrs: dict, edges: dict) -> int:
    """The largest id of node type ``ntype`` in the stored edges (pointer lengths included)."""
    largest = -1
    for etype, attr in attrs.items():
        coo = _coo(EdgeLayout(attr.layout), *edges[etype])
        for side, endpoint in ((0, etype[0]), (1, etype[-1])):
            if endpoint == ntype and coo.shape[1] > 0:
                largest = max(largest, int(coo[side].max()))
        layout, (first, second) = EdgeLayout(attr.layout), edges[etype]
        if layout == EdgeLayout.CSR and etype[0] == ntype:
            largest = max(largest, first.numel() - 2)
        if layout == EdgeLayout.CSC and etype[-1] == ntype:
            largest = max(largest, second.numel() - 2)
    return largest
