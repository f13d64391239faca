"""Message passing over a CSCGraph or a sampled Block, with autograd: ``aggregate``,
``edge_softmax`` and ``gat_scores``; and ES-SpMM's approximate aggregation for inference,
``es_spmm``.

Built on compiled ops (:mod:`fastgl.ops`: ``spmm``, ``sddmm``, ``spmm_max`` and its backward
ops, ``edge_softmax``): the forward pass is an spmm over each destination's in-edges; the backward
pass for ``x`` is an spmm over the transposed structure and for ``edge_weight`` an sddmm (max: the
same, restricted to each feature's winning edge), so gradients are deterministic (every output
entry is reduced by one owner, without float atomics).

Aggregation's autograd lives here, not on the ops: its backward needs the transposed structure,
built once per graph or block and cached on it (:func:`transposed_of`), and an op's registered
backward sees only the op's tensors, so it would rebuild the transpose on every backward pass.
``edge_softmax``'s backward needs only the op's own input and output: the op is differentiable
itself.
"""

import functools

import torch
import torch.nn.functional as F
from torch import Tensor

from fastgl import ops
from fastgl.graph import Structure, check_edge_weight, expand_ptr, inverse_permutation
from fastgl.ops import csc_from_coo

_REDUCTIONS = ("sum", "mean", "max", "min")
_ES_REDUCTIONS = ("sum", "mean", "max")


def _transposed(indptr: Tensor, indices: Tensor, num_src: int) -> tuple[Tensor, Tensor, Tensor]:
    """CSR of the reversed edges: for each source, its edges' rows and slots (in slot order)."""
    num_rows = indptr.numel() - 1
    row_of_slot = expand_ptr(indptr, indices.numel())
    t_indptr, t_rows, t_slots = csc_from_coo(row_of_slot, indices, max(num_rows, num_src))
    return t_indptr[: num_src + 1], t_rows, t_slots


def transposed_of(structure: Structure, num_src: int) -> tuple[Tensor, Tensor, Tensor]:
    """``(t_indptr, t_rows, t_slots)``: the structure's edges grouped by source, for ``num_src``
    source rows (the CSR the backward pass aggregates over), built on first use and cached on
    the structure."""

    def build():
        indptr, indices, _ = structure.csc()
        return _transposed(indptr, indices, num_src)

    return structure.cached(("transposed", num_src), build)


class _SpMM(torch.autograd.Function):
    """Sum aggregation; ``transposed`` gives the structure's cached transposed CSR, built the
    first time a backward pass needs it (the reason this is not the op's registered autograd:
    see the module's docstring)."""

    @staticmethod
    def forward(ctx, indptr, indices, weight, x, transposed):
        ctx.save_for_backward(indptr, indices, weight, x)
        ctx.transposed = transposed
        return ops.spmm(indptr, indices, weight, x)

    @staticmethod
    def backward(ctx, grad_out):
        indptr, indices, weight, x = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        grad_weight = grad_x = None
        if ctx.needs_input_grad[2]:
            grad_weight = ops.sddmm(indptr, indices, grad_out, x)
        if ctx.needs_input_grad[3]:
            t_indptr, t_rows, t_slots = ctx.transposed()
            t_weight = weight[t_slots] if weight is not None else None
            grad_x = ops.spmm(t_indptr, t_rows, t_weight, grad_out)
        return None, None, grad_weight, grad_x, None


class _SpMMMax(torch.autograd.Function):
    """Max aggregation; the forward records the winning slot of every (row, feature), and the
    backward ops route each output gradient to that slot's source (and edge weight), every
    entry summed by one owner (deterministic, no float atomics)."""

    @staticmethod
    def forward(ctx, indptr, indices, weight, x, transposed):
        out, arg = ops.spmm_max(indptr, indices, weight, x)
        ctx.save_for_backward(indptr, indices, weight, x, arg)
        ctx.mark_non_differentiable(arg)
        ctx.transposed = transposed
        return out

    @staticmethod
    def backward(ctx, grad_out):
        indptr, indices, weight, x, arg = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        grad_weight = grad_x = None
        if ctx.needs_input_grad[2]:
            grad_weight = torch.ops.fastgl.spmm_max_backward_weight(
                indptr, indices, x, arg, grad_out
            )
        if ctx.needs_input_grad[3]:
            t_indptr, t_rows, t_slots = ctx.transposed()
            grad_x = torch.ops.fastgl.spmm_max_backward_x(
                t_indptr, t_rows, t_slots, weight, arg, grad_out
            )
        return None, None, grad_weight, grad_x, None


