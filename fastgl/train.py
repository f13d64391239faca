"""Mini-batch GNN training on fastgl's neighbor sampler: the loop behind ``fastgl train``.

Each step has three phases, timed separately (``time.perf_counter``, with a device
synchronization on CUDA so the time lands in the phase that spent it):

* **sample**: ``sampler.sample(seeds)`` and ``sub.blocks()`` (on the CPU);
* **gather**: input features ``x[nodes]``, labels ``y[seeds]`` and the block edge indices,
  moved to the training device;
* **compute**: forward, loss, backward and optimizer step.

The models are :mod:`fastgl.nn.models` (GraphSAGE, GCN, GIN, GAT) on fastgl's aggregation ops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm import tqdm

from fastgl.data.dataset import NodeDataset
from fastgl.nn.models import GAT, GCN, GIN, GraphSAGE
from fastgl.sampling import Block


class Batch(NamedTuple):
    """One mini-batch, ready for the model: input features, seed labels and blocks (input first)."""

    x: Tensor
    y: Tensor
    blocks: list[Block]


MODELS = {"sage": GraphSAGE, "gcn": GCN, "gin": GIN, "gat": GAT}


def build_model(name: str, in_channels: int, hidden: int, out_channels: int, num_layers: int,
                dropout: float, heads: int = 4) -> torch.nn.Module:
    """One of fastgl.nn.models by its command-line name (``sage``, ``gcn``, ``gin``, ``gat``)."""
    if name not in MODELS:
        raise ValueError(f"train: model must be one of {sorted(MODELS)}, got {name!r}")
    extra = {"heads": heads} if name == "gat" else {}
    return MODELS[name](in_channels, hidden, num_layers, out_channels=out_channels,
                        dropout=dropout, **extra)


def train_node_classifier(
    dataset: NodeDataset,
    *,
    model: str = "sage",
    fanouts: Sequence[int] = (10, 10),
    batch_size: int = 512,
    hidden: int = 128,
    epochs: int = 5,
    lr: float = 0.01,
    dropout: float = 0.5,
    weight_decay: float = 0.0,
    heads: int = 4,
    device: str | torch.device = "cpu",
    seed: int = 0,
    progress: bool = True,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Train a node classifier with fastgl's neighbor sampler; report accuracy and time.

    Sampling runs on the CPU; features and blocks are moved to ``device`` for the compute.
    The same ``seed`` gives the same model initialization, shuffling and samples, so runs on
    the CPU repeat exactly.

    Args:
        dataset: the graph, features, labels and split.
        model: ``"sage"``, ``"gcn"``, ``"gin"`` or ``"gat"`` (:mod:`fastgl.nn.models`).
        fanouts: neighbors sampled per node at each hop, hop 1 (next to the seeds) first; one
            model layer per hop.
        batch_size: training (and evaluation) seeds per mini-batch.
        hidden: width of the hidden layers.
        epochs: passes over the training nodes (at least 1).
        lr: Adam learning rate.
        dropout: dropout probability between layers.
        weight_decay: Adam weight decay (L2).
        heads: attention heads (GAT only; ``hidden`` is split between them).
        device: where the model and its computation live.
        seed: seed of the model initialization, the shuffling and the sampling.
        progress: show a tqdm progress bar per epoch.
        log: called with one line per epoch and a final test line.

    Returns:
        A summary dict: ``test_acc``, ``val_acc`` (after the last epoch), ``train_loss`` (last
        epoch's mean), ``epoch_time_s``, ``sample_s``, ``gather_s``, ``compute_s`` (means per
        epoch of the training pass; evaluation time is reported per epoch as ``eval_s`` and is
        not included), ``epochs`` (one dict per epoch: ``epoch``, ``loss``, ``train_acc``,
        ``val_acc``, ``time_s``, ``sample_s``, ``gather_s``, ``compute_s``, ``eval_s``),
        ``num_nodes``, ``num_edges``, ``dataset`` (its name) and ``config`` (the arguments).

    Example:
        >>> from fastgl.data import synthetic_node_classification
        >>> result = train_node_classifier(synthetic_node_classification(), epochs=3)  # doctest: +SKIP
        >>> result["test_acc"] > 0.8  # doctest: +SKIP
        True
    """
    from fastgl.graph import CSCGraph  # imported here: they load the compiled extension
    from fastgl.sampling import NeighborSampler

    _check_train_args(dataset, fanouts, batch_size, hidden, epochs, dropout)
    config = dict(model=model, fanouts=list(fanouts), batch_size=batch_size, hidden=hidden,
                  epochs=epochs, lr=lr, dropout=dropout, weight_decay=weight_decay, heads=heads,
                  device=str(device), seed=seed)
    device = torch.device(device)
    shuffle_gen, sample_gen, eval_seed = _derive_generators(seed)

    torch.manual_seed(seed)
    num_layers = len(fanouts)
    network = build_model(model, dataset.num_features, hidden, dataset.num_classes, num_layers,
                          dropout, heads).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=lr, weight_decay=weight_decay)
    graph = CSCGraph.from_edge_index(dataset.edge_index, num_nodes=dataset.num_nodes)
    batcher = MiniBatcher(
        NeighborSampler(graph, fanouts=list(fanouts)), dataset, batch_size, device
    )

    history: list[dict[str, Any]] = []
    for epoch in range(1, epochs + 1):
        order = dataset.train_idx[torch.randperm(dataset.train_idx.numel(), generator=shuffle_gen)]
        desc = f"epoch {epoch}/{epochs}"
        stats = train_epoch(network, optimizer, batcher, order, sample_gen, progress, desc)
        start = time.perf_counter()
        eval_gen = torch.Generator().manual_seed(eval_seed)
        stats["val_acc"] = evaluate(network, batcher, dataset.val_idx, eval_gen)
        stats["eval_s"] = time.perf_counter() - start
        history.append({"epoch": epoch, **stats})
        log(_format_epoch(history[-1], epochs))

    eval_gen = torch.Generator().manual_seed(eval_seed)
    test_acc = evaluate(network, batcher, dataset.test_idx, eval_gen)
    log(f"test acc {test_acc:.4f} | val acc {history[-1]['val_acc']:.4f} | {dataset.name}")
    return _summarize(history, test_acc, dataset, config)


