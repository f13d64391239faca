"""The ``fastgl`` command line: ``fastgl info`` and ``fastgl train``."""

import argparse
import json
import sys
from typing import List, Optional

import torch


def info_lines() -> List[str]:
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
        f"threads: {torch.get_num_threads()}",
        f"GPU: {gpu}",
    ]


def _add_train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", choices=["synthetic", "planetoid"], default="synthetic",
                        help="synthetic: the embedded generated graph (default); planetoid: raw "
                             "Planetoid files under --root")
    parser.add_argument("--root", help="directory with the raw files (planetoid: ind.<name>.*)")
    parser.add_argument("--name", default="cora", help="planetoid dataset name (cora, citeseer)")
    parser.add_argument("--num-nodes", type=int, default=100_000,
                        help="size of the synthetic graph (default 100000)")
    parser.add_argument("--model", choices=["sage", "gcn", "gin", "gat"], default="sage",
                        help="GNN from fastgl.nn.models (default sage)")
    parser.add_argument("--normalize-features", action="store_true",
                        help="row-normalize Planetoid features (as Kipf & Welling)")
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10],
                        help="neighbors per hop, seeds outward (-1 = all); one hop per layer")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--heads", type=int, default=4, help="attention heads (gat)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    parser.add_argument("--summary-json", metavar="PATH", help="write the final metrics here")


def _load_dataset(args: argparse.Namespace):
    from .data import read_planetoid, synthetic_node_classification

    if args.dataset == "planetoid":
        if not args.root:
            raise ValueError("--dataset planetoid needs --root DIR (the folder of ind.<name>.*)")
        return read_planetoid(args.root, args.name, normalize_features=args.normalize_features)
    return synthetic_node_classification(num_nodes=args.num_nodes, seed=args.seed)


def _train(args: argparse.Namespace) -> int:
    from .train import train_node_classifier

    dataset = _load_dataset(args)
    summary = train_node_classifier(
        dataset, model=args.model, fanouts=tuple(args.fanouts), batch_size=args.batch_size,
        hidden=args.hidden, epochs=args.epochs, lr=args.lr, dropout=args.dropout,
        weight_decay=args.weight_decay, heads=args.heads, device=args.device, seed=args.seed,
        progress=not args.no_progress)
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump(summary, f, indent=2)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="fastgl", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="version, backends, CUDA archs, threads, GPU")
    train = commands.add_parser("train", help="train a GNN with fastgl's sampler and layers")
    _add_train_arguments(train)
    args = parser.parse_args(argv)
    try:
        if args.command == "info":
            print("\n".join(info_lines()))
            return 0
        return _train(args)
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        print(f"fastgl {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
