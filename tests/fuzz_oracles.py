"""What a returned result of each fastgl op must be, checked by the fuzz after every call that
returns (``fuzz_ops.py`` pairs each op with its oracle here): ``oracle(before, after, result)``
gives ``None`` or what is wrong.

``before`` holds the call's arguments as they were before the call (tensors cloned), ``after`` the
same arguments after it. Deterministic ops are compared with a pure-PyTorch reference computed
from ``before``; the random samplers with the invariants every valid sample has (each drawn edge
exists in its transit's row, counts as the fanout says, distinct draws without replacement).
No op may change an argument other than ``gather_rows``' ``out``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from reference import (
    csc_reference_of,
    expected_draws,
    first_occurrence,
    frontier_sample_reference,
    gather_rows_reference,
    id_map_reference,
    induced_subgraphs_reference,
    match_reference,
    overlap_counts_reference,
    picked_slots,
    reference_edge_softmax,
    transit_schedule_reference,
    walk_paths_fault,
)
from torch import Tensor

Fault = str | None


def same(a, b) -> bool:
    """Equal dtype, shape and values; NaNs equal each other."""
    if isinstance(a, Tensor):
        return (
            isinstance(b, Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(
                ((a == b) | (a.isnan() & b.isnan()) if a.is_floating_point() else (a == b)).all()
            )
        )
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def close(a: Tensor, b: Tensor) -> bool:
    """Equal up to summation order: floating sums may round differently."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if not a.is_floating_point():
        return bool((a == b).all())
    return bool(torch.isclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True).all())


def _expect(ok: bool, what: str) -> Fault:
    return None if ok else what


def _rows_of(indptr: Tensor) -> Tensor:
    """The row of every slot of a valid offset array."""
    return torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())


def _messages(call: dict) -> Tensor:
    """``weight[k] * x[indices[k]]`` for every edge, ``[E, F]``."""
    x = call["x"]
    messages = x[call["indices"].long()]
    if call.get("weight") is not None:
        messages = messages * call["weight"].to(x.dtype).unsqueeze(-1)
    return messages


def _sum_rows(indptr: Tensor, values: Tensor, like: Tensor) -> Tensor:
    out = torch.zeros(indptr.numel() - 1, *values.shape[1:], dtype=like.dtype)
    return out.index_add_(0, _rows_of(indptr), values)


def _max_rows(indptr: Tensor, messages: Tensor) -> tuple:
    """Max per row and column, NaN winning, the first maximum's slot; 0 and -1 for no edges."""
    rows, num_rows = _rows_of(indptr), indptr.numel() - 1
    shape = (num_rows, messages.shape[1])
    value = torch.zeros(shape, dtype=messages.dtype).scatter_reduce_(
        0, rows.unsqueeze(1).expand_as(messages), messages, "amax", include_self=False
    )
    winner = value[rows]
    is_max = (messages == winner) | (messages.isnan() & winner.isnan())
    slots = torch.arange(messages.shape[0]).unsqueeze(1).expand_as(messages)
    none = torch.iinfo(torch.int64).max
    arg = torch.full(shape, none).scatter_reduce_(
        0, rows.unsqueeze(1).expand_as(messages), torch.where(is_max, slots, none), "amin"
    )
    arg[arg == none] = -1
    return value, arg


# ---------------------------------------------------------------------------------------------
# Deterministic ops: a reference from the inputs.


def csc_from_coo(before, after, result) -> Fault:
    expected = csc_reference_of(before["src"], before["dst"], before["num_nodes"])
    return _expect(same(result, expected), "not the stable CSC of the edges")


def id_map(before, after, result) -> Fault:
    unique, local = id_map_reference(before["prefix"], before["ids"])
    return _expect(
        [t.tolist() for t in result] == [unique, local], "not prefix + first occurrences"
    )


def spmm(before, after, result) -> Fault:
    expected = _sum_rows(before["indptr"], _messages(before), before["x"])
    return _expect(close(result, expected), "differs from the weighted row sums")


def spmm_max(before, after, result) -> Fault:
    expected = _max_rows(before["indptr"], _messages(before))
    return _expect(same(result, expected), "differs from the row maxima and their first slots")


