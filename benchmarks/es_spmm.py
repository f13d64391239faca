"""ES-SpMM: how much faster than exact aggregation, and how much accuracy does it cost?

Question (ES-SpMM, Lin et al., Tables IV, V): with at most ``width`` in-edges kept per node (Bucket:
the first ones; FastRand: spread by ``(j * 577) mod degree``), how fast is
``fastgl.nn.functional.es_spmm`` against exact aggregation, and how accurate is a trained GNN when
its inference aggregates that way?

Usage::

    python -m benchmarks.es_spmm                        # both parts on the CPU; about 3 min on
                                                        # two cores
    python -m benchmarks.es_spmm --parts speed --device cuda
    python -m benchmarks.es_spmm --parts accuracy --datasets cora

Part ``speed``: on whole graphs (SNAP wiki-Vote and soc-Slashdot0902 from ``--data-dir``,
skipped with the reason when absent, and the R-MAT graph of ``--rmat``), ``x [N, d]`` standard
normal and fp32 edge weights, every method computes ``out[i] = sum_e w_e x[src(e)]`` over i's
in-edges, without gradients:

* ``torch.sparse``: ``torch.sparse.mm`` on the CSR matrix (cuSPARSE on a GPU: the paper's
  baseline), the baseline of the ratios;
* ``fastgl``: exact ``fastgl.nn.functional.aggregate``;
* ``es_spmm``: ``fastgl.nn.functional.es_spmm`` for each ``--widths`` and strategy.

Each method's output is checked before timing: exact methods against each other, ES-SpMM with a
width of at least the maximum in-degree against exact aggregation. Times are medians over
``--repeat`` interleaved rounds (each method gets one untimed and one timed call per round);
``sampling rate`` is the fraction of the edges ES-SpMM reads (Table IV). ``vs torch.sparse`` and
``vs fastgl`` are those methods' median time over the row's (> 1: faster).

Part ``accuracy``: GCN (Kipf & Welling's setup: hidden 16, dropout 0.5, lr 0.01, weight decay
5e-4, 200 epochs) and GraphSAGE (mean, same setup, hidden 64) are trained full-batch with exact
aggregation on each Planetoid dataset of ``--datasets`` (standard split, row-normalized
features), then evaluated on the test nodes with exact aggregation and with
``approx=ESSpMM(width, strategy)`` for every ``--accuracy-widths`` (Table V's question: the
accuracy lost at each width).

The JSON (environment, arguments, rows) goes to
``benchmarks/results/es_spmm-<device tag>[-<threads>t].json`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from benchmarks import harness
from benchmarks.aggregate import DEFAULT_DATA_DIR, SLASHDOT_FILE, read_snap_edge_list
from fastgl import CSCGraph
from fastgl.data import read_planetoid
from fastgl.data.rmat import RMAT_PRESETS, rmat_graph
from fastgl.nn import GCN, ESSpMM, GraphSAGE
from fastgl.nn.functional import aggregate, es_spmm

PARTS = ("speed", "accuracy")
STRATEGIES = ("bucket", "fastrand")
PLANETOID = Path("planetoid") / "raw"


def kept_edges(graph: CSCGraph, width: int) -> int:
    """Edges ES-SpMM reads at ``width`` (the same for both strategies)."""
    return int(graph.in_degrees().clamp(max=width).sum())


SNAP_GRAPHS = {"wiki-vote": Path("snap_wiki-Vote") / "wiki-Vote.txt", "slashdot": SLASHDOT_FILE}


def speed_graphs(args, device) -> dict[str, CSCGraph]:
    """The whole graphs of the speed part; absent files are reported and skipped."""
    graphs = {}
    for name, relative in SNAP_GRAPHS.items():
        path = Path(args.data_dir) / relative
        if path.exists():
            edges, num_nodes = read_snap_edge_list(path)
            graphs[name] = CSCGraph.from_edge_index(edges, num_nodes)
        else:
            print(f"skipping {name}: {path} not found")
    graphs[f"rmat-{args.rmat}"] = rmat_graph(args.rmat, seed=args.seed)
    return {name: g.to(device) for name, g in graphs.items()}


def _csr_of(graph: CSCGraph, weight: Tensor) -> Tensor:
    return torch.sparse_csr_tensor(
        graph.indptr, graph.indices.to(torch.int64), weight, size=(graph.num_nodes, graph.num_nodes)
    )


def speed_rows(name: str, graph: CSCGraph, args, device) -> list[dict]:
    """Times every method on ``graph`` for each ``--dims``; returns the table rows."""
    gen = torch.Generator(device=device).manual_seed(args.seed)
    weight = torch.rand(graph.num_edges, generator=gen, device=device)
    max_degree = int(graph.in_degrees().max())
    rows = []
    for d in args.dims:
        x = torch.randn(graph.num_nodes, d, generator=gen, device=device)
        exact = aggregate(graph, x, weight)
        csr = _csr_of(graph, weight)
        torch.testing.assert_close(torch.sparse.mm(csr, x), exact, rtol=1e-4, atol=1e-4)
        for strategy in STRATEGIES:
            torch.testing.assert_close(es_spmm(graph, x, max_degree, strategy, weight), exact)
        calls: dict[str, Callable[[], Tensor]] = {
            "torch.sparse": lambda csr=csr, x=x: torch.sparse.mm(csr, x),
            "fastgl": lambda x=x: aggregate(graph, x, weight),
        }
        methods = [
            dict(method="torch.sparse", strategy=None, width=None),
            dict(method="fastgl", strategy=None, width=None),
        ]
        for width in args.widths:
            for strategy in STRATEGIES:
                key = f"es_spmm {strategy} {width}"
                calls[key] = lambda w=width, s=strategy, x=x: es_spmm(graph, x, w, s, weight)
                methods.append(dict(method="es_spmm", strategy=strategy, width=width))
        with torch.no_grad():
            times = harness.time_interleaved(calls, args.repeat, device=device)
        base = {"torch.sparse": times["torch.sparse"].median, "fastgl": times["fastgl"].median}
        for method, key in zip(methods, calls):
            read = (
                graph.num_edges if method["width"] is None else kept_edges(graph, method["width"])
            )
            median = times[key].median
            rows.append(
                dict(
                    method,
                    graph=name,
                    d=d,
                    num_nodes=graph.num_nodes,
                    num_edges=graph.num_edges,
                    max_in_degree=max_degree,
                    sampling_rate=read / max(graph.num_edges, 1),
                    median_s=median,
                    min_s=times[key].min,
                    vs_torch_sparse=base["torch.sparse"] / median,
                    vs_fastgl=base["fastgl"] / median,
                )
            )
    return rows


MODELS = {
    "gcn": lambda c_in, c_out: GCN(c_in, 16, num_layers=2, out_channels=c_out, dropout=0.5),
    "sage": lambda c_in, c_out: GraphSAGE(c_in, 64, num_layers=2, out_channels=c_out, dropout=0.5),
}


def train_full_batch(
    model: torch.nn.Module, x: Tensor, graph: CSCGraph, y: Tensor, train_idx: Tensor, epochs: int
) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    model.train()
    for _ in range(epochs):
        optimizer.zero_grad()
        F.cross_entropy(model(x, graph)[train_idx], y[train_idx]).backward()
        optimizer.step()


@torch.no_grad()
def accuracy_on_test_nodes(model, x, graph, y, test_idx, approx: ESSpMM | None = None) -> float:
    model.eval()
    predictions = model(x, graph, approx=approx)[test_idx].argmax(dim=1)
    return float((predictions == y[test_idx]).float().mean())


def accuracy_rows(args, device) -> list[dict]:
    rows = []
    root = Path(args.data_dir) / PLANETOID
    for name in args.datasets:
        if not (root / f"ind.{name}.graph").exists():
            print(f"skipping accuracy on {name}: {root}/ind.{name}.* not found")
            continue
        data = read_planetoid(root, name, normalize_features=True)
        graph = CSCGraph.from_edge_index(data.edge_index, data.num_nodes).to(device)
        x, y = data.x.to(device), data.y.to(device)
        for model_name, build in MODELS.items():
            torch.manual_seed(args.seed)
            model = build(data.num_features, data.num_classes).to(device)
            train_full_batch(model, x, graph, y, data.train_idx.to(device), args.epochs)
            test_idx = data.test_idx.to(device)
            exact = accuracy_on_test_nodes(model, x, graph, y, test_idx)
            rows.append(
                dict(
                    dataset=name,
                    model=model_name,
                    strategy="exact",
                    width=None,
                    sampling_rate=1.0,
                    test_acc=exact,
                    acc_change=0.0,
                )
            )
            for width in args.accuracy_widths:
                rate = kept_edges(graph, width) / graph.num_edges
                for strategy in STRATEGIES:
                    acc = accuracy_on_test_nodes(
                        model, x, graph, y, test_idx, ESSpMM(width, strategy)
                    )
                    rows.append(
                        dict(
                            dataset=name,
                            model=model_name,
                            strategy=strategy,
                            width=width,
                            sampling_rate=rate,
                            test_acc=acc,
                            acc_change=acc - exact,
                        )
                    )
    return rows


def print_speed(rows: list[dict], args) -> None:
    columns = [
        ("graph", "graph", ""),
        ("d", "d", ""),
        ("method", "method", ""),
        ("strategy", "strategy", ""),
        ("width", "width", ""),
        ("sampling_rate", "sampling rate", ".3f"),
        ("median_ms", "median ms", ".3f"),
        ("vs_torch_sparse", "vs torch.sparse", ".2f"),
        ("vs_fastgl", "vs fastgl", ".2f"),
    ]
    shown = [dict(r, median_ms=r["median_s"] * 1e3) for r in rows]
    harness.print_table(
        shown,
        columns,
        title=f"speed (no grad), {args.repeat} interleaved "
        f"rounds; vs X = X's median time / this one's",
    )


def print_accuracy(rows: list[dict]) -> None:
    columns = [
        ("dataset", "dataset", ""),
        ("model", "model", ""),
        ("strategy", "strategy", ""),
        ("width", "width", ""),
        ("sampling_rate", "sampling rate", ".3f"),
        ("test_acc", "test acc", ".4f"),
        ("acc_change", "change", "+.4f"),
    ]
    harness.print_table(
        rows,
        columns,
        title="test accuracy with ES-SpMM inference (models trained with exact aggregation)",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.argument_parser("es_spmm", __doc__)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--dims", type=int, nargs="+", default=[64], help="feature sizes d")
    parser.add_argument(
        "--rmat",
        choices=sorted(RMAT_PRESETS),
        default="small",
        help="R-MAT graph of the speed part",
    )
    parser.add_argument(
        "--widths",
        type=int,
        nargs="+",
        default=[16, 32, 64, 128, 256, 512],
        help="ES-SpMM widths of the speed part",
    )
    parser.add_argument(
        "--accuracy-widths",
        type=int,
        nargs="+",
        default=[1, 2, 4, 8, 16, 32],
        help="ES-SpMM widths of the accuracy part",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["cora", "citeseer"],
        help="Planetoid datasets of the accuracy part (the shared PubMed copy lacks most features)",
    )
    parser.add_argument("--epochs", type=int, default=200, help="full-batch training epochs")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    harness.add_threads_argument(parser)
    parser.add_argument(
        "--data-dir",
        default=str(DEFAULT_DATA_DIR),
        help="folder holding planetoid/raw and the snap_* graphs",
    )
    harness.add_seed_and_out_arguments(
        parser, "graph, feature and training seed", "es_spmm-<device>[-<threads>t].json"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or min(args.widths + args.accuracy_widths) < 1:
        parser.error("--repeat and every width must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*", category=UserWarning)
    device, note, env = harness.start_run("es_spmm", args)
    payload: dict = {
        "benchmark": "es_spmm",
        "environment": env,
        "note": note,
        "args": vars(args),
        "speed": [],
        "accuracy": [],
    }
    if "speed" in args.parts:
        for name, graph in speed_graphs(args, device).items():
            print(
                f"timing {name}: {graph.num_nodes:,} nodes, {graph.num_edges:,} edges", flush=True
            )
            payload["speed"].extend(speed_rows(name, graph, args, device))
        print_speed(payload["speed"], args)
    if "accuracy" in args.parts:
        payload["accuracy"] = accuracy_rows(args, device)
        print_accuracy(payload["accuracy"])
    harness.save_results("es_spmm", payload, device, args)
    return payload


if __name__ == "__main__":
    main()
