"""Fuzzing every registered ``fastgl::`` op with malformed and edge-case inputs.

Run by ``test_fuzz_ops.py`` in a child process, so that a crash fails a test instead of killing
pytest: ``python fuzz_ops.py REPORT.json [ROUNDS]``. Before each call the case is printed (and
flushed), so the last line of a crashed child's output names the input that crashed it.

Every op registered under ``torch.ops.fastgl`` is enumerated from the dispatcher; each needs an
entry in ``FUZZED_OPS``: a generator of valid calls and the oracle that judges a returned result
(``fuzz_oracles.py``). An op without one is reported as a failure, so a new op is fuzzed as soon
as it is registered. Each round draws a fresh valid call per op (random sizes, empty ones
included) and then mutates it, one argument at a time and then two at once, by the argument's
schema type:

* tensors: every other dtype, one dimension more or less, empty, one entry short or long,
  negative, huge and int64-extreme ids, NaN and infinities, None, the same tensor as another
  argument (aliasing), and on the GPU where there is one; non-contiguous views with the same
  values;
* ints: 0, -1, -2, 2^62, 2^63 - 1, -2^63; floats 0, negative, NaN, infinite, subnormal (whose
  inverse overflows), above 1, huge; bools flipped; strings empty or unknown; int lists empty,
  negative or huge.

A call passes when it raises an exception whose message names the op, or returns the result its
oracle expects, leaving every argument but an output unchanged. A mutation that keeps the call's
meaning (a non-contiguous view of the same values) must also return exactly what the unmutated
call returned. Small calls run at one thread; a last round of large calls (66,000+ nodes, up to
2,000 transits) reaches the kernels' parallel paths at two. Everything is seeded: the same cases
every run.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

import fuzz_oracles as oracles
import torch
from fuzz_oracles import check_result, same, snapshot

import fastgl  # noqa: F401  (registers the ops)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64, torch.bool)
# Sizes such as 2^31 nodes are valid requests for 16 GB, not malformed input: left out.
BAD_INTS = (0, -1, -2, 2**40, 2**58, 2**62, INT64_MAX, INT64_MIN)
BAD_INT_LISTS = ([], [-2], [2**62], [1, -3])
BAD_STRINGS = ("", "bogus")
BAD_FLOATS = (0.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e-310, 1.5, 1e308)
# Tensors whose entries size an op's output: an entry of 2^31 - 1 there is, like the sizes left
# out of BAD_INTS, a valid request for 16 GB (2^31 draws), not malformed input; the larger
# extremes stay, and exceed any memory.
SIZE_TENSORS = {"sample_ranges": {"ends", "fanouts"}}
SEMANTICS_PRESERVING = "non-contiguous view"


def registered_ops() -> list[str]:
    """Names of every op in the ``fastgl`` namespace, from the dispatcher's schemas."""
    return sorted(
        {
            schema.name.split("::", 1)[1]
            for schema in torch._C._jit_get_all_schemas()
            if schema.name.startswith("fastgl::")
        }
    )


# ---------------------------------------------------------------------------------------------
# Valid calls, one generator per op: ``rng -> {argument name: value}``.


@dataclass(frozen=True)
class Sizes:
    min_nodes: int
    max_nodes: int
    max_edges: int
    max_ids: int  # transits, seeds, ids, rows


# Small calls for most rounds; one round of large ones reaches the kernels' parallel paths
# (offset checks over 2^16 entries, more than 256 pairs per chunk) at two threads.
SMALL = Sizes(min_nodes=0, max_nodes=8, max_edges=20, max_ids=6)
LARGE = Sizes(min_nodes=66_000, max_nodes=70_000, max_edges=200_000, max_ids=2_000)
size = SMALL