def _picked_slots(indptr: Tensor, width: int, strategy: str) -> Tensor:
    """Every slot ES-SpMM reads, row by row."""
    return torch.tensor(
        [
            start + j
            for start, end in zip(indptr[:-1].tolist(), indptr[1:].tolist())
            for j in picked_slots(end - start, width, strategy)
        ],
        dtype=torch.long,
    )


def es_spmm(before, after, result) -> Fault:
    slots = _picked_slots(before["indptr"], before["width"], before["strategy"])
    counts = torch.bincount(
        _rows_of(before["indptr"])[slots], minlength=before["indptr"].numel() - 1
    )
    picked_ptr = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
    messages = _messages(before)[slots]
    if before["reduce"] == "max":
        return _expect(
            same(result, _max_rows(picked_ptr, messages)[0]),
            "differs from the maxima over the picked edges",
        )
    return _expect(
        close(result, _sum_rows(picked_ptr, messages, before["x"])),
        "differs from the sums over the picked edges",
    )


def sddmm(before, after, result) -> Fault:
    rows = _rows_of(before["indptr"])
    expected = (before["a"][rows] * before["b"][before["indices"].long()]).sum(-1)
    return _expect(close(result, expected), "differs from the per-edge dot products")


def _softmax_sums(indptr: Tensor, values: Tensor) -> Tensor:
    return _sum_rows(indptr, values, values)[_rows_of(indptr)]


def edge_softmax(before, after, result) -> Fault:
    indptr = before["indptr"]
    expected = reference_edge_softmax(_rows_of(indptr), indptr.numel() - 1, before["scores"])
    return _expect(close(result, expected), "differs from the softmax over each row's edges")


def edge_softmax_backward(before, after, result) -> Fault:
    out, grad = before["out"], before["grad"]
    expected = out * (grad - _softmax_sums(before["indptr"], out * grad))
    return _expect(close(result, expected), "differs from the softmax gradient")


def spmm_max_backward_x(before, after, result) -> Fault:
    t_indptr, arg, grad = before["t_indptr"], before["arg"], before["grad"]
    row, slot = before["t_rows"].long(), before["t_slots"].long()
    won = arg[row] == slot.unsqueeze(1)
    scale = 1 if before["weight"] is None else before["weight"][slot].to(grad.dtype).unsqueeze(1)
    contribution = torch.where(won, grad[row] * scale, torch.zeros((), dtype=grad.dtype))
    return _expect(
        close(result, _sum_rows(t_indptr, contribution, grad)),
        "differs from the gradient routed to the winning sources",
    )


def spmm_max_backward_weight(before, after, result) -> Fault:
    indptr, arg, grad, x = before["indptr"], before["arg"], before["grad"], before["x"]
    rows, slots = _rows_of(indptr), torch.arange(before["indices"].numel())
    won = arg[rows] == slots.unsqueeze(1)
    products = grad[rows] * x[before["indices"].long()]
    expected = torch.where(won, products, torch.zeros((), dtype=grad.dtype)).sum(1)
    return _expect(close(result, expected), "differs from the winning edges' gradients")


def match(before, after, result) -> Fault:
    expected = match_reference(before["prev_nodes"], before["next_nodes"])
    return _expect(result.tolist() == expected, "not the positions in prev_nodes")


def overlap_counts(before, after, result) -> Fault:
    expected = overlap_counts_reference(before["nodes"], before["offsets"])
    return _expect(result.tolist() == expected, "not the pairwise intersection sizes")


def gather_rows(before, after, result) -> Fault:
    expected = gather_rows_reference(
        before["x"], before["index"], before["out"], before["out_index"]
    )
    return _expect(result is None and same(after["out"], expected), "out holds the wrong rows")


def valid_offsets(before, after, result) -> Fault:
    offsets, num_edges = before["offsets"], before["num_edges"]
    expected = (
        int(offsets[0]) == 0
        and int(offsets[-1]) == num_edges
        and all(a <= b for a, b in zip(offsets.tolist(), offsets.tolist()[1:]))
    )
    return _expect(result is expected, f"says the offsets are {'' if result else 'not '}valid")


def ids_in_range(before, after, result) -> Fault:
    ids, bound = before["ids"].tolist(), before["num_nodes"]
    expected = all(0 <= i < bound for i in ids)
    return _expect(result is expected, f"says the ids are {'' if result else 'not '}in range")


