"""The FastGLConv family: PyG-compatible graph convolutions on fastgl's aggregation ops.

Each layer takes the constructor arguments of the ``torch_geometric.nn`` layer of the same name
(where fastgl supports them), has the same parameters under the same ``state_dict`` keys (a PyG
checkpoint loads with ``strict=True``) and, given the same parameters, computes the same output.
Graph input may be a PyG ``edge_index`` (``size=(num_src, num_dst)`` for bipartite graphs), a
PyG ``EdgeIndex`` (its ``sparse_size`` is the size), a torch sparse ``adj_t`` ``[num_dst,
num_src]`` (COO, CSR or CSC; its values weigh the messages where PyG's layer uses them), a
:class:`~fastgl.CSCGraph` or a sampled :class:`~fastgl.Block`; node features a tensor or a pair
``(x_src, x_dst)``. With a single tensor ``x`` and fewer destinations than sources (a Block, or
``size`` with ``num_dst < num_src``), the destinations are the first ``num_dst`` rows of ``x``
(fastgl's block layout). Every ``forward`` also takes a keyword ``approx=ESSpMM(width,
strategy)`` that aggregates with ES-SpMM, for inference under ``torch.no_grad()``.

Example:
    >>> import fastgl
    >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
    >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
    >>> x, seeds = torch.randn(4, 128), torch.tensor([1, 2])
    >>> sub = fastgl.NeighborSampler(graph, [10, 5]).sample(seeds)
    >>> block0, block1 = sub.blocks
    >>> conv = SAGEConv(128, 64)
    >>> h = conv(x[sub.nodes], block0)          # [block0.num_dst_nodes, 64]
    >>> h.shape
    torch.Size([4, 64])
"""

import math
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter

from fastgl.graph import Structure, check_edge_weight

from ._adjacency import Adjacency, Features, GraphInput, adjacency_of, check_flow, sparse_adj_t
from .aggr import (
    Neighborhood,
    Reduce,
    aggregate_neighborhood,
    out_channels_of,
    resolve_aggregation,
)
from .approx import ESSpMM
from .approx import aggregate as _aggregate
from .functional import edge_softmax, gat_scores

Size = Sequence[int | None] | None
Channels = int | tuple[int, int]

__all__ = ["FastGLConv", "GATConv", "GCNConv", "GINConv", "SAGEConv"]


def _glorot_(t: Tensor) -> None:
    """Uniform in +-sqrt(6 / (fan_in + fan_out)) over the last two dims (PyG's ``glorot``)."""
    bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
    with torch.no_grad():
        t.uniform_(-bound, bound)


