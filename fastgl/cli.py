"""The ``fastgl`` command line: ``fastgl info``, ``fastgl train`` and ``fastgl embed``."""

import argparse
import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from .embed import EMBED_DEFAULTS, check_embed_settings
from .train import (
    DEFAULT_FANOUTS,
    MODEL_DEFAULTS,
    MODEL_OPTIONS,
    SAMPLERS,
    check_settings,
    default_fanouts,
    model_settings,
)


def info_lines() -> list[str]:
    """What this installation of fastgl can do, one ``key: value`` per line."""
    from . import _C, __version__

    backends = "cpu, cuda" if _C.with_cuda else "cpu"
    gpu = "none visible"
    if torch.cuda.is_available():
        gpu = f"{torch.cuda.device_count()} visible ({torch.cuda.get_device_name(0)})"
    return [
        f"fastgl: {__version__}",
        f"torch: {torch.__version__}",
        f"compiled backends: {backends}",
        f"CUDA archs: {_C.cuda_archs or 'none (built without CUDA)'}",
        f"CPU kernels: {', '.join(_C.cpu_isas)} (built by {_C.compiler}; the best the CPU runs "
        f"is picked at load)",
        f"threads: {torch.get_num_threads()}",
        f"GPU: {gpu}",
    ]


DATASETS = ("synthetic", "planetoid", "ogb", "npz", "rmat")
FEATURE_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}


_MODEL_OPTION_HELP = {
    "hidden": "hidden channels per layer, split between the heads for gat",
    "heads": "attention heads of gat",
    "lr": "Adam learning rate",
    "dropout": "dropout probability",
    "weight_decay": "Adam weight decay",
}
# The embedded graph as `fastgl train` uses it by default: 5 % of the nodes labelled for training
# and noisier features than the generator's defaults, so that the learning curve shows learning
# (with 60 % labelled, one epoch of 118 batches already reaches 0.97 validation accuracy).
DEMO_TASK = {"feature_noise": 8.0, "split": (0.05, 0.05)}


def _per_model_defaults(option: str) -> str:
    """An option's default by model, for ``--help``: ``"64 for sage, gin and gat, 16 for gcn"``,
    or the one value every model that has the option shares."""
    models_by_value: dict[float, list[str]] = {}
    for model, values in MODEL_DEFAULTS.items():
        if option in values:
            models_by_value.setdefault(values[option], []).append(model)
    if len(models_by_value) == 1:
        return f"{next(iter(models_by_value)):g}"
    return ", ".join(
        f"{value:g} for {' and '.join(', '.join(models).rsplit(', ', 1))}"
        for value, models in models_by_value.items()
    )


def resolve_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the options left unset (``None``) with the model's and the dataset's defaults, and
    check them, before any data is loaded."""
    settings = {option: getattr(args, option) for option in MODEL_OPTIONS}
    vars(args).update(model_settings(args.model, **settings))
    if args.epochs is None:
        args.epochs = 200 if args.dataset == "planetoid" else 10
    if args.fanouts is None:
        args.fanouts = default_fanouts(args.sampler)
    check_settings(
        "",  # main() names the command
        args.model,
        args.fanouts,
        args.batch_size,
        args.epochs,
        args.hidden,
        args.heads,
        args.dropout,
        sampler=args.sampler,
    )
    return args


class _DefaultsShown(argparse.HelpFormatter):
    """``--help`` gives every option's default, except where there is none (``None``, an off
    flag) or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        no_default = action.default is None or action.default is False
        if no_default or action.default == argparse.SUPPRESS or "default" in text:
            return text
        return f"{text} (default: %(default)s)".lstrip()


def _add_data_arguments(parser: argparse.ArgumentParser, num_nodes: int) -> None:
    """``--dataset`` and what it reads or generates, as :func:`dataset_recipe` takes them;
    ``num_nodes``: the synthetic graph's default size."""
    data = parser.add_argument_group("data")
    data.add_argument(
        "--dataset",
        choices=DATASETS,
        default="synthetic",
        help="synthetic: the embedded generated graph (default); planetoid: raw "
        "Planetoid files in --root; ogb: an OGB node-property directory "
        "(raw/*.csv.gz, split/<scheme>/) at --root; npz: the file --root; "
        "rmat: an R-MAT graph with class-correlated features (--rmat-preset)",
    )
    data.add_argument("--root", help="planetoid/ogb directory or npz file")
    data.add_argument("--name", default="cora", help="planetoid dataset: cora, citeseer or pubmed")
    data.add_argument("--split-scheme", help="ogb split folder (default: the only one)")
    data.add_argument(
        "--num-nodes",
        type=int,
        default=num_nodes,
        help="size of the synthetic graph",
    )
    data.add_argument(
        "--rmat-preset",
        default="small",
        help="rmat size: tiny, small (100k nodes) or products (2.45M nodes, 123.7M edges)",
    )
    data.add_argument("--num-features", type=int, default=100, help="rmat feature dimension")
    data.add_argument(
        "--normalize-features",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="row-normalize Planetoid features, as Kipf & Welling and PyG's examples train Cora",
    )


