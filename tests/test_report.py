"""Tests for fastgl.report: the phase table, the JSON files, the figure and run directories."""

import importlib
import json
import re
import sys
from datetime import datetime

import pytest
import torch

import fastgl.report as report
from fastgl.report import default_out_dir, format_bytes, phase_keys, phase_table, write_run


def make_record(epoch, **overrides):
    """A realistic epoch record; ``overrides`` replace top-level fields."""
    record = {
        "epoch": epoch,
        "loss": 1.5 / epoch,
        "train_acc": 0.6,
        "val_acc": 0.58,
        "time_s": 2.31,
        "eval_s": 0.2,
        "phases": {
            "sample_s": 0.41,
            "idmap_s": 0.22,
            "reorder_s": 0.01,
            "load_s": 0.55,
            "compute_s": 1.02,
            "wait_s": 0.05,
        },
        "bytes_h2d": 123456789,
        "rows_loaded": 1000,
        "rows_reused": 3000,
        "rows_cached": 500,
        "batches": 12,
        "match_degree": 0.71,
    }
    record.update(overrides)
    return record


def table_row(table, label):
    """The line of the table whose first cell is ``label``."""
    for line in table.splitlines():
        if line.split() and line.split()[0] == label:
            return line
    raise AssertionError(f"no row {label!r} in\n{table}")