def transit_schedule(before, after, result) -> Fault:
    order, segments, starts, thread_tier, items = transit_schedule_reference(
        before["transits"].tolist(), before["min_block_pairs"], before["chunk_size"]
    )
    expected = [order, segments, starts, thread_tier, [s for s, _ in items], [c for _, c in items]]
    return _expect([t.tolist() for t in result] == expected, "not the transit-grouped schedule")


# ---------------------------------------------------------------------------------------------
# Random samplers: the invariants of a valid sample.


def _drawable(before, transits: Tensor) -> Tensor:
    """Edges each transit can draw: its in-degree, or its positive-weight in-edges. Only the
    transits' rows: a sampler reads (and checks) no other."""
    start, end = before["indptr"][transits], before["indptr"][transits + 1]
    if before["weight"] is None:
        return end - start
    positive = torch.cat([torch.zeros(1, dtype=torch.long), (before["weight"] > 0).cumsum(0)])
    return positive[end] - positive[start]


def _valid_draws(
    before, pair_ptr: Tensor, transits: Tensor, slots: Tensor, fanout: int, replace: bool
) -> Fault:
    """Each pair drew as many in-edges of its transit as the fanout says, of positive weight,
    distinct without replacement."""
    indptr, counts = before["indptr"], pair_ptr.diff()
    if not torch.equal(counts, expected_draws(_drawable(before, transits), fanout, replace)):
        return f"draw counts {counts.tolist()} do not follow fanout {fanout}"
    pair = torch.repeat_interleave(torch.arange(transits.numel()), counts)
    transit = transits[pair]
    if not bool(((indptr[transit] <= slots) & (slots < indptr[transit + 1])).all()):
        return "a drawn edge is not an in-edge of its transit"
    if before["weight"] is not None and not bool((before["weight"][slots] > 0).all()):
        return "a zero-weight edge was drawn"
    if not replace and torch.unique(pair * indptr[-1] + slots).numel() < slots.numel():
        return "an edge was drawn twice without replacement"
    return None


def sample_neighbors(before, after, result) -> Fault:
    ptr, neighbors, slots = result
    if not (
        ptr.numel() == before["transits"].numel() + 1
        and int(ptr[0]) == 0
        and int(ptr[-1]) == neighbors.numel() == slots.numel()
    ):
        return "ptr does not delimit the outputs"
    fault = _valid_draws(
        before, ptr, before["transits"], slots, before["fanout"], before["replace"]
    )
    if fault:
        return fault
    return _expect(
        torch.equal(neighbors, before["indices"][slots].long()),
        "a neighbor is not the source of its drawn edge",
    )


def sample_ranges(before, after, result) -> Fault:
    ptr, slots = result
    starts, ends, fanouts = before["starts"], before["ends"], before["fanouts"]
    weight, replace = before["weight"], before["replace"]
    if not (
        ptr.dtype == slots.dtype == torch.int64
        and ptr.shape == (starts.numel() + 1,)
        and int(ptr[0]) == 0
        and int(ptr[-1]) == slots.numel()
    ):
        return "ptr does not delimit the slots"
    if weight is None:
        available = ends - starts
    else:
        positive = torch.cat([torch.zeros(1, dtype=torch.long), (weight > 0).cumsum(0)])
        available = positive[ends] - positive[starts]
    per_fanout = torch.minimum(available, fanouts.clamp(min=0))
    if replace:
        per_fanout = torch.where(available > 0, fanouts, torch.zeros_like(fanouts))
    counts = ptr.diff()
    if not torch.equal(counts, torch.where(fanouts < 0, available, per_fanout)):
        return f"draw counts {counts.tolist()[:20]} do not follow the fanouts"
    pair = torch.repeat_interleave(torch.arange(starts.numel()), counts)
    if not bool(((starts[pair] <= slots) & (slots < ends[pair])).all()):
        return "a drawn slot is outside its pair's range"
    if weight is not None and not bool((weight[slots] > 0).all()):
        return "a zero-weight slot was drawn"
    distinct = (fanouts[pair] < 0) | (not replace)
    pairs_slots = torch.stack([pair[distinct], slots[distinct]])
    if torch.unique(pairs_slots, dim=1).shape[1] < pairs_slots.shape[1]:
        return "a slot was drawn twice without replacement"
    # Counts, ranges and distinctness right: a whole range (-1) is then in order exactly when
    # its slots ascend.
    same_whole = (pair[1:] == pair[:-1]) & (fanouts[pair[1:]] < 0)
    return _expect(
        bool((slots[1:] > slots[:-1])[same_whole].all()), "a whole range is not in slot order"
    )