def _graph(rng: random.Random) -> dict[str, torch.Tensor]:
    """A random CSC graph of ``size`` nodes and edges, with its transposed structure."""
    num_nodes = rng.randint(size.min_nodes, size.max_nodes)
    num_edges = rng.randint(0, size.max_edges) if num_nodes else 0
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    src = torch.randint(0, max(num_nodes, 1), (num_edges,), generator=gen)
    dst = torch.randint(0, max(num_nodes, 1), (num_edges,), generator=gen)
    indptr, indices, perm = torch.ops.fastgl.csc_from_coo(src, dst, num_nodes)
    row_of_slot = torch.repeat_interleave(torch.arange(num_nodes), indptr.diff())
    t_indptr, t_rows, t_slots = torch.ops.fastgl.csc_from_coo(row_of_slot, indices, num_nodes)
    dim = rng.randint(1, 4)
    return {
        "num_nodes": num_nodes,
        "num_edges": num_edges,
        "src": src,
        "dst": dst,
        "indptr": indptr,
        "indices": indices,
        "perm": perm,
        "t_indptr": t_indptr,
        "t_rows": t_rows,
        "t_slots": t_slots,
        "gen": gen,
        "dim": dim,
        "x": torch.randn(num_nodes, dim, generator=gen),
        "weight": torch.rand(num_edges, generator=gen),
    }


def _ids(rng: random.Random, bound: int, count: int) -> torch.Tensor:
    return torch.tensor(
        [rng.randrange(bound) for _ in range(count)] if bound else [], dtype=torch.long
    )


def _maybe(rng: random.Random, value):
    return value if rng.random() < 0.5 else None


def _csc_from_coo(rng):
    g = _graph(rng)
    return {"src": g["src"], "dst": g["dst"], "num_nodes": g["num_nodes"]}


def _sample_neighbors(rng):
    g = _graph(rng)
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "weight": _maybe(rng, g["weight"]),
        "transits": _ids(rng, g["num_nodes"], rng.randint(0, size.max_ids)),
        "fanout": rng.choice([-1, 0, 1, 3]),
        "replace": rng.random() < 0.5,
        "seed": rng.randrange(2**62),
    }


def _sample_ranges(rng):
    """Random slot ranges over a graph's edges, as long as rows are (some empty), each with its
    own fanout."""
    g = _graph(rng)
    starts = [rng.randint(0, g["num_edges"]) for _ in range(rng.randint(0, size.max_ids))]
    ends = [min(g["num_edges"], start + rng.randint(0, 12)) for start in starts]
    return {
        "starts": torch.tensor(starts, dtype=torch.long),
        "ends": torch.tensor(ends, dtype=torch.long),
        "weight": _maybe(rng, g["weight"]),
        "fanouts": torch.tensor([rng.choice([-1, 0, 1, 3]) for _ in starts], dtype=torch.long),
        "replace": rng.random() < 0.5,
        "seed": rng.randrange(2**62),
    }


def _sample_hops(rng):
    g = _graph(rng)
    seeds = _ids(rng, g["num_nodes"], rng.randint(0, size.max_ids))
    cut = rng.randint(0, seeds.numel())
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "weight": _maybe(rng, g["weight"]),
        "eid": _maybe(rng, g["perm"]),
        "seeds": seeds,
        "seed_ptr": torch.tensor([0, cut, seeds.numel()]),
        "fanouts": [rng.choice([-1, 0, 2]) for _ in range(rng.randint(0, 3))],
        "replace": rng.random() < 0.5,
        "layerwise": rng.random() < 0.5,
        "disjoint": rng.random() < 0.5,
        "seed": rng.randrange(2**62),
    }


def _sample_hops_staged(rng):
    """sample_hops' calls for the device engine's host run, with worst-case buffers or with
    every hop waiting for its exact size."""
    return {**_sample_hops(rng), "budget_bytes": rng.choice([0, 1 << 40])}


def _two_type_graph(rng, g, cut):
    """``g``'s nodes split at ``cut`` into two node types, its edges redrawn within each type
    (each relation's sources are of its own type): ``(indptr, indices, weight, eid)``."""
    n = g["num_nodes"]
    src, dst = g["src"].clone(), g["dst"].clone()
    low = dst < cut
    src[low] = src[low] % max(cut, 1)
    src[~low] = cut + src[~low] % max(n - cut, 1)
    indptr, indices, perm = torch.ops.fastgl.csc_from_coo(src, dst, n)
    return indptr, indices, _maybe(rng, g["weight"]), _maybe(rng, perm)


