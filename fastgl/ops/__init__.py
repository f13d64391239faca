"""fastgl's compiled ops as typed Python functions (``torch.ops.fastgl.*`` underneath)."""

from ._memory import cached_bytes, empty_cache
from ._ops import (
    HopsSample,
    csc_from_coo,
    es_spmm_rows,
    gather_rows,
    id_map,
    match,
    overlap_counts,
    sample_hops,
    sample_neighbors,
    sddmm,
    spmm,
)

__all__ = [
    "HopsSample",
    "cached_bytes",
    "csc_from_coo",
    "empty_cache",
    "es_spmm_rows",
    "gather_rows",
    "id_map",
    "match",
    "overlap_counts",
    "sample_hops",
    "sample_neighbors",
    "sddmm",
    "spmm",
]
