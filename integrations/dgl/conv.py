"""DGL graph convolutions on fastgl's compiled aggregation: drop-ins for ``dgl.nn.pytorch``.

:class:`GraphConv`, :class:`SAGEConv`, :class:`GINConv` and :class:`GATConv` take the
constructor arguments of DGL 2.1's layers of the same name, hold the same parameters and buffers
under the same ``state_dict`` keys and shapes (a checkpoint of DGL's layer loads with
``strict=True``) and, given the same parameters, compute the same outputs and gradients. The
message passing runs on :mod:`fastgl.nn.functional`'s ``aggregate``, ``edge_softmax`` and
``gat_scores`` instead of DGL's ``update_all``.

``graph`` is a ``dgl.DGLGraph`` with one edge type, or a DGL block (MFG): the destinations of a
block are its first ``num_dst_nodes`` sources, so a single feature tensor holds the source rows
and its first rows are the destinations', as in DGL. On a graph that is not a block, a single
tensor is the destination features too (DGL's ``expand_as_pair``), so on a bipartite graph it is
taken wherever DGL's layer takes it: GraphConv reads no destination rows; GINConv and SAGEConv's
'mean', 'pool' and 'lstm' add the destination term to the aggregated neighbors with torch's
broadcasting; GATConv and SAGEConv's 'gcn' (and SAGEConv on a graph without edges) need one row
per destination, else a ``dgl.DGLError``. ``feat`` may also be a pair ``(feat_src, feat_dst)``,
under the same rules. Graphs and blocks without source nodes, destination nodes or edges work.
``edge_weight`` is ``[E]`` (or ``[E, 1]``) in DGL's edge-id order.

Example:
    >>> sampler = dgl.dataloading.NeighborSampler([10, 5])
    >>> input_nodes, seeds, blocks = sampler.sample(graph, train_ids)
    >>> conv1, conv2 = SAGEConv(128, 64, "mean"), SAGEConv(64, 7, "mean")
    >>> h = torch.relu(conv1(blocks[0], x[input_nodes]))   # [blocks[0].num_dst_nodes(), 64]
    >>> logits = conv2(blocks[1], h)                         # [len(seeds), 7]
"""

from collections.abc import Callable

import dgl
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fastgl import ops
from fastgl.graph import check_edge_weight, csc_structure
from fastgl.nn import functional
from fastgl.nn._adjacency import Adjacency

Features = Tensor | tuple[Tensor, Tensor]
InFeats = int | tuple[int, int]

__all__ = ["GATConv", "GINConv", "GraphConv", "SAGEConv"]


class DGLConvError(dgl.DGLError, ValueError):
    """Raised where DGL's layer raises ``dgl.DGLError``: code written for DGL's layers still
    catches it, and it is a ``ValueError`` like fastgl's other bad-input errors."""


class DGLConvShapeError(ValueError, RuntimeError):
    """Raised where DGL's layer fails in a torch operation (a ``RuntimeError``, e.g. features
    whose rows do not broadcast): caught as DGL's error is, and a ``ValueError`` like fastgl's
    other bad-input errors."""


# ---------------------------------------------------------------------------------------------
# DGL graph -> fastgl structure


def _structure_of(layer: str, graph) -> Adjacency:
    """A ``dgl.DGLGraph`` or DGL block as fastgl's ops read it: its structure (a CSCGraph when
    square, else a destination-sorted Block), with DGL's edge-id order as the caller's edge
    order. Nothing is cached: DGL keeps the CSC it builds on the graph itself, so a second layer
    on the same graph reuses it."""
    if not isinstance(graph, dgl.DGLGraph):
        raise TypeError(
            f"{layer}: graph must be a dgl.DGLGraph or a DGL block, got {type(graph).__name__}"
        )
    if len(graph.canonical_etypes) != 1:
        raise ValueError(
            f"{layer}: graph must have a single edge type, got "
            f"{graph.canonical_etypes}; wrap the layer in dgl.nn.HeteroGraphConv"
        )
    num_src, num_dst = graph.num_src_nodes(), graph.num_dst_nodes()
    formats = graph.formats()
    if "csc" in formats["created"] + formats["not created"]:
        indptr, indices, eid = graph.adj_tensors("csc")
    else:  # a graph restricted to other sparse formats cannot give a CSC: sort its COO
        src, dst = graph.edges(order="eid")
        indptr, indices, eid = ops.csc_from_coo(src, dst, max(num_src, num_dst))
        indptr = indptr[: num_dst + 1]
    eid = eid.long()
    return Adjacency(csc_structure(indptr.long(), indices.long(), num_src, num_dst, eid), eid)


def _out_degrees(adj: Adjacency) -> Tensor:
    """``[num_src]`` out-degree of every source."""
    return torch.bincount(adj.structure.src_index(), minlength=adj.num_src)


