"""Fuzzing every registered ``fastgl::`` op with malformed and edge-case inputs.

Run by ``test_fuzz_ops.py`` in a child process, so that a crash fails a test instead of killing
pytest: ``python fuzz_ops.py REPORT.json [ROUNDS]``. Before each call the case is printed (and
flushed), so the last line of a crashed child's output names the input that crashed it.

Every op registered under ``torch.ops.fastgl`` is enumerated from the dispatcher; each needs a
generator of small valid calls in ``VALID_CALLS`` (an op without one is reported as a failure, so
a new op is fuzzed as soon as it is registered). Each round draws a fresh valid call per op
(random sizes, empty ones included) and then mutates it, one argument at a time and then two at
once, by the argument's schema type:

* tensors: every other dtype, one dimension more or less, empty, one entry short or long,
  negative, huge and int64-extreme ids, NaN and infinities, None, the same tensor as another
  argument (aliasing), and on the GPU where there is one; non-contiguous views with the same
  values;
* ints: 0, -1, -2, 2^62, 2^63 - 1, -2^63; bools flipped; strings empty or unknown; int lists empty,
  negative or huge.

A call passes when it returns or raises an exception whose message names the op. A mutation
that keeps the call's meaning (a non-contiguous view of the same values) must also return
exactly what the unmutated call returned. Everything is seeded: the same cases every run.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Callable, Dict, List, Optional, Tuple

import torch

import fastgl  # noqa: F401  (registers the ops)

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64, torch.bool)
# Sizes such as 2^31 nodes are valid requests for 16 GB, not malformed input: left out.
BAD_INTS = (0, -1, -2, 2**62, INT64_MAX, INT64_MIN)
BAD_INT_LISTS = ([], [-2], [2**62], [1, -3])
BAD_STRINGS = ("", "bogus")
SEMANTICS_PRESERVING = "non-contiguous view"


def registered_ops() -> List[str]:
    """Names of every op in the ``fastgl`` namespace, from the dispatcher's schemas."""
    return sorted({schema.name.split("::", 1)[1] for schema in torch._C._jit_get_all_schemas()
                   if schema.name.startswith("fastgl::")})


# ---------------------------------------------------------------------------------------------
# Small valid calls, one generator per op: ``rng -> {argument name: value}``.

def _graph(rng: random.Random) -> Dict[str, torch.Tensor]:
    """A random CSC graph of 0..8 nodes and 0..20 edges, with its transposed structure."""
    num_nodes = rng.randint(0, 8)
    num_edges = rng.randint(0, 20) if num_nodes else 0
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    src = torch.randint(0, max(num_nodes, 1), (num_edges,), generator=gen)
    dst = torch.randint(0, max(num_nodes, 1), (num_edges,), generator=gen)
    indptr, indices, perm = torch.ops.fastgl.csc_from_coo(src, dst, num_nodes)
    row_of_slot = torch.repeat_interleave(torch.arange(num_nodes), indptr.diff())
    t_indptr, t_rows, t_slots = torch.ops.fastgl.csc_from_coo(row_of_slot, indices, num_nodes)
    dim = rng.randint(1, 4)
    return {"num_nodes": num_nodes, "num_edges": num_edges, "src": src, "dst": dst,
            "indptr": indptr, "indices": indices, "perm": perm, "t_indptr": t_indptr,
            "t_rows": t_rows, "t_slots": t_slots, "gen": gen, "dim": dim,
            "x": torch.randn(num_nodes, dim, generator=gen),
            "weight": torch.rand(num_edges, generator=gen)}


def _ids(rng: random.Random, bound: int, count: int) -> torch.Tensor:
    return torch.tensor([rng.randrange(bound) for _ in range(count)] if bound else [],
                        dtype=torch.long)


def _maybe(rng: random.Random, value):
    return value if rng.random() < 0.5 else None


def _csc_from_coo(rng):
    g = _graph(rng)
    return {"src": g["src"], "dst": g["dst"], "num_nodes": g["num_nodes"]}


def _sample_neighbors(rng):
    g = _graph(rng)
    return {"indptr": g["indptr"], "indices": g["indices"], "weight": _maybe(rng, g["weight"]),
            "transits": _ids(rng, g["num_nodes"], rng.randint(0, 6)),
            "fanout": rng.choice([-1, 0, 1, 3]), "replace": rng.random() < 0.5,
            "seed": rng.randrange(2**62)}


def _sample_hops(rng):
    g = _graph(rng)
    seeds = _ids(rng, g["num_nodes"], rng.randint(0, 6))
    cut = rng.randint(0, seeds.numel())
    return {"indptr": g["indptr"], "indices": g["indices"], "weight": _maybe(rng, g["weight"]),
            "eid": _maybe(rng, g["perm"]), "seeds": seeds,
            "seed_ptr": torch.tensor([0, cut, seeds.numel()]),
            "fanouts": [rng.choice([-1, 0, 2]) for _ in range(rng.randint(0, 3))],
            "replace": rng.random() < 0.5, "layerwise": rng.random() < 0.5,
            "disjoint": rng.random() < 0.5, "seed": rng.randrange(2**62)}


