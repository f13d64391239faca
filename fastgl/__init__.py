"""fastgl: fast sampling-based GNN training for PyTorch.

Compiled ops live under ``torch.ops.fastgl`` (typed wrappers in :mod:`fastgl.ops`); graphs are
:class:`CSCGraph`; samplers are in :mod:`fastgl.sampling`.
"""

import torch  # noqa: F401  (loads libtorch, which fastgl._C links against)

from . import _C  # noqa: F401  (registers the compiled ops)
from ._version import __version__
from . import nn, ops, sampling
from .graph import CSCGraph
from .sampling import Block, NeighborSampler, SampledSubgraph

__all__ = ["Block", "CSCGraph", "NeighborSampler", "SampledSubgraph", "__version__", "nn", "ops",
           "sampling"]