def _to_dgl_order(adj: Adjacency, edge_data: Tensor) -> Tensor:
    """Per-edge data in the structure's edge order -> DGL's edge-id order (differentiable)."""
    return torch.zeros_like(edge_data).index_copy(0, adj.edge_order, edge_data)


# ---------------------------------------------------------------------------------------------
# Shared input handling


def _check_zero_in_degree(layer: str, adj: Adjacency) -> None:
    # DGL's condition and advice: such nodes would silently get only their bias.
    if adj.num_dst > 0 and bool((adj.structure.in_degrees() == 0).any()):
        raise DGLConvError(
            f"{layer}: there are 0-in-degree nodes in the graph; their output would be invalid, "
            f"which silently harms many applications. Add self-loops (g = dgl.add_self_loop(g)) "
            f"or create the layer with allow_zero_in_degree=True to suppress this check."
        )


def _check_feature(layer: str, name: str, t, adj: Adjacency) -> None:
    """A floating-point tensor ``[N, *, features]`` on the graph's device."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{layer}: {name} must be a tensor, got {type(t).__name__}")
    if t.dim() < 2 or not t.is_floating_point():
        raise ValueError(
            f"{layer}: {name} must be a floating-point tensor [num_nodes, *, "
            f"features], got {t.dtype} of shape {tuple(t.shape)}"
        )
    if t.device != adj.device:
        raise ValueError(f"{layer}: {name} is on {t.device} but the graph is on {adj.device}")


def _features(
    layer: str,
    graph,
    feat: Features,
    adj: Adjacency,
    transform: Callable[[Tensor], Tensor] = lambda t: t,
) -> tuple[Tensor, Tensor]:
    """``(feat_src, feat_dst)`` as DGL pairs them, after ``transform`` (e.g. dropout).

    A pair is used as given (``transform`` applied to each side). A single tensor is the source
    features; in a block, its first ``num_dst`` rows (transformed once) are the destinations',
    and on any other graph the whole tensor serves as the destination features too (DGL's
    ``expand_as_pair``). The source rows are checked here; how many destination rows a layer
    needs is its own rule (:func:`_check_dst_rows`, :func:`_add_to_dst`), as in DGL: GraphConv
    reads none, GATConv and SAGEConv's 'gcn' store them on the destination nodes, GINConv and
    the other SAGEConv aggregators add them to the aggregated neighbors with broadcasting.
    """
    if isinstance(feat, tuple):
        if len(feat) != 2:
            raise ValueError(
                f"{layer}: feat must be a tensor or a pair (feat_src, feat_dst), "
                f"got a tuple of {len(feat)}"
            )
        _check_feature(layer, "feat_src", feat[0], adj)
        _check_feature(layer, "feat_dst", feat[1], adj)
        _check_src_rows(layer, "feat_src", feat[0], adj)
        return transform(feat[0]), transform(feat[1])
    _check_feature(layer, "feat", feat, adj)
    _check_src_rows(layer, "feat", feat, adj)
    h = transform(feat)
    return h, (h[: adj.num_dst] if graph.is_block else h)


def _check_src_rows(layer: str, name: str, t: Tensor, adj: Adjacency) -> None:
    # DGL stores the source features on the source nodes, which needs one row per node.
    if t.shape[0] != adj.num_src:
        raise DGLConvError(
            f"{layer}: {name} has {t.shape[0]} rows but the graph has {adj.num_src} source nodes"
        )


def _single_tensor_hint(graph, feat: Features) -> str:
    if isinstance(feat, tuple):
        return ""
    if graph.is_block:
        return (
            "; a single tensor on a block gives its first num_dst_nodes rows to the "
            "destinations, and this block has fewer source than destination nodes"
        )
    return (
        "; on a graph that is not a block, a single feature tensor serves as the destination "
        "features too (as in DGL): pass a pair (feat_src, feat_dst)"
    )


def _check_dst_rows(layer: str, graph, feat: Features, feat_dst: Tensor, adj: Adjacency) -> None:
    """Destination features that DGL stores on the destination nodes: one row per node."""
    if feat_dst.shape[0] != adj.num_dst:
        raise DGLConvError(
            f"{layer}: the destination features have {feat_dst.shape[0]} rows but the graph has "
            f"{adj.num_dst} destination nodes{_single_tensor_hint(graph, feat)}"
        )


def _add_to_dst(layer: str, graph, feat: Features, self_term: Tensor, neigh: Tensor) -> Tensor:
    """``self_term + neigh`` (a destination term and the ``[num_dst, *]`` aggregation) with
    torch's broadcasting, as DGL adds them: rows broadcast where one side has a single row."""
    try:
        torch.broadcast_shapes(self_term.shape, neigh.shape)
    except RuntimeError as error:
        raise DGLConvShapeError(
            f"{layer}: the destination features' term of shape {tuple(self_term.shape)} does not "
            f"broadcast against the aggregated neighbors of shape {tuple(neigh.shape)} "
            f"({error}){_single_tensor_hint(graph, feat)}"
        ) from None
    return self_term + neigh


