"""What a training run leaves behind: a phase table, JSON logs and a breakdown figure.

The training loop produces one record (a dict) per epoch::

    {"epoch": 1, "loss": 1.23, "train_acc": 0.61, "val_acc": 0.58, "time_s": 2.31, "eval_s": 0.2,
     "phases": {"sample_s": 0.41, "idmap_s": 0.22, "reorder_s": 0.01, "load_s": 0.55,
                "compute_s": 1.02, "wait_s": 0.05},
     "bytes_h2d": 123456789, "rows_loaded": 1000, "rows_reused": 3000, "rows_cached": 500,
     "batches": 12, "match_degree": 0.71}

The phases are those of FastGL (ASPLOS '24, Figure 3): neighbor sampling, Fused-Map relabeling
(``idmap``), match-degree reordering, loading (feature gather, host-to-device copy, batch
assembly), compute (forward, backward, step) and the time the loop waited for its next batch.
With prefetching, sampling and loading overlap compute, so the phases can sum past the epoch time;
the table and the figure show both so the overlap is visible.

Every field but ``time_s`` (and the phases for the figure) may be missing, ``None`` or NaN; it is
then shown as ``-``. matplotlib is only needed for :func:`plot_run`, and is imported there.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from fastgl.loader.stats import PHASES  # known phases in pipeline order; others come after, sorted

Record = Mapping[str, Any]
#: Legend labels for the figure; other phases are labelled by their key without ``_s``.
PHASE_LABELS = {
    "sample_s": "sample",
    "idmap_s": "id map",
    "reorder_s": "reorder",
    "load_s": "load (gather + H2D)",
    "compute_s": "compute",
    "wait_s": "wait",
}
# Fixed colors per phase so that figures from different runs can be compared at a glance.
_PHASE_COLORS = {
    "sample_s": "tab:blue",
    "idmap_s": "tab:orange",
    "reorder_s": "tab:purple",
    "load_s": "tab:red",
    "compute_s": "tab:green",
    "wait_s": "lightgray",
}
_MAX_TABLE_WIDTH = 120


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, one decimal above bytes.

    Example:
        >>> format_bytes(123456789)
        '117.7 MiB'
        >>> format_bytes(512)
        '512 B'
    """
    if abs(n) < 1024:
        return f"{int(n)} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        # Compare the rounded value, so 1048575 B reads "1.0 MiB" rather than "1024.0 KiB".
        if round(abs(value), 1) < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} PiB"


def phase_keys(records: Sequence[Record]) -> list[str]:
    """The phases present in any record: known ones in pipeline order, then the others sorted.

    Example:
        >>> phase_keys([{"phases": {"compute_s": 1.0, "gpu_cache_s": 0.1, "sample_s": 0.5}}])
        ['sample_s', 'compute_s', 'gpu_cache_s']
    """
    present = {key for record in records for key in (record.get("phases") or {})}
    return [k for k in PHASES if k in present] + sorted(present.difference(PHASES))


def phase_table(records: Sequence[Record]) -> str:
    """A fixed-width text table of where each epoch's time went, plus a ``mean`` row.

    Columns: epoch, epoch time (s), each phase as ``seconds percent`` of the epoch time, bytes
    copied host-to-device, reused rows (``rows_reused / (rows_loaded + rows_reused +
    rows_cached)``) and the match degree. The mean row averages seconds and bytes per epoch; its
    percentages are of the mean epoch time and its reuse is over all epochs' rows. With the six
    known phases the table fits in 120 columns.

    Example:
        >>> print(phase_table([{"epoch": 1, "time_s": 2.0, "phases": {"sample_s": 0.5}}]))
        ... # doctest: +NORMALIZE_WHITESPACE
        phases: seconds and % of the epoch time (they overlap when batches are prefetched)
        epoch  time_s    sample  H2D  reused  match
            1    2.00  0.50 25%    -       -      -
         mean    2.00  0.50 25%    -       -      -
        phases sum to 25% of the epoch time (mean)
    """
    if not records:
        raise ValueError("phase_table: no epochs to show")
    phases = phase_keys(records)
    header = [
        "epoch",
        "time_s",
        *(key.removesuffix("_s") for key in phases),
        "H2D",
        "reused",
        "match",
    ]
    mean = _mean_record(records, phases)
    rows = [_table_row(str(r.get("epoch", i + 1)), r, phases) for i, r in enumerate(records)]
    rows.append(_table_row("mean", mean, phases))
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(len(header))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in [header, *rows]]
    caption = "phases: seconds and % of the epoch time (they overlap when batches are prefetched)"
    phase_sum = sum(v for v in mean["phases"].values() if v is not None)
    overlap = f"phases sum to {_percent(phase_sum, mean['time_s'])} of the epoch time (mean)"
    return "\n".join([caption, *lines, overlap])


