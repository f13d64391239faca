"""Mini-batch GNN training on fastgl's pipeline: the loop behind ``fastgl train``.

Batches come from :class:`fastgl.loader.DataLoader`: neighbor sampling with Fused-Map (or, for
GCN, one of the layer-wise importance samplers of :mod:`fastgl.sampling.layer`, or one of
graph-sampling training's subgraph samplers through :class:`fastgl.loader.SubgraphLoader`), a window
of batches reordered by match degree (FastGL's Reorder), features assembled with Match from the
previous batch's buffer, a device cache and the host, prefetched in a background thread while
the model computes. Every phase is measured (``sample``, ``idmap``, ``reorder``, ``load``,
``compute``, ``wait``), with the bytes moved host to device and the rows reused.

The models are :mod:`fastgl.nn.models` (GraphSAGE, GCN, GIN, GAT) on fastgl's aggregation ops.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm import tqdm

from fastgl.data.dataset import NodeDataset
from fastgl.graph import Block, CSCGraph
from fastgl.loader import DataLoader, FeatureStore, SubgraphLoader
from fastgl.loader.dataloader import Sampler
from fastgl.nn.models import GAT, GCN, GIN, GraphSAGE
from fastgl.report import format_epoch
from fastgl.sampling import (
    ClusterGCNSampler,
    FastGCNSampler,
    FrontierSampler,
    LADIESSampler,
    LayerSampler,
    NeighborSampler,
    SAINTEdgeSampler,
    SAINTNodeSampler,
    SAINTNorm,
    SAINTRandomWalkSampler,
)

MODELS = {"sage": GraphSAGE, "gcn": GCN, "gin": GIN, "gat": GAT}
# Each model's hyperparameters as its paper trains Cora: GCN as Kipf & Welling (Semi-Supervised
# Classification with Graph Convolutional Networks, §5.2), GAT as Velickovic et al. (Graph
# Attention Networks, §3.3: 8 heads of 8 features). GraphSAGE and GIN were not trained on Cora
# by their papers; they get GCN's regularization at width 64, as PyG's examples train them.
# They are the defaults on every dataset: a starting point, not a tuning for each.
MODEL_DEFAULTS = {
    "sage": {"hidden": 64, "lr": 0.01, "dropout": 0.5, "weight_decay": 5e-4},
    "gcn": {"hidden": 16, "lr": 0.01, "dropout": 0.5, "weight_decay": 5e-4},
    "gin": {"hidden": 64, "lr": 0.01, "dropout": 0.5, "weight_decay": 5e-4},
    "gat": {"hidden": 64, "heads": 8, "lr": 0.005, "dropout": 0.6, "weight_decay": 5e-4},
}
MODEL_OPTIONS = ("hidden", "heads", "lr", "dropout", "weight_decay")

# The layer-wise samplers by command-line name. Their blocks carry GCN's estimator weights, so
# they train GCN only (built with normalize=False: the weights are the normalized coefficients).
LAYER_SAMPLERS = {"layer": LayerSampler, "fastgcn": FastGCNSampler, "ladies": LADIESSampler}
# Graph-sampling training's samplers by command-line name (Zeng et al., Accurate, Efficient and
# Scalable Graph Embedding, Algorithm 1; GraphSAINT): each step trains GCN on all of one sampled
# subgraph, with GraphSAINT's normalization as loss and edge weights.
SUBGRAPH_SAMPLERS = ("frontier", "saint-node", "saint-edge", "saint-rw", "cluster")
# ClusterGCN's clusters per batch (q): a batch of about --batch-size vertices joins this many
# METIS clusters, so the partition has about q * num_nodes / batch-size of them.
CLUSTERS_PER_BATCH = 4
SAMPLERS = ("neighbor", *LAYER_SAMPLERS, *SUBGRAPH_SAMPLERS)
# What `fanouts` means, and its default, per sampler: neighbors per node at each hop, or vertices
# per layer. A layer's size counts for the whole batch: 512, the default batch's seeds, keeps every
# layer-wise sampler within 3 points of neighbor sampling on Cora. The subgraph samplers aggregate
# over all of a subgraph's edges in every layer: -1 per layer.
DEFAULT_FANOUTS = {
    "neighbor": (10, 10),
    **{name: (512, 512) for name in LAYER_SAMPLERS},
    **{name: (-1, -1) for name in SUBGRAPH_SAMPLERS},
}
# Subgraphs GraphSAINT's normalization is estimated from: enough to hold every vertex this many
# times over (GraphSAINT's own default).
SAMPLE_COVERAGE = 50


def default_fanouts(sampler: str) -> list[int]:
    """The sampler's :data:`DEFAULT_FANOUTS` (neighbor sampling's for a name that is none: the
    settings' check says so).

    Example:
        >>> default_fanouts("ladies")
        [512, 512]
    """
    return list(DEFAULT_FANOUTS.get(sampler, DEFAULT_FANOUTS["neighbor"]))


def model_settings(model: str, **given: Any) -> dict[str, Any]:
    """``given`` (any of :data:`MODEL_OPTIONS`) with every option left ``None`` or out set to
    the model's default (``heads`` is 1 but for GAT).

    Example:
        >>> model_settings("gcn", lr=0.1)
        {'hidden': 16, 'heads': 1, 'lr': 0.1, 'dropout': 0.5, 'weight_decay': 0.0005}
    """
    _check_model(model)
    defaults = {"heads": 1, **MODEL_DEFAULTS[model]}
    return {
        option: defaults[option] if given.get(option) is None else given[option]
        for option in MODEL_OPTIONS
    }


def _check_model(model: str, where: str = "train: ") -> None:
    if model not in MODELS:
        raise ValueError(f"{where}model must be one of {sorted(MODELS)}, got {model!r}")


def check_settings(
    where: str,
    model: str,
    fanouts: Sequence[int],
    batch_size: int,
    epochs: int,
    hidden: int,
    heads: int,
    dropout: float,
    sampler: str = "neighbor",
) -> None:
    """Raise ``ValueError`` naming the first setting a training run cannot start with, its
    message led by ``where`` when given; it needs no data, so that a command line can check
    before it loads any."""
    where = f"{where}: " if where else ""
    _check_model(model, where)
    _check_sampler(sampler, model, fanouts, where)
    if len(fanouts) == 0:
        raise ValueError(f"{where}fanouts must list at least one hop (one per layer), got []")
    for name, value in (("batch size", batch_size), ("epochs", epochs), ("hidden", hidden)):
        if value < 1:
            raise ValueError(f"{where}{name} must be at least 1, got {value}")
    if model == "gat" and (heads < 1 or hidden % heads):
        raise ValueError(
            f"{where}gat splits hidden between its heads, so hidden must be a multiple of "
            f"heads, got hidden {hidden} and heads {heads}"
        )
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"{where}dropout must be in [0, 1), got {dropout}")


def _check_sampler(sampler: str, model: str, fanouts: Sequence[int], where: str) -> None:
    if sampler not in SAMPLERS:
        raise ValueError(f"{where}sampler must be one of {list(SAMPLERS)}, got {sampler!r}")
    if sampler in (*LAYER_SAMPLERS, *SUBGRAPH_SAMPLERS) and model != "gcn":
        raise ValueError(
            f"{where}the {sampler} sampler trains gcn only (GCN's edge weights carry its "
            f"estimator), got model {model!r}"
        )
    if sampler in SUBGRAPH_SAMPLERS and any(size != -1 for size in fanouts):
        raise ValueError(
            f"{where}the {sampler} sampler aggregates over all of a subgraph's edges: its "
            f"fanouts are -1 per layer, got {list(fanouts)}"
        )
    if sampler in LAYER_SAMPLERS and any(size == 0 or size < -1 for size in fanouts):
        raise ValueError(
            f"{where}the {sampler} sampler's fanouts are vertices per layer, each -1 (all) or "
            f">= 1, got {list(fanouts)}"
        )


def build_model(
    name: str,
    in_channels: int,
    hidden: int,
    out_channels: int,
    num_layers: int,
    dropout: float,
    heads: int = MODEL_DEFAULTS["gat"]["heads"],
    sampler: str = "neighbor",
) -> torch.nn.Module:
    """One of fastgl.nn.models by its command-line name (``sage``, ``gcn``, ``gin``, ``gat``),
    for the blocks of ``sampler``: GCN on a layer-wise sampler's blocks aggregates with their
    weights as they are (``normalize=False``)."""
    _check_model(name)
    extra = {"heads": heads} if name == "gat" else {}
    if sampler in LAYER_SAMPLERS:
        extra["normalize"] = False
    return MODELS[name](
        in_channels, hidden, num_layers, out_channels=out_channels, dropout=dropout, **extra
    )


def build_sampler(name: str, graph: CSCGraph, fanouts: Sequence[int]) -> Sampler:
    """The sampler ``name`` (:data:`SAMPLERS`) on ``graph``: ``fanouts`` are neighbors per node
    at each hop for ``neighbor``, vertices per layer for the layer-wise samplers."""
    if name == "neighbor":
        return NeighborSampler(graph, list(fanouts))
    return LAYER_SAMPLERS[name](graph, list(fanouts))


def build_subgraph_sampler(name: str, graph: CSCGraph, size: int, num_layers: int):
    """The subgraph sampler ``name`` (:data:`SUBGRAPH_SAMPLERS`) on ``graph`` drawing about
    ``size`` vertices per subgraph (before repeats): ``size`` node draws, ``size / 2`` edge
    draws, ``size / (num_layers + 1)`` walks of ``num_layers`` steps, a frontier of
    ``size / 4`` walkers with a budget of ``size``, or :data:`CLUSTERS_PER_BATCH` METIS clusters
    of about ``size / CLUSTERS_PER_BATCH`` vertices each."""
    if name == "cluster":
        num_parts = min(max(round(CLUSTERS_PER_BATCH * graph.num_nodes / size), 1), graph.num_nodes)
        return ClusterGCNSampler(graph, num_parts, min(CLUSTERS_PER_BATCH, num_parts))
    if name == "saint-node":
        return SAINTNodeSampler(graph, size)
    if name == "saint-edge":
        return SAINTEdgeSampler(graph, max(size // 2, 1))
    if name == "saint-rw":
        return SAINTRandomWalkSampler(graph, max(size // (num_layers + 1), 1), num_layers)
    frontier_size = min(max(size // 4, 1), graph.num_nodes)
    return FrontierSampler(graph, frontier_size, max(size, frontier_size))


def evaluation_sampler(name: str, graph: CSCGraph, fanouts: Sequence[int]) -> Sampler:
    """What evaluates a run of sampler ``name``: the same sampler for neighbor sampling; for
    the layer-wise samplers, the exact GCN on the seeds' neighborhoods (every layer ``-1``), the
    inference FastGCN recommends (Chen et al., §3, "Inference": the full GCN architecture).
    Sampled layers of the training size would evaluate far worse: on Cora (fanouts 512 512,
    seeds 0-3) mean test accuracy 0.63 for fastgcn, 0.74 for ladies, 0.73 for layer, against
    0.80-0.81 with the exact layers. The subgraph samplers evaluate with the exact GCN too."""
    if name == "neighbor":
        return build_sampler(name, graph, fanouts)
    exact = [-1] * len(fanouts)
    if name in SUBGRAPH_SAMPLERS:  # GraphSAINT, too, evaluates the full GCN
        return NeighborSampler(graph, exact)
    return build_sampler(name, graph, exact)


def train_node_classifier(
    dataset: NodeDataset,
    *,
    model: str = "sage",
    sampler: str = "neighbor",
    fanouts: Sequence[int] | None = None,
    batch_size: int = 512,
    hidden: int | None = None,
    epochs: int = 10,
    lr: float | None = None,
    dropout: float | None = None,
    weight_decay: float | None = None,
    heads: int | None = None,
    device: str | torch.device = "cpu",
    seed: int = 0,
    reorder: int = 8,
    match: bool = True,
    cache: Any = None,
    transfer: str = "copy",
    feature_dtype: torch.dtype | None = None,
    prefetch: bool = True,
    progress: bool = True,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Train a node classifier on fastgl's pipeline; report accuracy, phase times and traffic.

    Sampling runs on the CPU; features are assembled on ``device`` (Match-Reorder, optional
    cache) and the model computes there. The same ``seed`` gives the same model initialization,
    shuffling and samples, so runs on the CPU repeat exactly.

    Args:
        dataset: the graph, features, labels and split.
        model: ``"sage"``, ``"gcn"``, ``"gin"`` or ``"gat"`` (:mod:`fastgl.nn.models`).
        sampler: ``"neighbor"`` (:class:`~fastgl.NeighborSampler`), or for ``"gcn"`` one of the
            layer-wise importance samplers ``"layer"``, ``"fastgcn"``, ``"ladies"``
            (:mod:`fastgl.sampling.layer`), or graph-sampling training's ``"frontier"``,
            ``"saint-node"``, ``"saint-edge"``, ``"saint-rw"``, ``"cluster"``
            (:func:`build_subgraph_sampler`: each step trains GCN on a whole subgraph, weighted
            by GraphSAINT's normalization, estimated from :data:`SAMPLE_COVERAGE`, exact for
            ClusterGCN; an epoch is :func:`steps_per_epoch` subgraphs); all but ``"neighbor"``
            evaluate with the exact GCN (:func:`evaluation_sampler`).
        fanouts: per hop, hop 1 (next to the seeds) first, one model layer per hop: neighbors
            sampled per node (``neighbor``) or vertices sampled per layer (the layer-wise
            samplers). Default: :data:`DEFAULT_FANOUTS` of the sampler.
        batch_size: training (and evaluation) seeds per mini-batch; for the subgraph
            samplers, the vertices a training subgraph draws (about).
        hidden: width of the hidden layers. This and the other model options left ``None``
            take the model's defaults, :data:`MODEL_DEFAULTS` (its paper's setup on Cora).
        epochs: passes over the training nodes (at least 1).
        lr: Adam learning rate.
        dropout: dropout probability between layers.
        weight_decay: Adam weight decay (L2).
        heads: attention heads (GAT only; ``hidden`` is split between them).
        device: where features are assembled and the model computes.
        seed: seed of the model initialization, the shuffling and the sampling.
        reorder: window of batches sampled together and reordered (1: sampling order).
        match: reuse the previous batch's feature rows (Match).
        cache: device feature cache (see :class:`fastgl.loader.FeatureStore`).
        transfer: ``"copy"`` or ``"uva"`` host-to-device loading.
        feature_dtype: store features as this dtype (e.g. ``torch.bfloat16``); the model
            computes in float32.
        prefetch: assemble the next batch in a background thread during compute.
        progress: show a tqdm progress bar per epoch.
        log: called with one line per epoch and a final test line.

    Returns:
        A summary dict: ``test_acc``, ``val_acc`` (after the last epoch), ``train_loss`` (last
        epoch's mean), ``epoch_time_s`` and the mean seconds per epoch of every phase of the
        training pass (``sample_s``, ``idmap_s``, ``reorder_s``, ``load_s``, ``compute_s``,
        ``wait_s``; evaluation is reported per epoch as ``eval_s``), ``bytes_h2d`` (mean per
        epoch), ``match_degree``, ``epochs`` (one record per epoch: ``epoch``, ``loss``,
        ``train_acc``, ``val_acc``, ``time_s``, ``eval_s``, ``phases``, ``bytes_h2d``,
        ``rows_loaded``, ``rows_reused``, ``rows_cached``, ``batches``, ``match_degree``),
        ``num_nodes``, ``num_edges``, ``dataset`` and ``config`` (the arguments).

    Example:
        >>> from fastgl.data import synthetic_node_classification
        >>> data = synthetic_node_classification()
        >>> result = train_node_classifier(data, epochs=3)  # doctest: +SKIP
        >>> result["test_acc"] > 0.8  # doctest: +SKIP
        True
    """
    settings = model_settings(
        model, hidden=hidden, heads=heads, lr=lr, dropout=dropout, weight_decay=weight_decay
    )
    hidden, heads, lr, dropout, weight_decay = (settings[key] for key in MODEL_OPTIONS)
    if fanouts is None:
        fanouts = default_fanouts(sampler)
    check_settings(
        "train_node_classifier",
        model,
        fanouts,
        batch_size,
        epochs,
        hidden,
        heads,
        dropout,
        sampler=sampler,
    )
    if dataset.train_idx.numel() == 0:
        raise ValueError(f"train_node_classifier: dataset {dataset.name!r} has no training nodes")
    config = dict(
        model=model,
        sampler=sampler,
        fanouts=list(fanouts),
        batch_size=batch_size,
        hidden=hidden,
        epochs=epochs,
        lr=lr,
        dropout=dropout,
        weight_decay=weight_decay,
        heads=heads,
        device=str(device),
        seed=seed,
        reorder=reorder,
        match=match,
        cache=cache,
        transfer=transfer,
        feature_dtype=str(feature_dtype or dataset.x.dtype),
        prefetch=prefetch,
    )
    device = torch.device(device)
    train_gen, eval_seed = _derive_generators(seed)

    torch.manual_seed(seed)
    network = build_model(
        model,
        dataset.num_features,
        hidden,
        dataset.num_classes,
        len(fanouts),
        dropout,
        heads,
        sampler=sampler,
    ).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=lr, weight_decay=weight_decay)
    graph = CSCGraph.from_edge_index(dataset.edge_index, num_nodes=dataset.num_nodes)
    store = FeatureStore(
        dataset.x,
        dataset.y,
        device=device,
        cache=cache,
        dtype=feature_dtype,
        transfer=transfer,
        hotness=graph.in_degrees(),
    )
    eval_sampler = evaluation_sampler(sampler, graph, fanouts)

    def loader(seeds: Tensor, shuffle: bool, generator: torch.Generator) -> DataLoader:
        return DataLoader(
            graph,
            store,
            None,
            seeds,
            build_sampler(sampler, graph, fanouts) if shuffle else eval_sampler,
            batch_size=batch_size,
            shuffle=shuffle,
            reorder=reorder,
            match=match,
            prefetch=prefetch,
            generator=generator,
        )

    def evaluate_on(nodes: Tensor) -> float:
        return evaluate(network, loader(nodes, False, torch.Generator().manual_seed(eval_seed)))

    weights = None
    if sampler in SUBGRAPH_SAMPLERS:
        subgraphs = build_subgraph_sampler(sampler, graph, batch_size, len(fanouts))
        norm = subgraphs.normalization(SAMPLE_COVERAGE, generator=train_gen)
        weights = SubgraphWeights.of(norm, dataset.train_idx, device)
        train_loader = SubgraphLoader(
            graph,
            store,
            None,
            subgraphs,
            steps_per_epoch(norm, dataset.train_idx),
            reorder=reorder,
            match=match,
            prefetch=prefetch,
            generator=train_gen,
        )
    else:
        train_loader = loader(dataset.train_idx, True, train_gen)
    history: list[dict[str, Any]] = []
    for epoch in range(1, epochs + 1):
        stats = train_epoch(
            network, optimizer, train_loader, progress, f"epoch {epoch}/{epochs}", weights
        )
        start = time.perf_counter()
        stats["val_acc"] = evaluate_on(dataset.val_idx)
        stats["eval_s"] = time.perf_counter() - start
        history.append({"epoch": epoch, **stats})
        log(format_epoch(history[-1], epochs))

    test_acc = evaluate_on(dataset.test_idx)
    log(f"test acc {test_acc:.4f} | val acc {history[-1]['val_acc']:.4f} | {dataset.name}")
    return _summarize(history, test_acc, dataset, config)


