"""What every benchmark shares: the environment record, timing, JSON results and tables.

A result file is ``benchmarks/results/<name>-<device tag>.json`` holding the environment (device,
versions, threads, commit, date), the arguments and the measured rows, so a committed number can
always be traced back to the machine and code that produced it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

# The checkout the results belong to. resolve() follows the link `make bench-dgl` puts in its run
# directory; FASTGL_REPO names the checkout where the benchmarks are copied elsewhere.
REPO_ROOT = Path(os.environ.get("FASTGL_REPO") or Path(__file__).resolve().parent.parent)
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"

Device = str | torch.device


def resolve_device(requested: str) -> tuple[torch.device, str | None]:
    """The device to run on and, when it differs from the request, why.

    ``"cuda"`` falls back to the CPU when no GPU is usable; the returned note says so and goes
    into the result file.
    """
    if requested == "cuda":
        if torch.cuda.is_available():
            return torch.device("cuda"), None
        return torch.device("cpu"), "CUDA was requested but is not available; ran on the CPU"
    return torch.device(requested), None


def device_name(device: Device) -> str:
    """The GPU's name for CUDA devices, the CPU model (``/proc/cpuinfo``) otherwise."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_tag(device: Device) -> str:
    """Short file-name tag: ``cpu``, or ``cuda-<gpu>`` such as ``cuda-h100-80gb-hbm3``."""
    device = torch.device(device)
    if device.type != "cuda":
        return device.type
    name = device_name(device).lower().replace("nvidia", "")
    return "cuda-" + (re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "gpu")


def git_commit() -> str:
    """``git rev-parse HEAD`` of the repository, ``"unknown"`` outside a checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def git_dirty() -> bool | None:
    """Whether tracked files other than the results differ from HEAD (``None`` when git is
    unavailable); a run of several benchmarks rewrites results files as it goes."""
    try:
        out = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)benchmarks/results",
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return bool(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None


def environment(device: Device) -> dict[str, Any]:
    """Everything needed to interpret a number: device, versions, threads, commit, date."""
    import fastgl

    device = torch.device(device)
    env = {
        "device": str(device),
        "device_name": device_name(device),
        "cpu_name": device_name("cpu"),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "fastgl": fastgl.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git_commit": git_commit(),
        "git_dirty": git_dirty(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        # Other processes compete for the cores; a loaded machine gives noisy numbers.
        "load_average_1_5_15": load_average(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
        env["gpu_capability"] = f"{props.major}.{props.minor}"
    return env


def start_run(
    name: str, args: Any, extra: dict[str, str] | None = None
) -> tuple[torch.device, str | None, dict]:
    """A benchmark's common start: ``--threads``, the device (with a note when it fell back),
    the environment record (plus ``extra`` entries) and a one-line header; returns
    ``(device, note, environment)``."""
    if getattr(args, "threads", None):
        torch.set_num_threads(args.threads)
    device, note = resolve_device(args.device)
    if note:
        print(f"note: {note}")
    env = dict(environment(device), **(extra or {}))
    versions = "".join(f", {key} {value}" for key, value in (extra or {}).items())
    preset = f", preset {args.preset}" if getattr(args, "preset", None) else ""
    print(
        f"{name} benchmark{preset}: {env['device_name']} ({device}), {env['torch_threads']} "
        f"threads, torch {env['torch']}{versions}, commit {env['git_commit'][:10]}",
        flush=True,
    )
    return device, note, env


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (``None`` where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


@dataclass
class Timing:
    """Wall-clock seconds of the timed calls (warm-up calls excluded)."""

    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)


def synchronize(device: Device) -> None:
    """Waits for queued GPU work; a no-op on the CPU."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_it(
    fn: Callable[[], Any], warmup: int = 1, repeat: int = 5, device: Device = "cpu"
) -> Timing:
    """Runs ``fn`` ``warmup`` times untimed, then ``repeat`` times timed.

    On CUDA the device is synchronized before and after every timed call, so a time covers
    the kernels ``fn`` queued, not just their launch.
    """
    if repeat < 1:
        raise ValueError(f"time_it: repeat must be >= 1, got {repeat}")
    for _ in range(warmup):
        fn()
    timing = Timing()
    for _ in range(repeat):
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        timing.times.append(time.perf_counter() - start)
    return timing


def time_interleaved(
    calls: dict[Any, Callable[[], Any]], repeat: int, warmup: int = 1, device: Device = "cpu"
) -> dict[Any, Timing]:
    """``repeat`` rounds; per round each call gets ``warmup`` untimed runs and one timed run, so
    a burst of load from other processes is spread over all of them instead of landing on one."""
    timings = {key: Timing() for key in calls}
    for _ in range(repeat):
        for key, call in calls.items():
            timings[key].times.append(time_it(call, warmup, 1, device).times[0])
    return timings


