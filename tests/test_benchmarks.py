"""The benchmark scripts still run end to end (on a tiny graph; no timing is asserted)."""

import json

import torch

from benchmarks import sampling
from fastgl import CSCGraph


def test_sampling_benchmark_runs_and_writes_json(tmp_path):
    out = tmp_path / "sampling.json"
    payload = sampling.main(
        [
            "--preset",
            "tiny",
            "--repeat",
            "1",
            "--batch-sizes",
            "64",
            "--num-batches",
            "1",
            "2",
            "--batched-size",
            "32",
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "sampling"
    for key in ("device_name", "torch", "git_commit", "torch_threads"):
        assert key in written["environment"]
    methods = {row["method"] for row in written["sampling"]}
    assert {"fastgl", "torch", "fastgl-batched"} <= methods
    assert all(row["edges_per_s"] > 0 for row in payload["sampling"])


def test_es_spmm_benchmark_runs_and_writes_json(tmp_path):
    from benchmarks import es_spmm

    out = tmp_path / "es_spmm.json"
    es_spmm.main(
        [
            "--rmat",
            "tiny",
            "--repeat",
            "1",
            "--widths",
            "2",
            "8",
            "--dims",
            "8",
            "--accuracy-widths",
            "2",
            "--datasets",
            "cora",
            "--epochs",
            "3",
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "es_spmm" and "git_commit" in written["environment"]
    rows = [r for r in written["speed"] if r["graph"] == "rmat-tiny"]
    assert {r["method"] for r in rows} == {"torch.sparse", "fastgl", "es_spmm"}
    assert {(r["strategy"], r["width"]) for r in rows if r["method"] == "es_spmm"} == {
        (s, w) for s in ("bucket", "fastrand") for w in (2, 8)
    }
    assert all(r["median_s"] > 0 and 0 < r["sampling_rate"] <= 1 for r in rows)
    rates = {r["width"]: r["sampling_rate"] for r in rows if r["method"] == "es_spmm"}
    assert rates[2] < rates[8]
    cora = es_spmm.DEFAULT_DATA_DIR / es_spmm.PLANETOID / "ind.cora.graph"
    # Per model: exact, then bucket and fastrand at width 2 (nothing when the data is absent).
    assert len(written["accuracy"]) == (6 if cora.exists() else 0)
    for row in written["accuracy"]:
        assert row["dataset"] == "cora" and 0 <= row["test_acc"] <= 1


def test_dgl_sampler_benchmark_runs_and_writes_json(tmp_path):
    # Without DGL (as in this environment) it measures the PyG drop-in instead and says so;
    # tests/with_dgl runs the DGL rows.
    from benchmarks import dgl_sampler

    out = tmp_path / "dgl_sampler.json"
    payload = dgl_sampler.main(
        [
            "--graphs",
            "rmat-tiny",
            "--batches",
            "2",
            "--batch-size",
            "32",
            "--repeat",
            "1",
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "dgl_sampler" and "git_commit" in written["environment"]
    samplers = {row["sampler"] for row in payload["rows"]}
    if written["environment"]["dgl"] == "not installed":
        assert samplers == {"pyg-dropin-cpu"} and written["skipped"][0]["rows"] == "dgl"
    else:
        assert samplers == {"dgl", "fastgl-dgl", "fastgl", "torch"}
    assert all(row["batches_per_s"] > 0 and row["edges_per_batch"] > 0 for row in written["rows"])


def test_dgl_sampler_benchmark_hetero_rows(tmp_path):
    # The heterogeneous graph: DGL's sampler against the drop-in where DGL is installed, else
    # fastgl's layer-wise heterogeneous sampler (the drop-in's draws) on the CPU.
    from benchmarks import dgl_sampler

    payload = dgl_sampler.main(
        [
            "--graphs",
            "hetero-tiny",
            "--batches",
            "2",
            "--batch-size",
            "32",
            "--repeat",
            "1",
            "--thread-counts",
            "1",
            "--out",
            str(tmp_path / "dgl_sampler.json"),
        ]
    )
    samplers = {row["sampler"] for row in payload["rows"]}
    if payload["environment"]["dgl"] == "not installed":
        assert samplers == {"fastgl-layerwise-cpu"}
    else:
        assert samplers == {"dgl", "fastgl-dgl", "fastgl"}
    assert all(row["edges_per_batch"] > 0 for row in payload["rows"])
    assert payload["graphs"]["hetero-tiny"]["seed_type"] == "user"


def test_layer_sampling_benchmark_runs_and_writes_json(tmp_path):
    from benchmarks import layer_sampling

    out = tmp_path / "layer_sampling.json"
    payload = layer_sampling.main(
        [
            "--graphs",
            "tiny",
            "--settings",
            "nextdoor",
            "--repeat",
            "1",
            "--window",
            "2",
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "layer_sampling" and "git_commit" in written["environment"]
    assert written["graphs"]["tiny"]["num_nodes"] == 1000
    rows = {(row["sampler"], row["method"]): row for row in payload["rows"]}
    assert set(rows) == {
        (s, m) for s in ("fastgcn", "ladies", "layer") for m in layer_sampling.METHODS
    }
    assert all(row["samples_per_s"] > 0 and row["edges_per_sample"] > 0 for row in rows.values())
    assert all(rows[(s, "torch")]["vs_torch"] == 1.0 for s in ("fastgcn", "ladies", "layer"))
    assert rows[("ladies", "fastgl-batched")]["samples_per_call"] == 2


def test_walks_benchmark_runs_and_writes_json(tmp_path):
    # Without DGL (as in this environment) the rows are fastgl's two schedules and the PyTorch
    # walker, the baseline; tests/with_dgl runs the DGL rows.
    from benchmarks import walks

    out = tmp_path / "walks.json"
    payload = walks.main(
        [
            "--graphs",
            "rmat-tiny",
            "--walks",
            "300",
            "--length",
            "10",
            "--repeat",
            "1",
            "--thread-counts",
            "1",
            "2",
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "walks" and "git_commit" in written["environment"]
    assert written["graphs"]["rmat-tiny"]["num_edges"] == 10_000
    rows = {(r["algorithm"], r["walker"], r["threads"]): r for r in payload["rows"]}
    walkers = {"fastgl-sample", "fastgl-transit", "torch"}
    if written["environment"]["dgl"] != "not installed":
        walkers |= {"dgl", "fastgl-dgl"}
    assert set(rows) == {(a, w, t) for a in walks.ALGORITHMS for w in walkers for t in (1, 2)}
    check_walk_rows(rows)
    sample, transit = rows["node2vec", "fastgl-sample", 2], rows["node2vec", "fastgl-transit", 2]
    assert transit["transit_vs_sample"] == transit["steps_per_s"] / sample["steps_per_s"]
    assert sample["speedup_vs_1_thread"] == (
        sample["steps_per_s"] / rows["node2vec", "fastgl-sample", 1]["steps_per_s"]
    )
    baseline = "dgl" if "dgl" in walkers else "torch"
    assert all(r["baseline"] == baseline for r in payload["rows"])


def test_walks_number_the_edges_by_source_for_both_libraries():
    """``--edge-ids source-order``: the same edges, numbered by (source, target), so a walk's
    edge id is its out-CSR slot (no id array) and names the same edge DGL's sorted graph
    numbers so."""
    from benchmarks.walks import numbered_by_source

    edge_index = torch.randint(0, 30, (2, 200), generator=torch.Generator().manual_seed(3))
    given = CSCGraph.from_edge_index(edge_index, num_nodes=30)
    renumbered = numbered_by_source(given)
    assert given.out_csr().eid is not None and renumbered.out_csr().eid is None
    src, dst = renumbered.src_index(), renumbered.dst_index()
    order = torch.argsort(renumbered.edge_ids())
    keys = src[order] * 30 + dst[order]
    assert bool((keys[1:] >= keys[:-1]).all())
    assert torch.equal(keys, torch.sort(edge_index[0] * 30 + edge_index[1]).values)


def check_walk_rows(rows: dict) -> None:
    """Equal work: on the undirected R-MAT a walk that moves once never stops, so DeepWalk and
    node2vec take the same steps in every walker (starts at isolated nodes take none); PPR's
    walks end early."""
    full = rows["deepwalk", "torch", 1]["steps"]
    for (algorithm, _, _), row in rows.items():
        assert row["steps_per_s"] == row["steps"] / row["median_s"]
        if algorithm == "ppr":
            assert 0 < row["steps"] < full
        else:
            assert row["steps"] == full


def test_subgraph_benchmark_runs_and_writes_json(tmp_path):
    from benchmarks import subgraph

    out = tmp_path / "subgraph.json"
    payload = subgraph.main(
        "--graphs rmat-tiny --frontier-size 20 --budgets 40 80 --subgraphs 3 --repeat 1 "
        "--node-budget 30 --edge-budget 10 --walk-roots 8 --walk-length 2 "
        f"--thread-counts 1 2 --max-entries 5 --out {out}".split()
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "subgraph" and "git_commit" in written["environment"]
    # GraphSAINT's modes: fastgl's alone without DGL, each subgraph within its budget.
    saint = {(r["mode"], r["threads"]): r for r in payload["saint_rows"]}
    assert set(saint) == {(m, t) for m in subgraph.MODES for t in (1, 2)}
    most = {"node": 30, "edge": 20, "walk": 8 * 3}
    for (mode, _), row in saint.items():
        assert row["sampler"] == "fastgl" and row["vs_dgl"] is None
        assert row["subgraphs_per_s"] == 3 / row["median_s"]
        assert 3 <= row["vertices"] <= 3 * most[mode]
    rows = {(r["budget"], r["pop"], r["threads"]): r for r in payload["rows"]}
    assert set(rows) == {(b, p, t) for b in (40, 80) for p in subgraph.POPS for t in (1, 2)}
    for (budget, pop, threads), row in rows.items():
        assert row["device"] == "cpu"
        assert row["subgraphs_per_s"] == 3 / row["median_s"]
        assert 3 * 20 <= row["vertices"] <= 3 * budget
        scan = rows[budget, "scan", threads]["subgraphs_per_s"]
        assert row["vs_scan"] == row["subgraphs_per_s"] / scan
        one = rows[budget, pop, 1]["subgraphs_per_s"]
        assert row["speedup_vs_1_thread"] == (
            None if threads == 1 else row["subgraphs_per_s"] / one
        )


def test_id_map_benchmark_checks_and_writes_json(tmp_path):
    from benchmarks import id_map

    out = tmp_path / "id_map.json"
    id_map.main(["--preset", "tiny", "--batch-sizes", "64", "--repeat", "1", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["benchmark"] == "id_map" and "git_commit" in written["environment"]
    rows = written["rows"]
    assert {r["method"] for r in rows} == set(id_map.METHODS)
    assert all(r["ids"] > 0 and r["median_s"] > 0 for r in rows)
    baseline = [r for r in rows if r["method"] == "torch.unique ordered"]
    assert baseline and all(r["vs_ordered"] == 1.0 for r in baseline)


def test_results_record_paths_relative_to_the_checkout(tmp_path):
    """A result names no folder of the machine it ran on: paths in the checkout and in the data
    folder beside it are written relative to it, others as their file name; other values are
    kept, and so is the caller's payload."""
    from benchmarks import harness

    root = harness.REPO_ROOT
    outside = root.parent / "elsewhere" / "run.json"
    args = {
        "data_dir": str(root.parent / "shared" / "data"),
        "out": str(root / "benchmarks" / "results" / "x.json"),
        "elsewhere": str(outside),
        "relative": "a/b",
        "seed": 0,
    }
    payload = {"args": args, "rows": ["/kept/as/is"]}
    path = harness.write_json(payload, tmp_path / "r.json")
    assert payload["args"] is args and args["out"].startswith(str(root))
    written = json.loads(path.read_text())
    assert written["args"] == {
        "data_dir": "../shared/data",
        "out": "benchmarks/results/x.json",
        "elsewhere": "run.json",
        "relative": "a/b",
        "seed": 0,
    }
    assert written["rows"] == ["/kept/as/is"]


def test_the_ordered_torch_relabel_is_id_maps_contract():
    from benchmarks.id_map import torch_ordered_relabel

    nodes, local = torch_ordered_relabel(torch.tensor([5, 3]), torch.tensor([3, 7, 7, 9, 5, 9]))
    assert nodes.tolist() == [5, 3, 7, 9]  # the prefix, then new ids in first-occurrence order
    assert local.tolist() == [1, 2, 2, 3, 0, 3]


def test_sync_counter_reads_warnings_printed_by_cpp(capfd, monkeypatch):
    """count_syncs counts the warnings that reach Python and those printed to stderr (file
    descriptor 2, as PyTorch's C++ handler does where no Python handler is active)."""
    import os
    import warnings

    from benchmarks import device_counts

    printed = f"[W] Warning: {device_counts.SYNC_WARNING} (function warn_or_error_on_sync)\n"

    def warns_twice_from_python_and_once_on_stderr():
        warnings.warn(device_counts.SYNC_WARNING, stacklevel=1)
        warnings.warn(device_counts.SYNC_WARNING, stacklevel=1)  # again: counted, not deduplicated
        os.write(2, printed.encode())

    # Without a GPU the debug mode and the synchronization count_syncs makes are no-ops here.
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", lambda mode: None)
    assert device_counts.count_syncs(warns_twice_from_python_and_once_on_stderr) == 3
    os.write(2, b"stderr is back\n")
    err = capfd.readouterr().err
    # Only the warm-up call's line reached the real stderr, and it is restored afterwards.
    assert err.count(device_counts.SYNC_WARNING) == 1 and err.endswith("stderr is back\n")


def test_device_events_split_into_kernels_and_copies():
    from benchmarks.device_counts import split_device_events

    names = [
        "void fastgl::sampling::run_stage_kernel<DrawAndInsert>(long, DrawAndInsert)",
        "Memcpy HtoD (Pinned -> Device)",
        "Memset (Device)",
        "void cub::DeviceScanKernel<long>",
        "Memcpy DtoH (Device -> Pinned)",
    ]
    assert split_device_events(names) == {"kernels": 2, "copies": 3}
    assert split_device_events([]) == {"kernels": 0, "copies": 0}


def test_sync_benchmark_heterogeneous_cases_run_and_agree():
    """The syncs benchmark's heterogeneous (the graph split in two node types) and temporal
    cases run on any device, and the engine and the composed hops it compares draw the same
    sample."""
    from argparse import Namespace

    from benchmarks.syncs import engine_cases, two_type_graph
    from fastgl.data.rmat import rmat_graph

    graph = rmat_graph("tiny", seed=0)
    hetero = two_type_graph(graph)
    assert sum(hetero.num_nodes.values()) == graph.num_nodes
    assert sum(hetero[e].indices.numel() for e in hetero.edge_types) == graph.indices.numel()
    args = Namespace(fanouts=[4, 2], batch_size=64, seed=3)
    cases = engine_cases(graph, args)
    (_, _, hops, engine), (_, _, _, composed) = cases[:2]
    got, expected = engine(), composed()
    assert hops == 2 and got.num_sampled_edges == expected.num_sampled_edges
    assert sum(map(sum, got.num_sampled_edges.values())) > 0
    for etype in hetero.edge_types:
        assert torch.equal(got.row[etype], expected.row[etype])
    (op, _, _, engine), (_, _, _, composed) = cases[2:]
    got, expected = engine(), composed()
    assert op.startswith("temporal") and sum(got.num_sampled_edges) > 0
    assert torch.equal(got.row, expected.row) and torch.equal(got.nodes, expected.nodes)
