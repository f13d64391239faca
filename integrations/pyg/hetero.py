"""Heterogeneous graphs in the PyG drop-in: ``HeteroData`` as a :class:`fastgl.HeteroCSCGraph`,
PyG's per-edge-type ``num_neighbors``, and the sample as PyG's ``HeteroSamplerOutput``.

fastgl samples in-neighbors along each relation; sampling ``'backward'`` (out-neighbors) samples
a graph of the reversed relations ``(dst, rel, src)``, whose edges are turned back into the
caller's edge types in the output, as PyG does.
"""

import torch
from torch import Tensor
from torch_geometric.data import HeteroData
from torch_geometric.sampler import HeteroSamplerOutput
from torch_geometric.sampler.base import NumNeighbors

import fastgl
from fastgl.sampling import HeteroSampledSubgraph

_WHERE = "fastgl NeighborSampler"

EdgeType = tuple[str, str, str]


def relation_keys(edge_types: list[EdgeType], backward: bool) -> dict[EdgeType, EdgeType]:
    """Every PyG edge type's relation in fastgl's graph: itself, or reversed when sampling
    backward (reversing is one-to-one, so two edge types never share a relation)."""
    return {etype: (etype[2], etype[1], etype[0]) if backward else etype for etype in edge_types}


def hetero_data_graph(
    data: HeteroData,
    relation_of: dict[EdgeType, EdgeType],
    backward: bool,
    weight_attr: str | None,
) -> tuple["fastgl.HeteroCSCGraph", dict[str, int]]:
    """fastgl's graph of ``data`` (on the device of its edges; relations keyed by
    ``relation_of``, edges flipped when sampling ``backward``) and its node counts per type.
    With ``weight_attr``, relations without that edge attribute draw uniformly (weight 1)."""
    node_types, edge_types = data.metadata()
    num_nodes = {}
    for ntype in node_types:
        count = data[ntype].num_nodes
        if count is None:
            raise ValueError(
                f"{_WHERE}: cannot tell the number of nodes of type {ntype!r} "
                f"(set data[{ntype!r}].num_nodes)"
            )
        num_nodes[ntype] = int(count)
    for etype in edge_types:
        missing = [t for t in (etype[0], etype[2]) if t not in num_nodes]
        if missing:
            raise ValueError(
                f"{_WHERE}: edge type {etype} names node type {missing[0]!r}, which data "
                f"lacks (set data[{missing[0]!r}].num_nodes)"
            )
    edge_index_dict = {}
    for etype in edge_types:
        edge_index = _edge_index(data, etype)
        edge_index_dict[relation_of[etype]] = edge_index.flip(0) if backward else edge_index
    weights = None
    if weight_attr is not None:
        weights = {
            relation_of[etype]: _edge_weight(data, etype, weight_attr) for etype in edge_types
        }
    graph = fastgl.HeteroCSCGraph.from_edge_index_dict(edge_index_dict, num_nodes, weights)
    return graph, num_nodes


def _edge_index(data: HeteroData, etype: EdgeType) -> Tensor:
    store = data[etype]
    if "edge_index" in store:
        return store.edge_index
    for name in ("adj_t", "adj"):
        if name in store:
            raise ValueError(
                f"{_WHERE}: edge type {etype} holds a sparse {name!r} but no edge_index; PyG's "
                f"loaders sample and filter by edge_index (keep it, e.g. "
                f"ToSparseTensor(remove_edge_index=False))"
            )
    raise ValueError(f"{_WHERE}: edge type {etype} has no edge_index")


def _edge_weight(data: HeteroData, etype: EdgeType, weight_attr: str) -> Tensor:
    """``weight_attr`` of edge type ``etype`` as float weights, or ones where it is absent."""
    store = data[etype]
    num_edges = store.edge_index.shape[1]
    if weight_attr not in store:
        return torch.ones(num_edges, device=store.edge_index.device)
    weight = store[weight_attr]
    if not isinstance(weight, Tensor) or weight.dim() != 1 or weight.numel() != num_edges:
        raise ValueError(
            f"{_WHERE}: weight_attr {weight_attr!r} of edge type {etype} must be an edge "
            f"attribute of shape [{num_edges}]"
        )
    return weight if weight.is_floating_point() else weight.to(torch.float32)