def csc_of(structure: Structure, op: str = "aggregate") -> tuple[Tensor, Tensor, Tensor | None]:
    """``(indptr, indices, perm)`` of a graph or block (:meth:`fastgl.graph.Structure.csc`);
    ``perm`` reorders edge data into CSC slot order (``None`` when the structure's edge order
    already is)."""
    _check_structure(op, structure)
    return structure.csc()


def _check_structure(op: str, structure: Structure) -> None:
    if not isinstance(structure, Structure):
        raise TypeError(f"{op}: expected a CSCGraph or a Block, got {type(structure).__name__}")


def aggregate(
    structure: Structure,
    x: Tensor,
    edge_weight: Tensor | None = None,
    reduce: str = "sum",
) -> Tensor:
    """For every destination node, reduce ``edge_weight[e] * x[src(e)]`` over its in-edges.

    Args:
        structure: a :class:`~fastgl.CSCGraph` (destinations = all nodes) or a sampled
            :class:`~fastgl.Block` (destinations = its first ``num_dst_nodes`` sources).
        x: ``[num_src, F]`` source features (fp32, fp64, fp16 or bf16; fp32 accumulation).
        edge_weight: ``[E]`` weights in the structure's own edge order (CSC slot order for a
            graph, edge order for a block), or ``None`` for all ones; differentiable.
        reduce: ``"sum"``, ``"mean"``, ``"max"`` or ``"min"`` (per feature; ties go to the
            first edge, which alone gets the gradient). Nodes without in-edges get zeros.

    Returns:
        ``[num_dst, F]``.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> x, seeds = torch.randn(4, 8), torch.tensor([1, 2])
        >>> sampler = fastgl.NeighborSampler(graph, [2, 2])
        >>> sub = sampler.sample(seeds)
        >>> h = aggregate(sub.blocks[0], x[sub.nodes[: sub.blocks[0].num_src_nodes]])
        >>> h.shape == (sub.blocks[0].num_dst_nodes, 8)
        True
    """
    _check_reduce("aggregate", reduce, _REDUCTIONS)
    if reduce == "min" and isinstance(x, Tensor):  # min(w * x) = -max(w * -x): max's kernels
        return -aggregate(structure, -x, edge_weight, "max")
    indptr, indices, edge_weight = _csc_inputs("aggregate", structure, x, edge_weight)
    transposed = functools.partial(transposed_of, structure, x.shape[0])
    if reduce == "max":
        return _SpMMMax.apply(indptr, indices, edge_weight, x, transposed)
    degree = indptr[1:] - indptr[:-1] if reduce == "mean" else None
    if reduce == "mean" and x.dtype in (torch.float16, torch.bfloat16):
        # Scaled per edge, so the fp32 accumulator sums the mean's terms: a half-precision sum
        # of a high-degree row could overflow before the row scale below.
        scale = torch.repeat_interleave(
            1.0 / degree.clamp(min=1).to(x.dtype), degree, output_size=indices.numel()
        )
        return _SpMM.apply(
            indptr, indices, scale if edge_weight is None else edge_weight * scale, x, transposed
        )
    out = _SpMM.apply(indptr, indices, edge_weight, x, transposed)
    if reduce == "mean":
        out = out * (1.0 / degree.clamp(min=1).to(out.dtype)).unsqueeze(1)
    return out


