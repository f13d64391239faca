"""The training pipeline: feature store, Match-Reorder feature reuse, prefetching loader."""

from fastgl.loader.dataloader import DataLoader, MiniBatch, SubgraphLoader
from fastgl.loader.features import FeatureBuffer, FeatureStore
from fastgl.loader.reuse import Match, greedy_order, match, match_degree, reorder
from fastgl.loader.stats import PHASES, BatchRecord, PipelineStats

__all__ = [
    "PHASES",
    "BatchRecord",
    "DataLoader",
    "FeatureBuffer",
    "FeatureStore",
    "Match",
    "MiniBatch",
    "PipelineStats",
    "SubgraphLoader",
    "greedy_order",
    "match",
    "match_degree",
    "reorder",
]