class SubgraphWeights(NamedTuple):
    """GraphSAINT's weights for training on subgraphs (§3.2 of its paper), on the device.

    Attributes:
        loss: ``[N]`` weight of each vertex's loss: ``node_norm`` scaled so that a subgraph's
            weighted sum estimates the mean loss over the training vertices, 0 off them.
        edge: ``[E]`` GCN edge weight of each edge by id, ``edge_norm``.
    """

    loss: Tensor
    edge: Tensor

    @classmethod
    def of(cls, norm: SAINTNorm, train_idx: Tensor, device: torch.device) -> SubgraphWeights:
        loss = torch.zeros_like(norm.node_norm)
        loss[train_idx] = norm.node_norm[train_idx] * (loss.numel() / max(train_idx.numel(), 1))
        return cls(loss.to(device), norm.edge_norm.to(device))


def steps_per_epoch(norm: SAINTNorm, train_idx: Tensor) -> int:
    """Subgraphs per epoch: as many as draw every training vertex once in expectation (vertex
    ``v`` is in a share ``C_v / num_subgraphs = 1 / (node_norm[v] * N)`` of the subgraphs)."""
    num_nodes = norm.node_norm.numel()
    shares = 1 / (norm.node_norm[train_idx].double() * num_nodes)
    return max(math.ceil(train_idx.numel() / max(float(shares.sum()), 1e-9)), 1)


