"""Samplers that turn seed nodes into mini-batch subgraphs."""

from .cluster import ClusterGCNSampler, metis_parts
from .hetero import (
    HeteroNeighborSampler,
    HeteroSampledSubgraph,
    RelationBlock,
    hetero_neighbor_sample,
)
from .layer import (
    FastGCNSampler,
    LADIESSampler,
    LayerSampledSubgraph,
    LayerSampler,
    MVSSampler,
    mvs_probabilities,
)
from .neighbor import NeighborSampler, neighbor_sample
from .program import (
    DeepWalkProgram,
    Draws,
    GrowingSubgraph,
    KHopProgram,
    LayerProgram,
    MultiRWProgram,
    Neighborhood,
    PPRProgram,
    ProgramRandom,
    SamplerProgram,
    StoredWeights,
    run_program,
)
from .saint import (
    EgoSubgraphs,
    FrontierSampler,
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTNorm,
    SAINTRandomWalkSampler,
    ShaDowSampler,
    SubgraphSampler,
    saint_normalization,
)
from .subgraph import SampledSubgraph
from .temporal import TemporalNeighborSampler

__all__ = [
    "ClusterGCNSampler",
    "DeepWalkProgram",
    "EgoSubgraphs",
    "Draws",
    "FastGCNSampler",
    "FrontierSampler",
    "GrowingSubgraph",
    "HeteroNeighborSampler",
    "HeteroSampledSubgraph",
    "KHopProgram",
    "LADIESSampler",
    "LayerProgram",
    "LayerSampledSubgraph",
    "LayerSampler",
    "MVSSampler",
    "MultiRWProgram",
    "NeighborSampler",
    "Neighborhood",
    "PPRProgram",
    "ProgramRandom",
    "RelationBlock",
    "SAINTEdgeSampler",
    "SAINTNodeSampler",
    "SAINTNorm",
    "SAINTRandomWalkSampler",
    "SampledSubgraph",
    "SamplerProgram",
    "ShaDowSampler",
    "StoredWeights",
    "SubgraphSampler",
    "TemporalNeighborSampler",
    "hetero_neighbor_sample",
    "metis_parts",
    "mvs_probabilities",
    "neighbor_sample",
    "run_program",
    "saint_normalization",
]
