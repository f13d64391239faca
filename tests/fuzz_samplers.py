"""Fuzzing fastgl's heterogeneous and temporal samplers with malformed and edge-case inputs.

Run by ``test_fuzz_samplers.py`` in a child process, so that a crash or a hang fails a test
instead of killing pytest: ``python fuzz_samplers.py REPORT.json [ROUNDS]``. Before each call
the case is printed (and flushed), so the last line of a dead child's output names the input
that killed it; a call running past ``CASE_TIMEOUT_S`` ends the child (faulthandler) likewise.

Each round draws a valid random heterogeneous graph (node types without nodes, relations without
edges, self-relations, int32/int64 ``edge_index``, weights on some or all relations) and a valid
temporal graph, then valid sampler configurations (hop-wise or layer-wise, disjoint, weighted,
fanout lists or dicts, node or edge times of any real dtype, ``"uniform"`` or ``"last"``), and
calls every entry point with them and with one argument at a time mutated:

* ``HeteroCSCGraph.from_edge_index_dict``: ids out of range, wrong shapes and dtypes, node
  counts negative or too small, unknown or malformed edge types, weights negative/NaN/inf;
* ``HeteroNeighborSampler`` / ``hetero_neighbor_sample`` / ``TemporalNeighborSampler``:
  fanouts with the wrong number of hops, below -1, bools, floats, unknown edge types; times with
  NaN, infinities, int64 extremes, the wrong length/dtype/dims, unknown keys; unknown strategies;
* their ``sample``: seeds with unknown types, wrong dtypes/dims, ids out of range (negative,
  ``num_nodes``, int64 extremes), empty; ``seed_time`` of the wrong length or with NaN;
  generators of the wrong kind (and on the wrong device where there is a GPU).

A mutation is *invalid* (it must raise), a *valid edge case* (it must return) or a request
that may be refused (a fanout of 2^62 draws, 2^63 nodes: it may raise or return). A call
passes when it raises a ``TypeError``/``ValueError``/``RuntimeError``/``NotImplementedError``
whose message names the entry point (or the compiled op that refused), or when it returns a
result that the oracles below accept: per type, nodes unique per tree and in range, seeds
first, every edge a real edge of its relation with its id, the draw counts the fanouts give,
no edge into a tree's future. An invalid input that returns is a failure (a silent answer to a
malformed call), as is any other exception. Everything is seeded: the same cases every run.
"""

from __future__ import annotations

import faulthandler
import json
import math
import random
import sys
from collections.abc import Callable

import torch

import fastgl
from fastgl.sampling import HeteroNeighborSampler, TemporalNeighborSampler, hetero_neighbor_sample

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
CASE_TIMEOUT_S = 60
NODE_TYPES = ("author", "paper", "venue", "topic")
RELATIONS = ("writes", "cites", "about", "links")
ALLOWED = (TypeError, ValueError, RuntimeError, NotImplementedError)
# What each entry point's messages may name: its own name, the names its checks use, the
# compiled ops it calls.
OPS = ("sample_ranges", "id_map", "csc_from_coo", "fastgl::")
NAMES = {
    "HeteroCSCGraph.from_edge_index_dict": ("HeteroCSCGraph", *OPS),
    "HeteroNeighborSampler": ("HeteroNeighborSampler", "hetero_neighbor_sample", *OPS),
    "HeteroNeighborSampler.sample": ("HeteroNeighborSampler", "hetero_neighbor_sample", *OPS),
    "hetero_neighbor_sample": ("hetero_neighbor_sample", *OPS),
    "TemporalNeighborSampler": ("TemporalNeighborSampler", *OPS),
    "TemporalNeighborSampler.sample": ("TemporalNeighborSampler", *OPS),
}
ENTRY_POINTS = sorted(NAMES)
TIME_DTYPES = (torch.int64, torch.int32, torch.float32, torch.float64)


# ---------------------------------------------------------------------------------------------
# Valid random inputs.


def random_times(rng: random.Random, n: int, dtype: torch.dtype) -> torch.Tensor:
    """``n`` times with ties, of ``dtype``."""
    values = [rng.randint(0, 6) for _ in range(n)]
    return torch.tensor(values, dtype=dtype)


def random_hetero(rng: random.Random) -> dict:
    """Arguments of a valid ``from_edge_index_dict`` call."""
    ntypes = rng.sample(NODE_TYPES, rng.randint(1, 3))
    num_nodes = {t: rng.choice([0, 1, rng.randint(2, 7), rng.randint(2, 7)]) for t in ntypes}
    edge_index, weights = {}, {}
    weight_mode = rng.choice(["none", "all", "some"])
    for _ in range(rng.randint(0, 4)):
        src, dst = rng.choice(ntypes), rng.choice(ntypes)
        etype = (src, rng.choice(RELATIONS), dst)
        if etype in edge_index:
            continue
        ns, nd = num_nodes[src], num_nodes[dst]
        e = rng.randint(0, 14) if ns and nd else 0
        ei = torch.tensor(
            [[rng.randrange(ns) for _ in range(e)], [rng.randrange(nd) for _ in range(e)]],
            dtype=rng.choice([torch.int32, torch.int64]),
        ).reshape(2, e)
        edge_index[etype] = ei
        if weight_mode == "all" or (weight_mode == "some" and rng.random() < 0.5):
            w = torch.tensor([rng.choice([0.0, 0.5, 1.0, 2.0, 3.5]) for _ in range(e)])
            weights[etype] = w.to(rng.choice([torch.float32, torch.float64]))
    return {
        "edge_index_dict": edge_index,
        "num_nodes_dict": num_nodes,
        "edge_weight_dict": weights if weights or rng.random() < 0.5 else None,
    }


def random_fanouts(rng: random.Random, etypes: list, hops: int):
    values = (-1, 0, 1, 2, 3)
    if rng.random() < 0.5 or not etypes:
        return [rng.choice(values) for _ in range(hops)]
    return {e: [rng.choice(values) for _ in range(hops)] for e in etypes}