def _check_width(layer: str, name: str, t: Tensor, width: int) -> None:
    # Caught here so the error names the layer, not a matmul deep inside nn.Linear.
    if t.shape[-1] != width:
        raise ValueError(
            f"{layer}: {name} has {t.shape[-1]} features but the layer expects {width}"
        )


def _edge_weight(
    layer: str, edge_weight: Tensor | None, adj: Adjacency, dtype: torch.dtype
) -> Tensor | None:
    """``[E]`` weights (``[E]`` or ``[E, 1]`` in DGL's edge-id order) in the structure's order."""
    if edge_weight is None:
        return None
    if isinstance(edge_weight, Tensor) and edge_weight.dim() == 2 and edge_weight.shape[1] == 1:
        edge_weight = edge_weight.squeeze(1)
    check_edge_weight(layer, edge_weight, adj.num_edges, adj.device)
    return adj.to_structure_order(edge_weight.to(dtype))


def _aggregate(
    adj: Adjacency, x: Tensor, edge_weight: Tensor | None = None, reduce: str = "sum"
) -> Tensor:
    """:func:`fastgl.nn.functional.aggregate` for features ``[num_src, *]`` of any rank ->
    ``[num_dst, *]`` (the op reads 2-D rows, so the trailing dimensions are flattened around it)."""
    flat = x.reshape(x.shape[0], x.shape[1:].numel()).contiguous()  # -1 fails on 0 rows
    out = functional.aggregate(adj.structure, flat, edge_weight, reduce)
    return out.view(adj.num_dst, *x.shape[1:])


def _broadcast_rows(values: Tensor, like: Tensor) -> Tensor:
    """``[N]`` per-node values shaped to multiply ``like`` ``[N, *]`` row by row."""
    return values.to(like.dtype).view(-1, *([1] * (like.dim() - 1)))


def _pair(in_feats: InFeats) -> tuple[int, int]:
    return tuple(in_feats) if isinstance(in_feats, (tuple, list)) else (in_feats, in_feats)


# ---------------------------------------------------------------------------------------------
# GraphConv


