"""No input crashes, hangs or silently fools a sampler: tests/fuzz_samplers.py throws thousands of
malformed and edge-case calls at every heterogeneous and temporal sampler entry point, in a child
process so that a crash or hang fails this test (naming the input) instead of killing pytest.
Every result is checked by the fuzz's oracles, and the oracles themselves are tested here."""

import dataclasses
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fuzz_samplers import (
    ENTRY_POINTS,
    check_hetero_sample,
    check_temporal_sample,
    random_hetero,
    random_hetero_config,
    random_hetero_seeds,
    random_temporal,
)

import fastgl
from fastgl.sampling import HeteroNeighborSampler, TemporalNeighborSampler

TESTS = Path(__file__).resolve().parent
ROUNDS = 30  # about 230 calls a round: 6,800 in all, a few seconds


def test_every_sampler_survives_malformed_inputs(tmp_path):
    report_path = tmp_path / "fuzz.json"
    child = subprocess.run(
        [sys.executable, str(TESTS / "fuzz_samplers.py"), str(report_path), str(ROUNDS)],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=600,
    )
    last_case = child.stdout.strip().splitlines()[-1:] or ["(none)"]
    assert child.returncode == 0, (
        f"the fuzz child died (exit {child.returncode}) on: {last_case[0]}\n{child.stderr[-2000:]}"
    )
    report = json.loads(report_path.read_text())
    assert report["failures"] == []
    assert report["total"] >= 5_000, report["total"]
    assert sorted(report["per_entry"]) == ENTRY_POINTS
    # Every entry point was called many times, and returned (was oracle-checked) many times.
    assert min(report["per_entry"].values()) >= 200, report["per_entry"]
    assert min(report["returned"].values()) >= 50, report["returned"]


def _hetero_samples(seed: int, want):
    """Valid heterogeneous samples ``(build, graph, config, seeds, seed_time, sub)`` for which
    ``want(config, sub)`` holds."""
    rng = random.Random(seed)
    for _ in range(2000):
        build = random_hetero(rng)
        graph = fastgl.HeteroCSCGraph.from_edge_index_dict(**build)
        config = random_hetero_config(rng, build, graph)
        seeds, seed_time = random_hetero_seeds(rng, graph, config)
        sub = HeteroNeighborSampler(graph, **config).sample(seeds, seed_time=seed_time)
        if want(config, sub):
            assert check_hetero_sample(build, graph, config, seeds, seed_time, sub) is None
            return build, graph, config, seeds, seed_time, sub
    pytest.fail("no such sample in 2000 tries")


def _with_edges(config, sub):
    return any(e.numel() for e in sub.eid.values())


def _first_relation_with_edges(sub):
    return next(etype for etype, eid in sub.eid.items() if eid.numel())


@pytest.mark.parametrize("field", ["eid", "row", "col"])
def test_the_hetero_oracle_rejects_a_changed_edge(field):
    build, graph, config, seeds, seed_time, sub = _hetero_samples(1, _with_edges)
    etype = _first_relation_with_edges(sub)
    changed = getattr(sub, field)[etype].clone()
    changed[0] = changed[0] + 1 if field != "eid" or changed[0] == 0 else 0
    wrong = dataclasses.replace(sub, **{field: {**getattr(sub, field), etype: changed}})
    assert check_hetero_sample(build, graph, config, seeds, seed_time, wrong) is not None


def test_the_hetero_oracle_rejects_a_dropped_edge():
    build, graph, config, seeds, seed_time, sub = _hetero_samples(2, _with_edges)
    etype = _first_relation_with_edges(sub)
    counts = list(sub.num_sampled_edges[etype])
    last_hop = max(h for h, c in enumerate(counts) if c)
    keep = torch.ones(sub.eid[etype].numel(), dtype=torch.bool)
    keep[sum(counts[: last_hop + 1]) - 1] = False
    counts[last_hop] -= 1
    wrong = dataclasses.replace(
        sub,
        row={**sub.row, etype: sub.row[etype][keep]},
        col={**sub.col, etype: sub.col[etype][keep]},
        eid={**sub.eid, etype: sub.eid[etype][keep]},
        num_sampled_edges={**sub.num_sampled_edges, etype: counts},
    )
    assert check_hetero_sample(build, graph, config, seeds, seed_time, wrong) is not None


def test_the_hetero_oracle_rejects_a_repeated_node():
    def has_nodes(config, sub):
        return any(n.numel() >= 1 for n in sub.nodes.values())

    build, graph, config, seeds, seed_time, sub = _hetero_samples(3, has_nodes)
    ntype = next(t for t, n in sub.nodes.items() if n.numel())
    counts = list(sub.num_sampled_nodes[ntype])
    counts[-1] += 1
    batch = sub.batch
    if batch is not None:
        batch = {**batch, ntype: torch.cat([batch[ntype], batch[ntype][-1:]])}
    wrong = dataclasses.replace(
        sub,
        nodes={**sub.nodes, ntype: torch.cat([sub.nodes[ntype], sub.nodes[ntype][-1:]])},
        num_sampled_nodes={**sub.num_sampled_nodes, ntype: counts},
        batch=batch,
    )
    assert check_hetero_sample(build, graph, config, seeds, seed_time, wrong) is not None


def test_the_hetero_oracle_rejects_an_edge_into_the_future():
    """A temporal sample checked as if every seed's time were before every time: its edges of
    timed relations are all in the future."""

    def timed_edges(config, sub):
        if "node_time" not in config:
            return False
        return any(sub.eid[e].numel() for e in sub.eid if e[0] in config["node_time"])

    build, graph, config, seeds, seed_time, sub = _hetero_samples(4, timed_edges)
    early = {t: torch.full((ids.numel(),), -1) for t, ids in seeds.items()}
    fault = check_hetero_sample(build, graph, config, seeds, early, sub)
    assert fault is not None


def test_the_temporal_oracle_rejects_a_changed_sample():
    rng = random.Random(5)
    for _ in range(2000):
        case = random_temporal(rng)
        sampler = TemporalNeighborSampler(case["graph"], **case["config"])
        sub = sampler.sample(case["seeds"], case["seed_time"])
        if sub.eid.numel():
            break
    else:
        pytest.fail("no temporal sample with edges in 2000 tries")
    seeds, seed_time = case["seeds"].long(), case["seed_time"]
    assert check_temporal_sample(case, case["config"], seeds, seed_time, sub) is None
    eid = sub.eid.clone()
    eid[0] = (eid[0] + 1) % case["edge_index"].shape[1] if case["edge_index"].shape[1] > 1 else 5
    wrong = dataclasses.replace(sub, eid=eid)
    assert check_temporal_sample(case, case["config"], seeds, seed_time, wrong) is not None
    batch = sub.batch.clone()
    batch[-1] = (batch[-1] + 1) % max(seeds.numel(), 2)
    wrong = dataclasses.replace(sub, batch=batch)
    assert check_temporal_sample(case, case["config"], seeds, seed_time, wrong) is not None