def _check_reduce(op: str, reduce: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        raise ValueError(f"{op}: reduce must be one of {allowed}, got {reduce!r}")


def _csc_inputs(
    op: str, structure: Structure, x: Tensor, edge_weight: Tensor | None
) -> tuple[Tensor, Tensor, Tensor | None]:
    """``(indptr, indices, edge_weight)`` with the weights checked and in CSC slot order."""
    indptr, indices, perm = csc_of(structure, op)
    num_edges = indices.numel()
    if not isinstance(x, Tensor) or x.dim() != 2:
        raise ValueError(
            f"{op}: x must be a 2-D tensor [num_src, F], got "
            f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}"
        )
    _check_device(op, "x", x, indptr)
    if edge_weight is not None:
        check_edge_weight(op, edge_weight, num_edges, indptr.device)
        if perm is not None:
            edge_weight = edge_weight[perm]
    return indptr, indices, edge_weight


def _check_device(op: str, name: str, t: Tensor, indptr: Tensor) -> None:
    # Checked here because a tensor on the meta device would reach the fake kernel, not the
    # compiled op's own device check.
    if t.device != indptr.device:
        raise ValueError(
            f"{op}: {name} is on {t.device} but the graph is on {indptr.device}; "
            f"move them to the same device"
        )


_ES_STRATEGIES = ("bucket", "fastrand")


def check_es_spmm_options(where: str, width: int, strategy: str) -> None:
    """ES-SpMM's options: ``width`` an int >= 1, ``strategy`` ``"bucket"`` or ``"fastrand"``."""
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise ValueError(f"{where}: width must be an int >= 1, got {width!r}")
    if strategy not in _ES_STRATEGIES:
        raise ValueError(f"{where}: strategy must be 'bucket' or 'fastrand', got {strategy!r}")


def es_spmm(
    structure: Structure,
    x: Tensor,
    width: int,
    strategy: str = "bucket",
    edge_weight: Tensor | None = None,
    reduce: str = "sum",
) -> Tensor:
    """ES-SpMM (Lin et al.): :func:`aggregate` over a cache-first sample of each node's in-edges.

    Every destination keeps at most ``width`` of its in-edges (in the structure's CSC slot
    order, i.e. the graph's edge order within a node): the first ``width`` (``"bucket"``) or
    those at positions ``(j * 577) mod degree`` for ``j < width`` (``"fastrand"``, spread over
    the whole neighborhood). Nodes with at most ``width`` in-edges are aggregated exactly. The
    sample is the same on every call: an approximation for fast inference, not a random
    estimator. CPU and CUDA pick the same edges and agree to rounding.

    **Inference only**: there is no backward; it raises if gradients would be needed (run it
    under ``torch.no_grad()`` or ``torch.inference_mode()``, and train with :func:`aggregate`).

    Args:
        structure: a :class:`~fastgl.CSCGraph` or a sampled :class:`~fastgl.Block`.
        x: ``[num_src, F]`` source features (fp32, fp64, fp16 or bf16; fp32 accumulation).
        width: edges kept per node (ES-SpMM's shared-memory width ``S``), ``>= 1``.
        strategy: ``"bucket"`` or ``"fastrand"``.
        edge_weight: ``[E]`` weights in the structure's own edge order, or ``None`` (ones).
        reduce: ``"sum"`` (ES-SpMM's), ``"mean"`` (over the kept edges) or ``"max"``.

    Returns:
        ``[num_dst, F]``.

    Example:
        >>> import fastgl
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
        >>> x = torch.randn(4, 8)
        >>> with torch.no_grad():
        ...     h = es_spmm(graph, x, width=16, strategy="fastrand", reduce="mean")
        >>> torch.allclose(h, aggregate(graph, x, reduce="mean"))   # exact: degrees <= 16
        True
    """
    check_es_spmm_options("es_spmm", width, strategy)
    _check_reduce("es_spmm", reduce, _ES_REDUCTIONS)
    indptr, indices, edge_weight = _csc_inputs("es_spmm", structure, x, edge_weight)
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, edge_weight)):
        raise RuntimeError(
            "es_spmm: inference only, it has no backward; call it under "
            "torch.no_grad() or torch.inference_mode() (train with aggregate())"
        )
    out = ops.es_spmm(
        indptr, indices, edge_weight, x, width, strategy, "max" if reduce == "max" else "sum"
    )
    if reduce == "mean":
        kept = (indptr[1:] - indptr[:-1]).clamp(min=1, max=width)
        out = out / kept.unsqueeze(1).to(out.dtype)
    return out


