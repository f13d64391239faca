"""fastgl's compiled ops as typed Python functions (``torch.ops.fastgl.*`` underneath)."""

from ._kernels import (csc_from_coo, es_spmm_rows, gather_rows, id_map, match, overlap_counts,
                       sample_hops, sample_neighbors, sddmm, spmm)
from ._memory import cached_bytes, empty_cache

__all__ = ["aggregate", "cached_bytes", "csc_from_coo", "edge_softmax", "empty_cache", "es_spmm",
           "es_spmm_rows", "gat_scores", "gather_rows", "id_map", "match", "neighbor_sample",
           "overlap_counts", "sample_hops", "sample_neighbors", "sddmm", "spmm"]


def __getattr__(name):
    # These live with (or use) the samplers, which import this package: resolve them lazily.
    if name == "neighbor_sample":
        from ..sampling.neighbor import neighbor_sample

        return neighbor_sample
    if name in ("aggregate", "edge_softmax", "es_spmm", "gat_scores"):
        from . import _aggregate

        return getattr(_aggregate, name)
    raise AttributeError(name)