def _add_output_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Where a run's files go, and whether it shows progress bars; returns the group."""
    output = parser.add_argument_group("output")
    output.add_argument(
        "--out-dir",
        metavar="DIR",
        help="where log.json, summary.json and figure.png go (default runs/<timestamp>)",
    )
    output.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    output.add_argument("--summary-json", metavar="PATH", help="also write the summary here")
    return output


def _add_train_arguments(parser: argparse.ArgumentParser) -> None:
    _add_data_arguments(parser, num_nodes=100_000)
    model = parser.add_argument_group(
        "model and optimization",
        "The defaults are each model's paper setup on Cora, on every dataset.",
    )
    model.add_argument(
        "--model",
        choices=["sage", "gcn", "gin", "gat"],
        default="sage",
        help="GNN from fastgl.nn.models",
    )
    model.add_argument(
        "--sampler",
        choices=SAMPLERS,
        default="neighbor",
        help="neighbor: a fanout per node at each hop; layer (uniform over the layer's "
        "neighborhood), fastgcn and ladies: layer-wise importance sampling, a number of vertices "
        "per layer, for --model gcn (evaluated with the exact GCN); frontier, saint-node, "
        "saint-edge, saint-rw, cluster (ClusterGCN: METIS clusters): graph-sampling training, "
        "GCN on whole sampled subgraphs of about --batch-size vertices with GraphSAINT's "
        "normalization (--model gcn, exact evaluation)",
    )
    model.add_argument(
        "--fanouts",
        type=int,
        nargs="+",
        help="per hop, seeds outward (-1 = all), one hop per layer: neighbors per node for the "
        f"neighbor sampler (default: {' '.join(map(str, DEFAULT_FANOUTS['neighbor']))}), "
        "vertices per layer for the layer-wise ones (default: "
        f"{' '.join(map(str, DEFAULT_FANOUTS['fastgcn']))}), -1 per layer for the subgraph ones",
    )
    model.add_argument(
        "--batch-size",
        type=int,
        default=512,
        help="seed nodes per mini-batch (vertices per subgraph for the subgraph samplers)",
    )
    model.add_argument(
        "--epochs",
        type=int,
        help="passes over the training nodes (default: 200 on planetoid, as the papers train "
        "Cora, else 10)",
    )
    for option, text in _MODEL_OPTION_HELP.items():
        model.add_argument(
            f"--{option.replace('_', '-')}",
            type=int if option in ("hidden", "heads") else float,
            help=f"{text} (default: {_per_model_defaults(option)})",
        )
    model.add_argument(
        "--seed", type=int, default=0, help="seed of the data, the model and the sampling"
    )
    pipeline = parser.add_argument_group("pipeline")
    pipeline.add_argument("--device", default="cpu", help="cpu or cuda")
    pipeline.add_argument(
        "--reorder",
        type=int,
        default=8,
        metavar="N",
        help="sample N batches at once and reorder them by match degree (1 = sampling order)",
    )
    pipeline.add_argument(
        "--no-match",
        action="store_true",
        help="load every feature row (no reuse from the previous batch)",
    )
    pipeline.add_argument(
        "--cache-budget",
        default=None,
        metavar="SIZE",
        help="device memory for a hot-node feature cache: bytes with a unit "
        "(512MB, 2GiB), a fraction of the nodes (0.1), or 'all' (default: no cache)",
    )
    pipeline.add_argument(
        "--transfer",
        choices=["copy", "uva"],
        default="copy",
        help="host-to-device loading: pinned staging + async copy, or zero-copy gather by the GPU",
    )
    pipeline.add_argument(
        "--feature-dtype",
        choices=sorted(FEATURE_DTYPES),
        default=None,
        help="store features as this dtype (default: the dataset's)",
    )
    pipeline.add_argument(
        "--no-prefetch", action="store_true", help="load each batch only when it is needed"
    )
    _add_output_arguments(parser).add_argument(
        "--phases-per-epoch",
        action="store_true",
        help="end with the phase table of every epoch, not only the mean",
    )