def _hetero_sample_hops(rng):
    """Heterogeneous hops on the device engine's host run: a random graph as one node type with
    one relation (whose sample is sample_hops' for one batch), or split into two node types
    with a relation within each, every row the relation's of its node; some calls temporal."""
    g = _graph(rng)
    n = g["num_nodes"]
    num_hops = rng.randint(0, 3)
    if rng.random() < 0.5:
        type_start, relations = [0, n], ([0], [0], [0])
        csc = (g["indptr"], g["indices"], _maybe(rng, g["weight"]), _maybe(rng, g["perm"]))
    else:
        cut = rng.randint(0, n)
        type_start, relations = [0, cut, n], ([0, 1], [0, 1], [0, 0])
        csc = _two_type_graph(rng, g, cut)
    seeds = _ids(rng, n, rng.randint(0, size.max_ids)).sort().values
    if rng.random() < 0.3:  # temporal: every row ascends in time (the time-sorted view)
        gen, num_slots = g["gen"], csc[1].numel()
        return {
            **_hetero_call(rng, csc[:2], (None, csc[3]), seeds, type_start, relations, num_hops),
            "disjoint": True,
            "slot_time": torch.randint(0, 3, (num_slots,), generator=gen).cumsum(0),
            "tree_time": torch.randint(0, 3 * num_slots + 1, (seeds.numel(),), generator=gen),
            "timed": [rng.randint(0, 1) for _ in relations[0]],
            "latest": rng.random() < 0.5,
        }
    return _hetero_call(rng, csc[:2], csc[2:], seeds, type_start, relations, num_hops)


def _hetero_call(rng, graph, weight_and_eid, seeds, type_start, relations, num_hops):
    bounds = zip(type_start, type_start[1:])
    return {
        "indptr": graph[0],
        "indices": graph[1],
        "weight": weight_and_eid[0],
        "eid": weight_and_eid[1],
        "seeds": seeds,
        "seed_counts": [int(((seeds >= lo) & (seeds < hi)).sum()) for lo, hi in bounds],
        "type_start": type_start,
        "src_type": relations[0],
        "dst_type": relations[1],
        "row_base": relations[2],
        "fanouts": [rng.choice([-1, 0, 2]) for _ in range(num_hops * len(relations[0]))],
        "num_hops": num_hops,
        "replace": rng.random() < 0.5,
        "layerwise": rng.random() < 0.5,
        "disjoint": rng.random() < 0.5,
        "seed": rng.randrange(2**62),
        "budget_bytes": rng.choice([-1, 0]),
    }


def _random_walk(rng):
    """Walks over a random graph's out-edge CSR (its transposed structure: each source's
    targets ascending), any mix of node2vec, restarts and ppr; edge ids from its slots, or
    none (the malformed rounds make them negative)."""
    g = _graph(rng)
    return {
        "indptr": g["t_indptr"],
        "indices": g["t_rows"],
        "weight": _maybe(rng, g["weight"]),
        "eid": _maybe(rng, g["t_slots"]),
        "starts": _ids(rng, g["num_nodes"], rng.randint(0, size.max_ids)),
        "length": rng.randint(0, 6),
        "p": rng.choice([1.0, 0.5, 4.0]),
        "q": rng.choice([1.0, 2.0, 0.25]),
        "restart_prob": rng.choice([0.0, 0.3]),
        "ppr": rng.random() < 0.5,
        "schedule": rng.choice(["auto", "sample", "transit"]),
        "seed": rng.randrange(2**62),
    }