def test_format_bytes_uses_binary_units():
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(1024) == "1.0 KiB"
    assert format_bytes(123456789) == "117.7 MiB"
    assert format_bytes(3 * 2**30 // 2) == "1.5 GiB"
    assert format_bytes(2**20 - 1) == "1.0 MiB"  # rounds up into the next unit, not "1024.0 KiB"
    assert format_bytes(5 * 2**40) == "5.0 TiB"


def test_phase_table_has_every_epoch_a_mean_row_and_fits_a_terminal():
    records = [make_record(e, time_s=2.0 + e) for e in range(1, 13)]
    table = phase_table(records)
    for e in range(1, 13):
        table_row(table, str(e))
    mean = table_row(table, "mean")
    assert re.search(r"^\s*mean\s+8\.50\s", mean)  # mean of 3.0 .. 14.0
    header = table_row(table, "epoch")
    assert header.split() == [
        "epoch",
        "time_s",
        "sample",
        "idmap",
        "reorder",
        "load",
        "compute",
        "wait",
        "H2D",
        "reused",
        "match",
    ]
    assert max(len(line) for line in table.splitlines()) <= 120


def test_phase_table_percentages_bytes_and_reuse_of_a_hand_made_record():
    record = make_record(
        1,
        time_s=2.0,
        bytes_h2d=3 * 2**20,
        rows_loaded=1000,
        rows_reused=2000,
        rows_cached=1000,
        match_degree=0.5,
        phases={
            "sample_s": 0.5,
            "idmap_s": 0.2,
            "reorder_s": 0.0,
            "load_s": 1.0,
            "compute_s": 1.5,
            "wait_s": 0.1,
        },
    )
    row = table_row(phase_table([record]), "1")
    # sample 25%, idmap 10%, reorder 0%, load 50%, compute 75%, wait 5%; reuse 2000/4000.
    expected = (
        r"2\.00\s+0\.50\s+25%\s+0\.20\s+10%\s+0\.00\s+0%\s+1\.00\s+50%\s+1\.50\s+75%\s+"
        r"0\.10\s+5%\s+3\.0 MiB\s+50%\s+0\.50$"
    )
    assert re.search(expected, row), row
    # Phases sum to 3.3 s of a 2.0 s epoch: overlapped, and the footer says so.
    assert "phases sum to 165% of the epoch time" in phase_table([record])


def test_mean_row_is_ratio_of_means_and_reuse_over_all_rows():
    records = [
        make_record(
            1,
            time_s=1.0,
            phases={"load_s": 0.5},
            bytes_h2d=2048,
            rows_loaded=10,
            rows_reused=0,
            rows_cached=0,
            match_degree=None,
        ),
        make_record(
            2,
            time_s=3.0,
            phases={"load_s": 0.5},
            bytes_h2d=4096,
            rows_loaded=10,
            rows_reused=30,
            rows_cached=0,
            match_degree=0.6,
        ),
    ]
    mean = table_row(phase_table(records), "mean")
    # load 0.5 s of a 2.0 s mean epoch; 3.0 KiB per epoch; 30 of 50 rows reused; match of epoch 2.
    assert re.search(r"2\.00\s+0\.50\s+25%\s+3\.0 KiB\s+60%\s+0\.60$", mean), mean


def test_phase_table_shows_missing_values_as_dashes_and_extra_phases_last():
    records = [
        make_record(
            1,
            match_degree=None,
            bytes_h2d=None,
            rows_cached=None,
            phases={"compute_s": 1.0, "zeta_s": 0.1, "gpu_cache_s": 0.2, "sample_s": 0.3},
        ),
        make_record(2, match_degree=float("nan"), phases={"compute_s": 1.0}),
    ]
    assert phase_keys(records) == ["sample_s", "compute_s", "gpu_cache_s", "zeta_s"]
    table = phase_table(records)
    assert table_row(table, "epoch").split() == [
        "epoch",
        "time_s",
        "sample",
        "compute",
        "gpu_cache",
        "zeta",
        "H2D",
        "reused",
        "match",
    ]
    first = table_row(table, "1").split()
    assert first[-3:] == ["-", "-", "-"]  # no bytes, no cached count, no match degree
    second = table_row(table, "2").split()
    assert second[2] == "-" and second[-1] == "-"  # no sample phase, NaN match degree


def test_phase_table_rejects_no_epochs():
    with pytest.raises(ValueError, match="no epochs"):
        phase_table([])


def strict_json(path):
    """Load ``path`` refusing the NaN/Infinity literals that are not JSON."""

    def refuse(literal):
        raise AssertionError(f"{path.name} has {literal}, which is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_write_run_writes_strict_json_equal_to_the_input(tmp_path):
    records = [
        make_record(1, val_acc=float("nan")),
        make_record(
            2,
            loss=torch.tensor(0.25),
            batches=torch.tensor(12),
            match_degree=None,
            time_s=float("inf"),
        ),
    ]
    summary = {"test_acc": 0.9, "val_acc": float("nan"), "epoch_time_s": 2.31}
    config = {"model": "sage", "fanouts": (10, 5), "device": torch.device("cpu")}
    written = write_run(tmp_path / "a" / "run", records, summary, config)

    assert written["log"] == tmp_path / "a" / "run" / "log.json"
    log = strict_json(written["log"])
    expected = [
        make_record(1, val_acc=None),
        make_record(2, loss=0.25, batches=12, match_degree=None, time_s=None),
    ]
    assert log == {
        "config": {"model": "sage", "fanouts": [10, 5], "device": "cpu"},
        "epochs": expected,
    }
    assert isinstance(log["epochs"][1]["batches"], int)
    assert strict_json(written["summary"]) == {
        "test_acc": 0.9,
        "val_acc": None,
        "epoch_time_s": 2.31,
    }


def test_write_run_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    records = [make_record(e, loss=2.0 / e, val_acc=0.5 + e / 40) for e in range(1, 8)]
    written = write_run(tmp_path, records, {"dataset": "products"}, {"model": "gcn"})
    assert written["note"] is None
    assert written["figure"] == tmp_path / "figure.png"
    assert written["figure"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(written["figure"]).shape[:2]
    assert 400 <= height <= 600 and 1000 <= width <= 1400  # about 10 x 4 inches at 120 dpi


def test_plot_run_copes_with_missing_accuracy_extra_phases_and_many_epochs(tmp_path):
    pytest.importorskip("matplotlib")
    records = [
        make_record(
            e,
            val_acc=None,
            loss=float("nan") if e == 3 else 1.0 / e,
            phases={"compute_s": 1.0, "gpu_cache_s": 0.2},
        )
        for e in range(1, 41)
    ]
    path = report.plot_run(records, tmp_path / "many.png", title="forty epochs")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_png_is_skipped_with_a_note(tmp_path, monkeypatch):
    (tmp_path / "figure.png").write_bytes(b"stale")  # from an earlier write into this directory
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        report.plot_run([make_record(1)], tmp_path / "x.png")

    written = write_run(tmp_path, [make_record(1)], {"test_acc": 0.5}, {})
    assert written["figure"] is None
    assert "figure.png skipped" in written["note"] and "pip install matplotlib" in written["note"]
    assert not (tmp_path / "figure.png").exists()
    assert strict_json(tmp_path / "log.json")["epochs"] == [make_record(1)]
    assert strict_json(tmp_path / "summary.json") == {"test_acc": 0.5}


def test_importing_the_module_does_not_need_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    importlib.reload(report)  # would raise ImportError if report imported matplotlib at the top


def test_write_run_without_epochs_writes_json_and_notes_the_missing_figure(tmp_path):
    written = write_run(tmp_path, [], {}, {"model": "sage"})
    assert written["figure"] is None and "no epochs" in written["note"]
    assert strict_json(written["log"]) == {"config": {"model": "sage"}, "epochs": []}


def test_default_out_dir_is_a_fresh_timestamped_directory(tmp_path):
    now = datetime(2026, 11, 22, 15, 30, 12)
    paths = [default_out_dir(tmp_path / "runs", now=now) for _ in range(3)]
    assert [p.name for p in paths] == ["20261122-153012", "20261122-153012-1", "20261122-153012-2"]
    assert all(p.is_dir() and p.parent == tmp_path / "runs" for p in paths)

    fresh = default_out_dir(tmp_path / "runs")
    assert re.fullmatch(r"\d{8}-\d{6}(-\d+)?", fresh.name) and fresh not in paths
