"""Neighborhood aggregations: what :class:`~fastgl.nn.SAGEConv`'s ``aggr`` argument names.

PyG's ``aggr`` values, with PyG's ``state_dict`` keys and output shapes:

* ``"sum"`` (``"add"``), ``"mean"``, ``"max"``, ``"min"``: :class:`Reduce`, on fastgl's kernels
  (:func:`fastgl.nn.functional.aggregate`); PyG's ``SumAggregation()``, ``MeanAggregation()``,
  ``MaxAggregation()`` and ``MinAggregation()`` instances become one too;
* ``"lstm"``: :class:`LSTMAggregation`, a ``torch.nn.LSTM`` over every node's neighbors in edge
  order (PyG's ``LSTMAggregation``);
* a list of aggregations: :class:`MultiAggregation`, their results combined by ``mode``
  (``"cat"``, ``"proj"``, ``"attn"``, ``"sum"``, ``"mean"``, ``"max"``, ``"min"``,
  ``"logsumexp"``, ``"std"``, ``"var"``), as PyG's ``MultiAggregation``;
* any other name (``"softmax"``, ``"std"``, ...) or a PyG ``Aggregation`` module (an
  ``MLPAggregation``, say): PyG's own module, called with PyG's arguments (the messages and
  their destinations in the caller's edge order). Only these need ``torch_geometric``.

The layer hands an aggregation a :class:`Neighborhood` (graph, source features, edge weights);
:func:`aggregate_neighborhood` runs fastgl's and PyG's modules alike.

Example:
    >>> import fastgl
    >>> from fastgl.nn._adjacency import adjacency_of
    >>> edge_index = torch.tensor([[0, 1, 2, 3], [0, 0, 1, 1]])
    >>> x, _, adj = adjacency_of("example", torch.randn(4, 8), edge_index)
    >>> aggr = resolve_aggregation("example", ["mean", "max"], {"mode": "cat"})
    >>> aggr
    MultiAggregation([
      MeanAggregation(),
      MaxAggregation(),
    ], mode=cat)
    >>> aggregate_neighborhood(aggr, Neighborhood("example", adj, x)).shape
    torch.Size([4, 16])
"""

import copy
import importlib
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from fastgl.graph import expand_ptr

from ._adjacency import Adjacency
from .approx import ESSpMM
from .approx import aggregate as _aggregate

__all__ = [
    "Aggregation",
    "LSTMAggregation",
    "MultiAggregation",
    "Neighborhood",
    "Reduce",
    "aggregate_neighborhood",
    "out_channels_of",
    "resolve_aggregation",
]

_REDUCES = {"sum": "sum", "add": "sum", "mean": "mean", "max": "max", "min": "min"}
# PyG's parameterless basic aggregations, recognized by class name (PyG is not imported).
_PYG_REDUCES = {
    "SumAggregation": "sum",
    "MeanAggregation": "mean",
    "MaxAggregation": "max",
    "MinAggregation": "min",
}
_DENSE_MODES = ("sum", "mean", "max", "min", "logsumexp", "std", "var")
_MODES = ("cat", "proj", "attn") + _DENSE_MODES