def _frontier_sample(rng):
    """Frontier samplers over a random graph of at least one node (a first frontier needs as
    many distinct nodes as walkers), any eta and cap."""
    g = _graph(rng)
    while g["num_nodes"] == 0:
        g = _graph(rng)
    frontier_size = rng.randint(1, min(g["num_nodes"], 6))
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "num_subgraphs": rng.randint(0, 3),
        "frontier_size": frontier_size,
        "budget": frontier_size + rng.randint(0, 10),
        "eta": rng.choice([1.01, 2.0, 8.0]),
        "max_entries": rng.choice([0, 1, 4]),
        "pop": rng.choice(["dashboard", "scan"]),
        "seed": rng.randrange(2**62),
        "entry_weight": rng.choice([0, 1, 3]),
    }


def _induced_subgraphs(rng):
    """Sets of distinct vertices of a random graph, some empty, as int64 nodes and offsets."""
    g = _graph(rng)
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    sets = [
        torch.randperm(g["num_nodes"], generator=gen)[: rng.randint(0, g["num_nodes"])]
        for _ in range(rng.randint(0, 3))
    ]
    sizes = torch.tensor([0] + [len(x) for x in sets], dtype=torch.long)
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "eid": _maybe(rng, torch.randperm(g["indices"].numel(), generator=gen)),
        "nodes": torch.cat(sets) if sets else torch.empty(0, dtype=torch.long),
        "ptr": sizes.cumsum(0),
    }


def _id_map(rng):
    bound = 3 * size.max_ids
    prefix = torch.randperm(bound, generator=torch.Generator().manual_seed(rng.randrange(2**31)))
    return {
        "prefix": prefix[: rng.randint(0, size.max_ids)],
        "ids": _ids(rng, bound, rng.randint(0, 2 * size.max_ids)),
    }


def _aggregation(rng, weighted=True):
    g = _graph(rng)
    return g, {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "weight": _maybe(rng, g["weight"]) if weighted else None,
        "x": g["x"],
    }


def _spmm(rng):
    """spmm's and spmm_max's call: the same arguments."""
    return _aggregation(rng)[1]


def _es_spmm(rng):
    call = _aggregation(rng)[1]
    call.update(
        width=rng.choice([1, 2, 4]),
        strategy=rng.choice(["bucket", "fastrand"]),
        reduce=rng.choice(["sum", "max"]),
    )
    return call


def _spmm_max_backward_x(rng):
    g, forward = _aggregation(rng)
    _, arg = torch.ops.fastgl.spmm_max(**forward)
    return {
        "t_indptr": g["t_indptr"],
        "t_rows": g["t_rows"],
        "t_slots": g["t_slots"],
        "weight": forward["weight"],
        "arg": arg,
        "grad": torch.randn_like(g["x"]),
    }


def _spmm_max_backward_weight(rng):
    g, forward = _aggregation(rng, weighted=False)
    _, arg = torch.ops.fastgl.spmm_max(**forward)
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "x": g["x"],
        "arg": arg,
        "grad": torch.randn_like(g["x"]),
    }


def _sddmm(rng):
    g = _graph(rng)
    return {
        "indptr": g["indptr"],
        "indices": g["indices"],
        "a": torch.randn_like(g["x"]),
        "b": g["x"],
    }


def _edge_softmax(rng):
    g = _graph(rng)
    return {"indptr": g["indptr"], "scores": torch.randn(g["num_edges"], rng.randint(1, 3))}


def _edge_softmax_backward(rng):
    call = _edge_softmax(rng)
    out = torch.ops.fastgl.edge_softmax(call["indptr"], call["scores"])
    return {"indptr": call["indptr"], "out": out, "grad": torch.randn_like(out)}


def _match(rng):
    bound = 3 * size.max_ids
    prev = torch.randperm(bound, generator=torch.Generator().manual_seed(rng.randrange(2**31)))
    return {
        "prev_nodes": prev[: rng.randint(0, size.max_ids)],
        "next_nodes": _ids(rng, bound, rng.randint(0, size.max_ids)),
    }


