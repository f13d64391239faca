"""Tests for fastgl.report: the phase table, the JSON files, the figure and run directories."""

import importlib
import json
import re
import sys
from datetime import datetime

import numpy as np
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


CPU_PREFETCH = {"device": "cpu", "prefetch": True, "model": "sage"}
OVERLAP_SENTENCE = "Sampling and loading run in a background thread"


def overlapping_record(epoch):
    """A record whose phases add up to 1.5 times its epoch time, as with prefetching."""
    phases = {"sample_s": 1.0, "load_s": 0.5, "compute_s": 1.2, "wait_s": 0.3}
    return make_record(epoch, time_s=2.0, phases=phases)


def serial_record(epoch):
    """A record whose phases add up to less than its epoch time, as without prefetching."""
    phases = {"sample_s": 0.5, "load_s": 0.4, "compute_s": 1.0, "wait_s": 0.0}
    return make_record(epoch, time_s=2.0, phases=phases)


def noisy_record(epoch):
    """A record whose phases add up to 103% of its epoch time: timer noise, not overlap."""
    phases = {"sample_s": 0.02, "load_s": 0.02, "compute_s": 1.9, "wait_s": 0.12}
    return make_record(epoch, time_s=2.0, phases=phases)


def summary_row(table, label):
    """The line of the summary table that starts with the phase label ``label``."""
    for line in table.splitlines():
        if line.startswith(label + "  "):
            return line
    raise AssertionError(f"no row {label!r} in\n{table}")


def test_phase_table_summary_shows_means_one_row_per_phase():
    records = [make_record(e, time_s=2.0 + e, rows_reused=3000 * (e % 2)) for e in range(1, 5)]
    table = phase_table(records, config={"device": "cpu", "prefetch": False})
    lines = table.splitlines()
    assert lines[0] == "mean of 4 epochs: 4.500 s per training epoch"  # mean of 3.0 .. 6.0
    assert lines[1].split() == ["phase", "seconds", "%", "of", "epoch"]
    # 0.41 s of 4.50 s is 9%; 1.02 s is 23%.
    assert re.fullmatch(r"sample\s+0\.410\s+9%", summary_row(table, "sample"))
    assert re.fullmatch(r"id map\s+0\.220\s+5%", summary_row(table, "id map"))
    assert re.fullmatch(r"load \(gather\)\s+0\.550\s+12%", summary_row(table, "load (gather)"))
    assert re.fullmatch(r"compute\s+1\.020\s+23%", summary_row(table, "compute"))
    wait = summary_row(table, "wait for next batch")
    assert re.fullmatch(r"wait for next batch\s+0\.050\s+1%", wait)
    assert lines[-2] == "features gathered from the feature store: 117.7 MiB per epoch"
    # Over all epochs: 2 * 3000 rows reused of 4 * (1000 loaded + 500 cached) + 6000 rows.
    assert lines[-1] == "rows reused from the previous batch: 50% (match degree 0.71)"
    assert len(lines) == 2 + 6 + 2


def test_phase_table_summary_is_as_long_for_500_epochs_as_for_one():
    one = phase_table([make_record(1)], config=CPU_PREFETCH)
    many = phase_table([make_record(e) for e in range(1, 501)], config=CPU_PREFETCH)
    assert len(many.splitlines()) == len(one.splitlines()) == 10
    assert many.splitlines()[0] == "mean of 500 epochs: 2.310 s per training epoch"
    assert max(len(line) for line in many.splitlines()) <= 100


def test_phase_table_per_epoch_has_every_epoch_a_mean_row_and_fits_a_terminal():
    records = [make_record(e, time_s=2.0 + e) for e in range(1, 13)]
    table = phase_table(records, per_epoch=True)
    epoch_rows = [line for line in table.splitlines() if re.match(r"\s*\d+\s", line)]
    assert [row.split()[0] for row in epoch_rows] == [str(e) for e in range(1, 13)]
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
        "loaded",
        "reused",
        "match",
    ]
    assert max(len(line) for line in table.splitlines()) <= 100


