"""Samplers that turn seed nodes into mini-batch subgraphs."""

from .neighbor import NeighborSampler, neighbor_sample
from .subgraph import SampledSubgraph
from .temporal import TemporalNeighborSampler

__all__ = ["NeighborSampler", "SampledSubgraph", "TemporalNeighborSampler", "neighbor_sample"]
