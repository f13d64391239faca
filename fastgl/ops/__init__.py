"""fastgl's compiled ops as typed Python functions (``torch.ops.fastgl.*`` underneath), named
and ordered as their schemas in ``csrc/fastgl.cpp``, and the controls of fastgl's CPU buffer pool.
"""

from ._memory import cached_bytes, empty_cache
from ._ops import (
    FrontierTrace,
    HopsSample,
    csc_from_coo,
    edge_softmax,
    es_spmm,
    frontier_sample,
    gather_rows,
    id_map,
    induced_subgraphs,
    match,
    overlap_counts,
    random_walk,
    sample_hops,
    sample_neighbors,
    sample_ranges,
    sddmm,
    spmm,
    spmm_max,
)

__all__ = [
    "FrontierTrace",
    "HopsSample",
    "cached_bytes",
    "csc_from_coo",
    "edge_softmax",
    "empty_cache",
    "es_spmm",
    "frontier_sample",
    "gather_rows",
    "id_map",
    "induced_subgraphs",
    "match",
    "overlap_counts",
    "random_walk",
    "sample_hops",
    "sample_neighbors",
    "sample_ranges",
    "sddmm",
    "spmm",
    "spmm_max",
]