def random_walk(before, after, result) -> Fault:
    nodes, edges = result
    if nodes.dim() != 2 or nodes.shape[1] != before["length"] + 1:
        return f"nodes of shape {tuple(nodes.shape)} for walks of length {before['length']}"
    slots, fault = _slots_of_walk_edges(before, nodes, edges)
    return fault or walk_paths_fault(
        before["indptr"],
        before["indices"],
        before["weight"],
        before["starts"],
        nodes,
        slots,
        before["restart_prob"],
        before["ppr"],
    )


def frontier_sample(before, after, result) -> Fault:
    """Draw for draw the reference's samplers (tests/reference.py replays the Dashboard)."""
    expected = frontier_sample_reference(**before)
    return _expect(
        all(torch.equal(got, want) for got, want in zip(result, expected)),
        "the samples differ from the reference's",
    )


def induced_subgraphs(before, after, result) -> Fault:
    """Edge for edge the reference's induced subgraphs."""
    expected = induced_subgraphs_reference(**before)
    return _expect(
        all(torch.equal(got, want) for got, want in zip(result, expected)),
        "the induced edges differ from the reference's",
    )


def _slots_of_walk_edges(before, nodes: Tensor, edges: Tensor) -> tuple[Tensor, Fault]:
    """The CSR slots behind the walks' edge ids: with ``eid`` (whose entries may be any ids,
    repeated or not), the same call without it must walk the same nodes and take slots whose
    ids are ``edges``."""
    eid = before["eid"]
    if eid is None:
        return edges, None
    call = {name: value for name, value in before.items() if name != "eid"}
    same_nodes, slots = torch.ops.fastgl.random_walk(eid=None, **call)
    if not torch.equal(same_nodes, nodes):
        return slots, "edge ids change the walks"
    named = torch.where(slots >= 0, eid[slots.clamp(min=0)] if eid.numel() else slots, -1)
    return slots, _expect(torch.equal(named, edges), "an edge id is not eid of the slot taken")


def _slots_of_edge_ids(before, targets: Tensor, sources: Tensor, edge_ids: Tensor) -> Fault:
    """Each sampled edge (source -> target, id) is an edge of the graph with that id."""
    indptr, indices, eid = before["indptr"], before["indices"].long(), before["eid"]
    if eid is None:
        inside = (indptr[targets] <= edge_ids) & (edge_ids < indptr[targets + 1])
        ok = bool(inside.all()) and torch.equal(indices[edge_ids], sources)
        return _expect(ok, "a sampled edge is not the graph's edge of that slot")
    for target, source, edge_id in zip(targets.tolist(), sources.tolist(), edge_ids.tolist()):
        row = range(int(indptr[target]), int(indptr[target + 1]))
        if not any(int(eid[s]) == edge_id and int(indices[s]) == source for s in row):
            return f"edge {source} -> {target} with id {edge_id} is not in the graph"
    return None


def sample_hops_staged(before, after, result) -> Fault:
    """The device engine's host run returns the CPU kernel's sample, bit for bit, and passes
    sample_hops' own invariants."""
    call = {name: value for name, value in before.items() if name != "budget_bytes"}
    try:
        expected = torch.ops.fastgl.sample_hops(**call)
    except (RuntimeError, ValueError) as error:
        return f"the CPU kernel rejects a call the engine accepted: {error}"
    if not all(torch.equal(got, want) for got, want in zip(result, expected)):
        return "not the CPU kernel's sample"
    return sample_hops(call, after, result)