def random_hetero_config(rng: random.Random, build: dict, graph) -> dict:
    """Keyword arguments of a valid ``HeteroNeighborSampler``."""
    etypes = list(graph.edge_types)
    config = {
        "fanouts": random_fanouts(rng, etypes, rng.randint(0, 3)),
        "replace": rng.random() < 0.3,
        "weighted": False,
        "disjoint": rng.random() < 0.3,
        "layerwise": rng.random() < 0.3,
    }
    temporal = rng.random() < 0.45
    if temporal:
        if rng.random() < 0.5:
            config["node_time"] = {
                t: random_times(rng, n, rng.choice(TIME_DTYPES))
                for t, n in graph.num_nodes.items()
                if rng.random() < 0.75
            }
        else:
            config["edge_time"] = {
                e: random_times(rng, n, rng.choice(TIME_DTYPES))
                for e, n in graph.num_edges.items()
                if rng.random() < 0.75
            }
        config["strategy"] = rng.choice(["uniform", "last"])
    elif graph.combined.weight is not None and rng.random() < 0.6:
        config["weighted"] = True
    return config


def random_hetero_seeds(rng: random.Random, graph, config: dict) -> tuple[dict, dict | None]:
    seeds, seed_time = {}, None
    for t, n in graph.num_nodes.items():
        if rng.random() < 0.6:
            k = rng.randint(0, 4) if n else 0
            ids = [rng.randrange(n) for _ in range(k)]
            seeds[t] = torch.tensor(ids, dtype=rng.choice([torch.int32, torch.int64]))
    if "node_time" in config or "edge_time" in config:
        seed_time = {}
        own = config.get("node_time") or {}
        for t, ids in seeds.items():
            if t not in own or rng.random() < 0.4:
                seed_time[t] = random_times(rng, ids.numel(), rng.choice(TIME_DTYPES))
        if not seed_time and rng.random() < 0.5:
            seed_time = None
    return seeds, seed_time


def random_temporal(rng: random.Random) -> dict:
    """A valid homogeneous graph, its edge list and a valid ``TemporalNeighborSampler``'s
    arguments and ``sample`` call."""
    n = rng.choice([0, 1, rng.randint(2, 9)])
    e = rng.randint(0, 20) if n else 0
    dtype = rng.choice([torch.int32, torch.int64])
    edge_index = torch.tensor(
        [[rng.randrange(n) for _ in range(e)], [rng.randrange(n) for _ in range(e)]], dtype=dtype
    ).reshape(2, e)
    graph = fastgl.CSCGraph.from_edge_index(edge_index, n)
    kind = rng.choice(["node_time", "edge_time"])
    times = random_times(rng, n if kind == "node_time" else e, rng.choice(TIME_DTYPES))
    config = {
        "fanouts": [rng.choice((-1, 0, 1, 2, 3)) for _ in range(rng.randint(0, 3))],
        kind: times,
        "strategy": rng.choice(["uniform", "last"]),
        "replace": rng.random() < 0.3,
    }
    seeds = torch.tensor([rng.randrange(n) for _ in range(rng.randint(0, 4) if n else 0)])
    seeds = seeds.to(rng.choice([torch.int32, torch.int64]))
    seed_time = None
    if kind == "edge_time" or rng.random() < 0.5:
        seed_time = random_times(rng, seeds.numel(), rng.choice(TIME_DTYPES))
    return {
        "edge_index": edge_index,
        "num_nodes": n,
        "graph": graph,
        "config": config,
        "seeds": seeds,
        "seed_time": seed_time,
    }


# ---------------------------------------------------------------------------------------------
# Mutations: ``(what, value, invalid)``.


def tensor_id_mutations(t: torch.Tensor, bound: int) -> list[tuple[str, object, bool]]:
    """An id tensor (1-D, ids below ``bound``) made malformed one way at a time."""
    out = []
    n = t.numel()
    for bad in (-1, bound, INT64_MAX, INT64_MIN, 2**40):
        if n and (t.dtype == torch.int64 or -(2**31) <= bad < 2**31):
            m = t.clone()
            m[rng_index(n)] = bad
            out.append((f"an id {bad}", m, True))
    out += [
        ("float dtype", t.to(torch.float32), True),
        ("bool dtype", t.to(torch.bool), True),
        ("2-D", t.reshape(1, n), True),
        ("0-d", torch.tensor(0), True),
        ("a list", t.tolist(), True),
        ("on meta", torch.empty(n, dtype=t.dtype, device="meta"), True),
        ("empty", t[:0], False),
        ("non-contiguous", torch.stack([t, t], 1)[:, 0], False),
    ]
    return out


def rng_index(n: int) -> int:
    return n // 2


def time_mutations(t: torch.Tensor, allow_extremes: bool = True) -> list[tuple[str, object, bool]]:
    """A time tensor made malformed (or an edge case) one way at a time."""
    n = t.numel()
    out = [
        ("one entry long", torch.cat([t, t[:1] if n else torch.zeros(1, dtype=t.dtype)]), True),
        ("bool dtype", t.to(torch.bool), True),
        ("complex dtype", t.to(torch.complex64), True),
        ("2-D", t.reshape(n, 1), True),
        ("a list", t.tolist(), True),
        ("None in place", None, True),
        ("on meta", torch.empty(n, dtype=t.dtype, device="meta"), True),
    ]
    if n:
        out.append(("one entry short", t[1:], True))
        f = t.to(torch.float64).clone()
        f[0] = math.nan
        out.append(("a NaN", f, True))
        for value in (math.inf, -math.inf):
            f = t.to(torch.float64).clone()
            f[-1] = value
            out.append((f"an entry {value}", f, False))
        if allow_extremes:
            for value in (INT64_MAX, INT64_MIN):
                i = t.to(torch.int64).clone()
                i[0] = value
                out.append((f"an entry {value}", i, False))
        out.append(("float16", t.to(torch.float16), False))
    return out