def _overlap_counts(rng):
    sets = [rng.sample(range(10), rng.randint(0, 4)) for _ in range(rng.randint(0, 4))]
    offsets = torch.tensor([0] + [len(s) for s in sets]).cumsum(0)
    nodes = torch.tensor([node for s in sets for node in s], dtype=torch.long)
    return {"nodes": nodes, "offsets": offsets}


def _gather_rows(rng):
    rows, dim = rng.randint(0, size.max_ids), rng.randint(1, 3)
    x = torch.randn(rows, dim)
    index = _ids(rng, rows, rng.randint(0, size.max_ids)) if rng.random() < 0.7 else None
    gathered = rows if index is None else index.numel()
    use_out_index = rng.random() < 0.4
    out_rows = gathered + rng.randint(0, 3)
    out_index = torch.randperm(out_rows)[:gathered] if use_out_index else None
    return {"x": x, "index": index, "out": torch.zeros(out_rows, dim), "out_index": out_index}


def _valid_offsets(rng):
    """Offsets of random rows, their edge count right or off by one."""
    counts = [rng.randint(0, 3) for _ in range(rng.randint(0, size.max_ids))]
    offsets = torch.tensor([0] + counts).cumsum(0)
    return {"offsets": offsets, "num_edges": int(offsets[-1]) + rng.choice([0, 0, 1, -1])}


def _ids_in_range(rng):
    """Ids with a bound that holds them, or one too small; now and then a negative id."""
    ids = _ids(rng, size.max_ids + 1, rng.randint(0, size.max_ids))
    if ids.numel() and rng.random() < 0.2:
        ids[rng.randrange(ids.numel())] = -1
    bound = (int(ids.max()) + 1 if ids.numel() else 0) + rng.choice([0, 0, 1, -1])
    return {"ids": ids.to(rng.choice([torch.int32, torch.int64])), "num_nodes": bound}


def _transit_schedule(rng):
    return {
        "transits": _ids(rng, size.max_ids, rng.randint(0, 2 * size.max_ids)),
        "min_block_pairs": rng.randint(1, 4),
        "chunk_size": rng.choice([1, 2, 32]),
    }


# Each op's generator of valid calls and the oracle that judges what it returns.
FUZZED_OPS: dict[str, tuple[Callable[[random.Random], dict], oracles.Oracle]] = {
    "csc_from_coo": (_csc_from_coo, oracles.csc_from_coo),
    "sample_neighbors": (_sample_neighbors, oracles.sample_neighbors),
    "sample_ranges": (_sample_ranges, oracles.sample_ranges),
    "sample_hops": (_sample_hops, oracles.sample_hops),
    "_sample_hops_staged": (_sample_hops_staged, oracles.sample_hops_staged),
    "_hetero_sample_hops": (_hetero_sample_hops, oracles.hetero_sample_hops),
    "random_walk": (_random_walk, oracles.random_walk),
    "frontier_sample": (_frontier_sample, oracles.frontier_sample),
    "induced_subgraphs": (_induced_subgraphs, oracles.induced_subgraphs),
    "id_map": (_id_map, oracles.id_map),
    "spmm": (_spmm, oracles.spmm),
    "spmm_max": (_spmm, oracles.spmm_max),
    "es_spmm": (_es_spmm, oracles.es_spmm),
    "spmm_max_backward_x": (_spmm_max_backward_x, oracles.spmm_max_backward_x),
    "spmm_max_backward_weight": (_spmm_max_backward_weight, oracles.spmm_max_backward_weight),
    "sddmm": (_sddmm, oracles.sddmm),
    "edge_softmax": (_edge_softmax, oracles.edge_softmax),
    "edge_softmax_backward": (_edge_softmax_backward, oracles.edge_softmax_backward),
    "match": (_match, oracles.match),
    "overlap_counts": (_overlap_counts, oracles.overlap_counts),
    "gather_rows": (_gather_rows, oracles.gather_rows),
    "_transit_schedule": (_transit_schedule, oracles.transit_schedule),
    "_valid_offsets": (_valid_offsets, oracles.valid_offsets),
    "_ids_in_range": (_ids_in_range, oracles.ids_in_range),
}