def hetero_sample_hops(before, after, result) -> Fault:
    """Sizes that fit each other and nodes of their own types; one node type with one relation
    (rows = node ids) samples what sample_hops samples for one batch (where sample_hops does not
    refuse a row that no pair reads)."""
    nodes, node_counts, row, col, edge_ids, edge_counts, seed_local, tree, indptr = result
    type_start, num_hops = before["type_start"], before["num_hops"]
    num_types, num_relations = len(type_start) - 1, len(before["src_type"])
    shapes_fit = (
        node_counts.shape == (num_types, num_hops + 1)
        and edge_counts.shape == (num_relations, num_hops)
        and int(node_counts.sum()) == nodes.numel()
        and int(edge_counts.sum()) == row.numel() == col.numel() == edge_ids.numel()
        and seed_local.numel() == before["seeds"].numel()
        and tree.numel() == (nodes.numel() if before["disjoint"] else 0)
    )
    if not shapes_fit:
        return "the outputs' sizes do not fit each other"
    node_sizes = node_counts.sum(1).tolist()
    for t, part in enumerate(nodes.split(node_sizes)):
        lo, hi = type_start[t], type_start[t + 1]
        if part.numel() and (int(part.min()) < lo or int(part.max()) >= hi):
            return f"node type {t} holds a node of another type"
    node_base = [0, *torch.tensor(node_sizes, dtype=torch.long).cumsum(0).tolist()]
    seed_types = torch.repeat_interleave(
        torch.arange(num_types), torch.tensor(before["seed_counts"], dtype=torch.long)
    )
    seed_at = torch.tensor(node_base[:-1])[seed_types] + seed_local
    if not torch.equal(nodes[seed_at], before["seeds"]):
        return "seed_local does not point at the seeds"
    edges = (row, col, edge_ids, edge_counts)
    fault = _hetero_edges_fault(before, nodes, node_sizes, node_base, *edges)
    if fault is not None:
        return fault
    if before.get("slot_time") is not None:
        return _hetero_times_fault(before, node_base, col, edge_ids, edge_counts, tree)
    if num_types != 1 or type_start[1] != before["indptr"].numel() - 1:
        return None
    call = {k: before[k] for k in ("indptr", "indices", "weight", "eid", "seeds")}
    try:
        expected = torch.ops.fastgl.sample_hops(
            **call,
            seed_ptr=torch.tensor([0, before["seeds"].numel()]),
            fanouts=before["fanouts"],
            replace=before["replace"],
            layerwise=before["layerwise"],
            disjoint=before["disjoint"],
            seed=before["seed"],
        )
    except (RuntimeError, ValueError) as error:
        # A relational call reads a row (and its weights) only where a pair draws from it;
        # sample_hops also checks the rows of the nodes it never draws for (their in-degrees)
        # and the weights of rows it draws none from (fanout 0).
        if any(what in str(error) for what in ("indptr is not a valid CSC", "weight")):
            return None
        return f"sample_hops rejects a call the heterogeneous engine accepted: {error}"
    pairs = zip(
        (nodes, node_counts, row, col, edge_ids, edge_counts, seed_local, tree),
        (expected[i] for i in (0, 1, 2, 3, 4, 5, 6, 8)),
    )
    if not all(torch.equal(got, want) for got, want in pairs):
        return "one node type, one relation: not sample_hops' sample"
    return None


def _edge_relations(before, num_types, edge_counts) -> Tensor:
    """The relation of every edge of a heterogeneous sample (by source type, hop, relation)."""
    runs, relation_of = [], []
    for source in range(num_types):
        for hop in range(before["num_hops"]):
            for r, src in enumerate(before["src_type"]):
                if src == source:
                    runs.append(int(edge_counts[r, hop]))
                    relation_of.append(r)
    return torch.repeat_interleave(
        torch.tensor(relation_of, dtype=torch.long), torch.tensor(runs, dtype=torch.long)
    )


def _hetero_times_fault(before, node_base, col, edge_ids, edge_counts, tree) -> Fault:
    """A timed relation's edges are no later than their tree's time, where every row ascends
    in time (the op's precondition, which it does not check: unsorted rows give some prefix)."""
    relation = _edge_relations(before, len(node_base) - 1, edge_counts)
    if relation.numel() == 0 or before["eid"] is not None:
        return None
    indptr, slot_time = before["indptr"], before["slot_time"]
    if bool((indptr.diff() < 0).any()) or int(indptr[-1] - indptr[0]) != slot_time.numel():
        return None  # rows no pair read
    same_row = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr.diff())
    steps = slot_time.diff()
    if bool((steps[same_row[1:] == same_row[:-1]] < 0).any()):
        return None
    timed = torch.tensor(before["timed"], dtype=torch.bool)[relation]
    dst_of = torch.tensor(before["dst_type"], dtype=torch.long)[relation]
    transit_tree = tree[torch.tensor(node_base, dtype=torch.long)[dst_of] + col]
    late = before["slot_time"][edge_ids] > before["tree_time"][transit_tree]
    return "a timed edge is later than its tree" if bool((timed & late).any()) else None