def test_phase_table_per_epoch_percentages_bytes_and_reuse_of_a_hand_made_record():
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
    row = table_row(phase_table([record], per_epoch=True), "1")
    # sample 25%, idmap 10%, reorder 0%, load 50%, compute 75%, wait 5%; reuse 2000/4000.
    expected = (
        r"2\.00\s+0\.50\s+25%\s+0\.20\s+10%\s+0\.00\s+0%\s+1\.00\s+50%\s+1\.50\s+75%\s+"
        r"0\.10\s+5%\s+3\.0 MiB\s+50%\s+0\.50$"
    )
    assert re.search(expected, row), row


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
    mean = table_row(phase_table(records, per_epoch=True), "mean")
    # load 0.5 s of a 2.0 s mean epoch; 3.0 KiB per epoch; 30 of 50 rows reused; match of epoch 2.
    assert re.search(r"2\.00\s+0\.50\s+25%\s+3\.0 KiB\s+60%\s+0\.60$", mean), mean
    summary = phase_table(records).splitlines()
    assert re.fullmatch(r"load\s+0\.500\s+25%", summary[2])
    assert summary[-2:] == [
        "features loaded from the feature store: 3.0 KiB per epoch",
        "rows reused from the previous batch: 60% (match degree 0.60)",
    ]


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
    table = phase_table(records, per_epoch=True)
    assert table_row(table, "epoch").split() == [
        "epoch",
        "time_s",
        "sample",
        "compute",
        "gpu_cache",
        "zeta",
        "loaded",
        "reused",
        "match",
    ]
    first = table_row(table, "1").split()
    assert first[-3:] == ["-", "-", "-"]  # no bytes, no cached count, no match degree
    second = table_row(table, "2").split()
    assert second[2] == "-" and second[-1] == "-"  # no sample phase, NaN match degree
    summary = phase_table(records)
    assert [line.split()[0] for line in summary.splitlines()[2:6]] == [
        "sample",
        "compute",
        "gpu_cache",
        "zeta",
    ]
    assert summary.splitlines()[-1] == "rows reused from the previous batch: - (match degree -)"


@pytest.mark.parametrize("per_epoch", [False, True])
def test_phase_table_names_what_moved_after_the_device(per_epoch):
    records = [make_record(e) for e in range(1, 4)]
    cpu = phase_table(records, per_epoch=per_epoch, config={"device": "cpu"})
    cuda = phase_table(records, per_epoch=per_epoch, config={"device": "cuda:0"})
    neutral = phase_table(records, per_epoch=per_epoch)
    for table in (cpu, cuda, neutral):
        assert "H2D" not in table
    assert "GPU" not in cpu and "GPU" not in neutral
    assert "features gathered from the feature store" in cpu
    assert "features copied from the host to the GPU" in cuda
    if per_epoch:
        assert table_row(cpu, "epoch").split()[-3:] == ["gathered", "reused", "match"]
        assert table_row(cuda, "epoch").split()[-4:] == ["to", "GPU", "reused", "match"]
    else:
        summary_row(cpu, "load (gather)")
        summary_row(cuda, "load (gather + copy to GPU)")
        assert re.fullmatch(r"load\s+0\.550\s+24%", summary_row(neutral, "load"))


@pytest.mark.parametrize("per_epoch", [False, True])
@pytest.mark.parametrize(
    ("make", "config", "explained"),
    [
        (overlapping_record, {"device": "cpu", "prefetch": True}, True),
        (overlapping_record, {"device": "cpu", "prefetch": False}, False),
        (overlapping_record, None, False),  # no config: whether batches were prefetched is unknown
        (serial_record, {"device": "cpu", "prefetch": True}, False),
        (noisy_record, {"device": "cpu", "prefetch": True}, False),
    ],
)
def test_phase_table_explains_overlap_when_and_only_when_it_applies(
    per_epoch, make, config, explained
):
    table = phase_table([make(e) for e in range(1, 4)], per_epoch=per_epoch, config=config)
    assert (OVERLAP_SENTENCE in table) is explained
    assert "sum to" not in table  # the old cryptic footer
    assert max(len(line) for line in table.splitlines()) <= 100
    if explained:
        sentence = " ".join(table.splitlines()[-2:])
        assert sentence.endswith("'wait' is the time compute waited for its next batch.")


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