# ---------------------------------------------------------------------------------------------
# Mutations by schema type: ``(description, new value)`` pairs.


def _with_entry(t: torch.Tensor, value, rng: random.Random) -> torch.Tensor:
    changed = t.clone()
    changed.view(-1)[rng.randrange(t.numel())] = value
    return changed


def _non_contiguous(t: torch.Tensor) -> torch.Tensor:
    """The same values behind strides that are not contiguous."""
    if t.dim() == 0:
        return t
    wide = torch.stack([t, t], dim=-1)
    return wide[..., 0]


def tensor_mutations(
    t: torch.Tensor, others: list[torch.Tensor], rng: random.Random, sizes: bool = False
) -> list[tuple[str, torch.Tensor | None]]:
    out: list[tuple[str, torch.Tensor | None]] = [("None", None)]
    out += [(f"as {dtype}", t.to(dtype)) for dtype in DTYPES if dtype != t.dtype]
    out += [
        ("one dimension more", t.unsqueeze(0)),
        ("one dimension less", t.reshape(-1) if t.dim() > 1 else t.sum()),
    ]
    if t.dim() >= 1:
        out += [("empty", t[:0]), ("one longer", torch.cat([t, t[:1]]) if len(t) else t)]
        if len(t):
            out.append(("one shorter", t[:-1]))
    if t.numel() > 1 or (t.numel() == 1 and t.dim() >= 1):
        out.append((SEMANTICS_PRESERVING, _non_contiguous(t)))
    if t.numel():
        if t.dtype in (torch.int32, torch.int64):
            extremes = [-1, -7] + ([] if sizes else [2**31 - 1])
            if t.dtype == torch.int64:
                extremes += [2**40, INT64_MAX, INT64_MIN]
            out += [(f"an entry {value}", _with_entry(t, value, rng)) for value in extremes]
        elif t.is_floating_point():
            out += [
                (f"an entry {value}", _with_entry(t, value, rng))
                for value in (float("nan"), float("inf"), float("-inf"))
            ]
    # Aliases of the same dtype first: those are the ones an op could read after writing.
    aliases = sorted((o for o in others if o is not t), key=lambda o: o.dtype != t.dtype)
    out += [("aliasing another argument", other) for other in aliases[:2]]
    if torch.cuda.is_available():
        out.append(("on the GPU", t.cuda()))  # the other arguments stay on the CPU
    return out


def scalar_mutations(kind: str, value) -> list[tuple[str, object]]:
    if kind == "int":
        return [(f"{v}", v) for v in BAD_INTS if v != value]
    if kind == "float":
        return [(f"{v}", v) for v in BAD_FLOATS if v != value]
    if kind == "bool":
        return [("flipped", not value)]
    if kind == "str":
        return [(repr(v), v) for v in BAD_STRINGS]
    if kind == "List[int]":
        return [(f"{v}", v) for v in BAD_INT_LISTS]
    return []


def argument_kinds(op: str) -> dict[str, str]:
    schema = getattr(torch.ops.fastgl, op).default._schema
    return {
        arg.name: str(arg.type).replace("Optional[Tensor]", "Tensor") for arg in schema.arguments
    }


def mutations_of(op: str, call: dict, rng: random.Random) -> list[tuple[str, dict]]:
    """Every single-argument mutation of ``call``."""
    kinds = argument_kinds(op)
    tensors = [v for v in call.values() if isinstance(v, torch.Tensor)]
    cases = []
    for name, value in call.items():
        if kinds[name] == "Tensor":
            if value is None:
                continue
            options = tensor_mutations(value, tensors, rng, name in SIZE_TENSORS.get(op, ()))
        else:
            options = scalar_mutations(kinds[name], value)
        cases += [(f"{name}: {what}", dict(call, **{name: new})) for what, new in options]
    return cases


# ---------------------------------------------------------------------------------------------