def _hetero_edges_fault(before, nodes, node_sizes, node_base, row, col, edge_ids, edge_counts):
    """Every drawn edge (by source type, then hop, then relation) is an in-edge of its transit
    along its relation: its slot (its id, without eid) lies in the transit's row and holds its
    source."""
    src_type, dst_type = before["src_type"], before["dst_type"]
    relation = _edge_relations(before, len(node_sizes), edge_counts)
    if relation.numel() == 0:
        return None
    src_of, dst_of = (torch.tensor(t, dtype=torch.long)[relation] for t in (src_type, dst_type))
    sizes = torch.tensor(node_sizes, dtype=torch.long)
    if bool(
        (row < 0).any()
        | (row >= sizes[src_of]).any()
        | (col < 0).any()
        | (col >= sizes[dst_of]).any()
    ):
        return "an edge's row or col is not a local id of its node type"
    base = torch.tensor(node_base, dtype=torch.long)
    source, transit = nodes[base[src_of] + row], nodes[base[dst_of] + col]
    if before["eid"] is not None:
        return None
    indptr = before["indptr"]
    rows = torch.tensor(before["row_base"], dtype=torch.long)[relation] + transit
    slot = edge_ids
    if bool((slot < indptr[rows]).any() | (slot >= indptr[rows + 1]).any()):
        return "an edge's slot is not in its transit's row"
    if not torch.equal(before["indices"][slot].to(torch.long), source):
        return "an edge's source is not its slot's"
    return None


def sample_hops(before, after, result) -> Fault:
    nodes, node_counts, row, col, edge_ids, edge_counts, seed_local, in_degrees, tree, col_ptr = (
        result
    )
    seeds, seed_ptr, indptr = before["seeds"], before["seed_ptr"], before["indptr"]
    num_batches, num_hops = seed_ptr.numel() - 1, len(before["fanouts"])
    shapes_fit = (
        node_counts.shape == (num_batches, num_hops + 1)
        and edge_counts.shape == (num_batches, num_hops)
        and int(node_counts.sum()) == nodes.numel() == in_degrees.numel()
        and int(edge_counts.sum()) == row.numel() == col.numel() == edge_ids.numel()
        and seed_local.numel() == seeds.numel()
        and tree.numel() == (nodes.numel() if before["disjoint"] else 0)
        and col_ptr.numel() == (0 if before["layerwise"] else nodes.numel() + num_batches)
    )
    if not shapes_fit:
        return "the outputs' sizes do not fit each other"
    if not torch.equal(in_degrees, indptr[nodes + 1] - indptr[nodes]):
        return "in_degrees are not the nodes' in-degrees"
    node_end, edge_end = node_counts.sum(1).cumsum(0), edge_counts.sum(1).cumsum(0)
    for b in range(num_batches):
        node_begin = 0 if b == 0 else int(node_end[b - 1])
        edge_begin = 0 if b == 0 else int(edge_end[b - 1])
        batch = nodes[node_begin : int(node_end[b])]
        batch_seeds = seeds[int(seed_ptr[b]) : int(seed_ptr[b + 1])]
        if not torch.equal(batch[seed_local[int(seed_ptr[b]) : int(seed_ptr[b + 1])]], batch_seeds):
            return f"batch {b}: seed_local does not point at the seeds"
        distinct = (
            batch_seeds.tolist() if before["disjoint"] else first_occurrence(batch_seeds.tolist())
        )
        if batch[: int(node_counts[b, 0])].tolist() != distinct:
            return f"batch {b}: the first nodes are not its distinct seeds"
        edges = slice(edge_begin, int(edge_end[b]))
        local_row, local_col = row[edges], col[edges]
        if local_row.numel() and not bool(
            (
                (local_row >= 0)
                & (local_row < batch.numel())
                & (local_col >= 0)
                & (local_col < batch.numel())
            ).all()
        ):
            return f"batch {b}: a local id is out of the batch's range"
        if not before["layerwise"]:
            batch_ptr = col_ptr[node_begin + b : int(node_end[b]) + b + 1]
            if not _are_offsets_of(batch_ptr, local_col):
                return f"batch {b}: col_ptr is not the CSC offsets of its col"
        fault = _slots_of_edge_ids(before, batch[local_col], batch[local_row], edge_ids[edges])
        batch_tree = tree[node_begin : int(node_end[b])] if before["disjoint"] else None
        fault = fault or _hops_grow_the_batch(
            before,
            batch,
            batch_tree,
            node_counts[b],
            edge_counts[b],
            local_row,
            local_col,
            edge_ids[edges],
        )
        if fault:
            return f"batch {b}: {fault}"
    return None


