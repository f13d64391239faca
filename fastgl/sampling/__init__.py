"""Samplers that turn seed nodes into mini-batch subgraphs."""

from .neighbor import NeighborSampler, neighbor_sample
from .subgraph import SampledSubgraph

__all__ = ["NeighborSampler", "SampledSubgraph", "neighbor_sample"]