class Neighborhood:
    """The messages ``x[src(e)]`` an aggregation reduces over each destination's in-edges.

    Args:
        where: the layer, for error messages.
        adj: the graph.
        x: ``[num_src, F]`` source features.
        weight: ``[E]`` edge weights in the structure's order that :meth:`reduce` multiplies
            the messages by (a sparse ``adj_t``'s values, as PyG's fused ``spmm``), or ``None``.
        approx: an :class:`~fastgl.nn.ESSpMM` for :meth:`reduce`, or ``None`` (exact).
    """

    def __init__(
        self,
        where: str,
        adj: Adjacency,
        x: Tensor,
        weight: Tensor | None = None,
        approx: ESSpMM | None = None,
    ) -> None:
        self.where, self.adj, self.x, self.weight, self.approx = where, adj, x, weight, approx

    @property
    def num_dst(self) -> int:
        return self.adj.num_dst

    def reduce(self, reduce: str) -> Tensor:
        """``[num_dst, F]``: ``"sum"``, ``"mean"``, ``"max"`` or ``"min"`` on fastgl's kernels."""
        return _aggregate(self.adj.structure, self.x, self.weight, reduce, approx=self.approx)

    def messages(self, name: str) -> tuple[Tensor, Tensor]:
        """``(x_j [E, F], index [E])``: every edge's message and destination in the caller's
        edge order, what PyG's ``MessagePassing`` gives an ``Aggregation`` module."""
        self._check_exact(name)
        src, dst = self.adj.caller_edge_index()
        return self.x.index_select(0, src), dst

    def dense_batch(self, name: str) -> Tensor:
        """``[num_dst, D, F]``: every destination's messages in edge order, zero-padded to the
        largest in-degree ``D`` (at least 1), as PyG's ``to_dense_batch``. Edge order means
        the caller's, so, as PyG, the caller's edges must be sorted by destination."""
        self._check_exact(name)
        adj = self.adj
        if not adj.caller_sorted_by_dst():
            raise ValueError(
                f"{self.where}: the 'index' tensor is not sorted by destination: {name} reads "
                f"every node's neighbors in edge order, which needs the edges sorted by "
                f"destination (sort edge_index by its second row, e.g. "
                f"torch_geometric.utils.sort_edge_index(edge_index, sort_by_row=False))"
            )
        indptr, indices, _ = adj.structure.csc()
        degree = indptr[1:] - indptr[:-1]
        width = max(int(degree.max()) if degree.numel() > 0 else 0, 1)
        dst = expand_ptr(indptr, indices.numel())
        position = torch.arange(indices.numel(), device=indptr.device) - indptr[dst]
        dense = self.x.new_zeros(adj.num_dst, width, self.x.shape[1])
        return dense.index_put((dst, position), self.x.index_select(0, indices.to(torch.int64)))

    def _check_exact(self, name: str) -> None:
        if self.approx is not None:
            raise ValueError(
                f"{self.where}: approx=ESSpMM applies to the sum, mean, max and min "
                f"aggregations, not to {name}"
            )


class Aggregation(torch.nn.Module):
    """Base of fastgl's aggregations: ``forward(neighborhood)`` gives ``[num_dst, C]``."""

    def get_out_channels(self, in_channels: int) -> int:
        """``C`` for messages of ``in_channels`` features (PyG's name)."""
        return in_channels

    def reset_parameters(self) -> None:
        pass


class Reduce(Aggregation):
    """``sum``, ``mean``, ``max`` or ``min`` of the messages on fastgl's kernels (nodes
    without in-edges get zeros, as PyG's)."""

    def __init__(self, reduce: str) -> None:
        super().__init__()
        self.reduce = reduce

    def forward(self, hood: Neighborhood) -> Tensor:
        return hood.reduce(self.reduce)

    def __repr__(self) -> str:
        return f"{self.reduce.capitalize()}Aggregation()"


