"""Typed wrappers over the compiled ops in ``torch.ops.fastgl``, with their fake kernels.

These are the building blocks; most users want :func:`fastgl.ops.neighbor_sample` or the
samplers in :mod:`fastgl.sampling` instead.
"""

from typing import Optional, Tuple

import torch

from .. import _C  # noqa: F401  (loads the compiled ops)
from ._compat import new_dynamic_size, register_fake

Tensor = torch.Tensor


def csc_from_coo(src: Tensor, dst: Tensor, num_nodes: int) -> Tuple[Tensor, Tensor, Tensor]:
    """Counting-sort an edge list by target into CSC.

    Args:
        src, dst: ``[E]`` int32/int64 source and target of each edge.
        num_nodes: number of nodes ``N``; every id must be below it.

    Returns:
        ``(indptr [N+1] int64, indices [E] (dtype of src), perm [E] int64)`` where ``perm[k]`` is
        the input position of CSC slot ``k``; a node's in-edges keep their input order.
    """
    return torch.ops.fastgl.csc_from_coo(src, dst, num_nodes)


def sample_neighbors(
    indptr: Tensor,
    indices: Tensor,
    transits: Tensor,
    fanout: int,
    *,
    replace: bool = False,
    weight: Optional[Tensor] = None,
    seed: int = 0,
) -> Tuple[Tensor, Tensor, Tensor]:
    """One hop of sampling: pair ``p`` draws up to ``fanout`` in-edges of ``transits[p]``.

    Every draw is a pure function of ``(seed, p, draw index)``, so CPU and CUDA return the same
    sample for the same ``seed``. ``fanout=-1`` takes all edges; with ``weight`` the draws are
    proportional to it and zero-weight edges are never drawn.

    Returns:
        ``(ptr [P+1], neighbors [S], edge_pos [S])`` int64: pair ``p`` owns ``ptr[p]:ptr[p+1]``;
        ``edge_pos`` is the CSC slot of each drawn edge (``indices[edge_pos] == neighbors``).

    Example:
        >>> ptr, nbr, pos = sample_neighbors(g.indptr, g.indices, seeds, 10, seed=1)
    """
    return torch.ops.fastgl.sample_neighbors(indptr, indices, weight, transits, fanout, replace,
                                             seed)


def id_map(prefix: Tensor, ids: Tensor) -> Tuple[Tensor, Tensor]:
    """FastGL's Fused-Map: relabel ``ids`` to local ids after a fixed ``prefix``.

    Args:
        prefix: ``[P]`` distinct ids that keep local ids ``0 .. P-1``.
        ids: ``[n]`` ids (repeats allowed), all ``>= 0``.

    Returns:
        ``(unique_nodes, local_ids)``: ``unique_nodes`` is ``prefix`` followed by the ids not in it
        in first-occurrence order; ``unique_nodes[local_ids] == ids``.

    Example:
        >>> id_map(torch.tensor([5, 3]), torch.tensor([3, 7, 7, 5]))
        (tensor([5, 3, 7]), tensor([1, 2, 2, 0]))
    """
    return torch.ops.fastgl.id_map(prefix, ids)


def match(prev_nodes: Tensor, next_nodes: Tensor) -> Tensor:
    """FastGL's Match: where each node of the next mini-batch sits in the previous one.

    Args:
        prev_nodes: ``[P]`` distinct node ids (the rows of the previous feature buffer).
        next_nodes: ``[n]`` node ids, all ``>= 0``, on the same device.

    Returns:
        int64 ``[n]``: ``position[j]`` is the row of ``prev_nodes`` equal to ``next_nodes[j]``,
        or ``-1`` when it must be loaded.

    Example:
        >>> match(torch.tensor([5, 3, 9]), torch.tensor([3, 7, 5]))
        tensor([ 1, -1,  0])
    """
    return torch.ops.fastgl.match(prev_nodes, next_nodes)


def overlap_counts(nodes: Tensor, offsets: Tensor) -> Tensor:
    """Pairwise intersection sizes of up to 64 node sets (the numerators of Reorder's
    match-degree matrix).

    Args:
        nodes: the sets one after another; set ``s`` is ``nodes[offsets[s]:offsets[s+1]]`` and
            holds distinct ids ``>= 0``.
        offsets: int64 ``[n+1]`` on the device of ``nodes``, from 0 to ``len(nodes)``.

    Returns:
        int64 ``[n, n]``, symmetric: ``|set i ∩ set j|``, set sizes on the diagonal.

    Example:
        >>> overlap_counts(torch.tensor([1, 2, 3, 2, 3, 4]), torch.tensor([0, 3, 6]))
        tensor([[3, 2],
                [2, 3]])
    """
    return torch.ops.fastgl.overlap_counts(nodes, offsets)


def gather_rows(x: Tensor, index: Optional[Tensor] = None, *, out: Optional[Tensor] = None,
                out_index: Optional[Tensor] = None) -> Tensor:
    """``out[out_index[i]] = x[index[i]]`` for every ``i``: whole rows, any dtype, parallel.

    A missing ``index`` (``out_index``) means rows ``0, 1, 2, ...`` of ``x`` (``out``). Without
    ``out``, a new tensor of ``len(index)`` rows is returned, on ``index``'s device. With ``out``
    on a GPU, ``x`` may be on that GPU or in pinned host memory: the GPU then reads the rows
    straight from host memory (zero-copy, UVA); that read is asynchronous, so a pinned ``x``
    must outlive it (synchronize the stream before freeing a temporary one). ``out_index`` must
    not repeat a row (as for ``index_copy_``, which write wins would be undefined), and ``x`` and
    ``out`` must not share memory.

    Example:
        >>> gather_rows(torch.arange(6.).view(3, 2), torch.tensor([2, 0]))
        tensor([[4., 5.],
                [0., 1.]])
    """
    if out is None:
        if index is None:
            raise ValueError("gather_rows: give index or out")
        out = x.new_empty((index.numel(),) + tuple(x.shape[1:]), device=index.device)
    torch.ops.fastgl.gather_rows(x, index, out, out_index)
    return out