def train_epoch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loader: DataLoader,
    progress: bool = False,
    desc: str = "train",
    weights: SubgraphWeights | None = None,
) -> dict[str, Any]:
    """Run one pass over the loader's seeds (or subgraphs, trained with ``weights``: then the
    loss and accuracy are over each subgraph's training vertices, each step's loss estimate
    weighted by their number); return loss, accuracy, phases and traffic.

    Returns:
        ``{"loss", "train_acc", "time_s", "phases", "bytes_h2d", "rows_loaded", "rows_reused",
        "rows_cached", "batches", "match_degree"}``; loss and accuracy are averaged over seeds
        (not batches) during training, with dropout on; ``phases`` maps each phase of
        :data:`fastgl.loader.PHASES` to its seconds in this epoch.
    """
    model.train()
    loss_sum, correct, seen = 0.0, 0, 0
    start = time.perf_counter()
    for batch in tqdm(loader, total=len(loader), desc=desc, disable=not progress, leave=False):
        with loader.compute():
            if weights is None:
                loss, logits = train_step(model, optimizer, batch.x, batch.blocks, batch.y)
                counted = torch.ones_like(batch.y, dtype=torch.bool)
            else:
                loss, logits, counted = train_subgraph_step(model, optimizer, batch, weights)
            loss_sum += loss * int(counted.sum())
            correct += int((logits.argmax(dim=1) == batch.y)[counted].sum())
            seen += int(counted.sum())
    elapsed = time.perf_counter() - start
    totals = loader.stats.totals()
    traffic = {
        key: totals[key]
        for key in (
            "bytes_h2d",
            "rows_loaded",
            "rows_reused",
            "rows_cached",
            "batches",
            "match_degree",
        )
    }
    count = max(seen, 1)
    return {
        "loss": loss_sum / count,
        "train_acc": correct / count,
        "time_s": elapsed,
        "phases": loader.stats.phases(),
        **traffic,
    }