class LSTMAggregation(Aggregation):
    """PyG's ``LSTMAggregation``: every node's neighbors, in edge order and zero-padded to the
    largest in-degree, run through ``torch.nn.LSTM(batch_first=True)``; the output is the
    LSTM's output at the last (padded) step. Not permutation-invariant: the caller's edges must
    be sorted by destination (else a ``ValueError``, as PyG). ``kwargs`` go to the LSTM."""

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.lstm = torch.nn.LSTM(in_channels, out_channels, batch_first=True, **kwargs)

    def reset_parameters(self) -> None:
        self.lstm.reset_parameters()

    def get_out_channels(self, in_channels: int) -> int:
        return self.out_channels

    def forward(self, hood: Neighborhood) -> Tensor:
        if hood.num_dst == 0:
            return hood.x.new_zeros(0, self.out_channels)
        return self.lstm(hood.dense_batch("LSTM aggregation"))[0][:, -1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"


class _HeadLinears(torch.nn.Module):
    """One linear map per aggregation (``lins.<i>``: PyG's ``HeteroDictLinear`` keys)."""

    def __init__(self, in_channels: Sequence[int], out_channels: int) -> None:
        super().__init__()
        self.lins = torch.nn.ModuleDict(
            {str(i): torch.nn.Linear(c, out_channels) for i, c in enumerate(in_channels)}
        )

    def reset_parameters(self) -> None:
        for lin in self.lins.values():
            lin.reset_parameters()

    def forward(self, inputs: list[Tensor]) -> list[Tensor]:
        return [self.lins[str(i)](t) for i, t in enumerate(inputs)]


class MultiAggregation(Aggregation):
    """PyG's ``MultiAggregation``: several aggregations, their results combined by ``mode``.

    Args:
        where: the layer, for error messages.
        aggrs: the aggregations (anything :func:`resolve_aggregation` takes but a list).
        aggrs_kwargs: one dict of arguments per aggregation given by name.
        mode: ``"cat"`` (concatenate), ``"proj"`` (concatenate, then ``lin``), ``"attn"``
            (``lin_heads`` per aggregation, then ``multihead_attn`` across them, averaged), or
            a reduction across them: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``,
            ``"logsumexp"``, ``"std"``, ``"var"``.
        mode_kwargs: ``in_channels`` (int, or one per aggregation) and ``out_channels`` for
            ``"proj"`` and ``"attn"``; ``num_heads`` for ``"attn"``; the rest goes to the
            ``torch.nn.Linear`` (proj) or ``torch.nn.MultiheadAttention`` (attn).
    """

    def __init__(
        self,
        where: str,
        aggrs: Sequence,
        aggrs_kwargs: Sequence[dict] | None = None,
        mode: str = "cat",
        mode_kwargs: dict | None = None,
    ) -> None:
        super().__init__()
        if len(aggrs) == 0:
            raise ValueError(f"{where}: a list of aggregations must not be empty")
        if aggrs_kwargs is None:
            aggrs_kwargs = [{}] * len(aggrs)
        if len(aggrs_kwargs) != len(aggrs):
            raise ValueError(
                f"{where}: aggrs_kwargs must hold one dict per aggregation ({len(aggrs)}), "
                f"got {len(aggrs_kwargs)}"
            )
        if mode not in _MODES:
            raise ValueError(f"{where}: mode must be one of {_MODES}, got {mode!r}")
        self.aggrs = torch.nn.ModuleList(
            [resolve_aggregation(where, a, kw, nested=True) for a, kw in zip(aggrs, aggrs_kwargs)]
        )
        self.mode = mode
        kwargs = copy.copy(mode_kwargs) or {}
        self.in_channels = kwargs.pop("in_channels", None)
        self.out_channels = kwargs.pop("out_channels", None)
        if mode in ("proj", "attn"):
            self._init_combiner(where, kwargs)

    def _init_combiner(self, where: str, kwargs: dict) -> None:
        if len(self.aggrs) == 1:
            raise ValueError(f"{where}: mode {self.mode!r} needs two or more aggregations")
        if not self.in_channels or not self.out_channels:
            raise ValueError(
                f"{where}: mode {self.mode!r} needs in_channels and out_channels in mode_kwargs"
            )
        if isinstance(self.in_channels, int):
            self.in_channels = [self.in_channels] * len(self.aggrs)
        if self.mode == "proj":
            self.lin = torch.nn.Linear(sum(self.in_channels), self.out_channels, **kwargs)
        else:
            self.lin_heads = _HeadLinears(self.in_channels, self.out_channels)
            num_heads = kwargs.pop("num_heads", 1)
            self.multihead_attn = torch.nn.MultiheadAttention(
                self.out_channels, num_heads, **kwargs
            )

    def reset_parameters(self) -> None:
        for aggr in self.aggrs:
            aggr.reset_parameters()
        if self.mode == "proj":
            self.lin.reset_parameters()
        elif self.mode == "attn":
            self.lin_heads.reset_parameters()
            self.multihead_attn._reset_parameters()

    def get_out_channels(self, in_channels: int) -> int:
        if self.out_channels is not None:
            return self.out_channels
        if self.mode == "cat":
            return sum(out_channels_of(aggr, in_channels) for aggr in self.aggrs)
        return in_channels

    def forward(self, hood: Neighborhood) -> Tensor:
        return self.combine([aggregate_neighborhood(aggr, hood) for aggr in self.aggrs])

    def combine(self, outs: list[Tensor]) -> Tensor:
        """The aggregations' ``[num_dst, C_i]`` results as one ``[num_dst, C]``."""
        if len(outs) == 1:
            return outs[0]
        if self.mode == "cat":
            return torch.cat(outs, dim=-1)
        if self.mode == "proj":
            return self.lin(torch.cat(outs, dim=-1))
        if self.mode == "attn":
            heads = torch.stack(self.lin_heads(outs))  # [num_aggrs, num_dst, out_channels]
            return self.multihead_attn(heads, heads, heads)[0].mean(dim=0)
        out = getattr(torch, self.mode)(torch.stack(outs), dim=0)
        return out if isinstance(out, Tensor) else out.values  # max and min: (values, indices)

    def __repr__(self) -> str:
        inner = "".join(f"  {aggr},\n" for aggr in self.aggrs)
        return f"{type(self).__name__}([\n{inner}], mode={self.mode})"


def out_channels_of(aggr: torch.nn.Module, in_channels: int) -> int:
    """The width of ``aggr``'s result for messages of ``in_channels`` features (PyG's
    ``get_out_channels`` where the module has one, else ``in_channels``, as PyG assumes)."""
    get = getattr(aggr, "get_out_channels", None)
    return get(in_channels) if callable(get) else in_channels


def aggregate_neighborhood(aggr: torch.nn.Module, hood: Neighborhood) -> Tensor:
    """``[num_dst, C]``: a fastgl :class:`Aggregation` reads the neighborhood itself; any other
    module (PyG's) gets PyG's arguments: the messages, their destinations, ``dim_size``."""
    if isinstance(aggr, Aggregation):
        return aggr(hood)
    inputs, index = hood.messages(type(aggr).__name__)
    return aggr(inputs, index, dim_size=hood.num_dst)


def resolve_aggregation(
    where: str, aggr: Any, kwargs: dict | None = None, nested: bool = False
) -> torch.nn.Module:
    """The module for an ``aggr`` argument (see the module docstring); ``kwargs`` are PyG's
    ``aggr_kwargs``: a named aggregation's arguments, or a list's ``MultiAggregation``
    arguments (``aggrs_kwargs``, ``mode``, ``mode_kwargs``)."""
    kwargs = dict(kwargs or {})
    if isinstance(aggr, str):
        return _resolve_name(where, aggr, kwargs)
    if isinstance(aggr, (list, tuple)) and not nested:
        return MultiAggregation(where, aggr, **kwargs)
    if isinstance(aggr, torch.nn.Module):
        if kwargs:
            raise ValueError(
                f"{where}: aggr_kwargs apply to an aggregation given by name, not to a module "
                f"({type(aggr).__name__}), got {sorted(kwargs)}"
            )
        return _on_fastgl_kernels(aggr)
    raise TypeError(
        f"{where}: aggr must be a name ('mean', 'lstm', ...), "
        f"{'' if nested else 'a list of aggregations, '}or an aggregation module, got "
        f"{type(aggr).__name__}"
    )


def _resolve_name(where: str, name: str, kwargs: dict) -> torch.nn.Module:
    if name in _REDUCES:
        if kwargs:
            raise ValueError(f"{where}: aggr {name!r} takes no arguments, got {sorted(kwargs)}")
        return Reduce(_REDUCES[name])
    if name == "lstm":
        if "in_channels" not in kwargs or "out_channels" not in kwargs:
            raise ValueError(f"{where}: aggr 'lstm' needs in_channels and out_channels")
        return LSTMAggregation(**kwargs)
    try:
        resolver = importlib.import_module("torch_geometric.nn.resolver")
    except ImportError as error:
        raise ValueError(
            f"{where}: aggr {name!r} is not one of fastgl's aggregations ({sorted(_REDUCES)} "
            f"and 'lstm'); PyG's need torch_geometric, which is not installed"
        ) from error
    try:
        return _on_fastgl_kernels(resolver.aggregation_resolver(name, **kwargs))
    except ValueError as error:
        raise ValueError(f"{where}: aggr {name!r}: {error}") from error


def _on_fastgl_kernels(aggr: torch.nn.Module) -> torch.nn.Module:
    """PyG's parameterless basic aggregations as a :class:`Reduce`; other modules as given."""
    reduce = _PYG_REDUCES.get(type(aggr).__name__)
    if reduce is not None and type(aggr).__module__.startswith("torch_geometric"):
        return Reduce(reduce)
    return aggr