def _are_offsets_of(ptr: Tensor, targets: Tensor) -> bool:
    """``ptr`` runs from 0 to the number of edges without decreasing, and every edge ``e`` lies
    in its target's range ``ptr[targets[e]] .. ptr[targets[e] + 1]``."""
    position = torch.arange(targets.numel())
    return (
        int(ptr[0]) == 0
        and int(ptr[-1]) == targets.numel()
        and bool((ptr[1:] >= ptr[:-1]).all())
        and bool(((ptr[targets] <= position) & (position < ptr[targets + 1])).all())
    )


def _hops_grow_the_batch(
    before,
    batch: Tensor,
    batch_tree: Tensor | None,
    node_counts: Tensor,
    edge_counts: Tensor,
    row: Tensor,
    col: Tensor,
    edge_ids: Tensor,
) -> Fault:
    """Hop by hop: the frontier (the nodes new at the hop before, or all so far when
    layer-wise) drew its in-edges as the hop's fanout says, grouped by target in frontier order,
    and the hop's new nodes are the first occurrences of the drawn sources not seen before. A
    node is its graph id, or (tree, graph id) when disjoint."""
    keys = batch if batch_tree is None else batch_tree * (before["indptr"].numel() + 1) + batch
    if torch.unique(keys).numel() != keys.numel():
        return "a node appears twice"
    node_end = node_counts.cumsum(0).tolist()
    edge_end = [0] + edge_counts.cumsum(0).tolist()
    for hop, fanout in enumerate(before["fanouts"]):
        first = 0 if before["layerwise"] or hop == 0 else node_end[hop - 1]
        frontier = range(first, node_end[hop])
        hop_col = col[edge_end[hop] : edge_end[hop + 1]]
        hop_row = row[edge_end[hop] : edge_end[hop + 1]]
        inside = bool(((hop_col >= frontier.start) & (hop_col < frontier.stop)).all())
        if not inside or not bool((hop_col.diff() >= 0).all()):
            return f"hop {hop}'s edges are not grouped by the targets of its frontier"
        counts = torch.bincount(hop_col - frontier.start, minlength=len(frontier))
        transits = batch[frontier.start : frontier.stop]
        if before["eid"] is None:  # edge ids are slots: the draws themselves can be checked
            pair_ptr = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
            fault = _valid_draws(
                before,
                pair_ptr,
                transits,
                edge_ids[edge_end[hop] : edge_end[hop + 1]],
                fanout,
                before["replace"],
            )
            if fault:
                return f"hop {hop}: {fault}"
        elif not torch.equal(
            counts, expected_draws(_drawable(before, transits), fanout, before["replace"])
        ):
            return f"hop {hop}: draw counts {counts.tolist()} do not follow fanout {fanout}"
        seen = set(keys[: node_end[hop]].tolist())
        new = [key for key in first_occurrence(keys[hop_row].tolist()) if key not in seen]
        if keys[node_end[hop] : node_end[hop + 1]].tolist() != new:
            return f"hop {hop}'s new nodes are not the first occurrences of its sources"
    return None


MUTABLE_ARGUMENTS = {"gather_rows": {"out"}}


def snapshot(call: dict) -> dict:
    return {
        name: value.clone() if isinstance(value, Tensor) else value for name, value in call.items()
    }


Oracle = Callable[[dict, dict, object], Fault]


def check_result(op: str, oracle: Oracle, before: dict, after: dict, result) -> Fault:
    """What is wrong with ``result`` of ``op`` on ``before`` (judged by ``oracle``), or
    ``None``."""
    for name, value in before.items():
        if name not in MUTABLE_ARGUMENTS.get(op, ()) and not same(value, after[name]):
            return f"the op changed its argument {name}"
    try:
        return oracle(before, after, result)
    except Exception as error:
        return f"the result does not fit its inputs: {type(error).__name__}: {error}"[:300]