def plot_run(records: Sequence[Record], path: str | os.PathLike, title: str | None = None) -> Path:
    """Save a two-panel PNG: the learning curve, and per-epoch phase time against epoch time.

    Left: training loss per epoch, with validation accuracy on a second axis when recorded.
    Right: each epoch's phase seconds as stacked bars (as FastGL's Figure 3), with the measured
    epoch time as a black line over each bar; a bar above its line shows how much overlapped.

    Args:
        records: one dict per epoch (see the module docstring); at least one.
        path: the PNG file to write; its directory must exist.
        title: a title over both panels (none by default).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ImportError: matplotlib is not installed (the message says how to install it).

    Example:
        >>> plot_run(records, "runs/20261122-153012/figure.png", title="sage on products")
        ... # doctest: +SKIP
    """
    if not records:
        raise ValueError("plot_run: no epochs to plot")
    try:
        import matplotlib  # noqa: F401  (first, so a blocked matplotlib fails here)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "plot_run needs matplotlib, which is not installed: pip install matplotlib"
        ) from error

    # A bare Figure on an Agg canvas, not pyplot: it needs no display, and it leaves the global
    # backend and figure list of the caller's process (a notebook, say) untouched.
    fig = Figure(figsize=(10, 4), dpi=120)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    epochs = [r.get("epoch", i + 1) for i, r in enumerate(records)]
    _plot_learning_curve(left, epochs, records)
    _plot_phase_bars(right, epochs, records)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)


