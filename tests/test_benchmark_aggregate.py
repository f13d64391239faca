"""The aggregation benchmark still runs end to end (tiny graphs; no timing is asserted)."""

import gzip
import json

import torch

from benchmarks import aggregate


def _write_snap(root, text):
    folder = root / "snap_soc-Slashdot0902"
    folder.mkdir(parents=True)
    with gzip.open(folder / "soc-Slashdot0902.txt.gz", "wt") as out:
        out.write(text)


def test_aggregate_benchmark_runs_and_writes_json(tmp_path):
    # A stand-in for the SNAP file: comment lines, non-contiguous ids, a self loop.
    _write_snap(
        tmp_path,
        "# Directed graph\n# FromNodeId\tToNodeId\n10\t20\n20\t30\n30\t10\n20\t10\n30\t30\n",
    )
    out = tmp_path / "aggregate.json"
    payload = aggregate.main(
        [
            "--preset",
            "tiny",
            "--whole-preset",
            "tiny",
            "--dims",
            "8",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--batch-size",
            "64",
            "--weight-grad",
            "--data-dir",
            str(tmp_path),
            "--out",
            str(out),
        ]
    )
    written = json.loads(out.read_text())
    assert written["benchmark"] == "aggregate"
    for key in ("device_name", "torch", "torch_geometric", "git_commit", "torch_threads"):
        assert key in written["environment"]
    assert {case["case"] for case in written["cases"]} == {"blocks", "rmat", "slashdot"}
    seen = {(r["case"], r["pass"], r["method"]) for r in written["rows"]}
    for case in ("blocks", "rmat", "slashdot"):
        for pass_name in ("forward", "forward+backward"):
            for method in ("fastgl", "torch.sparse", "pyg"):
                assert (case, pass_name, method) in seen
    assert all(r["gflops"] > 0 and r["skipped"] is None for r in payload["rows"])
    fastgl_rows = [r for r in payload["rows"] if r["method"] == "fastgl"]
    assert all(r["vs_torch_sparse"] > 0 and r["vs_pyg"] > 0 for r in fastgl_rows)


def test_missing_data_and_memory_budget_are_skipped_with_a_reason(tmp_path):
    payload = aggregate.main(
        [
            "--preset",
            "tiny",
            "--cases",
            "slashdot",
            "rmat",
            "--whole-preset",
            "tiny",
            "--dims",
            "4",
            "--repeat",
            "1",
            "--passes",
            "forward",
            "--memory-budget-gb",
            "1e-9",
            "--data-dir",
            str(tmp_path / "absent"),
            "--out",
            str(tmp_path / "aggregate.json"),
        ]
    )
    assert payload["skipped_cases"][0]["case"] == "slashdot"
    assert "not found" in payload["skipped_cases"][0]["reason"]
    assert payload["rows"] and all("memory budget" in r["skipped"] for r in payload["rows"])


def test_read_snap_edge_list_relabels_ids(tmp_path):
    _write_snap(tmp_path, "# c\n5\t9\n9\t7\n")
    edges, num_nodes = aggregate.read_snap_edge_list(
        tmp_path / "snap_soc-Slashdot0902" / "soc-Slashdot0902.txt.gz"
    )
    assert num_nodes == 3
    assert torch.equal(edges, torch.tensor([[0, 2], [2, 1]]))


def test_torch_sparse_baseline_layouts_agree():
    """Both torch.sparse layouts and PyG compute what fastgl does on a block whose edges are not
    sorted by destination (CSR then permutes the weights) and repeat an entry (0 -> 1)."""
    from fastgl import Block

    src, dst = torch.tensor([0, 2, 1, 3, 0, 3, 0]), torch.tensor([1, 0, 1, 2, 0, 1, 1])
    block = Block(
        src=src,
        dst=dst,
        eid=torch.arange(7),
        src_nodes=torch.arange(4),
        num_src_nodes=4,
        num_dst_nodes=3,
    )
    structure = aggregate.Structure("b", block, src, dst, 4, 3, {"source": "test"})
    assert structure.csr_perm is not None and structure.has_repeated_entries
    x, w = torch.randn(4, 5), torch.rand(7)
    methods = aggregate.make_methods(structure)
    expected = methods["fastgl"](x, w)
    for name in ("torch.sparse/csr", "torch.sparse/coo", "pyg"):
        torch.testing.assert_close(methods[name](x, w), expected)