def edge_softmax(structure: Structure, scores: Tensor) -> Tensor:
    """Softmax of edge scores over each destination's in-edges (per head), differentiable.

    Args:
        structure: a :class:`~fastgl.CSCGraph` or a :class:`~fastgl.Block`.
        scores: ``[E]`` or ``[E, H]`` in the structure's own edge order.

    Returns:
        Same shape as ``scores``: for every destination and head, its in-edges' weights sum to 1.
    """
    indptr, _, perm = csc_of(structure, "edge_softmax")
    if not isinstance(scores, Tensor):
        raise TypeError(f"edge_softmax: scores must be a tensor, got {type(scores).__name__}")
    if scores.dim() == 0:
        raise ValueError("edge_softmax: scores must have shape [E] or [E, H], got a scalar")
    _check_device("edge_softmax", "scores", scores, indptr)
    columns = scores.unsqueeze(1) if scores.dim() == 1 else scores
    if perm is not None:
        columns = _in_slot_order(columns, perm)
    # The op checks the shape of scores against indptr (and is differentiable).
    out = ops.edge_softmax(indptr, columns)
    if perm is not None:
        out = out[inverse_permutation(perm)]
    return out.squeeze(1) if scores.dim() == 1 else out


def _in_slot_order(scores: Tensor, perm: Tensor) -> Tensor:
    """A block's edge scores gathered into CSC slot order. Checked here: the gather would hide
    a wrong row count from the op (extra rows dropped, missing ones an out-of-range index)."""
    if scores.shape[:1] != perm.shape:
        raise ValueError(
            f"edge_softmax: scores must have {perm.numel()} rows, one per edge of the block, "
            f"got shape {tuple(scores.shape)}"
        )
    return scores[perm]


def gat_scores(
    structure: Structure,
    alpha_src: Tensor,
    alpha_dst: Tensor,
    negative_slope: float = 0.2,
    alpha_edge: Tensor | None = None,
) -> Tensor:
    """GAT attention logits ``leaky_relu(alpha_src[src(e)] + alpha_dst[dst(e)] (+
    alpha_edge[e]))`` per edge.

    ``alpha_src [num_src, H]`` and ``alpha_dst [num_dst, H]`` are the projections of the source
    and destination features on the attention vectors, ``alpha_edge [E, H]`` (structure's edge
    order; optional) that of the edge features; the result ``[E, H]`` (structure's edge
    order) is differentiable in all three, so the attention parameters train. Feed it to
    :func:`edge_softmax`, then to :func:`aggregate` one head at a time.

    Example:
        >>> import fastgl
        >>> graph = fastgl.CSCGraph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 1]]))
        >>> scores = gat_scores(graph, torch.randn(3, 2), torch.randn(3, 2))
        >>> weights = edge_softmax(graph, scores)        # [E, H]: per node and head, sum 1
        >>> weights.shape
        torch.Size([3, 2])
    """
    _check_structure("gat_scores", structure)
    src, dst = structure.src_index(), structure.dst_index()
    if alpha_src.dim() != 2 or alpha_dst.dim() != 2 or alpha_src.shape[1] != alpha_dst.shape[1]:
        raise ValueError(
            f"gat_scores: alpha_src and alpha_dst must be [N, H] with the same H, "
            f"got {tuple(alpha_src.shape)} and {tuple(alpha_dst.shape)}"
        )
    logits = alpha_src.index_select(0, src) + alpha_dst.index_select(0, dst)
    if alpha_edge is not None:
        if alpha_edge.shape != logits.shape:
            raise ValueError(
                f"gat_scores: alpha_edge must be [E, H] = {list(logits.shape)}, "
                f"got {list(alpha_edge.shape)}"
            )
        logits = logits + alpha_edge
    return F.leaky_relu(logits, negative_slope)
