"""What the pipeline measures per mini-batch, and the totals of an epoch."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

#: Time phases of one batch, in pipeline order.
PHASES = ("sample_s", "idmap_s", "reorder_s", "load_s", "compute_s", "wait_s")


@dataclass
class BatchRecord:
    """Measurements of one mini-batch.

    Attributes:
        sample_s: sampling (the batch's share of its window's one compiled sampling call, which
            draws the neighbors and relabels them with Fused-Map in one pass per hop).
        idmap_s: relabeling outside sampling: 0 with fastgl's samplers, whose Fused-Map runs
            inside the sampling pass (kept for pipelines with a separate relabel step).
        reorder_s: the batch's share of its window's match-degree matrix and greedy order.
        load_s: assembling the feature buffer (Match, cache, gather and host-to-device copy).
        compute_s: what the caller marked with :meth:`DataLoader.compute`.
        wait_s: how long the consumer waited for this batch when prefetching (the phases above
            then overlap the compute of the batch before; without prefetching they are the wait).
        bytes_h2d: feature bytes moved host to device (on the CPU: bytes gathered from the store).
        rows_loaded, rows_reused, rows_cached: rows of the buffer loaded from the host, copied
            from the previous batch's buffer (Match), read from the device cache.
        num_nodes: rows of the buffer (sampled nodes).
        match_degree: ``rows_reused / min(previous rows, rows)``, ``None`` for the first batch.
    """

    sample_s: float = 0.0
    idmap_s: float = 0.0
    reorder_s: float = 0.0
    load_s: float = 0.0
    compute_s: float = 0.0
    wait_s: float = 0.0
    bytes_h2d: int = 0
    rows_loaded: int = 0
    rows_reused: int = 0
    rows_cached: int = 0
    num_nodes: int = 0
    match_degree: float | None = None


class PipelineStats:
    """The records of the batches of one epoch (reset when a new epoch starts)."""

    def __init__(self) -> None:
        self.batches: list[BatchRecord] = []

    def totals(self) -> dict[str, float]:
        """Sums over the epoch's batches of every phase and counter, ``batches`` (their number)
        and ``match_degree`` (mean over batches that have one, ``None`` if none)."""
        out: dict[str, float] = {f.name: 0 for f in fields(BatchRecord) if f.name != "match_degree"}
        for record in self.batches:
            for key, value in asdict(record).items():
                if key != "match_degree":
                    out[key] += value
        degrees = [r.match_degree for r in self.batches if r.match_degree is not None]
        out["match_degree"] = sum(degrees) / len(degrees) if degrees else None
        out["batches"] = len(self.batches)
        return out

    def phases(self) -> dict[str, float]:
        """The epoch's seconds per phase (the keys of :data:`PHASES`)."""
        totals = self.totals()
        return {phase: totals[phase] for phase in PHASES}