def write_run(
    out_dir: str | os.PathLike,
    records: Sequence[Record],
    summary: Mapping[str, Any],
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """Write a run's ``log.json``, ``summary.json`` and ``figure.png`` into ``out_dir``.

    ``log.json`` is ``{"config": config, "epochs": records}``; ``summary.json`` is ``summary``.
    The JSON is strict: NaN and infinities become ``null``, numpy and torch scalars (and tensors)
    become Python numbers (and lists), other unknown objects their ``str``. Without matplotlib
    (or without epochs) the figure is skipped, not an error: a finished run's logs matter more.

    Args:
        out_dir: the run's directory; created with its parents if missing.
        records: one dict per epoch (see the module docstring).
        summary: final metrics, written as they are.
        config: the run's settings, written as they are.

    Returns:
        ``{"dir", "log", "summary", "figure", "note"}``: the paths written (``figure`` is ``None``
        when skipped) and ``note``, why the figure was skipped (``None`` otherwise).

    Example:
        >>> written = write_run(default_out_dir(), records, summary, config)  # doctest: +SKIP
        >>> print(written["note"] or f"figure: {written['figure']}")  # doctest: +SKIP
        figure: runs/20261122-153012/figure.png
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {
        "dir": out,
        "log": write_json(out / "log.json", {"config": config, "epochs": list(records)}),
        "summary": write_json(out / "summary.json", summary),
        "figure": None,
        "note": None,
    }
    figure = out / "figure.png"
    try:
        if records:
            written["figure"] = plot_run(records, figure, title=_run_title(summary, config))
        else:
            written["note"] = "figure.png skipped: no epochs to plot"
    except ImportError as error:
        written["note"] = f"figure.png skipped: {error}"
    if written["figure"] is None:
        # A figure left by an earlier write into this directory would not match these logs.
        figure.unlink(missing_ok=True)
    return written


def default_out_dir(base: str | os.PathLike = "runs", now: datetime | None = None) -> Path:
    """Create and return a fresh run directory ``base/<YYYYmmdd-HHMMSS>``.

    The directory is created here (with ``base``) so that the name is reserved: a second call in
    the same second, even from another process, gets ``<timestamp>-1``, then ``-2``, and so on.

    Args:
        base: the parent of all runs.
        now: the time to name the directory by (local time now by default).

    Example:
        >>> default_out_dir()  # doctest: +SKIP
        PosixPath('runs/20261122-153012')
    """
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    Path(base).mkdir(parents=True, exist_ok=True)
    suffix = 0
    while True:
        path = Path(base) / (stamp if suffix == 0 else f"{stamp}-{suffix}")
        try:
            path.mkdir()  # atomic: fails if another call got this name first
            return path
        except FileExistsError:
            suffix += 1


def _number(mapping: Mapping[str, Any] | None, key: str) -> float | None:
    """``mapping[key]`` as a float, or ``None`` when missing, ``None`` or NaN."""
    value = (mapping or {}).get(key)
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _mean(values: list[float | None]) -> float | None:
    """Mean of the values that are not ``None`` (``None`` if there are none)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _mean_record(records: Sequence[Record], phases: list[str]) -> dict[str, Any]:
    """A record of per-epoch means, with row counts summed so the mean row's reuse is over all."""
    mean = {
        key: _mean([_number(r, key) for r in records])
        for key in ("time_s", "bytes_h2d", "match_degree")
    }
    mean["phases"] = {
        key: _mean([_number(r.get("phases"), key) for r in records]) for key in phases
    }
    for key in ("rows_loaded", "rows_reused", "rows_cached"):
        counts = [_number(r, key) for r in records]
        mean[key] = None if None in counts else sum(counts)
    return mean


def _table_row(label: str, record: Record, phases: list[str]) -> list[str]:
    """The cells of one table row."""
    time_s = _number(record, "time_s")
    cells = [label, "-" if time_s is None else f"{time_s:.2f}"]
    for key in phases:
        seconds = _number(record.get("phases"), key)
        cells.append("-" if seconds is None else f"{seconds:.2f} {_percent(seconds, time_s):>4}")
    h2d = _number(record, "bytes_h2d")
    match = _number(record, "match_degree")
    cells += [
        "-" if h2d is None else format_bytes(h2d),
        _reuse(record),
        "-" if match is None else f"{match:.2f}",
    ]
    return cells


def _percent(part: float, whole: float | None) -> str:
    """``part`` as a whole percentage of ``whole``; ``-`` when ``whole`` is unknown or zero."""
    return "-" if not whole else f"{100 * part / whole:.0f}%"


def _reuse(record: Record) -> str:
    """Percentage of the rows a batch needed that came from the previous batch (match reuse)."""
    counts = [_number(record, k) for k in ("rows_loaded", "rows_reused", "rows_cached")]
    if None in counts:
        return "-"
    return _percent(counts[1], sum(counts))


def _run_title(summary: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """``"<model> on <dataset>"`` from whichever of the two the run recorded, else ``None``."""
    model = config.get("model")
    dataset = summary.get("dataset") or config.get("dataset")
    parts = [str(p) for p in (model, dataset) if p]
    return " on ".join(parts) or None


def _plot_learning_curve(ax: Any, epochs: list[Any], records: Sequence[Record]) -> None:
    """Loss per epoch on ``ax``; validation accuracy on a twin axis when any epoch has it."""
    marker = "o" if len(epochs) <= 30 else None  # markers on long runs only blur the line
    nan = float("nan")
    loss = [_number(r, "loss") for r in records]
    handles = ax.plot(
        epochs,
        [nan if v is None else v for v in loss],
        marker=marker,
        color="tab:blue",
        label="training loss",
    )
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss")
    ax.set_title("learning curve")
    ax.xaxis.get_major_locator().set_params(integer=True)
    val_acc = [_number(r, "val_acc") for r in records]
    top = ax
    if any(v is not None for v in val_acc):
        top = ax.twinx()
        handles += top.plot(
            epochs,
            [nan if v is None else v for v in val_acc],
            marker=marker,
            color="tab:orange",
            label="validation accuracy",
        )
        top.set_ylabel("validation accuracy")
    # On the topmost axes, or the twin's line is drawn over it; loss falls and accuracy rises,
    # so the middle of the right edge is usually free.
    top.legend(handles=handles, loc="center right", fontsize="small")


def _plot_phase_bars(ax: Any, epochs: list[Any], records: Sequence[Record]) -> None:
    """Stacked phase seconds per epoch on ``ax``, and the measured epoch time over each bar."""
    positions = list(range(len(records)))
    bottom = [0.0] * len(records)
    for key in phase_keys(records):
        heights = [_number(r.get("phases"), key) or 0.0 for r in records]
        ax.bar(
            positions,
            heights,
            bottom=bottom,
            width=0.7,
            label=PHASE_LABELS.get(key, key.removesuffix("_s")),
            color=_PHASE_COLORS.get(key),
            hatch="//" if key == "wait_s" else None,
            edgecolor="white",
            linewidth=0.5,
        )
        bottom = [b + h for b, h in zip(bottom, heights)]
    times = [_number(r, "time_s") for r in records]
    shown = [(p, t) for p, t in zip(positions, times) if t is not None]
    if shown:
        xs, ts = zip(*shown)
        ax.hlines(
            ts,
            [x - 0.45 for x in xs],
            [x + 0.45 for x in xs],
            colors="black",
            linewidth=2,
            label="epoch time (measured)",
        )
    ax.set_xticks(positions, [str(e) for e in epochs])
    if len(positions) > 20:  # keep about 10 tick labels so they stay readable
        step = math.ceil(len(positions) / 10)
        for i, label in enumerate(ax.get_xticklabels()):
            label.set_visible(i % step == 0)
    ax.set_xlabel("epoch")
    ax.set_ylabel("seconds")
    ax.set_title("time per phase (bars) vs epoch time (line)")
    # Outside the axes, on the right, so the legend never hides a bar.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)


def _jsonable(value: Any) -> Any:
    """``value`` with only JSON types: NaN/inf to None, numpy/torch values to Python ones."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # an int subclass (IntEnum) as a plain int
    if isinstance(value, float):  # numpy.float64 is a float too
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy and torch scalars, arrays and tensors
        return _jsonable(value.tolist())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # Anything else (a torch.device, a dtype) by its name: losing a run's logs to a TypeError
    # at the very end of training would be worse than a string in the config.
    return str(value)


def write_json(path: Path, obj: Any) -> Path:
    """Write ``obj`` as strict, indented JSON to ``path``; return ``path``."""
    text = json.dumps(_jsonable(obj), indent=2, allow_nan=False)
    path.write_text(text + "\n")
    return path