class GraphConv(nn.Module):
    r"""Kipf and Welling's graph convolution, like ``dgl.nn.pytorch.GraphConv``.

    ``out_i = act(b + norm_dst_i * sum_{j->i} w_ji * norm_src_j * x_j W)`` with
    ``norm_src = out_degree^{-1/2}`` (``norm='both'``) or ``1 / out_degree`` (``'left'``),
    ``norm_dst = in_degree^{-1/2}`` (``'both'``) or ``1 / in_degree`` (``'right'``), degrees
    clamped to at least 1 and counted without edge weights (as DGL; normalize weighted graphs
    with ``dgl.nn.EdgeWeightNorm``).

    Args:
        in_feats, out_feats: input and output feature sizes.
        norm: ``'both'``, ``'right'``, ``'left'`` or ``'none'``.
        weight: learn ``weight [in_feats, out_feats]`` (else pass ``weight=`` to ``forward``,
            or none at all).
        bias: learn ``bias [out_feats]``.
        activation: applied to the output.
        allow_zero_in_degree: skip the check that every destination has an in-edge.

    Forward:
        ``graph``, ``feat`` ``[num_src, *, in_feats]`` (or a pair), optional external
        ``weight`` ``[in_feats, out_feats]`` and ``edge_weight`` ``[E]``; returns
        ``[num_dst, *, out_feats]``.

    Example:
        >>> conv = GraphConv(16, 8)
        >>> out = conv(dgl.add_self_loop(g), torch.randn(g.num_nodes(), 16))  # [N, 8]
    """

    def __init__(
        self,
        in_feats: int,
        out_feats: int,
        norm: str = "both",
        weight: bool = True,
        bias: bool = True,
        activation: Callable[[Tensor], Tensor] | None = None,
        allow_zero_in_degree: bool = False,
    ) -> None:
        super().__init__()
        if norm not in ("none", "both", "right", "left"):
            raise DGLConvError(
                f"GraphConv: norm must be 'none', 'both', 'right' or 'left', got {norm!r}"
            )
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self._activation = activation
        self.register_parameter(
            "weight", nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        )
        self.register_parameter("bias", nn.Parameter(torch.empty(out_feats)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot-uniform weight, zero bias (DGL's initialization)."""
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(
        self,
        graph,
        feat: Features,
        weight: Tensor | None = None,
        edge_weight: Tensor | None = None,
    ) -> Tensor:
        adj = _structure_of("GraphConv", graph)
        if not self._allow_zero_in_degree:
            _check_zero_in_degree("GraphConv", adj)
        # The destination features only give the dtype of the right norm (DGL reads no rows).
        feat_src, feat_dst = _features("GraphConv", graph, feat, adj)
        weight = self._resolve_weight(weight, feat_src)
        edge_weight = _edge_weight("GraphConv", edge_weight, adj, feat_src.dtype)
        if self._norm in ("left", "both"):
            norm_src = self._degree_norm(_out_degrees(adj), feat_src.dtype)
            feat_src = feat_src * _broadcast_rows(norm_src, feat_src)
        # Multiply by W on the narrower side of the aggregation (DGL's order, so rounding agrees).
        if weight is not None and self._in_feats > self._out_feats:
            rst = _aggregate(adj, torch.matmul(feat_src, weight), edge_weight)
        else:
            rst = _aggregate(adj, feat_src, edge_weight)
            if weight is not None:
                rst = torch.matmul(rst, weight)
        if self._norm in ("right", "both"):
            norm_dst = self._degree_norm(adj.structure.in_degrees(), feat_dst.dtype)
            rst = rst * _broadcast_rows(norm_dst, rst)
        if self.bias is not None:
            rst = rst + self.bias
        return self._activation(rst) if self._activation is not None else rst

    def _resolve_weight(self, weight: Tensor | None, feat_src: Tensor) -> Tensor | None:
        """The weight to use: the module's, or the one given to ``forward`` (not both)."""
        if weight is not None and self.weight is not None:
            raise DGLConvError(
                "GraphConv: an external weight was given but the module has its "
                "own weight parameter; create it with weight=False"
            )
        weight = self.weight if weight is None else weight
        if weight is not None:
            if weight.dim() != 2:
                raise ValueError(
                    f"GraphConv: weight must be 2-D [in_feats, out_feats], got "
                    f"shape {tuple(weight.shape)}"
                )
            _check_width("GraphConv", "feat", feat_src, weight.shape[0])
        return weight

    def _degree_norm(self, degrees: Tensor, dtype: torch.dtype) -> Tensor:
        # In the features' dtype, as DGL, so float32 rounding agrees too.
        degrees = degrees.to(dtype).clamp(min=1)
        return degrees.pow(-0.5) if self._norm == "both" else 1.0 / degrees

    def extra_repr(self) -> str:
        return (
            f"in={self._in_feats}, out={self._out_feats}, normalization={self._norm}, "
            f"activation={self._activation}"
        )


# ---------------------------------------------------------------------------------------------
# SAGEConv


class SAGEConv(nn.Module):
    r"""GraphSAGE convolution of Hamilton et al., like ``dgl.nn.pytorch.SAGEConv``.

    ``'mean'``: ``out_i = fc_self(x_i) + fc_neigh(mean_{j->i} w_ji x_j)``;
    ``'gcn'``: ``out_i = fc_neigh((sum_{j->i} w_ji x_j + x_i) / (in_degree_i + 1)) + bias``;
    ``'pool'``: ``out_i = fc_self(x_i) + fc_neigh(max_{j->i} w_ji relu(fc_pool(x_j)))``;
    ``'lstm'``: ``out_i = fc_self(x_i) + fc_neigh(h_i)`` with ``h_i`` the last hidden state of
    ``lstm`` run over the messages ``w_ji x_j`` of ``i``'s in-edges in edge-id order (DGL's
    order); then ``activation`` and ``norm``. Nodes without in-edges aggregate zeros.

    Args:
        in_feats: input feature size, or ``(source, destination)`` sizes.
        out_feats: output feature size.
        aggregator_type: ``'mean'``, ``'gcn'``, ``'pool'`` or ``'lstm'``.
        feat_drop: dropout on the input features.
        bias: learn a bias (in ``fc_self``, or a separate ``bias`` for ``'gcn'``).
        norm: callable applied to the output (e.g. a ``LayerNorm``).
        activation: applied to the output before ``norm``.

    Forward:
        ``graph``, ``feat`` ``[num_src, in_feats]`` (or a pair), ``edge_weight`` ``[E]``;
        returns ``[num_dst, out_feats]``.

    Example:
        >>> conv = SAGEConv(16, 8, "mean")
        >>> out = conv(block, x[block.srcdata[dgl.NID]])  # [block.num_dst_nodes(), 8]
    """

    def __init__(
        self,
        in_feats: InFeats,
        out_feats: int,
        aggregator_type: str,
        feat_drop: float = 0.0,
        bias: bool = True,
        norm: Callable[[Tensor], Tensor] | None = None,
        activation: Callable[[Tensor], Tensor] | None = None,
    ) -> None:
        super().__init__()
        if aggregator_type not in ("mean", "gcn", "pool", "lstm"):
            raise DGLConvError(
                f"SAGEConv: aggregator_type must be 'mean', 'gcn', 'pool' or 'lstm', got "
                f"{aggregator_type!r}"
            )
        self._in_src_feats, self._in_dst_feats = _pair(in_feats)
        self._out_feats = out_feats
        self._aggre_type = aggregator_type
        self.norm = norm
        self.feat_drop = nn.Dropout(feat_drop)
        self.activation = activation
        # Created in DGL's order, so that a seeded initialization draws DGL's parameters.
        if aggregator_type == "pool":
            self.fc_pool = nn.Linear(self._in_src_feats, self._in_src_feats)
        if aggregator_type == "lstm":
            self.lstm = nn.LSTM(self._in_src_feats, self._in_src_feats, batch_first=True)
        self.fc_neigh = nn.Linear(self._in_src_feats, out_feats, bias=False)
        if aggregator_type != "gcn":
            self.fc_self = nn.Linear(self._in_dst_feats, out_feats, bias=bias)
        elif bias:
            self.bias = nn.Parameter(torch.zeros(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot-uniform weights with ReLU gain, the LSTM's own initialization (DGL's)."""
        gain = nn.init.calculate_gain("relu")
        if self._aggre_type == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self._aggre_type == "lstm":
            self.lstm.reset_parameters()
        if self._aggre_type != "gcn":
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)

    def forward(self, graph, feat: Features, edge_weight: Tensor | None = None) -> Tensor:
        adj = _structure_of("SAGEConv", graph)
        feat_src, feat_dst = _features("SAGEConv", graph, feat, adj, self.feat_drop)
        _check_width(
            "SAGEConv",
            "feat_src" if isinstance(feat, tuple) else "feat",
            feat_src,
            self._in_src_feats,
        )
        if self._aggre_type != "gcn":  # 'gcn' checks that both sides have the same shape
            _check_width("SAGEConv", "feat_dst", feat_dst, self._in_dst_feats)
        if adj.num_edges == 0 or self._aggre_type == "gcn":
            # DGL stores rows sized by the destination features on the destination nodes here:
            # the zero neighbors of a graph without edges, and the self term of 'gcn'.
            _check_dst_rows("SAGEConv", graph, feat, feat_dst, adj)
        edge_weight = _edge_weight("SAGEConv", edge_weight, adj, feat_src.dtype)
        if self._aggre_type == "gcn":
            rst = self._gcn(adj, feat_src, feat_dst, edge_weight, isinstance(feat, tuple))
            if self.bias is not None:
                rst = rst + self.bias
        else:
            h_neigh = self._neighbors(adj, feat_src, edge_weight)
            rst = _add_to_dst("SAGEConv", graph, feat, self.fc_self(feat_dst), h_neigh)
        if self.activation is not None:
            rst = self.activation(rst)
        return self.norm(rst) if self.norm is not None else rst

    def _neighbors(self, adj: Adjacency, feat_src: Tensor, edge_weight: Tensor | None) -> Tensor:
        """``[num_dst, out_feats]``: the aggregated neighbors of 'mean', 'pool' or 'lstm'."""
        if self._aggre_type == "mean":
            return self._mean(adj, feat_src, edge_weight)
        if self._aggre_type == "pool":
            pooled = F.relu(self.fc_pool(feat_src))
            return self.fc_neigh(_aggregate(adj, pooled, edge_weight, "max"))
        return self.fc_neigh(self._lstm_aggregate(adj, feat_src, edge_weight))

    def _lstm_aggregate(
        self, adj: Adjacency, feat_src: Tensor, edge_weight: Tensor | None
    ) -> Tensor:
        """``[num_dst, in_src_feats]``: for every destination, the LSTM's last hidden state
        over the messages of its in-edges in edge-id order (DGL's mailbox order); zeros for a
        node without in-edges.

        Destinations of equal in-degree run as one batch ``[nodes, degree, features]`` (DGL's
        degree buckets, so the LSTM sees the batches DGL's does). The messages are gathered
        once, bucket after bucket, and split into views: every step stays linear in the edges
        (packing or padding the sequences instead costs a pass over all messages per step in
        the backward, or memory for the largest degree at every node).
        """
        if feat_src.dim() != 2:
            raise DGLConvShapeError(
                f"SAGEConv: aggregator_type='lstm' needs 2-D features [num_src, features], "
                f"got shape {tuple(feat_src.shape)}"
            )
        num_dst, num_edges, width = adj.num_dst, adj.num_edges, feat_src.shape[1]
        out = feat_src.new_zeros(num_dst, width)
        if num_edges == 0:
            return out
        src, dst = adj.structure.src_index(), adj.structure.dst_index()
        degree = adj.structure.in_degrees()
        # Edges ordered by (in-degree of their destination, destination, edge id): the
        # destinations of a bucket follow each other, each with its in-edges in edge-id order.
        edges = torch.argsort(adj.edge_order, stable=True)  # DGL's edge ids (_structure_of)
        edges = edges[torch.argsort(dst[edges], stable=True)]
        edges = edges[torch.argsort(degree[dst[edges]], stable=True)]
        messages = feat_src[src[edges]]
        if edge_weight is not None:
            messages = messages * edge_weight[edges].unsqueeze(1)
        nodes = torch.argsort(degree, stable=True)  # the same order, node by node
        nodes_per_degree = torch.bincount(degree).tolist()
        buckets = [(d, n) for d, n in enumerate(nodes_per_degree) if d > 0 and n > 0]
        chunks = torch.split(messages, [d * n for d, n in buckets])
        last_hidden = [
            self.lstm(chunk.view(n, d, width))[1][0][0] for chunk, (d, n) in zip(chunks, buckets)
        ]
        with_edges = nodes[nodes_per_degree[0] :]
        return out.index_copy(0, with_edges, torch.cat(last_hidden))

    def _project_first(self) -> bool:
        # Apply fc_neigh before the aggregation when that narrows the features (DGL's choice).
        return self._in_src_feats > self._out_feats

    def _mean(self, adj: Adjacency, feat_src: Tensor, edge_weight: Tensor | None) -> Tensor:
        if self._project_first():
            return _aggregate(adj, self.fc_neigh(feat_src), edge_weight, "mean")
        return self.fc_neigh(_aggregate(adj, feat_src, edge_weight, "mean"))

    def _gcn(
        self,
        adj: Adjacency,
        feat_src: Tensor,
        feat_dst: Tensor,
        edge_weight: Tensor | None,
        paired: bool,
    ) -> Tensor:
        """``(sum of weighted neighbors + self) / (in_degree + 1)``, through ``fc_neigh``."""
        if feat_src.shape[1:] != feat_dst.shape[1:]:
            raise DGLConvError(
                f"SAGEConv: aggregator_type='gcn' needs source and destination "
                f"features of the same shape, got {tuple(feat_src.shape[1:])} and "
                f"{tuple(feat_dst.shape[1:])}"
            )
        project = self._project_first()
        h_src = self.fc_neigh(feat_src) if project else feat_src
        if paired:
            h_dst = self.fc_neigh(feat_dst) if project else feat_dst
        else:  # destinations are the first sources: reuse their (projected) rows
            h_dst = h_src[: adj.num_dst]
        degrees = _broadcast_rows(adj.structure.in_degrees() + 1, h_dst)
        h_neigh = (_aggregate(adj, h_src, edge_weight) + h_dst) / degrees
        return h_neigh if project else self.fc_neigh(h_neigh)

    def extra_repr(self) -> str:
        return (
            f"in=({self._in_src_feats}, {self._in_dst_feats}), out={self._out_feats}, "
            f"aggregator_type={self._aggre_type}"
        )


# ---------------------------------------------------------------------------------------------
# GINConv


class GINConv(nn.Module):
    r"""Graph isomorphism convolution of Xu et al., like ``dgl.nn.pytorch.GINConv``.

    ``out_i = act(apply_func((1 + eps) * x_i + reduce_{j->i} w_ji x_j))`` with ``reduce`` the
    sum, max or mean over the in-edges (zeros for nodes without any).

    Args:
        apply_func: module or callable applied before ``activation`` (its parameters appear
            under ``apply_func.*`` as in DGL), or ``None``.
        aggregator_type: ``'sum'``, ``'max'`` or ``'mean'``.
        init_eps: initial ``eps`` (a ``[1]`` float32 tensor, as DGL).
        learn_eps: make ``eps`` a parameter (else a buffer).
        activation: applied to the output.

    Forward:
        ``graph``, ``feat`` ``[num_src, *]`` (or a pair), ``edge_weight`` ``[E]``; returns
        ``apply_func`` of ``[num_dst, *]``.

    Example:
        >>> conv = GINConv(torch.nn.Linear(16, 8), "max", learn_eps=True)
        >>> out = conv(g, torch.randn(g.num_nodes(), 16))  # [N, 8]
    """

    def __init__(
        self,
        apply_func: Callable[[Tensor], Tensor] | None = None,
        aggregator_type: str = "sum",
        init_eps: float = 0,
        learn_eps: bool = False,
        activation: Callable[[Tensor], Tensor] | None = None,
    ) -> None:
        super().__init__()
        if aggregator_type not in ("sum", "max", "mean"):
            raise DGLConvError(
                f"GINConv: aggregator_type must be 'sum', 'max' or 'mean', got {aggregator_type!r}"
            )
        self.apply_func = apply_func
        self._aggregator_type = aggregator_type
        self.activation = activation
        eps = torch.tensor([float(init_eps)], dtype=torch.float32)
        if learn_eps:
            self.eps = nn.Parameter(eps)
        else:
            self.register_buffer("eps", eps)

    def forward(self, graph, feat: Features, edge_weight: Tensor | None = None) -> Tensor:
        adj = _structure_of("GINConv", graph)
        feat_src, feat_dst = _features("GINConv", graph, feat, adj)
        edge_weight = _edge_weight("GINConv", edge_weight, adj, feat_src.dtype)
        neigh = _aggregate(adj, feat_src, edge_weight, self._aggregator_type)
        rst = _add_to_dst("GINConv", graph, feat, (1 + self.eps) * feat_dst, neigh)
        if self.apply_func is not None:
            rst = self.apply_func(rst)
        return self.activation(rst) if self.activation is not None else rst

    def extra_repr(self) -> str:
        return f"aggregator_type={self._aggregator_type}"


# ---------------------------------------------------------------------------------------------
# GATConv


class GATConv(nn.Module):
    r"""Graph attention convolution of Velickovic et al., like ``dgl.nn.pytorch.GATConv``.

    Per head ``h``: ``e_ji = leaky_relu(attn_l . z_j + attn_r . z_i)`` with ``z = fc(x)``
    split into heads, ``a_ji = softmax`` of ``e`` over the in-edges of ``i`` (then
    ``attn_drop``, times ``edge_weight``), ``out_i = sum_{j->i} a_ji z_j`` (+ residual, + bias,
    then ``activation``). Scores, softmax and aggregation run on fastgl's ``gat_scores``,
    ``edge_softmax`` and ``aggregate``.

    Args:
        in_feats: input feature size, or ``(source, destination)`` sizes (then separate
            ``fc_src``/``fc_dst`` instead of one ``fc``).
        out_feats: output size per head.
        num_heads: attention heads.
        feat_drop, attn_drop: dropout on the input features and on the attention.
        negative_slope: of the leaky ReLU on the scores.
        residual: add the destination features (through ``res_fc``, a linear map, when their
            size is not ``num_heads * out_feats``).
        activation: applied to the output.
        allow_zero_in_degree: skip the check that every destination has an in-edge.
        bias: learn a bias (in ``res_fc`` when that is a linear map, else a separate ``bias``).

    Forward:
        ``graph``, ``feat`` ``[num_src, *, in_feats]`` (or a pair), ``edge_weight`` ``[E]``,
        ``get_attention``; returns ``[num_dst, *, num_heads, out_feats]`` and, with
        ``get_attention=True``, also the attention ``[E, *, num_heads, 1]`` in edge-id order.

    Example:
        >>> conv = GATConv(16, 8, num_heads=4)
        >>> out, attn = conv(dgl.add_self_loop(g), x, get_attention=True)  # [N, 4, 8], [E, 4, 1]
    """

    def __init__(
        self,
        in_feats: InFeats,
        out_feats: int,
        num_heads: int,
        feat_drop: float = 0.0,
        attn_drop: float = 0.0,
        negative_slope: float = 0.2,
        residual: bool = False,
        activation: Callable[[Tensor], Tensor] | None = None,
        allow_zero_in_degree: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(num_heads, int) or num_heads < 1:
            raise ValueError(f"GATConv: num_heads must be an int >= 1, got {num_heads!r}")
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = _pair(in_feats)
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        self._negative_slope = negative_slope
        width = num_heads * out_feats
        if isinstance(in_feats, (tuple, list)):
            self.fc_src = nn.Linear(self._in_src_feats, width, bias=False)
            self.fc_dst = nn.Linear(self._in_dst_feats, width, bias=False)
        else:
            self.fc = nn.Linear(self._in_src_feats, width, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.activation = activation
        self._init_residual_and_bias(residual, bias, width)
        self.reset_parameters()

    def _init_residual_and_bias(self, residual: bool, bias: bool, width: int) -> None:
        # DGL's layout: a linear residual carries the bias; otherwise a separate `bias`.
        self.has_linear_res = residual and self._in_dst_feats != width
        if not residual:
            self.register_buffer("res_fc", None)
        elif self.has_linear_res:
            self.res_fc = nn.Linear(self._in_dst_feats, width, bias=bias)
        else:
            self.res_fc = nn.Identity()
        self.has_explicit_bias = bias and not self.has_linear_res
        if self.has_explicit_bias:
            self.bias = nn.Parameter(torch.empty(width))
        else:
            self.register_buffer("bias", None)

    def reset_parameters(self) -> None:
        """Glorot-normal weights with ReLU gain, zero biases (DGL's initialization)."""
        gain = nn.init.calculate_gain("relu")
        for name in ("fc", "fc_src", "fc_dst"):
            if hasattr(self, name):
                nn.init.xavier_normal_(getattr(self, name).weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.has_explicit_bias:
            nn.init.zeros_(self.bias)
        if self.has_linear_res:
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                nn.init.zeros_(self.res_fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool) -> None:
        self._allow_zero_in_degree = set_value

    def forward(
        self,
        graph,
        feat: Features,
        edge_weight: Tensor | None = None,
        get_attention: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        adj = _structure_of("GATConv", graph)
        if not self._allow_zero_in_degree:
            _check_zero_in_degree("GATConv", adj)
        h_src, h_dst = _features("GATConv", graph, feat, adj, self.feat_drop)
        _check_dst_rows("GATConv", graph, feat, h_dst, adj)  # DGL stores their scores on them
        z_src, z_dst = self._project(h_src, h_dst, isinstance(feat, tuple), adj.num_dst)
        edge_weight = _edge_weight("GATConv", edge_weight, adj, z_src.dtype)
        heads_shape = z_src.shape[1:-1]  # [*, num_heads]: every entry attends on its own
        k = heads_shape.numel()
        el = (z_src * self.attn_l).sum(dim=-1).reshape(adj.num_src, k)
        er = (z_dst * self.attn_r).sum(dim=-1).reshape(adj.num_dst, k)
        scores = functional.gat_scores(adj.structure, el, er, self._negative_slope)
        attn = self.attn_drop(functional.edge_softmax(adj.structure, scores))  # [E, k]
        if edge_weight is not None:
            attn = attn * edge_weight.unsqueeze(1)
        rst = self._attend(adj, z_src.reshape(adj.num_src, k, self._out_feats), attn)
        rst = rst.view(adj.num_dst, *heads_shape, self._out_feats)
        rst = self._residual_and_bias(rst, h_dst)
        if self.activation is not None:
            rst = self.activation(rst)
        if get_attention:
            return rst, _to_dgl_order(adj, attn).view(adj.num_edges, *heads_shape, 1)
        return rst

    def _project(
        self, h_src: Tensor, h_dst: Tensor, paired: bool, num_dst: int
    ) -> tuple[Tensor, Tensor]:
        """``(z_src, z_dst)`` ``[N, *, num_heads, out_feats]``: the features through fc."""
        separate = hasattr(self, "fc_src")  # built with in_feats=(src, dst)
        if separate and not paired:
            raise ValueError(
                f"GATConv: the layer was built for a pair of input sizes "
                f"({self._in_src_feats}, {self._in_dst_feats}), so feat must be a "
                f"pair (feat_src, feat_dst)"
            )
        fc_src, fc_dst = (self.fc_src, self.fc_dst) if separate else (self.fc, self.fc)
        _check_width("GATConv", "feat_src" if paired else "feat", h_src, fc_src.in_features)
        z_src = fc_src(h_src).view(*h_src.shape[:-1], self._num_heads, self._out_feats)
        if not paired:  # destinations are the first sources (or all): reuse their projection
            return z_src, z_src[:num_dst]
        _check_width("GATConv", "feat_dst", h_dst, fc_dst.in_features)
        return z_src, fc_dst(h_dst).view(*h_dst.shape[:-1], self._num_heads, self._out_feats)

    def _attend(self, adj: Adjacency, z_src: Tensor, attn: Tensor) -> Tensor:
        """``[num_dst, k, out_feats]``: every head's attention-weighted sum of its sources
        (one weighted aggregation per head: the op takes one scalar weight per edge)."""
        heads = [
            _aggregate(adj, z_src[:, h], attn[:, h].contiguous()) for h in range(z_src.shape[1])
        ]
        return torch.stack(heads, dim=1)

    def _residual_and_bias(self, rst: Tensor, h_dst: Tensor) -> Tensor:
        if self.res_fc is not None:
            # Heads counted, not inferred (-1), so that a graph without destinations works.
            residual = self.res_fc(h_dst)
            heads = residual.shape[-1] // self._out_feats
            rst = rst + residual.view(*h_dst.shape[:-1], heads, self._out_feats)
        if self.has_explicit_bias:
            rst = rst + self.bias.view(self._num_heads, self._out_feats)
        return rst

    def extra_repr(self) -> str:
        return (
            f"in=({self._in_src_feats}, {self._in_dst_feats}), out={self._out_feats}, "
            f"num_heads={self._num_heads}"
        )