def curve_records(count, **overrides):
    """``count`` epochs with a falling loss and rising accuracies, phases overlapping."""
    return [
        make_record(
            e,
            loss=2.0 / e,
            train_acc=0.5 + 0.4 * e / count,
            val_acc=0.45 + 0.4 * e / count,
            time_s=2.0,
            phases={
                "sample_s": 1.0,
                "idmap_s": 0.0,
                "reorder_s": 0.1,
                "load_s": 0.5,
                "compute_s": 1.2,
                "wait_s": 0.3,
            },
            **overrides,
        )
        for e in range(1, count + 1)
    ]


def panels(fig):
    """The figure's axes by the first word(s) of their title: loss, accuracy and phases."""
    by_title = {ax.get_title(): ax for ax in fig.get_axes()}
    phases = [t for t in by_title if t.startswith("time per epoch by phase")]
    assert set(by_title) == {"training loss", "accuracy", *phases} and len(phases) == 1, by_title
    return by_title["training loss"], by_title["accuracy"], by_title[phases[0]]


def finite_points(line):
    """How many of ``line``'s points are drawn (finite x and y)."""
    xs, ys = (np.asarray(v, dtype=float) for v in line.get_data())
    return int(np.sum(np.isfinite(xs) & np.isfinite(ys)))


def figure_texts(fig):
    """Every string drawn in ``fig``: titles, labels, tick labels, bar labels and notes."""
    from matplotlib.text import Text

    fig.canvas.draw()  # tick labels are only set when drawn
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


@pytest.mark.parametrize("count", [1, 5, 500])
def test_figure_draws_loss_and_accuracy_each_on_its_own_axes(count):
    pytest.importorskip("matplotlib")
    fig = report.build_figure(curve_records(count), "sage on products", CPU_PREFETCH)
    loss_ax, accuracy_ax, _ = panels(fig)
    assert fig.get_suptitle() == "sage on products"

    (loss,) = loss_ax.get_lines()
    assert finite_points(loss) == count
    assert loss_ax.get_ylabel() == "loss" and loss_ax.get_xlabel() == "epoch"
    train, validation = accuracy_ax.get_lines()
    assert [train.get_label(), validation.get_label()] == ["train", "validation"]
    assert finite_points(train) == finite_points(validation) == count
    assert accuracy_ax.get_ylabel() == "accuracy" and accuracy_ax.get_xlabel() == "epoch"
    low, high = accuracy_ax.get_ylim()
    lowest = min(r["val_acc"] for r in curve_records(count))
    assert 0.0 <= low <= lowest - 0.05 and high == 1.0  # every accuracy is in view, with room
    for line in (loss, train, validation):
        # A marker per epoch on short runs (a single epoch would be invisible); none on long.
        assert line.get_marker() == ("o" if count <= 30 else "None")

    fig.canvas.draw()
    for ax in (loss_ax, accuracy_ax):
        left, right = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if left <= t <= right]
        assert all(float(t).is_integer() for t in ticks), ticks  # whole epochs only
        assert 1 <= len(ticks) <= 12  # no clutter on long runs
        assert left < 1 and right > count  # first and last epoch in view
        if count == 1:
            assert ticks == [1]  # not epochs 0 and 2, which did not run


@pytest.mark.parametrize("count", [1, 5, 500])
def test_figure_phase_panel_shows_mean_seconds_per_phase_and_the_epoch_time(count):
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_rgba

    fig = report.build_figure(curve_records(count), config=CPU_PREFETCH)
    *_, ax = panels(fig)
    assert ax.get_title() == f"time per epoch by phase (mean of {count} epoch{'s' * (count > 1)})"
    assert ax.get_xlabel() == "seconds per epoch"
    names = [label.get_text() for label in ax.get_yticklabels()]
    assert names == [
        "all phases",
        "sample",
        "id map",
        "reorder",
        "load (gather)",
        "compute",
        "wait for next batch",
    ]
    # Six stacked segments (one per phase, in its color) in the first row, then a bar per phase.
    bars = ax.patches
    assert len(bars) == 12
    assert [b.get_width() for b in bars[6:]] == pytest.approx([1.0, 0.0, 0.1, 0.5, 1.2, 0.3])
    assert bars[10].get_facecolor() == to_rgba("tab:green")  # compute keeps its color
    assert bars[5].get_x() + bars[5].get_width() == pytest.approx(3.1)  # the stacked sum
    (epoch_line,) = ax.collections
    assert epoch_line.get_segments()[0][0][0] == pytest.approx(2.0)  # at the mean epoch time
    texts = figure_texts(fig)
    assert "epoch time 2.00 s" in texts
    assert "3.10 s (155%)" in texts and "1.20 s (60%)" in texts


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu")])
def test_figure_for_a_cpu_run_says_nothing_about_a_gpu(device):
    pytest.importorskip("matplotlib")
    fig = report.build_figure(curve_records(5), "sage on products", {"device": device})
    texts = " ".join(figure_texts(fig))
    assert "load (gather)" in texts
    assert "H2D" not in texts and "GPU" not in texts