def hetero_data_time(
    data: HeteroData, time_attr: str, relation_of: dict[EdgeType, EdgeType]
) -> tuple[dict | None, dict | None]:
    """``(node_time, edge_time)`` of ``data`` as PyG reads ``time_attr``: node times per node
    type holding it, or edge times per edge type holding it (keyed by the caller's edge types),
    never both."""
    node_time = {t: data[t][time_attr] for t in data.node_types if time_attr in data[t]}
    edge_time = {e: data[e][time_attr] for e in relation_of if time_attr in data[e]}
    return checked_times(time_attr, node_time, edge_time)


def checked_times(time_attr: str, node_time: dict, edge_time: dict) -> tuple:
    """The node or the edge times found for ``time_attr``, as PyG accepts them: one kind."""
    if node_time and edge_time:
        raise ValueError(
            f"{_WHERE}: the time attribute {time_attr!r} holds both node-level and edge-level "
            f"information"
        )
    if not node_time and not edge_time:
        raise ValueError(
            f"{_WHERE}: the time attribute {time_attr!r} is neither a node-level nor an "
            f"edge-level attribute"
        )
    return node_time or None, edge_time or None


def relation_fanouts(
    num_neighbors: NumNeighbors, relation_of: dict[EdgeType, EdgeType]
) -> dict[EdgeType, list[int]]:
    """PyG's number of neighbors per edge type (a list for every type, or a dict with
    ``NumNeighbors.default`` for the types it leaves out; PyG's errors for unknown types,
    missing ones and unequal hop counts), keyed by fastgl's relations."""
    values = num_neighbors.get_values(list(relation_of))
    return {relation_of[etype]: [int(v) for v in fanouts] for etype, fanouts in values.items()}


def hetero_output(
    sub: HeteroSampledSubgraph,
    seeds: dict[str, Tensor],
    relation_of: dict[EdgeType, EdgeType],
    backward: bool,
    node_types: list[str],
) -> HeteroSamplerOutput:
    """``sub`` in PyG's ``HeteroSamplerOutput`` layout: per node type ``node`` (seeds first) and
    ``num_sampled_nodes``; per edge type (the caller's keys) ``row`` (local source), ``col``
    (local destination; sampled ``backward``, the relation's edges turned back), ``edge`` (edge
    id), ``num_sampled_edges``; disjoint: ``batch``, each seed's position in ``seeds``' order
    (PyG's), whatever the graph's node type order."""
    row, col, edge, num_sampled_edges = {}, {}, {}, {}
    for etype, relation in relation_of.items():
        src, dst = sub.row[relation], sub.col[relation]
        row[etype], col[etype] = (dst, src) if backward else (src, dst)
        edge[etype] = sub.eid[relation]
        num_sampled_edges[etype] = sub.num_sampled_edges[relation]
    return HeteroSamplerOutput(
        node=dict(sub.nodes),
        row=row,
        col=col,
        edge=edge,
        batch=None if sub.batch is None else _batch_in_seed_order(sub.batch, seeds, node_types),
        num_sampled_nodes=dict(sub.num_sampled_nodes),
        num_sampled_edges=num_sampled_edges,
    )


def _batch_in_seed_order(
    batch: dict[str, Tensor], seeds: dict[str, Tensor], node_types: list[str]
) -> dict[str, Tensor]:
    """fastgl numbers the trees by the seeds' node types in the graph's order, PyG in the order
    of the seed dict: renumber each tree from the one order to the other."""
    seed_order = [t for t in seeds if t in node_types]
    if seed_order == [t for t in node_types if t in seeds]:
        return batch
    counts = {t: seeds[t].numel() for t in seed_order}
    graph_starts, pyg_starts, start = [], {}, 0
    for ntype in seed_order:
        pyg_starts[ntype], start = start, start + counts[ntype]
    start = 0
    ends = []
    for ntype in (t for t in node_types if t in seeds):
        graph_starts.append((ntype, start))
        start += counts[ntype]
        ends.append(start)
    device = next(iter(batch.values())).device
    shift = torch.tensor(
        [pyg_starts[t] - s for t, s in graph_starts], dtype=torch.int64, device=device
    )
    ends = torch.tensor(ends, dtype=torch.int64, device=device)
    return {t: b + shift[torch.bucketize(b, ends, right=True)] for t, b in batch.items()}
