"""fastgl's compiled ops as typed Python functions (``torch.ops.fastgl.*`` underneath)."""

from ._kernels import csc_from_coo, id_map, sample_neighbors

__all__ = ["csc_from_coo", "id_map", "neighbor_sample", "sample_neighbors"]


def __getattr__(name):
    # neighbor_sample lives with the samplers, which import this package: resolve it lazily.
    if name == "neighbor_sample":
        from ..sampling.neighbor import neighbor_sample

        return neighbor_sample
    raise AttributeError(name)