def fanout_list_mutations(f: list) -> list[tuple[str, object, bool]]:
    out = [
        ("-2 appended", f + [-2], True),
        ("a bool", f + [True], True),
        ("a float 1.5", f + [1.5], True),
        ("a float 2.0", f + [2.0], True),
        ("a string", "12", True),
        ("an int", 3, True),
        ("None", None, True),
        ("a None entry", f + [None], True),
        ("a huge entry", [2**62] + f[1:] if f else [2**62], None),
        ("a tuple", tuple(f), False),
        ("a tensor", torch.tensor(f, dtype=torch.int64), False),
        ("one hop more", f + [1], False),
        ("empty", [], False),
    ]
    if f:
        out.append(("-3 first", [-3] + f[1:], True))
        out.append((f"{INT64_MIN} first", [INT64_MIN] + f[1:], True))
    return out


def hetero_build_mutations(build: dict) -> list[tuple[str, dict, bool]]:
    ei, nn, w = build["edge_index_dict"], build["num_nodes_dict"], build["edge_weight_dict"]
    cases = [
        ("edge_index_dict: a list", dict(build, edge_index_dict=list(ei.items())), True),
        ("edge_index_dict: empty", dict(build, edge_index_dict={}, edge_weight_dict=None), False),
        ("num_nodes_dict: a list", dict(build, num_nodes_dict=list(nn.values())), True),
        ("num_nodes_dict: an int key", dict(build, num_nodes_dict={**nn, 3: 2}), True),
        ("num_nodes_dict: an extra empty type", dict(build, num_nodes_dict={**nn, "x": 0}), False),
        ("edge_weight_dict: a list", dict(build, edge_weight_dict=[1.0]), True),
        (
            "edge_weight_dict: an unknown edge type",
            dict(build, edge_weight_dict={**(w or {}), ("q", "r", "s"): torch.ones(1)}),
            True,
        ),
    ]
    for t, n in nn.items():
        for what, bad in (("-1", -1), ("1.0", 1.0), ("'3'", "3"), ("True", True), ("None", None)):
            cases.append(
                (f"num_nodes_dict[{t!r}]: {what}", dict(build, num_nodes_dict={**nn, t: bad}), True)
            )
        cases.append(
            (
                f"num_nodes_dict[{t!r}]: int64 max",
                dict(build, num_nodes_dict={**nn, t: INT64_MAX}),
                None,
            )
        )
        cases.append(
            (
                f"num_nodes_dict[{t!r}]: a 0-d tensor",
                dict(build, num_nodes_dict={**nn, t: torch.tensor(n)}),
                False,
            )
        )
        used = [e for e, x in ei.items() if x.numel() and t in (e[0], e[2])]
        if used and n:
            cases.append(
                (
                    f"num_nodes_dict[{t!r}]: too small",
                    dict(build, num_nodes_dict={**nn, t: n - 1}),
                    any(
                        int(x[0 if e[0] == t else 1].max()) >= n - 1
                        or (e[0] == e[2] == t and int(x.max()) >= n - 1)
                        for e, x in ei.items()
                        if x.numel() and t in (e[0], e[2])
                    ),
                )
            )
        missing = {k: v for k, v in nn.items() if k != t}
        cases.append(
            (
                f"num_nodes_dict: {t!r} missing",
                dict(build, num_nodes_dict=missing),
                any(t in (e[0], e[2]) for e in ei),
            )
        )
    for etype, x in ei.items():

        def with_index(new, etype=etype):
            return {**ei, etype: new}

        for bad_etype, what in (
            (list(etype), "a list"),
            (etype[:2], "a pair"),
            ("".join(etype), "a string"),
            ((etype[0], etype[1], "nowhere"), "an unknown type"),
        ):
            d = (
                {(bad_etype if k == etype else k): v for k, v in ei.items()}
                if not isinstance(bad_etype, list)
                else None
            )
            if d is None:
                d = dict(ei)
                cases.append(
                    (f"edge type {etype}: {what}", dict(build, edge_index_dict=[*d.items()]), True)
                )
                continue
            weights = None if w is None else {k: v for k, v in w.items() if k != etype}
            cases.append(
                (
                    f"edge type {etype}: {what}",
                    dict(build, edge_index_dict=d, edge_weight_dict=weights),
                    True,
                )
            )
        ns, nd = nn[etype[0]], nn[etype[2]]
        e = x.shape[1]
        for row, bound in ((0, ns), (1, nd)):
            for bad in (-1, bound, INT64_MAX, INT64_MIN):
                if not e or (x.dtype == torch.int32 and not -(2**31) <= bad < 2**31):
                    continue
                m = x.clone()
                m[row, e // 2] = bad
                cases.append(
                    (
                        f"edge_index_dict[{etype}][{row}]: an id {bad}",
                        dict(build, edge_index_dict=with_index(m)),
                        True,
                    )
                )
        cases += [
            (
                f"edge_index_dict[{etype}]: shape [3, E]",
                dict(build, edge_index_dict=with_index(torch.cat([x, x[:1]]))),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: 1-D",
                dict(build, edge_index_dict=with_index(x.reshape(-1))),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: 3-D",
                dict(build, edge_index_dict=with_index(x.unsqueeze(-1))),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: [E, 2]",
                dict(build, edge_index_dict=with_index(x.t().contiguous())),
                e != 2,
            ),
            (
                f"edge_index_dict[{etype}]: float",
                dict(build, edge_index_dict=with_index(x.float())),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: bool",
                dict(build, edge_index_dict=with_index(x.bool())),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: int16",
                dict(build, edge_index_dict=with_index(x.to(torch.int16))),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: a list",
                dict(build, edge_index_dict=with_index(x.tolist())),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: on meta",
                dict(
                    build,
                    edge_index_dict=with_index(torch.empty(2, e, dtype=x.dtype, device="meta")),
                ),
                True,
            ),
            (
                f"edge_index_dict[{etype}]: non-contiguous",
                dict(build, edge_index_dict=with_index(x.t().contiguous().t())),
                False,
            ),
        ]
        if w is not None and etype in w:
            wt = w[etype]
            for what, bad, invalid in (
                ("one short", wt[1:], bool(e)),
                ("one long", torch.cat([wt, wt[:1] if e else torch.ones(1, dtype=wt.dtype)]), True),
                ("int64", wt.long(), True),
                ("float16", wt.half(), True),
                ("2-D", wt.reshape(1, e), True),
                ("a list", wt.tolist(), True),
            ):
                cases.append(
                    (
                        f"edge_weight_dict[{etype}]: {what}",
                        dict(build, edge_weight_dict={**w, etype: bad}),
                        invalid,
                    )
                )
            for value in (-1.0, math.nan, math.inf, -math.inf, -0.0):
                if e:
                    m = wt.clone()
                    m[e // 2] = value
                    cases.append(
                        (
                            f"edge_weight_dict[{etype}]: an entry {value}",
                            dict(build, edge_weight_dict={**w, etype: m}),
                            value != 0,
                        )
                    )
    return cases


def hetero_config_mutations(graph, config: dict) -> list[tuple[str, dict, bool]]:
    etypes = list(graph.edge_types)
    f = config["fanouts"]
    temporal = "node_time" in config or "edge_time" in config
    cases = []
    if isinstance(f, dict):
        hops = len(next(iter(f.values())))
        for e in etypes:
            for what, bad, invalid in fanout_list_mutations(f[e]):
                if what in ("one hop more", "empty", "a huge entry", "a tuple", "a tensor"):
                    invalid = (len(etypes) > 1 and len(bad) != hops) or invalid
                cases.append(
                    (f"fanouts[{e}]: {what}", dict(config, fanouts={**f, e: bad}), invalid)
                )
            cases.append(
                (
                    f"fanouts: {e} missing",
                    dict(config, fanouts={k: v for k, v in f.items() if k != e}),
                    True,
                )
            )
        cases.append(
            (
                "fanouts: an unknown edge type",
                dict(config, fanouts={**f, ("x", "y", "z"): [1] * hops}),
                True,
            )
        )
        cases.append(
            ("fanouts: a str key", dict(config, fanouts={**f, "writes": [1] * hops}), True)
        )
    else:
        cases += [
            (f"fanouts: {w}", dict(config, fanouts=b), i) for w, b, i in fanout_list_mutations(f)
        ]
        if etypes:
            cases.append(
                (
                    "fanouts: a dict missing relations",
                    dict(config, fanouts={etypes[0]: f}),
                    len(etypes) > 1,
                )
            )
    cases += [
        ("strategy: 'bogus'", dict(config, strategy="bogus"), True),
        ("strategy: None", dict(config, strategy=None), True),
        ("strategy: 'LAST'", dict(config, strategy="LAST"), True),
        ("weighted: True", dict(config, weighted=True), temporal or graph.combined.weight is None),
        ("replace: flipped", dict(config, replace=not config["replace"]), False),
        ("layerwise: flipped", dict(config, layerwise=not config["layerwise"]), False),
        ("disjoint: flipped", dict(config, disjoint=not config["disjoint"]), False),
    ]
    if not temporal:
        cases.append(("strategy: 'last' without times", dict(config, strategy="last"), True))
        cases.append(("node_time: {}", dict(config, node_time={}), config["weighted"]))
    for key, lengths, kind in (
        ("node_time", graph.num_nodes, "node"),
        ("edge_time", graph.num_edges, "edge"),
    ):
        times = config.get(key)
        if times is None:
            continue
        other = "edge_time" if key == "node_time" else "node_time"
        cases += [
            (f"{key}: a list", dict(config, **{key: list(times.values())}), True),
            (f"{key}: a tensor", dict(config, **{key: torch.zeros(3)}), True),
            (
                f"{key}: an unknown {kind} type",
                dict(
                    config,
                    **{key: {**times, ("x", "y", "z") if kind == "edge" else "x": torch.zeros(1)}},
                ),
                True,
            ),
            (f"{key}: empty", dict(config, **{key: {}}), False),
            (f"{key} and {other}", dict(config, **{other: {}}), True),
        ]
        for t in lengths:
            base = times[t] if t in times else torch.zeros(lengths[t], dtype=torch.int64)
            for what, bad, invalid in time_mutations(base):
                cases.append(
                    (f"{key}[{t}]: {what}", dict(config, **{key: {**times, t: bad}}), invalid)
                )
    return cases


def hetero_sample_mutations(
    graph, config: dict, seeds: dict, seed_time
) -> list[tuple[str, dict, bool]]:
    """Mutations of ``sample``'s arguments ``{seeds, seed_time, generator}``."""
    temporal = "node_time" in config or "edge_time" in config
    base = {"seeds": seeds, "seed_time": seed_time, "generator": None}
    cases = [
        ("seeds: a tensor", dict(base, seeds=torch.zeros(1, dtype=torch.long)), True),
        ("seeds: a list", dict(base, seeds=list(seeds.values())), True),
        (
            "seeds: an unknown type",
            dict(base, seeds={**seeds, "nowhere": torch.zeros(0, dtype=torch.long)}),
            True,
        ),
        (
            "seeds: an int key",
            dict(base, seeds={**seeds, 0: torch.zeros(0, dtype=torch.long)}),
            True,
        ),
        ("generator: an int", dict(base, generator=5), True),
        ("generator: a tensor", dict(base, generator=torch.zeros(1)), True),
        ("generator: seeded", dict(base, generator=torch.Generator().manual_seed(3)), False),
    ]
    if torch.cuda.is_available():
        cases.append(("generator: on cuda", dict(base, generator=torch.Generator("cuda")), True))
    if not temporal:
        cases.append(("seeds: empty dict", dict(base, seeds={}), False))
        cases.append(("seed_time: given without times", dict(base, seed_time={}), True))
    for t, n in graph.num_nodes.items():
        ids = seeds.get(t, torch.zeros(0, dtype=torch.long))
        own_time = temporal and t in (config.get("node_time") or {})
        needs_time = temporal and not own_time
        for what, bad, invalid in tensor_id_mutations(ids, n):
            if what in ("empty", "non-contiguous"):
                if (
                    temporal
                    and seed_time is not None
                    and t in seed_time
                    and bad.numel() != ids.numel()
                ):
                    invalid = True
            cases.append((f"seeds[{t!r}]: {what}", dict(base, seeds={**seeds, t: bad}), invalid))
        if n:
            more = torch.cat([ids.long(), torch.tensor([n - 1])])
            invalid = temporal and seed_time is not None and t in seed_time
            invalid = invalid or (needs_time and (seed_time is None or t not in seed_time))
            cases.append(
                (f"seeds[{t!r}]: one seed more", dict(base, seeds={**seeds, t: more}), invalid)
            )
        if temporal:
            st = {} if seed_time is None else seed_time
            cur = st.get(t, torch.zeros(ids.numel(), dtype=torch.int64))
            for what, bad, invalid in time_mutations(cur):
                cases.append(
                    (f"seed_time[{t!r}]: {what}", dict(base, seed_time={**st, t: bad}), invalid)
                )
            if t in st and ids.numel():
                cases.append(
                    (
                        f"seed_time[{t!r}]: left out",
                        dict(base, seed_time={k: v for k, v in st.items() if k != t}),
                        needs_time,
                    )
                )
    if temporal:
        cases += [
            ("seed_time: a list", dict(base, seed_time=[torch.zeros(1)]), True),
            (
                "seed_time: an unknown type",
                dict(base, seed_time={**(seed_time or {}), "nowhere": torch.zeros(0)}),
                True,
            ),
        ]
    return cases


def temporal_config_mutations(case: dict) -> list[tuple[str, dict, bool]]:
    config, n, e = case["config"], case["num_nodes"], case["edge_index"].shape[1]
    key = "node_time" if "node_time" in config else "edge_time"
    other = "edge_time" if key == "node_time" else "node_time"
    cases = [
        (f"fanouts: {w}", dict(config, fanouts=b), i)
        for w, b, i in fanout_list_mutations(config["fanouts"])
    ]
    cases += [
        ("strategy: 'bogus'", dict(config, strategy="bogus"), True),
        ("strategy: 0", dict(config, strategy=0), True),
        ("replace: 1", dict(config, replace=1), True),
        ("replace: flipped", dict(config, replace=not config["replace"]), False),
        (f"{key} left out", {k: v for k, v in config.items() if k != key}, True),
        (
            f"{other} too",
            dict(config, **{other: torch.zeros(e if other == "edge_time" else n)}),
            True,
        ),
        (f"{key}: a dict", dict(config, **{key: {"x": config[key]}}), True),
    ]
    cases += [
        (f"{key}: {w}", dict(config, **{key: b}), i) for w, b, i in time_mutations(config[key])
    ]
    return cases


def temporal_sample_mutations(case: dict) -> list[tuple[str, dict, bool]]:
    seeds, seed_time, n = case["seeds"], case["seed_time"], case["num_nodes"]
    needs_time = "edge_time" in case["config"]
    base = {"seeds": seeds, "seed_time": seed_time, "generator": None}
    cases = [
        ("generator: an int", dict(base, generator=5), True),
        ("generator: seeded", dict(base, generator=torch.Generator().manual_seed(1)), False),
    ]
    if torch.cuda.is_available():
        cases.append(("generator: on cuda", dict(base, generator=torch.Generator("cuda")), True))
    for what, bad, invalid in tensor_id_mutations(seeds, n):
        if what in ("empty",) and seed_time is not None and seeds.numel():
            invalid = True
        cases.append((f"seeds: {what}", dict(base, seeds=bad), invalid))
    cur = seed_time if seed_time is not None else torch.zeros(seeds.numel(), dtype=torch.int64)
    cases += [
        (f"seed_time: {w}", dict(base, seed_time=b), i)
        for w, b, i in time_mutations(cur)
        if w != "None in place"  # None: the seeds' own times ("left out" below)
    ]
    cases.append(("seed_time: left out", dict(base, seed_time=None), needs_time))
    return cases


# ---------------------------------------------------------------------------------------------
# Oracles: ``None`` for a valid result, else what is wrong.


def check_hetero_graph(build: dict, graph) -> str | None:
    ei, nn = build["edge_index_dict"], build["num_nodes_dict"]
    weights = build["edge_weight_dict"] or {}
    if graph.num_nodes != {t: int(n) for t, n in nn.items()} or graph.node_types != list(nn):
        return f"num_nodes {graph.num_nodes} for {nn}"
    if graph.edge_types != list(ei):
        return f"edge types {graph.edge_types} for {list(ei)}"
    for etype, x in ei.items():
        rel = graph[etype]
        x = x.long()
        e, nd = x.shape[1], int(nn[etype[2]])
        ip = rel.indptr.long()
        if rel.num_edges != e or ip.numel() != nd + 1 or int(ip[0]) != 0 or int(ip[-1]) != e:
            return f"{etype}: CSC of {rel.num_edges} edges, indptr {ip.tolist()} for {e} edges"
        if bool((ip.diff() < 0).any()):
            return f"{etype}: indptr decreases"
        eid = rel.edge_ids().long()
        if sorted(eid.tolist()) != list(range(e)):
            return f"{etype}: eid is not a permutation"
        dst = torch.repeat_interleave(torch.arange(nd), ip.diff())
        if not (torch.equal(x[0][eid], rel.indices.long()) and torch.equal(x[1][eid], dst)):
            return f"{etype}: a CSC slot is not the edge its eid names"
        w = weights.get(etype)
        if (w is None) != (rel.weight is None) or (
            w is not None and not torch.equal(rel.weight.to(w.dtype), w[eid])
        ):
            return f"{etype}: weights do not follow the edges"
    return None


def _unique_in_order(values: list) -> list:
    return list(dict.fromkeys(values))


def _expected_count(valid: int, fanout: int, replace: bool, last: bool) -> int:
    if fanout < 0:
        return valid
    if last or not replace:
        return min(valid, fanout)
    return fanout if valid else 0


def _time_of(node_time, edge_time, etype, edge_index) -> Callable:
    """The time of an edge of relation ``etype`` (by id): its source's or its own."""
    if node_time is not None:
        return lambda e: node_time[etype[0]][int(edge_index[0][e])].item()
    return lambda e: edge_time[etype][e].item()


def check_hetero_sample(
    graph_args: dict, graph, config: dict, seeds: dict, seed_time, sub
) -> str | None:
    """The invariants of a heterogeneous sample of ``graph`` (built from ``graph_args``)."""
    ei = {e: x.long() for e, x in graph_args["edge_index_dict"].items()}
    weights = graph_args["edge_weight_dict"] or {}
    nn = graph.num_nodes
    etypes, ntypes = graph.edge_types, graph.node_types
    fanouts = config["fanouts"]
    fanouts = {e: list(fanouts[e]) if isinstance(fanouts, dict) else list(fanouts) for e in etypes}
    hops = len(next(iter(fanouts.values()))) if fanouts else len(list(config["fanouts"]))
    node_time, edge_time = config.get("node_time"), config.get("edge_time")
    temporal = node_time is not None or edge_time is not None
    disjoint = config.get("disjoint", False) or temporal
    layerwise, replace = config.get("layerwise", False), config.get("replace", False)
    weighted, last = config.get("weighted", False), config.get("strategy", "uniform") == "last"
    if set(sub.nodes) != set(ntypes) or set(sub.row) != set(etypes):
        return "the result lacks a node type or relation"
    # Seeds and trees, node types in the graph's order.
    seed_lists = {t: seeds[t].long().tolist() if t in seeds else [] for t in ntypes}
    tree_start, trees = {}, 0
    for t in ntypes:
        tree_start[t] = trees
        trees += len(seed_lists[t])
    tree_time = None
    if temporal:
        tree_time = []
        for t in ntypes:
            if seed_time is not None and t in seed_time:
                tree_time += (
                    seed_time[t].double().tolist()
                    if seed_time[t].is_floating_point()
                    else seed_time[t].tolist()
                )
            else:
                tree_time += [node_time[t][i].item() for i in seed_lists[t]]
    ends = {}
    for t in ntypes:
        nodes, counts = sub.nodes[t], sub.num_sampled_nodes[t]
        if len(counts) != hops + 1 or sum(counts) != nodes.numel() or min(counts, default=0) < 0:
            return f"num_sampled_nodes[{t!r}] {counts} for {nodes.numel()} nodes and {hops} hops"
        ends[t] = [sum(counts[: h + 1]) for h in range(hops + 1)]
        if nodes.dtype != torch.int64 or (
            nodes.numel() and (int(nodes.min()) < 0 or int(nodes.max()) >= nn[t])
        ):
            return f"nodes[{t!r}] out of range or not int64"
        ids = nodes.tolist()
        if disjoint:
            batch = sub.batch[t]
            if batch.shape != nodes.shape or (
                batch.numel() and (int(batch.min()) < 0 or int(batch.max()) >= trees)
            ):
                return f"batch[{t!r}] malformed"
            keys = list(zip(batch.tolist(), ids))
            expect_seeds = [(tree_start[t] + i, s) for i, s in enumerate(seed_lists[t])]
            if keys[: counts[0]] != expect_seeds:
                return f"{t!r}: the seeds are not first, one tree each"
        else:
            keys = ids
            if ids[: counts[0]] != _unique_in_order(seed_lists[t]):
                return f"{t!r}: the distinct seeds are not first in order"
        if len(set(keys)) != len(keys):
            return f"{t!r}: a node appears twice in one tree"
        if seed_lists[t] and nodes[sub.seed_index[t]].tolist() != seed_lists[t]:
            return f"{t!r}: seed_index does not map the seeds"
    for etype in etypes:
        s, _, d = etype
        row, col, eid = sub.row[etype], sub.col[etype], sub.eid[etype]
        counts = sub.num_sampled_edges[etype]
        m = row.numel()
        if len(counts) != hops or sum(counts) != m or col.numel() != m or eid.numel() != m:
            return f"{etype}: num_sampled_edges {counts} for {m} edges"
        if not m:
            continue
        x = ei[etype]
        if int(eid.min()) < 0 or int(eid.max()) >= x.shape[1]:
            return f"{etype}: an edge id out of range"
        if (
            int(row.min()) < 0
            or int(row.max()) >= sub.nodes[s].numel()
            or int(col.min()) < 0
            or int(col.max()) >= sub.nodes[d].numel()
        ):
            return f"{etype}: a local index out of range"
        if not (
            torch.equal(x[0][eid], sub.nodes[s][row]) and torch.equal(x[1][eid], sub.nodes[d][col])
        ):
            return f"{etype}: a sampled edge is not the edge its eid names"
        if disjoint and not torch.equal(sub.batch[s][row], sub.batch[d][col]):
            return f"{etype}: an edge joins two trees"
        w = weights.get(etype)
        if weighted and bool((w[eid] <= 0).any()):
            return f"{etype}: a zero-weight edge was drawn"
    # Per hop, relation and transit: the counts the fanouts give, only valid edges.
    for h in range(1, hops + 1):
        for etype in etypes:
            s, _, d = etype
            counts = sub.num_sampled_edges[etype]
            lo, hi = sum(counts[: h - 1]), sum(counts[:h])
            row, col, eid = sub.row[etype][lo:hi], sub.col[etype][lo:hi], sub.eid[etype][lo:hi]
            first = 0 if layerwise or h == 1 else ends[d][h - 2]
            transits = range(first, ends[d][h - 1])
            if row.numel() and (
                int(row.max()) >= ends[s][h]
                or int(col.min()) < first
                or int(col.max()) >= ends[d][h - 1]
            ):
                return f"{etype} hop {h}: an edge outside the hop's transits or nodes"
            x, f = ei[etype], fanouts[etype][h - 1]
            timed = temporal and (
                (node_time is not None and s in node_time)
                or (edge_time is not None and etype in edge_time)
            )
            for c in transits:
                v = int(sub.nodes[d][c])
                mine = eid[col == c].tolist()
                candidates = (x[1] == v).nonzero().flatten().tolist()
                if weighted:
                    candidates = [e for e in candidates if float(weights[etype][e]) > 0]
                if timed:
                    tt = tree_time[int(sub.batch[d][c])]
                    time_of = _time_of(node_time, edge_time, etype, x)
                    candidates = [e for e in candidates if time_of(e) <= tt]
                    if last and f >= 0:
                        candidates = sorted(candidates, key=lambda e: (time_of(e), e))[
                            len(candidates) - min(f, len(candidates)) :
                        ]
                want = _expected_count(len(candidates), f, replace, last and timed)
                if len(mine) != want:
                    return f"{etype} hop {h}: node {v} drew {len(mine)} edges, expected {want}"
                if not set(mine) <= set(candidates):
                    bad = sorted(set(mine) - set(candidates))
                    return f"{etype} hop {h}: node {v} drew edges not valid for it: {bad}"
                if (f < 0 or not replace or (last and timed)) and len(set(mine)) != len(mine):
                    return f"{etype} hop {h}: node {v} drew an edge twice"
                if (f < 0 or (last and timed)) and set(mine) != set(candidates):
                    return f"{etype} hop {h}: node {v} did not take exactly the edges it should"
        for t in ntypes:  # the nodes new at this hop are sources of its edges
            new = set(range(ends[t][h - 1], ends[t][h]))
            seen = set()
            for etype in etypes:
                if etype[0] == t:
                    counts = sub.num_sampled_edges[etype]
                    seen |= set(sub.row[etype][sum(counts[: h - 1]) : sum(counts[:h])].tolist())
            if not new <= seen:
                return f"{t!r} hop {h}: a new node is the source of no edge"
    return None


def check_temporal_sample(case: dict, config: dict, seeds, seed_time, sub) -> str | None:
    """The invariants of a ``TemporalNeighborSampler`` sample, by the heterogeneous oracle over
    the graph as one node type and relation."""
    n, x = case["num_nodes"], case["edge_index"]
    etype = ("v", "e", "v")
    graph = fastgl.HeteroCSCGraph.from_edge_index_dict({etype: x}, {"v": n})
    hconfig = {
        "fanouts": config["fanouts"],
        "replace": config.get("replace", False),
        "strategy": config.get("strategy", "uniform"),
    }
    if "node_time" in config:
        hconfig["node_time"] = {"v": config["node_time"]}
    else:
        hconfig["edge_time"] = {etype: config["edge_time"]}
    if sub.batch is None or not torch.equal(sub.seed_index, torch.arange(seeds.numel())):
        return "seed_index or batch malformed"
    hsub = fastgl.sampling.HeteroSampledSubgraph(
        nodes={"v": sub.nodes},
        row={etype: sub.row},
        col={etype: sub.col},
        eid={etype: sub.eid},
        num_sampled_nodes={"v": sub.num_sampled_nodes},
        num_sampled_edges={etype: sub.num_sampled_edges},
        seed_index={"v": sub.seed_index},
        batch={"v": sub.batch},
    )
    st = None if seed_time is None else {"v": seed_time}
    fault = check_hetero_sample(
        {"edge_index_dict": {etype: x}, "edge_weight_dict": None},
        graph,
        hconfig,
        {"v": seeds},
        st,
        hsub,
    )
    if fault is None and not torch.equal(
        sub.in_degrees, torch.bincount(x[1].long(), minlength=n)[sub.nodes]
    ):
        fault = "in_degrees are not the nodes' in-degrees"
    return fault


# ---------------------------------------------------------------------------------------------


class Fuzzer:
    def __init__(self) -> None:
        self.failures: list[dict] = []
        self.counts = dict.fromkeys(ENTRY_POINTS, 0)
        self.returned = dict.fromkeys(ENTRY_POINTS, 0)

    def fail(self, entry: str, case: str, error: str) -> None:
        self.failures.append({"entry": entry, "case": case, "error": error[:400]})

    def call(
        self,
        entry: str,
        what: str,
        invalid: bool | None,
        fn: Callable,
        oracle: Callable | None = None,
    ):
        """Runs one case; the result when it returned, else ``None``."""
        self.counts[entry] += 1
        print(f"{entry} | {what}", flush=True)
        faulthandler.dump_traceback_later(CASE_TIMEOUT_S, exit=True)
        try:
            result = fn()
        except ALLOWED as error:
            message = f"{type(error).__name__}: {error}"
            if not any(name in message for name in NAMES[entry]):
                self.fail(entry, what, f"the message names no fastgl entry point: {message}")
            elif invalid is False:
                self.fail(entry, what, f"a valid call raised {message}")
            return None
        except Exception as error:
            self.fail(entry, what, f"{type(error).__name__}: {error}")
            return None
        finally:
            faulthandler.cancel_dump_traceback_later()
        self.returned[entry] += 1
        if invalid:
            self.fail(entry, what, "an invalid input returned instead of raising")
            return None
        if oracle is not None:
            try:
                fault = oracle(result)
            except ALLOWED as error:  # a sampler built: its sample may refuse an edge case
                message = f"{type(error).__name__}: {error}"
                named = any(name in message for name in NAMES[entry])
                fault = None if named and invalid is None else f"sampling it raised {message}"
            except Exception as error:
                fault = f"the oracle could not read the result: {type(error).__name__}: {error}"
            if fault:
                self.fail(entry, what, fault)
                return None
        return result

    def hetero_round(self, rng: random.Random) -> None:
        build = random_hetero(rng)
        entry = "HeteroCSCGraph.from_edge_index_dict"
        for what, args, invalid in [("valid", build, False)] + hetero_build_mutations(build):
            self.call(
                entry,
                what,
                invalid,
                lambda a=args: fastgl.HeteroCSCGraph.from_edge_index_dict(**a),
                lambda g, a=args: check_hetero_graph(a, g),
            )
        graph = self.call(
            entry,
            "valid (again)",
            False,
            lambda: fastgl.HeteroCSCGraph.from_edge_index_dict(**build),
        )
        if graph is None:
            return
        config = random_hetero_config(rng, build, graph)
        seeds, seed_time = random_hetero_seeds(rng, graph, config)

        def sample_check(cfg):
            return lambda sampler: check_hetero_sample(
                build,
                graph,
                cfg,
                seeds,
                seed_time,
                sampler.sample(seeds, torch.Generator().manual_seed(0), seed_time=seed_time),
            )

        entry = "HeteroNeighborSampler"
        self.call(
            entry,
            "graph: a CSCGraph",
            True,
            lambda: HeteroNeighborSampler(
                fastgl.CSCGraph.from_edge_index(torch.zeros(2, 0, dtype=torch.long), 1), [1]
            ),
        )
        sampler = None
        for what, cfg, invalid in [("valid", config, False)] + hetero_config_mutations(
            graph, config
        ):
            # A valid configuration's sampler must also sample: the seeds (with seed_time) are
            # valid for any such configuration only when its times are the drawn ones.
            same_times = cfg.get("node_time") is config.get("node_time") and cfg.get(
                "edge_time"
            ) is config.get("edge_time")
            oracle = sample_check(cfg) if same_times else None
            made = self.call(
                entry, what, invalid, lambda c=cfg: HeteroNeighborSampler(graph, **c), oracle
            )
            if what == "valid":
                sampler = made
        if sampler is None:
            return
        entry = "HeteroNeighborSampler.sample"
        for what, args, invalid in [
            ("valid", {"seeds": seeds, "seed_time": seed_time, "generator": None}, False)
        ] + hetero_sample_mutations(graph, config, seeds, seed_time):
            self.call(
                entry,
                what,
                invalid,
                lambda a=args: sampler.sample(a["seeds"], a["generator"], seed_time=a["seed_time"]),
                lambda sub, a=args: check_hetero_sample(
                    build, graph, config, a["seeds"], a["seed_time"], sub
                ),
            )
        entry = "hetero_neighbor_sample"
        same = [
            m
            for m in hetero_config_mutations(graph, config)
            if m[1].get("node_time") is config.get("node_time")
            and m[1].get("edge_time") is config.get("edge_time")
        ]
        picks = rng.sample(same, min(4, len(same))) + rng.sample(
            hetero_sample_mutations(graph, config, seeds, seed_time), 4
        )
        for what, args, invalid in [("valid", {}, False)] + picks:
            cfg = {
                k: v for k, v in args.items() if k not in ("seeds", "seed_time", "generator")
            } or config
            call = {"seeds": seeds, "seed_time": seed_time, "generator": None}
            call.update({k: v for k, v in args.items() if k in call})
            self.call(
                entry,
                what,
                invalid,
                lambda c=cfg, a=call: hetero_neighbor_sample(
                    graph, a["seeds"], generator=a["generator"], seed_time=a["seed_time"], **c
                ),
                lambda sub, c=cfg, a=call: check_hetero_sample(
                    build, graph, c, a["seeds"], a["seed_time"], sub
                ),
            )

    def temporal_round(self, rng: random.Random) -> None:
        case = random_temporal(rng)
        graph, config, seeds, seed_time = (
            case["graph"],
            case["config"],
            case["seeds"],
            case["seed_time"],
        )
        entry = "TemporalNeighborSampler"
        self.call(
            entry,
            "graph: a HeteroCSCGraph",
            True,
            lambda: TemporalNeighborSampler(
                fastgl.HeteroCSCGraph.from_edge_index_dict({}, {}), [1], node_time=torch.zeros(0)
            ),
        )
        sampler = None
        for what, cfg, invalid in [("valid", config, False)] + temporal_config_mutations(case):
            same_times = cfg.get("node_time") is config.get("node_time") and cfg.get(
                "edge_time"
            ) is config.get("edge_time")

            def oracle(s, c=cfg, ok=same_times):
                if not ok:
                    return None
                return check_temporal_sample(
                    case,
                    c,
                    seeds.long(),
                    seed_time,
                    s.sample(seeds, seed_time, torch.Generator().manual_seed(0)),
                )

            made = self.call(
                entry, what, invalid, lambda c=cfg: TemporalNeighborSampler(graph, **c), oracle
            )
            if what == "valid":
                sampler = made
        if sampler is None:
            return
        entry = "TemporalNeighborSampler.sample"
        for what, args, invalid in [
            ("valid", {"seeds": seeds, "seed_time": seed_time, "generator": None}, False)
        ] + temporal_sample_mutations(case):
            self.call(
                entry,
                what,
                invalid,
                lambda a=args: sampler.sample(a["seeds"], a["seed_time"], a["generator"]),
                lambda sub, a=args: check_temporal_sample(
                    case, config, a["seeds"].long(), a["seed_time"], sub
                ),
            )


def fuzz(rounds: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    fuzzer = Fuzzer()
    for _ in range(rounds):
        fuzzer.hetero_round(rng)
        fuzzer.temporal_round(rng)
    return {
        "total": sum(fuzzer.counts.values()),
        "per_entry": fuzzer.counts,
        "returned": fuzzer.returned,
        "failures": fuzzer.failures,
    }


def main(argv: list[str]) -> None:
    report = fuzz(int(argv[2]) if len(argv) > 2 else 30)
    with open(argv[1], "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv)