def add_thread_speedups(rows: list[dict], keys: Sequence[str], rate: str) -> None:
    """Sets each row's ``speedup_vs_1_thread``: its ``rate`` over the rate of the row with the
    same ``keys`` at one thread (``None`` at one thread, or without such a row)."""
    one = {tuple(r[k] for k in keys): r for r in rows if r["threads"] == 1}
    for row in rows:
        base = one.get(tuple(row[k] for k in keys))
        row["speedup_vs_1_thread"] = (
            row[rate] / base[rate] if base and row["threads"] != 1 else None
        )


def argument_parser(name: str, doc: str) -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks.<name>``: the module docstring's second paragraph
    (its question and method) as the description, every default shown in ``--help``."""
    return argparse.ArgumentParser(
        prog=f"python -m benchmarks.{name}",
        description=doc.split("\n\n")[1],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )


def add_preset_argument(parser: argparse.ArgumentParser, default: str, help: str) -> None:
    """``--preset``: the R-MAT graph (a name of ``fastgl.data.rmat.RMAT_PRESETS``)."""
    from fastgl.data.rmat import RMAT_PRESETS

    parser.add_argument("--preset", choices=sorted(RMAT_PRESETS), default=default, help=help)


def add_threads_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch.set_num_threads before running (default: torch's choice)",
    )


def add_seed_and_out_arguments(
    parser: argparse.ArgumentParser, seed_help: str, default_file: str
) -> None:
    """``--seed`` (what it seeds: ``seed_help``) and ``--out``, the JSON path, by default
    ``benchmarks/results/<default_file>``."""
    parser.add_argument("--seed", type=int, default=0, help=seed_help)
    parser.add_argument(
        "--out", default=None, help=f"JSON path (default: benchmarks/results/{default_file})"
    )


def results_path(name: str, tag: str) -> Path:
    """``benchmarks/results/<name>-<tag>.json``."""
    return RESULTS_DIR / f"{name}-{tag}.json"


def save_results(name: str, payload: dict[str, Any], device: Device, args: Any) -> Path:
    """Records the load average after the run into ``payload["environment"]`` and writes it to
    ``args.out`` or ``benchmarks/results/<name>-<device>[-<preset>][-<threads>t].json``."""
    payload["environment"]["load_average_after"] = load_average()
    tag = device_tag(device)
    if getattr(args, "preset", None):
        tag += f"-{args.preset}"
    if getattr(args, "threads", None):
        tag += f"-{args.threads}t"
    path = write_json(payload, args.out or results_path(name, tag))
    print(f"\nwrote {path}")
    return path


def write_json(payload: dict[str, Any], path: str | Path) -> Path:
    """Writes ``payload`` as indented JSON (creating the folder), its recorded arguments' paths
    made portable (:func:`portable_path`); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(payload)  # the caller's keeps its paths
    for key in ("args", "arguments"):
        if isinstance(payload.get(key), dict):
            payload[key] = {name: portable_path(v) for name, v in payload[key].items()}
    with open(path, "w") as out:
        json.dump(payload, out, indent=2, sort_keys=False)
        out.write("\n")
    return path


def portable_path(value: Any) -> Any:
    """An absolute path as a result file records it: relative to the checkout when it lies in
    the checkout or in the data folder beside it (``../shared/data``), else its file name alone,
    so that a result names no folder of the machine it ran on. Other values are returned as
    they are."""
    if not isinstance(value, str) or not os.path.isabs(value):
        return value
    path = Path(value)
    if path.is_relative_to(REPO_ROOT) or path.is_relative_to(REPO_ROOT.parent / "shared"):
        return os.path.relpath(path, REPO_ROOT)
    return path.name


Column = tuple[str, str, str]  # (row key, header, format spec)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column]) -> str:
    """A plain-text table; numbers right-aligned, ``None`` shown as ``-``."""

    def cell(row, key, spec):
        value = row.get(key)
        if value is None:
            return "-"
        return format(value, spec) if spec else str(value)

    body = [[cell(row, key, spec) for key, _, spec in columns] for row in rows]
    headers = [header for _, header, _ in columns]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]
    numeric = [all(_looks_numeric(r[i]) for r in body) for i in range(len(headers))]

    def line(cells):
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule] + [line(r) for r in body])


def print_table(
    rows: Sequence[dict[str, Any]], columns: Sequence[Column], title: str | None = None
) -> None:
    if title:
        print(f"\n{title}")
    print(format_table(rows, columns))


def _looks_numeric(text: str) -> bool:
    return text == "-" or bool(re.fullmatch(r"[-+]?[\d,._]*\d[\d,._]*(e[-+]?\d+)?x?", text))