def spmm(indptr: Tensor, indices: Tensor, x: Tensor, weight: Optional[Tensor] = None) -> Tensor:
    """``out[r] = sum_{k in indptr[r]:indptr[r+1]} weight[k] * x[indices[k]]`` (weight 1 if None).

    Shapes: ``indptr [R+1]`` int64, ``indices [E]``, ``x [S, F]``, ``weight [E]`` -> ``[R, F]``.
    """
    return torch.ops.fastgl.spmm(indptr, indices, weight, x)


def es_spmm_rows(indptr: Tensor, indices: Tensor, x: Tensor, width: int, strategy: str,
                 weight: Optional[Tensor] = None, reduce: str = "sum") -> Tensor:
    """:func:`spmm` (``reduce="sum"``) or its max over at most ``width`` edges of each row
    (ES-SpMM's cache-first sampling).

    Row ``r`` of degree ``d`` reads its edges ``0 .. min(d, width) - 1`` (``"bucket"``) or
    ``(j * 577) mod d`` for ``j < width`` (``"fastrand"``, when ``d > width``). No autograd.
    """
    return torch.ops.fastgl.es_spmm(indptr, indices, weight, x, width, strategy, reduce)


def sddmm(indptr: Tensor, indices: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``out[k] = <a[r], b[indices[k]]>`` for every edge ``k`` of row ``r``; shape ``[E]``."""
    return torch.ops.fastgl.sddmm(indptr, indices, a, b)


@register_fake("fastgl::edge_softmax")
def _edge_softmax_fake(indptr, scores):
    return torch.empty_like(scores)


@register_fake("fastgl::edge_softmax_backward")
def _edge_softmax_backward_fake(indptr, out, grad):
    return torch.empty_like(out)


@register_fake("fastgl::spmm")
def _spmm_fake(indptr, indices, weight, x):
    return x.new_empty(indptr.shape[0] - 1, x.shape[1])


@register_fake("fastgl::es_spmm")
def _es_spmm_fake(indptr, indices, weight, x, width, strategy, reduce):
    return x.new_empty(indptr.shape[0] - 1, x.shape[1])


@register_fake("fastgl::spmm_max")
def _spmm_max_fake(indptr, indices, weight, x):
    rows = indptr.shape[0] - 1
    return x.new_empty(rows, x.shape[1]), x.new_empty(rows, x.shape[1], dtype=torch.int64)


@register_fake("fastgl::spmm_max_backward_x")
def _spmm_max_backward_x_fake(t_indptr, t_rows, t_slots, weight, arg, grad):
    return grad.new_empty(t_indptr.shape[0] - 1, grad.shape[1])


@register_fake("fastgl::spmm_max_backward_weight")
def _spmm_max_backward_weight_fake(indptr, indices, x, arg, grad):
    return grad.new_empty(indices.shape[0])


@register_fake("fastgl::sddmm")
def _sddmm_fake(indptr, indices, a, b):
    return a.new_empty(indices.shape[0])


@register_fake("fastgl::_transit_schedule")
def _transit_schedule_fake(transits, min_block_pairs, chunk_size):
    num_segments, num_thread_tier, num_items = (new_dynamic_size() for _ in range(3))
    return (transits.new_empty(transits.shape[0]), transits.new_empty(num_segments),
            transits.new_empty(num_segments + 1), transits.new_empty(num_thread_tier),
            transits.new_empty(num_items), transits.new_empty(num_items))


@register_fake("fastgl::csc_from_coo")
def _csc_from_coo_fake(src, dst, num_nodes):
    return (src.new_empty(num_nodes + 1, dtype=torch.int64), torch.empty_like(src),
            src.new_empty(src.shape[0], dtype=torch.int64))


@register_fake("fastgl::sample_neighbors")
def _sample_neighbors_fake(indptr, indices, weight, transits, fanout, replace, seed):
    total = new_dynamic_size()
    return (transits.new_empty(transits.shape[0] + 1), transits.new_empty(total),
            transits.new_empty(total))


@register_fake("fastgl::match")
def _match_fake(prev_nodes, next_nodes):
    return next_nodes.new_empty(next_nodes.shape[0], dtype=torch.int64)


@register_fake("fastgl::overlap_counts")
def _overlap_counts_fake(nodes, offsets):
    num_sets = offsets.shape[0] - 1
    return nodes.new_empty(num_sets, num_sets, dtype=torch.int64)


@register_fake("fastgl::gather_rows")
def _gather_rows_fake(x, index, out, out_index):
    return None


@register_fake("fastgl::id_map")
def _id_map_fake(prefix, ids):
    num_unique = new_dynamic_size()
    return (ids.new_empty(num_unique, dtype=torch.int64),
            ids.new_empty(ids.shape[0], dtype=torch.int64))