def test_figure_for_a_gpu_run_names_the_copy():
    pytest.importorskip("matplotlib")
    fig = report.build_figure(curve_records(5), config={"device": "cuda:0", "prefetch": True})
    texts = figure_texts(fig)
    assert "load (gather + copy to GPU)" in texts and "H2D" not in " ".join(texts)


@pytest.mark.parametrize(
    ("make", "config", "explained"),
    [
        (overlapping_record, {"device": "cpu", "prefetch": True}, True),
        (overlapping_record, {"device": "cpu", "prefetch": False}, False),
        (overlapping_record, None, False),
        (serial_record, {"device": "cpu", "prefetch": True}, False),
        (noisy_record, {"device": "cpu", "prefetch": True}, False),
    ],
)
def test_figure_explains_overlap_when_and_only_when_it_applies(make, config, explained):
    pytest.importorskip("matplotlib")
    fig = report.build_figure([make(e) for e in range(1, 4)], config=config)
    notes = [t for t in figure_texts(fig) if t.startswith(OVERLAP_SENTENCE)]
    assert len(notes) == (1 if explained else 0)
    if explained:
        assert " ".join(notes[0].split()) == " ".join(report._OVERLAP_NOTE.split())


@pytest.mark.parametrize("count", [1, 5, 500])
def test_plot_run_saves_a_png_with_the_panels_drawn(tmp_path, count):
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_rgb
    from matplotlib.image import imread

    path = report.plot_run(curve_records(count), tmp_path / "run.png", "sage", CPU_PREFETCH)
    assert path == tmp_path / "run.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = imread(path)[..., :3]
    assert pixels.shape[:2] == (600, 1200)  # 12 x 6 inches at 100 dpi
    not_white = np.any(pixels < 0.95, axis=-1)
    assert 0.03 < not_white.mean() < 0.6  # drawn on, not a single color, not a black box
    for color in ("tab:blue", "tab:orange", "tab:green", "tab:red"):  # curves and bars drawn
        close = np.all(np.abs(pixels - np.array(to_rgb(color))) < 0.02, axis=-1)
        assert close.sum() > 50, color


def test_figure_labels_fast_phases_in_milliseconds():
    pytest.importorskip("matplotlib")
    phases = {"sample_s": 0.0024, "compute_s": 0.1}
    fig = report.build_figure([make_record(1, time_s=0.12, phases=phases)])
    texts = figure_texts(fig)
    assert "2.4 ms (2%)" in texts and "0.10 s (83%)" in texts and "epoch time 0.12 s" in texts


def test_write_run_draws_the_figure_with_the_run_config(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    calls = []
    plot_run = report.plot_run
    monkeypatch.setattr(report, "plot_run", lambda *args: calls.append(args[2:]) or plot_run(*args))
    config = {"model": "gcn", "device": "cpu", "prefetch": True}
    written = write_run(tmp_path, curve_records(7), {"dataset": "products"}, config)
    assert calls == [("gcn on products (cpu)", config)]
    assert written["note"] is None
    assert written["figure"] == tmp_path / "figure.png"
    assert written["figure"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


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
    fig = report.build_figure(records, "forty epochs")
    loss_ax, accuracy_ax, phase_ax = panels(fig)
    assert finite_points(loss_ax.get_lines()[0]) == 39  # a gap at the NaN
    assert [line.get_label() for line in accuracy_ax.get_lines()] == ["train"]
    assert [t.get_text() for t in phase_ax.get_yticklabels()] == [
        "all phases",
        "compute",
        "gpu_cache",
    ]
    path = report.plot_run(records, tmp_path / "many.png", "forty epochs")
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
