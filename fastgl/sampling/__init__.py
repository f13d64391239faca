"""Samplers that turn seed nodes into mini-batch subgraphs."""

from .hetero import (
    HeteroNeighborSampler,
    HeteroSampledSubgraph,
    RelationBlock,
    hetero_neighbor_sample,
)
from .neighbor import NeighborSampler, neighbor_sample
from .subgraph import SampledSubgraph
from .temporal import TemporalNeighborSampler

__all__ = [
    "HeteroNeighborSampler",
    "HeteroSampledSubgraph",
    "NeighborSampler",
    "RelationBlock",
    "SampledSubgraph",
    "TemporalNeighborSampler",
    "hetero_neighbor_sample",
    "neighbor_sample",
]