class _Linear(torch.nn.Linear):
    """``torch.nn.Linear`` (same ``weight``/``bias`` keys as PyG's ``Linear``) with PyG's choice
    of weight init: ``"glorot"`` or the default (``kaiming_uniform``, as torch and PyG)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        bias: bool = True,
        weight_initializer: str | None = None,
    ) -> None:
        self.weight_initializer = weight_initializer
        super().__init__(in_channels, out_channels, bias=bias)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        if self.weight_initializer == "glorot":
            _glorot_(self.weight)
            if self.bias is not None:
                torch.nn.init.zeros_(self.bias)


def _linear(
    in_channels: int, out_channels: int, bias: bool = True, weight_initializer: str | None = None
) -> torch.nn.Module:
    """A linear map; ``in_channels <= 0`` defers the input size to the first call (as PyG)."""
    if in_channels is None or in_channels <= 0:
        return torch.nn.LazyLinear(out_channels, bias=bias)
    return _Linear(in_channels, out_channels, bias, weight_initializer)


def _register_bias(module: torch.nn.Module, size: int, enabled: bool) -> None:
    """A separate ``bias`` parameter (PyG's key), or a registered ``None`` when disabled."""
    module.register_parameter("bias", Parameter(torch.empty(size)) if enabled else None)


def _reset(module) -> None:
    """Resets a module, or else each of its children (uninitialized lazy modules are left)."""
    if (
        isinstance(module, torch.nn.modules.lazy.LazyModuleMixin)
        and module.has_uninitialized_params()
    ):
        return
    if callable(getattr(module, "reset_parameters", None)):
        module.reset_parameters()
    elif isinstance(module, torch.nn.Module):
        for child in module.children():
            _reset(child)


class FastGLConv(torch.nn.Module):
    """Base of fastgl's graph convolutions: resolves ``(x, edge_index, size)`` for them.

    ``flow`` is PyG's message direction: ``"source_to_target"`` (the default: messages go
    from ``edge_index[0]`` to ``edge_index[1]``) or ``"target_to_source"`` (from
    ``edge_index[1]`` to ``edge_index[0]``, ``size=(num_dst, num_src)``; an ``edge_index`` and
    one feature tensor only: a sparse ``adj_t``, a CSCGraph or a Block has its direction).
    """

    flow: str = "source_to_target"

    def _set_flow(self, flow: str) -> None:
        check_flow(type(self).__name__, flow)
        self.flow = flow

    def _inputs(
        self, x: Features, edge_index: GraphInput, size: Size
    ) -> tuple[Tensor, Tensor | None, Adjacency]:
        return adjacency_of(type(self).__name__, x, edge_index, size, self.flow)

    def reset_parameters(self) -> None:  # pragma: no cover - overridden
        pass


def _entry_weight(adj: Adjacency, dtype: torch.dtype) -> Tensor | None:
    """A sparse ``adj_t``'s values as edge weights, as PyG's ``spmm(adj_t, x)`` multiplies each
    message by its entry; ``None`` for other graphs, and for values all 1 that need no gradient
    (the unweighted aggregation gives the same result, faster)."""
    values = adj.values
    if values is None or (not values.requires_grad and bool((values == 1).all())):
        return None
    return values.to(dtype)


def _check_node_features(where: str, x) -> None:
    """``x`` is ``[num_nodes, channels]`` or a batch ``[*, num_nodes, channels]`` (dense or
    sparse COO), checked before a linear map could hide its shape."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{where}: x must be a tensor, got {type(x).__name__}")
    if x.dim() < 2:
        raise ValueError(
            f"{where}: x must be 2-D [num_nodes, channels] (or a batch [*, num_nodes, "
            f"channels] over one graph), got shape {tuple(x.shape)}"
        )


def _nodes_first(x: Tensor) -> tuple[Tensor, torch.Size | None]:
    """Features ``[*batch, N, C]`` of one graph (PyG's "static graph": nodes on dim -2) as
    ``[N, batch * C]``, which the ops aggregate in one pass, with the batch shape (``None``
    for plain ``[N, C]``)."""
    if x.dim() <= 2:
        return x, None
    return x.movedim(-2, 0).reshape(x.shape[-2], -1), x.shape[:-2]


def _nodes_back(out: Tensor, batch: torch.Size | None) -> Tensor:
    """The inverse of :func:`_nodes_first`: ``[M, batch * C]`` as ``[*batch, M, C]``."""
    if batch is None:
        return out
    return out.reshape(out.shape[0], *batch, -1).movedim(0, -2)


def _features_nodes_first(where: str, x: Features) -> tuple[Features, torch.Size | None]:
    """:func:`_nodes_first` of a feature tensor or of both tensors of a pair (same batch)."""
    if isinstance(x, Tensor):
        return _nodes_first(x)
    if not isinstance(x, (tuple, list)) or len(x) != 2 or not isinstance(x[0], Tensor):
        return x, None  # adjacency_of names what is wrong with it
    x_src, batch = _nodes_first(x[0])
    if not isinstance(x[1], Tensor):
        return (x_src, x[1]), batch
    x_dst, dst_batch = _nodes_first(x[1])
    if batch != dst_batch:
        raise ValueError(
            f"{where}: x_src and x_dst must have the same batch dims, got shapes "
            f"{tuple(x[0].shape)} and {tuple(x[1].shape)}"
        )
    return (x_src, x_dst), batch


def _is_sparse(obj) -> bool:
    return isinstance(obj, Tensor) and obj.layout != torch.strided


def _versions(obj) -> tuple:
    """In-place versions of a graph input's tensors, for caches that must notice changes."""
    if obj is None:
        return ()
    if isinstance(obj, Tensor):
        return (obj._version,)
    if isinstance(obj, Structure):
        return tuple(t._version for t in vars(obj).values() if isinstance(t, Tensor))
    return ()


class GCNConv(FastGLConv):
    r"""Graph convolution of Kipf & Welling, like ``torch_geometric.nn.GCNConv``.

    ``out = D^-1/2 (A + I) D^-1/2 (x W) + bias`` with ``D`` the weighted in-degree including the
    self-loop; an existing self-loop is replaced by one loop that keeps its weight (as PyG's
    ``add_remaining_self_loops``). ``improved=True`` gives the added loops weight 2 only when
    the graph has edge weights: PyG 2.8's ``gcn_norm`` ignores it for unweighted graphs, and
    this layer does the same so that PyG checkpoints give the same outputs.

    A sparse ``adj_t`` follows PyG's ``gcn_norm`` for sparse tensors: its values are the edge
    weights, and every node gets a new self-loop of weight 1 (2 with ``improved``) on top of the
    loops ``adj_t`` already has (``add_self_loops``, not ``add_remaining_self_loops``).

    Args:
        in_channels: input features (``-1``: taken from the first input).
        out_channels: output features.
        improved: self-loops of weight 2.
        cached: keep the normalization and reuse it while the same graph object (and the same
            ``edge_weight`` object, both unmodified, same sizes) comes again; another graph
            replaces it. Weights that require gradients are never cached.
        add_self_loops: defaults to ``normalize``.
        normalize: symmetric normalization (off: plain weighted sum over in-edges).
        bias: learn an additive bias.
        flow: PyG's message direction (see :class:`FastGLConv`).

    Forward:
        ``x`` ``[num_src, in_channels]``, dense or a sparse COO tensor (``lin`` multiplies it
        as it is), or a batch ``[*, num_src, in_channels]`` of features on the same graph (PyG's
        "static graph": every batch element is convolved alike, in one aggregation over
        ``[num_src, batch * out_channels]``); a pair is refused, like PyG. ``edge_index`` (tensor,
        EdgeIndex, sparse ``adj_t``, CSCGraph or Block), ``edge_weight`` ``[E]`` in the caller's
        edge order (``edge_index`` columns; a CSCGraph's original edge order; a Block's edge
        order; a CSCGraph's or Block's own ``weight`` is used when none is given; none with a
        sparse ``adj_t``, whose values are the weights), ``size=(num_src, num_dst)`` with
        ``num_dst <= num_src``.
        Returns ``[num_dst, out_channels]`` (``[*, num_dst, out_channels]`` for a batch).

    Example:
        >>> edge_index = torch.tensor([[0, 0, 0, 1, 2, 3], [1, 2, 3, 0, 0, 0]])
        >>> conv = GCNConv(16, 32)
        >>> conv(torch.randn(3, 4, 16), edge_index).shape        # a batch of 3 on one graph
        torch.Size([3, 4, 32])
        >>> reverse = GCNConv(16, 32, flow="target_to_source")
        >>> reverse.load_state_dict(conv.state_dict())
        <All keys matched successfully>
        >>> x = torch.randn(4, 16)
        >>> torch.allclose(reverse(x, edge_index.flip(0)), conv(x, edge_index), atol=1e-6)
        True

    A non-square ``adj_t`` ``[num_dst, num_src]`` (``num_dst <= num_src``) is normalized like
    ``size=``: as PyG on the square ``adj_t`` of ``num_src`` nodes (its extra rows empty), first
    ``num_dst`` rows of the result (PyG itself refuses non-square sparse input to ``gcn_norm``).

    On a Block (or with ``size``) destinations are the first ``num_dst`` sources. A
    destination's degree is its in-degree in the block (the block holds all of its sampled
    in-edges) plus its self-loop. A source that is not a destination has no in-edges in the
    block: when the block carries ``src_in_degrees`` (a :class:`~fastgl.NeighborSampler`'s blocks
    do) and no edge weights are given, its degree is its in-degree in the full graph plus its
    self-loop, so sampling all neighbors (fanout ``-1``) computes exactly full-graph GCN;
    otherwise its degree is its self-loop alone, which is what PyG's GCNConv computes on
    ``(x, edge_index of the block)`` (and PyG's ``GCN`` on a trimmed ``NeighborLoader`` batch).
    The first choice trains better: 80.8 % mean Cora test accuracy against 78.6 % (fanouts
    ``[10, 10]``, 8 seeds, ``fastgl train --model gcn``).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        improved: bool = False,
        cached: bool = False,
        add_self_loops: bool | None = None,
        normalize: bool = True,
        bias: bool = True,
        *,
        flow: str = "source_to_target",
    ) -> None:
        super().__init__()
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError(
                "GCNConv does not support adding self-loops to the graph when no "
                "on-the-fly normalization is applied"
            )
        self._set_flow(flow)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cache = None
        self.lin = _linear(in_channels, out_channels, bias=False, weight_initializer="glorot")
        _register_bias(self, out_channels, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset(self.lin)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cache = None

    def _cached_for(self, sparse: bool):
        cache = self._cache
        return None if cache is None or _is_sparse(cache[0]) != sparse else cache[3:]

    @property
    def _cached_edge_index(self):
        """PyG's name for the cached normalization of a graph that is not a sparse ``adj_t``
        (``None`` when there is none); assigning ``None`` drops it, as in PyG."""
        return self._cached_for(sparse=False)

    @_cached_edge_index.setter
    def _cached_edge_index(self, value) -> None:
        self._drop_cache(value, sparse=False)

    @property
    def _cached_adj_t(self):
        """PyG's name for the cached normalization of a sparse ``adj_t`` (``None`` when there
        is none); assigning ``None`` drops it, as in PyG."""
        return self._cached_for(sparse=True)

    @_cached_adj_t.setter
    def _cached_adj_t(self, value) -> None:
        self._drop_cache(value, sparse=True)

    def _drop_cache(self, value, sparse: bool) -> None:
        if value is not None:
            raise ValueError("GCNConv: the cache can only be cleared (set to None)")
        if self._cached_for(sparse) is not None:
            self._cache = None

    def forward(
        self,
        x: Tensor,
        edge_index: GraphInput,
        edge_weight: Tensor | None = None,
        size: Size = None,
        *,
        approx: ESSpMM | None = None,
    ) -> Tensor:
        if isinstance(x, (tuple, list)):
            raise ValueError(
                "GCNConv received a tuple of node features as input while this layer "
                "does not support bipartite message passing; pass one tensor (with "
                "a Block or size=, destinations are its first num_dst rows)"
            )
        _check_node_features("GCNConv", x)
        h, batch = _nodes_first(self.lin(x))
        adj, norm = self._normalized_graph(h, edge_index, edge_weight, size)
        if self.normalize:
            src_scale, edge_w, dst_scale, loop_scale = norm
            out = _aggregate(adj.structure, h * src_scale.unsqueeze(1), edge_w, approx=approx)
            out = out * dst_scale.unsqueeze(1)
            if loop_scale is not None:
                out = out + h[: adj.num_dst] * loop_scale.unsqueeze(1)
        else:
            out = _aggregate(adj.structure, h, norm[0], approx=approx)
        out = _nodes_back(out, batch)
        if self.bias is not None:
            out = out + self.bias
        return out

    def _normalized_graph(
        self, h: Tensor, edge_index: GraphInput, edge_weight: Tensor | None, size: Size
    ) -> tuple[Adjacency, tuple]:
        """``(adjacency, normalization)`` (see :meth:`_normalization`; ``(weight,)`` without
        ``normalize``), from the cache when it holds this graph."""
        # The cache holds the graph objects themselves (so their ids cannot be reused) and
        # their tensors' versions (so in-place edits are noticed).
        signature = (
            _versions(edge_index),
            _versions(edge_weight),
            None if size is None else tuple(size),
            self.flow,
            h.shape[0],
            h.dtype,
            h.device,
        )
        cache = self._cache
        use_cache = self.normalize and self.cached
        if (
            use_cache
            and cache is not None
            and cache[0] is edge_index
            and cache[1] is edge_weight
            and cache[2] == signature
        ):
            return cache[3], cache[4]
        _, _, adj = self._inputs(h, edge_index, size)
        weight = self._structure_weight(adj, edge_weight, h.dtype)
        norm = self._normalization(adj, weight, h.dtype) if self.normalize else (weight,)
        differentiable = any(t is not None and t.requires_grad for t in (weight, edge_weight))
        if use_cache and not differentiable:
            self._cache = (edge_index, edge_weight, signature, adj, norm)
        return adj, norm

    @staticmethod
    def _structure_weight(
        adj: Adjacency, edge_weight: Tensor | None, dtype: torch.dtype
    ) -> Tensor | None:
        """Edge weights in the structure's edge order (the structure's own ``weight`` if none,
        a sparse ``adj_t``'s values)."""
        if adj.values is not None:
            # PyG silently drops edge_weight here; two sources of weights is a caller's error.
            if edge_weight is not None:
                raise ValueError(
                    "GCNConv: edge_weight must be None with a sparse adj_t, whose "
                    "values are the edge weights, got a tensor"
                )
            return adj.values.to(dtype)
        if edge_weight is None:
            own = adj.structure.weight
            if own is None:
                return None
            check_edge_weight("GCNConv", own, adj.num_edges, adj.device, name="weight")
            return own.to(dtype)
        check_edge_weight("GCNConv", edge_weight, adj.num_edges, adj.device)
        return adj.to_structure_order(edge_weight).to(dtype)

    def _normalization(self, adj: Adjacency, weight: Tensor | None, dtype: torch.dtype):
        """``(src_scale [num_src], edge_weight [E] or None, dst_scale [num_dst], loop_scale
        [num_dst] or None)`` with ``out = dst_scale * sum_e w_e * src_scale[src] * h[src] +
        loop_scale * h[dst]`` equal to PyG's ``gcn_norm`` propagation."""
        num_dst, device = adj.num_dst, adj.device
        # PyG compatibility: gcn_norm gives self-loops the `improved` weight 2 only when the
        # graph has edge weights; without them every edge, loops included, weighs 1.
        fill = 2.0 if self.improved and weight is not None else 1.0
        dst = adj.structure.dst_index()
        loop_weight = None
        if self.add_self_loops:
            loop_weight = torch.full((num_dst,), fill, dtype=dtype, device=device)
            # PyG: gcn_norm replaces the self-loops of an edge_index, but adds its loops to
            # those of a sparse adj_t, which then stay ordinary edges.
            is_loop = None if adj.values is not None else adj.structure.src_index() == dst
            if is_loop is not None and bool(is_loop.any()):
                if weight is not None:  # an existing loop keeps its weight (the last one wins)
                    loop_weight = loop_weight.index_put((dst[is_loop],), weight[is_loop])
                    weight = weight.masked_fill(is_loop, 0.0)
                else:
                    weight = (~is_loop).to(dtype)
        per_edge = (
            weight if weight is not None else torch.ones(dst.numel(), dtype=dtype, device=device)
        )
        degree = torch.zeros(num_dst, dtype=dtype, device=device).index_add(0, dst, per_edge)
        if loop_weight is not None:
            degree = degree + loop_weight
        inv_sqrt = degree.pow(-0.5)
        inv_sqrt = inv_sqrt.masked_fill(torch.isinf(inv_sqrt), 0.0)
        src_scale = torch.cat([inv_sqrt, self._outer_source_scale(adj, weight, fill, dtype)])
        loop_scale = None if loop_weight is None else inv_sqrt * inv_sqrt * loop_weight
        return src_scale, weight, inv_sqrt, loop_scale

    def _outer_source_scale(
        self, adj: Adjacency, weight: Tensor | None, fill: float, dtype: torch.dtype
    ) -> Tensor:
        """``D^-1/2`` of the sources beyond the destinations, whose in-edges are not here.

        A sampler's block knows their in-degrees in the full graph: unweighted, those give the
        full graph's normalization (with all neighbors sampled, exactly full-graph GCN).
        Otherwise only their self-loop counts, as PyG's GCNConv on the block's edge list.
        """
        num_outer = adj.num_src - adj.num_dst
        if num_outer > 0 and weight is None and self.add_self_loops:
            degrees = adj.structure.src_in_degrees
            if degrees is not None:
                return (degrees[adj.num_dst :].to(dtype) + fill).pow(-0.5)
        outer = fill**-0.5 if self.add_self_loops else 0.0
        return torch.full((num_outer,), outer, dtype=dtype, device=adj.device)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"


class SAGEConv(FastGLConv):
    r"""GraphSAGE convolution, like ``torch_geometric.nn.SAGEConv``.

    ``out = lin_l(aggr_{j in N(i)} x_j) + lin_r(x_i)``, optionally L2-normalized; with
    ``project=True`` sources first go through ``relu(lin(x_j))``.

    Args:
        in_channels: input features, or ``(src, dst)`` input features for bipartite graphs
            (``-1``: taken from the first input).
        out_channels: output features.
        aggr: the aggregation over the in-edges (:mod:`fastgl.nn.aggr`), as PyG's:
            ``"mean"``, ``"sum"`` (or ``"add"``), ``"max"`` or ``"min"`` on fastgl's kernels
            (nodes without in-edges get zeros; with a sparse ``adj_t`` each message is first
            multiplied by its entry, as PyG's ``spmm``, whose mean divides by the number of
            entries of the row); ``"lstm"`` (PyG's ``LSTMAggregation``, parameters under
            ``aggr_module.lstm``: the caller's edges must be sorted by destination); a list
            of aggregations (PyG's ``MultiAggregation``: ``aggr_kwargs`` takes its ``mode``,
            ``mode_kwargs`` and ``aggrs_kwargs``); or any other PyG aggregation, by name or as
            a module (``MLPAggregation(...)``), which needs ``torch_geometric``. Only the single
            sum/mean/max/min weigh a sparse ``adj_t``'s messages by its values (as PyG, whose
            other aggregations read the plain messages).
        normalize: L2-normalize the output rows.
        root_weight: add ``lin_r(x_dst)``.
        project: project sources with ``relu(lin(x))`` before aggregating.
        bias: bias of ``lin_l``.
        aggr_kwargs: arguments of the aggregation given by name (PyG's); for ``"lstm"``,
            ``in_channels`` and ``out_channels`` default to the source features, the rest goes
            to ``torch.nn.LSTM``.
        flow: PyG's message direction (see :class:`FastGLConv`).

    Forward:
        ``x`` (tensor or ``(x_src, x_dst)``), ``edge_index`` (tensor, EdgeIndex, sparse
        ``adj_t``, CSCGraph or Block), ``size=(num_src, num_dst)``. Returns
        ``[num_dst, out_channels]``.

    Example:
        >>> edge_index = torch.tensor([[0, 1, 2, 3], [0, 0, 1, 1]])   # sorted by destination
        >>> x = torch.randn(4, 8)
        >>> SAGEConv(8, 16, aggr="lstm")(x, edge_index).shape
        torch.Size([4, 16])
        >>> conv = SAGEConv(8, 16, aggr=["mean", "max"], aggr_kwargs={"mode": "cat"})
        >>> conv.lin_l.in_features                    # the two aggregations concatenated
        16
        >>> conv(x, edge_index).shape
        torch.Size([4, 16])
    """

    def __init__(
        self,
        in_channels: Channels,
        out_channels: int,
        aggr: str | Sequence | torch.nn.Module = "mean",
        normalize: bool = False,
        root_weight: bool = True,
        project: bool = False,
        bias: bool = True,
        *,
        aggr_kwargs: dict | None = None,
        flow: str = "source_to_target",
    ) -> None:
        super().__init__()
        self._set_flow(flow)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.normalize = normalize
        self.root_weight = root_weight
        self.project = project
        in_src, in_dst = (in_channels, in_channels) if isinstance(in_channels, int) else in_channels
        if aggr == "lstm":
            aggr_kwargs = {"in_channels": in_src, "out_channels": in_src, **(aggr_kwargs or {})}
        self.aggr = [str(a) for a in aggr] if isinstance(aggr, (list, tuple)) else str(aggr)
        self.aggr_module = resolve_aggregation("SAGEConv", aggr, aggr_kwargs)
        if project:
            if in_src <= 0:
                raise ValueError("SAGEConv does not support lazy initialization with project=True")
            self.lin = _linear(in_src, in_src, bias=True)
        self.lin_l = _linear(out_channels_of(self.aggr_module, in_src), out_channels, bias=bias)
        if root_weight:
            self.lin_r = _linear(in_dst, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for name in ("aggr_module", "lin", "lin_l", "lin_r"):
            if hasattr(self, name):
                _reset(getattr(self, name))

    def forward(
        self,
        x: Features,
        edge_index: GraphInput,
        size: Size = None,
        *,
        approx: ESSpMM | None = None,
    ) -> Tensor:
        x_src, x_dst, adj = self._inputs(x, edge_index, size)
        if self.project:
            x_src = self.lin(x_src).relu()
        out = self._aggregate_neighbors(adj, x_src, approx)
        if self.root_weight and x_dst is not None:
            out = out + self.lin_r(x_dst)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def _aggregate_neighbors(self, adj: Adjacency, x_src: Tensor, approx: ESSpMM | None) -> Tensor:
        """``lin_l`` of the aggregated neighbors."""
        aggr, lin_l = self.aggr_module, self.lin_l
        if not isinstance(aggr, Reduce):
            return lin_l(
                aggregate_neighborhood(aggr, Neighborhood("SAGEConv", adj, x_src, None, approx))
            )
        weight = _entry_weight(adj, x_src.dtype)
        if (
            aggr.reduce in ("sum", "mean")
            and not isinstance(lin_l, torch.nn.LazyLinear)
            and lin_l.out_features < lin_l.in_features
        ):
            # Sum and mean commute with the linear map: aggregate the narrower side.
            narrow = F.linear(x_src, lin_l.weight)
            out = aggr(Neighborhood("SAGEConv", adj, narrow, weight, approx))
            return out if lin_l.bias is None else out + lin_l.bias
        return lin_l(aggr(Neighborhood("SAGEConv", adj, x_src, weight, approx)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"


class GINConv(FastGLConv):
    r"""Graph isomorphism convolution, like ``torch_geometric.nn.GINConv``.

    ``out = nn((1 + eps) * x_i + sum_{j in N(i)} x_j)``; with a sparse ``adj_t`` each ``x_j`` is
    multiplied by its entry, as PyG's ``spmm``.

    Args:
        nn: the module applied to the aggregated features (an MLP, typically).
        eps: initial ``eps``.
        train_eps: learn ``eps`` (a parameter; otherwise a buffer, as in PyG).
        flow: PyG's message direction (see :class:`FastGLConv`).

    Forward:
        ``x`` (tensor or ``(x_src, x_dst)``; ``x_dst=None`` drops the root term), each
        ``[num_nodes, F]`` or a batch ``[*, num_nodes, F]`` on the same graph (PyG's "static
        graph"), ``edge_index`` (tensor, EdgeIndex, sparse ``adj_t``, CSCGraph or Block),
        ``size=(num_src, num_dst)``.
        Returns ``nn`` of a ``[num_dst, F]`` tensor (``[*, num_dst, F]`` for a batch).
    """

    def __init__(
        self,
        nn: Callable,
        eps: float = 0.0,
        train_eps: bool = False,
        *,
        flow: str = "source_to_target",
    ) -> None:
        super().__init__()
        self._set_flow(flow)
        self.nn = nn
        self.initial_eps = eps
        if train_eps:
            self.eps = Parameter(torch.empty(1))
        else:
            self.register_buffer("eps", torch.empty(1))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)

    def forward(
        self,
        x: Features,
        edge_index: GraphInput,
        size: Size = None,
        *,
        approx: ESSpMM | None = None,
    ) -> Tensor:
        x, batch = _features_nodes_first("GINConv", x)
        x_src, x_dst, adj = self._inputs(x, edge_index, size)
        out = _aggregate(
            adj.structure, x_src, _entry_weight(adj, x_src.dtype), reduce="sum", approx=approx
        )
        if x_dst is not None:
            out = out + (1 + self.eps) * x_dst
        return self.nn(_nodes_back(out, batch))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(nn={self.nn})"


_LOOP_FILL_REDUCES = {
    "add": "sum",
    "sum": "sum",
    "mean": "mean",
    "min": "amin",
    "max": "amax",
    "mul": "prod",
}


def _check_fill_value(fill_value) -> None:
    if isinstance(fill_value, str):
        if fill_value not in _LOOP_FILL_REDUCES:
            raise ValueError(
                f"GATConv: fill_value must be a number, a tensor or one of "
                f"{sorted(_LOOP_FILL_REDUCES)}, got {fill_value!r}"
            )
    elif not (fill_value is None or isinstance(fill_value, (int, float, Tensor))):
        raise TypeError(
            f"GATConv: fill_value must be a number, a tensor or a reduction name, "
            f"got {type(fill_value).__name__}"
        )


def _loop_attr(fill_value, edge_attr: Tensor, dst: Tensor, num_loops: int) -> Tensor:
    """``[num_loops, *]`` edge features of the added self-loops, as PyG's ``add_self_loops``:
    ``fill_value`` itself (a number or a tensor; ``None``: ones), or a reduction of the
    features of each node's in-edges (``dst``: their destinations; no in-edges: zeros)."""
    shape = (num_loops, *edge_attr.shape[1:])
    if fill_value is None:
        return edge_attr.new_ones(shape)
    if isinstance(fill_value, (int, float)):
        return edge_attr.new_full(shape, fill_value)
    if isinstance(fill_value, Tensor):
        fill = fill_value.to(edge_attr.device, edge_attr.dtype)
        return (fill if fill.dim() == edge_attr.dim() else fill.unsqueeze(0)).expand(shape)
    inside = dst < num_loops
    index = dst[inside].view(-1, *([1] * (edge_attr.dim() - 1))).expand_as(edge_attr[inside])
    return edge_attr.new_zeros(shape).scatter_reduce(
        0, index, edge_attr[inside], _LOOP_FILL_REDUCES[fill_value], include_self=False
    )


class GATConv(FastGLConv):
    r"""Graph attention convolution of Velickovic et al., like ``torch_geometric.nn.GATConv``.

    Per head ``h``: ``alpha_ij = softmax_j(leaky_relu(a_src . W x_j + a_dst . W x_i (+ a_edge
    . W_e e_ji)))`` over the in-edges of ``i`` (plus its self-loop), ``out_i = sum_j alpha_ij W
    x_j``; heads are concatenated (``concat=True``) or averaged. Scores, softmax and aggregation
    run on fastgl's ``gat_scores``, ``edge_softmax`` and ``aggregate`` ops, all differentiable,
    so ``att_src``, ``att_dst`` and ``att_edge`` receive gradients.

    Args:
        in_channels: input features, or ``(src, dst)`` input features (then separate
            ``lin_src``/``lin_dst``, as PyG; otherwise one shared ``lin``).
        out_channels: output features per head.
        heads: attention heads.
        concat: concatenate the heads (else average them).
        negative_slope: of the leaky ReLU on the scores.
        dropout: dropout probability on the attention coefficients (training only).
        add_self_loops: drop existing self-loops and add one per node ``i < min(num_src,
            num_dst)``, as PyG.
        edge_dim: edge features per edge (``edge_attr``), projected by ``lin_edge`` and
            weighed by ``att_edge`` into the scores; ``None``: no edge features.
        fill_value: the added self-loops' edge features (with ``edge_dim``), as PyG's
            ``add_self_loops``: a number or a tensor, or ``"mean"``, ``"sum"`` (``"add"``),
            ``"min"``, ``"max"``, ``"mul"`` of the features of the node's other in-edges.
        bias: learn an additive bias.
        residual: add a linear projection of the destination features (``res``).
        flow: PyG's message direction (see :class:`FastGLConv`).

    Forward:
        ``x`` (tensor or ``(x_src, x_dst)``), ``edge_index`` (tensor, EdgeIndex, sparse
        ``adj_t``, CSCGraph or Block), ``edge_attr`` ``[E, edge_dim]`` (or ``[E]`` for
        ``edge_dim=1``) in the caller's edge order (``edge_index`` columns, a CSCGraph's
        original order, a Block's edge order; not with a sparse ``adj_t``, as PyG),
        ``size=(num_src, num_dst)``. Returns ``[num_dst, heads * out_channels]`` (concat) or
        ``[num_dst, out_channels]``; with ``return_attention_weights=True`` (as PyG) also the
        attention weights ``alpha`` ``[E', heads]`` (after dropout) of the edges aggregated:
        ``(out, (edge_index, alpha))``, where ``edge_index`` ``[2, E']`` holds PyG's edges with
        self-loops (the caller's non-loop edges in their order, then the loops ``(0, 0), (1,
        1), ...``) or, without ``add_self_loops``, the caller's edges; for a sparse ``adj_t``,
        ``(out, (adj, alpha))`` with ``adj`` a sparse tensor ``[num_dst, num_src, heads]`` of
        the same layout holding ``alpha`` (``alpha`` is ``adj.values()``).

    A sparse ``adj_t``'s values are ignored, as PyG (which reads them only as ``edge_attr``,
    unused without ``edge_dim``): its entries are the edges. A COO is coalesced first (duplicate
    entries are one edge), as PyG's ``add_self_loops`` does; without self-loops PyG refuses an
    uncoalesced COO.

    Example:
        >>> edge_index = torch.tensor([[0, 1, 2, 3], [1, 0, 1, 1]])
        >>> conv = GATConv(8, 16, heads=2, edge_dim=3)
        >>> out, (looped, alpha) = conv(
        ...     torch.randn(4, 8), edge_index, torch.randn(4, 3), return_attention_weights=True
        ... )
        >>> out.shape, alpha.shape                    # 4 edges and 4 self-loops, 2 heads
        (torch.Size([4, 32]), torch.Size([8, 2]))
        >>> looped
        tensor([[0, 1, 2, 3, 0, 1, 2, 3],
                [1, 0, 1, 1, 0, 1, 2, 3]])
    """

    def __init__(
        self,
        in_channels: Channels,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: int | None = None,
        fill_value: float | Tensor | str = "mean",
        bias: bool = True,
        residual: bool = False,
        *,
        flow: str = "source_to_target",
    ) -> None:
        super().__init__()
        if heads < 1:
            raise ValueError(f"GATConv: heads must be >= 1, got {heads}")
        if edge_dim is not None and (not isinstance(edge_dim, int) or edge_dim < 1):
            raise ValueError(f"GATConv: edge_dim must be None or an int >= 1, got {edge_dim!r}")
        _check_fill_value(fill_value)
        self._set_flow(flow)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.edge_dim = edge_dim
        self.fill_value = fill_value
        self.residual = residual
        self.lin = self.lin_src = self.lin_dst = None
        width = heads * out_channels
        if isinstance(in_channels, int):
            self.lin = _linear(in_channels, width, False, "glorot")
        else:
            self.lin_src = _linear(in_channels[0], width, False, "glorot")
            self.lin_dst = _linear(in_channels[1], width, False, "glorot")
        self.att_src = Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = Parameter(torch.empty(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = _linear(edge_dim, width, False, "glorot")
            self.att_edge = Parameter(torch.empty(1, heads, out_channels))
        else:
            self.lin_edge = None
            self.register_parameter("att_edge", None)
        total_out = out_channels * (heads if concat else 1)
        if residual:
            in_dst = in_channels if isinstance(in_channels, int) else in_channels[1]
            self.res = _linear(in_dst, total_out, False, "glorot")
        else:
            self.register_parameter("res", None)
        _register_bias(self, total_out, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in (self.lin, self.lin_src, self.lin_dst, self.lin_edge, self.res):
            if module is not None:
                _reset(module)
        for att in (self.att_src, self.att_dst, self.att_edge):
            if att is not None:
                _glorot_(att)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(
        self,
        x: Features,
        edge_index: GraphInput,
        edge_attr: Tensor | None = None,
        size: Size = None,
        return_attention_weights: bool | None = None,
        *,
        approx: ESSpMM | None = None,
    ) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        if edge_attr is not None:
            self._check_edge_attr_allowed(edge_index)
        paired = isinstance(x, (tuple, list))
        x_src, x_dst, adj = self._inputs(x, edge_index, size)
        h_src, h_dst = self._project(paired, x_src, x_dst, adj.num_dst)
        alpha_src = (h_src * self.att_src).sum(dim=-1)  # [num_src, H]
        if h_dst is None:  # PyG: no destination term without destination features
            alpha_dst = alpha_src.new_zeros(adj.num_dst, self.heads)
        else:
            alpha_dst = (h_dst * self.att_dst).sum(dim=-1)  # [num_dst, H]

        graph, num_loops = adj, None
        if self.add_self_loops:
            num_loops = min(adj.num_src, adj.num_dst)
            keep_order = edge_attr is not None or bool(return_attention_weights)
            graph = adj.with_self_loops(num_loops, keep_order)
        alpha_edge = None
        if edge_attr is not None:
            alpha_edge = self._edge_scores(adj, graph, edge_attr, num_loops)
        scores = gat_scores(graph.structure, alpha_src, alpha_dst, self.negative_slope, alpha_edge)
        alpha = edge_softmax(graph.structure, scores)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)

        out = self._attend(graph, h_src, alpha, approx)
        if self.res is not None and x_dst is not None:
            out = out + self.res(x_dst)
        if self.bias is not None:
            out = out + self.bias
        if return_attention_weights:
            return out, self._attention_weights(edge_index, graph, alpha)
        return out

    def _check_edge_attr_allowed(self, edge_index: GraphInput) -> None:
        if self.lin_edge is None:
            raise ValueError(
                "GATConv: edge_attr was given but the layer has no edge features "
                "(edge_dim=None); construct it with edge_dim=<edge features>"
            )
        if _is_sparse(edge_index):
            raise NotImplementedError(
                "GATConv: edge_attr with a sparse adj_t is not supported (as PyG); pass the "
                "graph as an edge_index with edge_attr in its column order"
            )

    def _project(
        self, paired: bool, x_src: Tensor, x_dst: Tensor | None, num_dst: int
    ) -> tuple[Tensor, Tensor | None]:
        """``(W x_src, W x_dst)`` as ``[N, heads, out_channels]`` (``None`` without
        ``x_dst``)."""
        H, C = self.heads, self.out_channels
        if self.lin is None:
            h_src = self.lin_src(x_src).view(-1, H, C)
            return h_src, None if x_dst is None else self.lin_dst(x_dst).view(-1, H, C)
        h_src = self.lin(x_src).view(-1, H, C)
        if x_dst is None:
            return h_src, None
        if paired:
            return h_src, self.lin(x_dst).view(-1, H, C)
        return h_src, h_src[:num_dst]  # destinations are the first rows of x: reuse them

    def _edge_scores(
        self, adj: Adjacency, graph: Adjacency, edge_attr: Tensor, num_loops: int | None
    ) -> Tensor:
        """``[E', heads]``: ``att_edge . lin_edge(edge features)`` of ``graph``'s edges (the
        ``num_loops`` self-loops' features filled from ``fill_value``), in its order."""
        if edge_attr.dim() == 1:
            edge_attr = edge_attr.view(-1, 1)
        if edge_attr.dim() != 2 or edge_attr.shape != (adj.num_edges, self.edge_dim):
            raise ValueError(
                f"GATConv: edge_attr must be [num_edges, edge_dim] = [{adj.num_edges}, "
                f"{self.edge_dim}] (or [{adj.num_edges}] for edge_dim=1), got "
                f"{list(edge_attr.shape)}"
            )
        if num_loops is not None:  # PyG's remove_self_loops then add_self_loops, in its order
            src, dst = adj.caller_edge_index()
            kept = src != dst
            kept_attr = edge_attr[kept]
            edge_attr = torch.cat(
                [kept_attr, _loop_attr(self.fill_value, kept_attr, dst[kept], num_loops)]
            )
        features = self.lin_edge(graph.to_structure_order(edge_attr))
        return (features.view(-1, self.heads, self.out_channels) * self.att_edge).sum(dim=-1)

    def _attend(
        self, graph: Adjacency, h_src: Tensor, alpha: Tensor, approx: ESSpMM | None
    ) -> Tensor:
        """Every head's ``sum_j alpha_ij W x_j``, concatenated or averaged."""
        structure, H, C = graph.structure, self.heads, self.out_channels
        heads = [
            _aggregate(structure, h_src[:, h].contiguous(), alpha[:, h].contiguous(), approx=approx)
            for h in range(H)
        ]
        out = heads[0].unsqueeze(1) if H == 1 else torch.stack(heads, dim=1)
        return out.reshape(-1, H * C) if self.concat else out.mean(dim=1)

    def _attention_weights(
        self, edge_index: GraphInput, graph: Adjacency, alpha: Tensor
    ) -> tuple[Tensor, Tensor]:
        """PyG's second output: ``(edge_index, alpha)`` in the order of PyG's edge list, or
        ``(adj, alpha)`` for a sparse ``adj_t``."""
        if _is_sparse(edge_index):
            return sparse_adj_t(graph, alpha, edge_index.layout)
        pairs = graph.caller_edge_index()
        if self.flow == "target_to_source":  # the caller's orientation
            pairs = pairs.flip(0)
        return pairs, graph.to_caller_order(alpha)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