def train_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, x: Tensor, blocks: list[Block], y: Tensor
) -> tuple[float, Tensor]:
    """One step on a mini-batch (features in any float dtype; the model computes in float32):
    forward, cross entropy, backward, optimizer step. Returns the loss, read with ``.item()``,
    which waits for the device so a timer around the step measures it whole, and the logits."""
    logits = model(x.float(), blocks)
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.item(), logits


def train_subgraph_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, batch, weights: SubgraphWeights
) -> tuple[float, Tensor, Tensor]:
    """One step of graph-sampling training: the model on all of the subgraph (its block in
    every layer, GraphSAINT's ``edge_norm`` as edge weights), the loss summed over its training
    vertices weighted by ``node_norm``. Returns the loss, the logits and the training vertices'
    mask.

    GCN normalizes each layer by the subgraph's weighted degrees, which ``edge_norm`` makes
    estimates of the full graph's, where GraphSAINT's code multiplies the full graph's
    normalized adjacency by ``edge_norm``: one division by an estimate, a small bias, for
    layers that need no per-graph coefficients (on Cora within 2 points of neighbor sampling,
    docs/performance.md)."""
    blocks = batch.blocks * model.num_layers
    edge_weight = [weights.edge[blocks[0].eid.to(weights.edge.device)]] * model.num_layers
    logits = model(batch.x.float(), blocks, edge_weight)
    node_weight = weights.loss[batch.nodes.to(weights.loss.device)]
    counted = node_weight > 0  # labels off the training vertices are never read
    loss = (
        F.cross_entropy(logits[counted], batch.y[counted], reduction="none") * node_weight[counted]
    ).sum()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.item(), logits, counted


