"""fastgl: fast sampling-based GNN training for PyTorch.

Compiled ops live under ``torch.ops.fastgl`` (typed wrappers in :mod:`fastgl.ops`); graphs are
:class:`CSCGraph` and :class:`Block` (:mod:`fastgl.graph`), heterogeneous ones
:class:`HeteroCSCGraph` (:mod:`fastgl.hetero`); samplers are in
:mod:`fastgl.sampling`, the data loader in :mod:`fastgl.loader`, layers and message passing in
:mod:`fastgl.nn` and :mod:`fastgl.nn.functional`, datasets in :mod:`fastgl.data`.
"""

import torch  # noqa: F401  (loads libtorch, which fastgl._C links against)

from . import (
    _C,  # noqa: F401  (registers the compiled ops)
    data,
    graph,
    loader,
    nn,
    ops,
    sampling,
)
from ._version import __version__
from .graph import Block, CSCGraph
from .hetero import HeteroCSCGraph
from .sampling import NeighborSampler, SampledSubgraph, TemporalNeighborSampler

__all__ = [
    "Block",
    "CSCGraph",
    "HeteroCSCGraph",
    "NeighborSampler",
    "SampledSubgraph",
    "TemporalNeighborSampler",
    "__version__",
    "data",
    "graph",
    "loader",
    "nn",
    "ops",
    "sampling",
]