def parse_cache_budget(text: str | None) -> int | float | str | None:
    """``None``, ``"all"``, a fraction (``"0.1"``) or a byte size (``"512MB"``, ``"2GiB"``)."""
    if text is None or text == "all":
        return text
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _SIZE_UNITS:
        raise ValueError(
            f"--cache-budget: expected a size like 512MB or 2GiB, a fraction like "
            f"0.1, or 'all'; got {text!r}"
        )
    value = float(match.group(1))
    if not unit and "." in match.group(1):
        if value > 1:
            raise ValueError(f"--cache-budget: a fraction must be at most 1, got {text!r}")
        return value
    return int(value * _SIZE_UNITS[unit])


def dataset_recipe(args: argparse.Namespace) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The :mod:`fastgl.data` function that makes ``--dataset`` and its arguments (the run's
    config records both, so that a run's logs say which task it trained)."""
    from . import data

    if args.dataset in ("planetoid", "ogb", "npz") and not args.root:
        raise ValueError(
            f"--dataset {args.dataset} needs --root (the "
            f"{'file' if args.dataset == 'npz' else 'directory'} to read)"
        )
    if args.dataset == "planetoid":
        planetoid = {"name": args.name, "normalize_features": args.normalize_features}
        return data.read_planetoid, {"root": args.root, **planetoid}
    if args.dataset == "ogb":
        return data.read_ogb_node_dir, {"root": args.root, "scheme": args.split_scheme}
    if args.dataset == "npz":
        return data.read_npz, {"path": args.root}
    if args.dataset == "rmat":
        rmat = {"num_features": args.num_features, "seed": args.seed}
        return data.rmat_node_classification, {"preset": args.rmat_preset, **rmat}
    synthetic = {"num_nodes": args.num_nodes, "seed": args.seed}
    return data.synthetic_node_classification, {**synthetic, **DEMO_TASK}


def describe(dataset) -> str:
    """Two short lines: the graph, and how its nodes are split."""
    return (
        f"{dataset.name}: {dataset.num_nodes:,} nodes, {dataset.num_edges:,} edges, "
        f"{dataset.num_features} features, {dataset.num_classes} classes\n"
        f"training on {dataset.train_idx.numel():,} nodes, validating on "
        f"{dataset.val_idx.numel():,}, testing on {dataset.test_idx.numel():,}"
    )


def check_device(text: str) -> torch.device:
    """``--device`` as a device this build of fastgl and this machine can run on, or a
    ``ValueError`` that says which of the two is missing."""
    from . import _C

    try:
        device = torch.device(text)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device: expected cpu, cuda or cuda:N, got {text!r}")
    if device.type == "cuda" and not _C.with_cuda:
        raise ValueError(
            f"--device {text}: this fastgl was built without CUDA kernels (see `fastgl info`); "
            "rebuild with FORCE_CUDA=1 on a machine with the CUDA toolkit, or use --device cpu"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {text}: torch sees no GPU on this machine; use --device cpu")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise ValueError(
            f"--device {text}: this machine has {torch.cuda.device_count()} GPU(s), "
            f"numbered from cuda:0"
        )
    return device


def check_optional_dependencies(dataset: str) -> None:
    """A ``ValueError`` when the dataset needs a package that is missing (the Planetoid files
    are scipy pickles); a note when the figure will be skipped for want of matplotlib."""
    if dataset == "planetoid" and not _importable("scipy.sparse"):
        raise ValueError(
            "--dataset planetoid needs scipy, which is not installed: pip install scipy "
            "(or install fastgl with its data extra)"
        )
    if not _importable("matplotlib"):
        print(
            "note: matplotlib is not installed, so no figure.png will be drawn "
            "(pip install matplotlib)",
            file=sys.stderr,
        )


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _train(args: argparse.Namespace) -> int:
    from .report import phase_table
    from .train import train_node_classifier

    args = resolve_defaults(args)
    cache = parse_cache_budget(args.cache_budget)
    # Before the dataset is built: building it may take minutes.
    check_device(args.device)
    dataset, recipe = _load_dataset(args)
    summary = train_node_classifier(
        dataset,
        model=args.model,
        sampler=args.sampler,
        fanouts=tuple(args.fanouts),
        batch_size=args.batch_size,
        hidden=args.hidden,
        epochs=args.epochs,
        lr=args.lr,
        dropout=args.dropout,
        weight_decay=args.weight_decay,
        heads=args.heads,
        device=args.device,
        seed=args.seed,
        reorder=args.reorder,
        match=not args.no_match,
        cache=cache,
        transfer=args.transfer,
        feature_dtype=FEATURE_DTYPES.get(args.feature_dtype),
        prefetch=not args.no_prefetch,
        progress=not args.no_progress,
    )
    summary["config"]["dataset_args"] = recipe
    print()
    print(phase_table(summary["epochs"], per_epoch=args.phases_per_epoch, config=summary["config"]))
    _write_outputs(args, summary)
    return 0


def _load_dataset(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The dataset ``--dataset`` names, described on stdout, and the recipe that made it (the
    function's name and arguments, for the run's config); ``ValueError`` first when it needs a
    missing package."""
    check_optional_dependencies(args.dataset)
    make_dataset, dataset_args = dataset_recipe(args)
    dataset = make_dataset(**dataset_args)
    print(describe(dataset))
    return dataset, {"function": make_dataset.__name__, **dataset_args}


def _write_outputs(
    args: argparse.Namespace,
    summary: dict[str, Any],
    extra_files: dict[str, Callable[[Path], Any]] | None = None,
) -> None:
    """Write the run's directory (``--out-dir`` or a new ``runs/<timestamp>``): its log,
    summary and figure, then each of ``extra_files`` (name: a function that writes the file at
    the path it is given), and ``--summary-json``; say on stdout what was written where."""
    from .report import default_out_dir, write_json, write_run

    out_dir = args.out_dir or default_out_dir()
    written = write_run(out_dir, summary["epochs"], summary, summary["config"])
    names = ["log.json", "summary.json"] + (["figure.png"] if written["figure"] else [])
    for name, write in (extra_files or {}).items():
        write(written["dir"] / name)
        names.append(name)
    print(f"\nwrote {', '.join(names[:-1])} and {names[-1]} into {written['dir']}")
    if written["note"]:
        print(written["note"])
    if args.summary_json:
        write_json(Path(args.summary_json), summary)


_EMBED_OPTION_HELP = {
    "embedding_dim": "size of each node's embedding",
    "walk_length": "nodes per random walk, the start included",
    "context_size": "nodes per skip-gram window (its first node against the others)",
    "walks_per_node": "walks started from every node per epoch",
    "p": "node2vec return parameter: a step goes back with weight 1/p",
    "q": "node2vec in-out parameter: a step moves away from the previous node with weight 1/q",
    "num_negative_samples": "negative rows per walk",
    "batch_size": "walk start nodes per mini-batch",
    "lr": "SparseAdam learning rate",
}


def _add_embed_arguments(parser: argparse.ArgumentParser) -> None:
    _add_data_arguments(parser, num_nodes=10_000)
    model = parser.add_argument_group(
        "node2vec", "The defaults are PyG's node2vec example on Cora, on every dataset."
    )
    for option, text in _EMBED_OPTION_HELP.items():
        default = EMBED_DEFAULTS[option]
        model.add_argument(
            f"--{option.replace('_', '-')}", type=type(default), default=default, help=text
        )
    model.add_argument(
        "--epochs",
        type=int,
        help=f"passes over every node as a walk start (default: {_EMBED_EPOCHS['planetoid']} "
        f"on planetoid, else {_EMBED_EPOCHS[None]})",
    )
    model.add_argument("--seed", type=int, default=0, help="seed of the data, walks and model")
    model.add_argument("--device", default="cpu", help="where the embeddings train: cpu or cuda")
    _add_output_arguments(parser)


# Epochs by dataset: on Cora, the logistic regression on the embeddings reaches its accuracy
# plateau by then (measured: see docs/usage.md).
_EMBED_EPOCHS = {"planetoid": 5, None: 5}


def _embed(args: argparse.Namespace) -> int:
    from .embed import train_node2vec

    if args.epochs is None:
        args.epochs = _EMBED_EPOCHS.get(args.dataset, _EMBED_EPOCHS[None])
    settings = {option: getattr(args, option) for option in EMBED_DEFAULTS}
    # Before the dataset is built: building it may take minutes.
    check_embed_settings(settings, args.epochs, where="")
    check_device(args.device)
    dataset, recipe = _load_dataset(args)
    model, summary = train_node2vec(
        dataset,
        epochs=args.epochs,
        device=args.device,
        seed=args.seed,
        progress=not args.no_progress,
        **settings,
    )
    summary["config"]["dataset_args"] = recipe
    embeddings = model().detach().cpu()
    _write_outputs(args, summary, {"embeddings.pt": lambda path: torch.save(embeddings, path)})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fastgl", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="version, backends, CUDA archs, threads, GPU")
    train = commands.add_parser(
        "train", help="train a GNN with fastgl's sampler and layers", formatter_class=_DefaultsShown
    )
    _add_train_arguments(train)
    embed = commands.add_parser(
        "embed",
        help="train node2vec embeddings, then a logistic regression on them",
        formatter_class=_DefaultsShown,
    )
    _add_embed_arguments(embed)
    args = parser.parse_args(argv)
    try:
        if args.command == "info":
            print("\n".join(info_lines()))
            return 0
        return _embed(args) if args.command == "embed" else _train(args)
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        print(f"fastgl {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