@torch.no_grad()
def evaluate(model: nn.Module, loader) -> float:
    """Accuracy of mini-batch inference on sampled neighborhoods (``nan`` without seeds)."""
    if loader.seeds.numel() == 0:
        return float("nan")
    model.eval()
    correct = 0
    for batch in loader:
        correct += int((model(batch.x.float(), batch.blocks).argmax(dim=1) == batch.y).sum())
    return correct / loader.seeds.numel()


def _derive_generators(seed: int) -> tuple[torch.Generator, int]:
    """Return the training pipeline's generator (shuffling and sampling) and a seed for the
    evaluation draws; both are a pure function of ``seed`` and differ from each other."""
    master = torch.Generator().manual_seed(seed)
    train_seed, eval_seed = torch.randint(2**62, (2,), generator=master).tolist()
    return torch.Generator().manual_seed(train_seed), eval_seed


def _summarize(
    history: list[dict[str, Any]], test_acc: float, dataset: NodeDataset, config: dict[str, Any]
) -> dict[str, Any]:
    """Build the summary dict :func:`train_node_classifier` returns."""
    from fastgl.loader import PHASES

    def mean(values) -> float:
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    return {
        "dataset": dataset.name,
        "num_nodes": dataset.num_nodes,
        "num_edges": dataset.num_edges,
        "test_acc": test_acc,
        "val_acc": history[-1]["val_acc"],
        "train_loss": history[-1]["loss"],
        "epoch_time_s": mean(e["time_s"] for e in history),
        **{phase: mean(e["phases"][phase] for e in history) for phase in PHASES},
        "bytes_h2d": mean(e["bytes_h2d"] for e in history),
        "match_degree": mean(e["match_degree"] for e in history),
        "epochs": history,
        "config": config,
    }