def _id_map(rng):
    prefix = torch.randperm(20, generator=torch.Generator().manual_seed(rng.randrange(2**31)))
    return {"prefix": prefix[:rng.randint(0, 5)], "ids": _ids(rng, 20, rng.randint(0, 12))}


def _aggregation(rng, weighted=True):
    g = _graph(rng)
    return g, {"indptr": g["indptr"], "indices": g["indices"],
               "weight": _maybe(rng, g["weight"]) if weighted else None, "x": g["x"]}


def _spmm(rng):
    return _aggregation(rng)[1]


def _spmm_max(rng):
    return _aggregation(rng)[1]


def _es_spmm(rng):
    call = _aggregation(rng)[1]
    call.update(width=rng.choice([1, 2, 4]), strategy=rng.choice(["bucket", "fastrand"]),
                reduce=rng.choice(["sum", "max"]))
    return call


def _spmm_max_backward_x(rng):
    g, forward = _aggregation(rng)
    _, arg = torch.ops.fastgl.spmm_max(**forward)
    return {"t_indptr": g["t_indptr"], "t_rows": g["t_rows"], "t_slots": g["t_slots"],
            "weight": forward["weight"], "arg": arg, "grad": torch.randn_like(g["x"])}


def _spmm_max_backward_weight(rng):
    g, forward = _aggregation(rng, weighted=False)
    _, arg = torch.ops.fastgl.spmm_max(**forward)
    return {"indptr": g["indptr"], "indices": g["indices"], "x": g["x"], "arg": arg,
            "grad": torch.randn_like(g["x"])}


def _sddmm(rng):
    g = _graph(rng)
    return {"indptr": g["indptr"], "indices": g["indices"], "a": torch.randn_like(g["x"]),
            "b": g["x"]}


def _edge_softmax(rng):
    g = _graph(rng)
    return {"indptr": g["indptr"], "scores": torch.randn(g["num_edges"], rng.randint(1, 3))}


def _edge_softmax_backward(rng):
    call = _edge_softmax(rng)
    out = torch.ops.fastgl.edge_softmax(call["indptr"], call["scores"])
    return {"indptr": call["indptr"], "out": out, "grad": torch.randn_like(out)}


def _match(rng):
    prev = torch.randperm(20, generator=torch.Generator().manual_seed(rng.randrange(2**31)))
    return {"prev_nodes": prev[:rng.randint(0, 8)], "next_nodes": _ids(rng, 20, rng.randint(0, 8))}


def _overlap_counts(rng):
    sets = [rng.sample(range(10), rng.randint(0, 4)) for _ in range(rng.randint(0, 4))]
    offsets = torch.tensor([0] + [len(s) for s in sets]).cumsum(0)
    nodes = torch.tensor([node for s in sets for node in s], dtype=torch.long)
    return {"nodes": nodes, "offsets": offsets}


def _gather_rows(rng):
    rows, dim = rng.randint(0, 6), rng.randint(1, 3)
    x = torch.randn(rows, dim)
    index = _ids(rng, rows, rng.randint(0, 5)) if rng.random() < 0.7 else None
    gathered = rows if index is None else index.numel()
    use_out_index = rng.random() < 0.4
    out_rows = gathered + rng.randint(0, 3)
    out_index = (torch.randperm(out_rows)[:gathered] if use_out_index else None)
    return {"x": x, "index": index, "out": torch.zeros(out_rows, dim), "out_index": out_index}


def _transit_schedule(rng):
    return {"transits": _ids(rng, 6, rng.randint(0, 12)), "min_block_pairs": rng.randint(1, 4),
            "chunk_size": rng.choice([1, 2, 32])}


