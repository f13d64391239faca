"""Samplers that turn seed nodes into mini-batch subgraphs."""

from .neighbor import NeighborSampler, neighbor_sample
from .subgraph import Block, SampledSubgraph

__all__ = ["Block", "NeighborSampler", "SampledSubgraph", "neighbor_sample"]