def run_case(op: str, call: dict):
    """``(outcome, detail)``: the result, or the exception's message."""
    fn = getattr(torch.ops.fastgl, op)
    try:
        return "returned", fn(**call)
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"


# Test-only ops that run another op's engine raise that op's errors, under its name.
ERRORS_NAMED_AS = {
    "_sample_hops_staged": "sample_hops",
    "_hetero_sample_hops": "hetero_sample_hops",
}


def names_op(message: str, op: str) -> bool:
    name = ERRORS_NAMED_AS.get(op, op)
    return f"{name}:" in message or f"fastgl::{op}" in message or f"{name}(" in message


class Fuzzer:
    """Runs cases and collects what failed: a crash ends the child, so nothing else is needed."""

    def __init__(self) -> None:
        self.failures: list[dict] = []
        self.counts: dict[str, int] = {}

    def fail(self, op: str, case: str, error: str) -> None:
        self.failures.append({"op": op, "case": case, "error": error[:300]})

    def check(self, op: str, what: str, call: dict, expected=None):
        """Runs one case: an error must name the op, a result must be the right one (and, for a
        mutation that keeps the meaning, the unmutated call's result)."""
        self.counts[op] = self.counts.get(op, 0) + 1
        print(f"{op} | {what}", flush=True)
        before = snapshot(call)
        outcome, detail = run_case(op, call)
        if outcome == "raised":
            if not names_op(detail, op):
                self.fail(op, what, detail)
            return outcome, detail
        fault = check_result(op, FUZZED_OPS[op][1], before, call, detail)
        if fault is None and expected is not None and not same(detail, expected):
            fault = "differs from the unmutated call"
        if fault is not None:
            self.fail(op, what, fault)
        return outcome, detail

    def round(self, op: str, rng: random.Random, pairs: bool) -> None:
        """A fresh valid call of ``op``, each single-argument mutation of it and (``pairs``)
        as many random pairs of mutations on different arguments."""
        call = FUZZED_OPS[op][0](rng)
        before = snapshot(call)
        outcome, base = self.check(op, "valid", call)
        if outcome != "returned":
            self.fail(op, "valid", str(base))
            return
        singles = mutations_of(op, before, rng)
        for what, mutated in singles:
            self.check(op, what, mutated, base if what.endswith(SEMANTICS_PRESERVING) else None)
        for _ in range(len(singles) // 2 if pairs else 0):
            (what_a, first), (what_b, second) = rng.sample(singles, 2)
            name_b = what_b.split(":")[0]
            if what_a.split(":")[0] != name_b:
                self.check(op, f"{what_a} + {what_b}", dict(first, **{name_b: second[name_b]}))


def fuzz(rounds: int, seed: int = 0, threads: int = 2) -> dict:
    """``rounds`` rounds of small calls at one thread, then one of large calls at ``threads``."""
    global size
    rng = random.Random(seed)
    torch.manual_seed(seed)  # tensor values too, whatever ran before
    fuzzer = Fuzzer()
    ops = registered_ops()
    for op in ops:
        if op not in FUZZED_OPS:
            fuzzer.fail(
                op,
                "-",
                "no valid call and oracle to fuzz with: add them to FUZZED_OPS "
                "in tests/fuzz_ops.py",
            )
    fuzzed = [op for op in ops if op in FUZZED_OPS]
    torch.set_num_threads(1)
    for _ in range(rounds):
        for op in fuzzed:
            fuzzer.round(op, rng, pairs=True)
    size = LARGE
    torch.set_num_threads(threads)
    for op in fuzzed:
        fuzzer.round(op, rng, pairs=False)
    size = SMALL
    return {
        "total": sum(fuzzer.counts.values()),
        "per_op": fuzzer.counts,
        "ops": ops,
        "failures": fuzzer.failures,
    }


def main(argv: list[str]) -> None:
    report_path = argv[1]
    rounds = int(argv[2]) if len(argv) > 2 else 8
    report = fuzz(rounds)
    with open(report_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv)