@dataclass(frozen=True)
class MiniBatcher:
    """Turns seed ids into device-ready mini-batches: sample, then gather.

    Attributes:
        sampler: has ``sample(seeds, generator=...)`` returning a subgraph with ``nodes`` and
            ``blocks()`` (fastgl's :class:`~fastgl.sampling.NeighborSampler`).
        dataset: source of features and labels.
        batch_size: seeds per mini-batch.
        device: where batches are put.
    """

    sampler: Any
    dataset: NodeDataset
    batch_size: int
    device: torch.device

    def num_batches(self, nodes: Tensor) -> int:
        """Number of mini-batches :meth:`batches` yields for ``nodes``."""
        return (nodes.numel() + self.batch_size - 1) // self.batch_size

    def batches(
        self, nodes: Tensor, generator: torch.Generator, times: dict[str, float] | None = None
    ) -> Iterator[Batch]:
        """Yield a :class:`Batch` for each consecutive chunk of ``nodes``, in order.

        When ``times`` is given, the seconds spent sampling and gathering are added to its
        ``"sample_s"`` and ``"gather_s"`` entries.
        """
        times = {"sample_s": 0.0, "gather_s": 0.0} if times is None else times
        for seeds in nodes.split(self.batch_size):
            t0 = time.perf_counter()
            sub = self.sampler.sample(seeds, generator=generator)
            blocks = sub.blocks()
            t1 = time.perf_counter()
            batch = gather_batch(self.dataset, sub.nodes, blocks, seeds, self.device)
            _synchronize(self.device)
            times["sample_s"] += t1 - t0
            times["gather_s"] += time.perf_counter() - t1
            yield batch