VALID_CALLS: Dict[str, Callable[[random.Random], dict]] = {
    "csc_from_coo": _csc_from_coo, "sample_neighbors": _sample_neighbors,
    "sample_hops": _sample_hops, "id_map": _id_map, "spmm": _spmm, "spmm_max": _spmm_max,
    "es_spmm": _es_spmm, "spmm_max_backward_x": _spmm_max_backward_x,
    "spmm_max_backward_weight": _spmm_max_backward_weight, "sddmm": _sddmm,
    "edge_softmax": _edge_softmax, "edge_softmax_backward": _edge_softmax_backward,
    "match": _match, "overlap_counts": _overlap_counts, "gather_rows": _gather_rows,
    "_transit_schedule": _transit_schedule,
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


def tensor_mutations(t: torch.Tensor, others: List[torch.Tensor],
                     rng: random.Random) -> List[Tuple[str, Optional[torch.Tensor]]]:
    out: List[Tuple[str, Optional[torch.Tensor]]] = [("None", None)]
    out += [(f"as {dtype}", t.to(dtype)) for dtype in DTYPES if dtype != t.dtype]
    out += [("one dimension more", t.unsqueeze(0)),
            ("one dimension less", t.reshape(-1) if t.dim() > 1 else t.sum())]
    if t.dim() >= 1:
        out += [("empty", t[:0]), ("one longer", torch.cat([t, t[:1]]) if len(t) else t)]
        if len(t):
            out.append(("one shorter", t[:-1]))
    if t.numel() > 1 or (t.numel() == 1 and t.dim() >= 1):
        out.append((SEMANTICS_PRESERVING, _non_contiguous(t)))
    if t.numel():
        if t.dtype in (torch.int32, torch.int64):
            extremes = [-1, -7, 2**31 - 1]
            if t.dtype == torch.int64:
                extremes += [2**40, INT64_MAX, INT64_MIN]
            out += [(f"an entry {value}", _with_entry(t, value, rng)) for value in extremes]
        elif t.is_floating_point():
            out += [(f"an entry {value}", _with_entry(t, value, rng))
                    for value in (float("nan"), float("inf"), float("-inf"))]
    # Aliases of the same dtype first: those are the ones an op could read after writing.
    aliases = sorted((o for o in others if o is not t), key=lambda o: o.dtype != t.dtype)
    out += [("aliasing another argument", other) for other in aliases[:2]]
    if torch.cuda.is_available():
        out.append(("on the GPU", t.cuda()))  # the other arguments stay on the CPU
    return out


def scalar_mutations(kind: str, value) -> List[Tuple[str, object]]:
    if kind == "int":
        return [(f"{v}", v) for v in BAD_INTS if v != value]
    if kind == "bool":
        return [("flipped", not value)]
    if kind == "str":
        return [(repr(v), v) for v in BAD_STRINGS]
    if kind == "List[int]":
        return [(f"{v}", v) for v in BAD_INT_LISTS]
    return []


def argument_kinds(op: str) -> Dict[str, str]:
    schema = getattr(torch.ops.fastgl, op).default._schema
    return {arg.name: str(arg.type).replace("Optional[Tensor]", "Tensor") for arg in
            schema.arguments}


def mutations_of(op: str, call: dict, rng: random.Random) -> List[Tuple[str, dict]]:
    """Every single-argument mutation of ``call``."""
    kinds = argument_kinds(op)
    tensors = [v for v in call.values() if isinstance(v, torch.Tensor)]
    cases = []
    for name, value in call.items():
        if kinds[name] == "Tensor":
            if value is None:
                continue
            options = tensor_mutations(value, tensors, rng)
        else:
            options = scalar_mutations(kinds[name], value)
        cases += [(f"{name}: {what}", dict(call, **{name: new})) for what, new in options]
    return cases


# ---------------------------------------------------------------------------------------------

def same_result(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and \
            torch.equal(a.nan_to_num(), b.nan_to_num()) and bool((a.isnan() == b.isnan()).all())
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_result(x, y) for x, y in zip(a, b))
    return a == b


def run_case(op: str, call: dict):
    """``(outcome, detail)``: the result, or the exception's message."""
    fn = getattr(torch.ops.fastgl, op)
    try:
        return "returned", fn(**call)
    except Exception as error:  # noqa: BLE001  (any exception is fine if it names the op)
        return "raised", f"{type(error).__name__}: {error}"


def names_op(message: str, op: str) -> bool:
    return f"{op}:" in message or f"fastgl::{op}" in message or f"{op}(" in message


def fuzz(rounds: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    torch.manual_seed(seed)  # tensor values too, whatever ran before
    failures: List[dict] = []
    counts: Dict[str, int] = {}
    total = 0

    def check(op, what, call, expected=None):
        nonlocal total
        total += 1
        counts[op] = counts.get(op, 0) + 1
        print(f"{op} | {what}", flush=True)
        outcome, detail = run_case(op, call)
        if outcome == "raised" and not names_op(detail, op):
            failures.append({"op": op, "case": what, "error": detail[:300]})
        elif outcome == "returned" and expected is not None and not same_result(detail, expected):
            failures.append({"op": op, "case": what, "error": "differs from the unmutated call"})
        return outcome, detail

    ops = registered_ops()
    for op in ops:
        if op not in VALID_CALLS:
            failures.append({"op": op, "case": "-", "error": "no valid call to fuzz from: add "
                             "one to VALID_CALLS in tests/fuzz_ops.py"})
    for _ in range(rounds):
        for op in ops:
            if op not in VALID_CALLS:
                continue
            call = VALID_CALLS[op](rng)
            outcome, base = check(op, "valid", call)
            if outcome != "returned":
                failures.append({"op": op, "case": "valid", "error": str(base)[:300]})
                continue
            singles = mutations_of(op, call, rng)
            for what, mutated in singles:
                expected = base if what.endswith(SEMANTICS_PRESERVING) else None
                check(op, what, mutated, expected)
            for _ in range(len(singles) // 2):  # pairs of mutations on different arguments
                (what_a, first), (what_b, second) = rng.sample(singles, 2)
                name_b = what_b.split(":")[0]
                if what_a.split(":")[0] != name_b:
                    check(op, f"{what_a} + {what_b}", dict(first, **{name_b: second[name_b]}))
    return {"total": total, "per_op": counts, "ops": ops, "failures": failures}


def main(argv: List[str]) -> None:
    report_path = argv[1]
    rounds = int(argv[2]) if len(argv) > 2 else 8
    torch.set_num_threads(1)
    report = fuzz(rounds)
    with open(report_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv)
