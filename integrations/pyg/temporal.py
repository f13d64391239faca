"""Temporal sampling in the PyG drop-in: PyG's ``time_attr`` read as node or edge times, and
:class:`fastgl.TemporalNeighborSampler` built on them.

PyG's semantics: every seed grows its own tree (temporal sampling is always disjoint) and has a
time, its ``input_time`` (``edge_label_time`` for links) or, without one, its own node time; a
tree takes only neighbors with ``node_time[neighbor] <= seed time`` (node-level ``time_attr``)
or along edges with ``edge_time[edge] <= seed time`` (edge-level); ``temporal_strategy``
``'uniform'`` draws among them at random, ``'last'`` takes the most recent.
"""

from torch import Tensor
from torch_geometric.data import Data

import fastgl

_WHERE = "fastgl NeighborSampler"


def data_time(data: Data, time_attr: str) -> tuple[Tensor | None, Tensor | None]:
    """``(node_time, edge_time)``: ``data[time_attr]`` where PyG puts it (a node-level attribute
    is a node time, an edge-level one an edge time, in ``edge_index``'s column order)."""
    if time_attr in data:
        if data.is_node_attr(time_attr):
            return data[time_attr], None
        if data.is_edge_attr(time_attr):
            return None, data[time_attr]
    raise ValueError(
        f"{_WHERE}: the time attribute {time_attr!r} is neither a node-level nor an "
        f"edge-level attribute of data"
    )


def temporal_sampler(
    graph: "fastgl.CSCGraph",
    fanouts: list[int],
    node_time: Tensor | None,
    edge_time: Tensor | None,
    strategy: str,
    replace: bool,
) -> "fastgl.TemporalNeighborSampler":
    """fastgl's temporal sampler on ``graph``, with the times moved to the graph's device."""
    device = graph.device
    return fastgl.TemporalNeighborSampler(
        graph,
        fanouts,
        node_time=None if node_time is None else node_time.to(device),
        edge_time=None if edge_time is None else edge_time.to(device),
        strategy=strategy,
        replace=replace,
    )