def train_epoch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batcher: MiniBatcher,
    order: Tensor,
    generator: torch.Generator,
    progress: bool = False,
    desc: str = "train",
) -> dict[str, float]:
    """Run one pass over the seeds in ``order``; return mean loss, accuracy and the phase times.

    Returns:
        ``{"loss", "train_acc", "time_s", "sample_s", "gather_s", "compute_s"}``; loss and
        accuracy are averaged over seeds (not batches) during training, with dropout on.
    """
    model.train()
    times = {"sample_s": 0.0, "gather_s": 0.0, "compute_s": 0.0}
    loss_sum, correct = 0.0, 0
    start = time.perf_counter()
    batches = batcher.batches(order, generator, times)
    total = batcher.num_batches(order)
    for batch in tqdm(batches, total=total, desc=desc, disable=not progress, leave=False):
        t0 = time.perf_counter()
        logits = model(batch.x, batch.blocks)
        loss = F.cross_entropy(logits, batch.y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        # .item() waits for the device, so the compute time is complete.
        loss_sum += loss.item() * batch.y.numel()
        correct += int((logits.argmax(dim=1) == batch.y).sum())
        times["compute_s"] += time.perf_counter() - t0
    count = max(order.numel(), 1)
    elapsed = time.perf_counter() - start
    return {"loss": loss_sum / count, "train_acc": correct / count, "time_s": elapsed, **times}


@torch.no_grad()
def evaluate(
    model: nn.Module, batcher: MiniBatcher, nodes: Tensor, generator: torch.Generator
) -> float:
    """Accuracy on ``nodes`` of mini-batch inference on sampled neighborhoods (``nan`` if empty)."""
    if nodes.numel() == 0:
        return float("nan")
    model.eval()
    correct = 0
    for batch in batcher.batches(nodes, generator):
        correct += int((model(batch.x, batch.blocks).argmax(dim=1) == batch.y).sum())
    return correct / nodes.numel()


def gather_batch(
    dataset: NodeDataset, nodes: Tensor, blocks: Sequence[Block], seeds: Tensor, device: torch.device
) -> Batch:
    """Collect a sampled mini-batch's inputs on ``device``.

    Args:
        dataset: source of features and labels.
        nodes: int64 global ids of the sampled nodes, seeds first (``sub.nodes``).
        blocks: the sampler's blocks, input layer first.
        seeds: int64 ``[B]`` seed ids; the last block's destinations.
        device: where to put the result.
    """
    num_input = int(blocks[0].num_src_nodes)
    if int(blocks[-1].num_dst_nodes) != seeds.numel():
        raise RuntimeError(
            f"train: the last block has {int(blocks[-1].num_dst_nodes)} destination nodes, "
            f"expected one per seed ({seeds.numel()})"
        )
    on_device = [b.to(device) for b in blocks]
    x = dataset.x.index_select(0, nodes[:num_input].cpu()).to(device)
    y = dataset.y.index_select(0, seeds.cpu()).to(device)
    return Batch(x, y, on_device)


def _check_train_args(
    dataset: NodeDataset,
    fanouts: Sequence[int],
    batch_size: int,
    hidden: int,
    epochs: int,
    dropout: float,
) -> None:
    """Raise ``ValueError`` naming the first bad argument of :func:`train_node_classifier`."""
    if len(fanouts) == 0:
        raise ValueError("train_node_classifier: fanouts must list at least one hop, got []")
    if batch_size < 1 or hidden < 1 or epochs < 1:
        raise ValueError(
            "train_node_classifier: batch_size, hidden and epochs must be >= 1, got "
            f"{batch_size}, {hidden}, {epochs}"
        )
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"train_node_classifier: dropout must be in [0, 1), got {dropout}")
    if dataset.train_idx.numel() == 0:
        raise ValueError(f"train_node_classifier: dataset {dataset.name!r} has no training nodes")


def _derive_generators(seed: int) -> tuple[torch.Generator, torch.Generator, int]:
    """Return independent generators for shuffling and sampling, and a seed for evaluation draws.

    They are seeded from one master generator so that the streams differ from each other while
    still being a pure function of ``seed``.
    """
    master = torch.Generator().manual_seed(seed)
    shuffle_seed, sample_seed, eval_seed = torch.randint(2**62, (3,), generator=master).tolist()
    return (
        torch.Generator().manual_seed(shuffle_seed),
        torch.Generator().manual_seed(sample_seed),
        eval_seed,
    )


def _synchronize(device: torch.device) -> None:
    """Wait for queued work on ``device`` (CUDA) so host timers measure it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _format_epoch(stats: dict[str, Any], epochs: int) -> str:
    """One log line: loss, accuracies and the phase split of the training pass."""
    return (
        f"epoch {stats['epoch']:>{len(str(epochs))}}/{epochs} | loss {stats['loss']:.4f} | "
        f"train acc {stats['train_acc']:.4f} | val acc {stats['val_acc']:.4f} | "
        f"{stats['time_s']:.2f}s (sample {stats['sample_s']:.2f}s, "
        f"gather {stats['gather_s']:.2f}s, "
        f"compute {stats['compute_s']:.2f}s) | eval {stats['eval_s']:.2f}s"
    )


def _summarize(
    history: list[dict[str, Any]], test_acc: float, dataset: NodeDataset, config: dict[str, Any]
) -> dict[str, Any]:
    """Build the summary dict :func:`train_node_classifier` returns."""

    def mean(key: str) -> float:
        return sum(epoch[key] for epoch in history) / len(history)

    return {
        "dataset": dataset.name,
        "num_nodes": dataset.num_nodes,
        "num_edges": dataset.num_edges,
        "test_acc": test_acc,
        "val_acc": history[-1]["val_acc"],
        "train_loss": history[-1]["loss"],
        "epoch_time_s": mean("time_s"),
        "sample_s": mean("sample_s"),
        "gather_s": mean("gather_s"),
        "compute_s": mean("compute_s"),
        "epochs": history,
        "config": config,
    }
