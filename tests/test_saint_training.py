"""Graph-sampling training: SubgraphLoader's batches, the weights and steps `fastgl train` derives
from GraphSAINT's normalization, and GCN trained on the subgraph samplers, ClusterGCN's included
(Cora within 2 points of neighbor sampling)."""

import json
from pathlib import Path

import pytest
import torch

import fastgl
from fastgl.loader import SubgraphLoader
from fastgl.sampling import SAINTNorm, SAINTRandomWalkSampler
from fastgl.train import (
    SUBGRAPH_SAMPLERS,
    SubgraphWeights,
    steps_per_epoch,
    train_node_classifier,
)

PLANETOID = Path(__file__).resolve().parents[2] / "shared" / "data" / "planetoid" / "raw"


def quiet(dataset, **kwargs):
    return train_node_classifier(dataset, progress=False, log=lambda line: None, **kwargs)


def test_a_subgraph_loader_batch_is_a_whole_subgraph_with_its_features():
    ds = fastgl.data.synthetic_node_classification(num_nodes=300, num_features=6, seed=3)
    graph = fastgl.CSCGraph.from_edge_index(ds.edge_index, ds.num_nodes)
    sampler = SAINTRandomWalkSampler(graph, num_roots=20, walk_length=2)
    loader = SubgraphLoader(graph, ds.x, ds.y, sampler, num_steps=7, reorder=3)
    batches = list(loader)
    assert len(batches) == len(loader) == 7 == loader.stats.totals()["batches"]
    for batch in batches:
        assert batch.batch_size == batch.nodes.numel() == batch.y.numel()
        assert torch.equal(batch.x, ds.x[batch.nodes]) and torch.equal(batch.y, ds.y[batch.nodes])
        (block,) = batch.blocks
        assert block.num_src_nodes == block.num_dst_nodes == batch.batch_size
        inside = torch.isin(ds.edge_index, batch.nodes).all(0)
        assert sorted(block.eid.tolist()) == inside.nonzero().view(-1).tolist()
    assert loader.stats.phases()["sample_s"] > 0
    torch.manual_seed(0)
    again = [b.nodes for b in SubgraphLoader(graph, ds.x, ds.y, sampler, 7, reorder=3)]
    torch.manual_seed(0)
    same = [b.nodes for b in SubgraphLoader(graph, ds.x, ds.y, sampler, 7, reorder=3)]
    assert all(torch.equal(a, b) for a, b in zip(again, same))


def test_a_subgraph_loader_refuses_bad_arguments():
    graph = fastgl.CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), 2)
    other = fastgl.CSCGraph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), 2)
    x = torch.randn(2, 3)
    with pytest.raises(ValueError, match="SubgraphLoader: num_steps must be >= 1, got 0"):
        SubgraphLoader(graph, x, None, SAINTRandomWalkSampler(graph, 1, 1), num_steps=0)
    with pytest.raises(ValueError, match="SubgraphLoader: the sampler draws from another graph"):
        SubgraphLoader(graph, x, None, SAINTRandomWalkSampler(other, 1, 1), num_steps=1)


def test_loss_weights_estimate_the_mean_training_loss_and_steps_cover_the_training_nodes():
    """node_norm = S / (C_v N): vertex v is in a share C_v / S of the S subgraphs."""
    counts = torch.tensor([10.0, 5.0, 20.0, 40.0])  # C_v of 4 vertices over S = 40 subgraphs
    norm = SAINTNorm(40 / (counts * 4), torch.ones(3), 40)
    train = torch.tensor([0, 1])
    weights = SubgraphWeights.of(norm, train, torch.device("cpu"))
    # E[sum over a subgraph of weight * loss] = sum_v share_v * weight_v * loss_v
    share = counts / 40
    assert torch.allclose(share * weights.loss, torch.tensor([0.5, 0.5, 0.0, 0.0]))
    # Training vertices 0 and 1 appear 0.25 + 0.125 times a subgraph: 2 / 0.375 -> 6 steps.
    assert steps_per_epoch(norm, train) == 6
    assert torch.equal(weights.edge, norm.edge_norm)


@pytest.mark.parametrize("sampler", SUBGRAPH_SAMPLERS)
def test_training_runs_with_every_subgraph_sampler(sampler, tmp_path) -> None:
    ds = fastgl.data.synthetic_node_classification(num_nodes=600, seed=2)
    result = quiet(ds, model="gcn", sampler=sampler, epochs=3, batch_size=128)
    assert result["config"]["sampler"] == sampler and result["config"]["fanouts"] == [-1, -1]
    assert result["sample_s"] > 0 and result["load_s"] > 0
    assert result["test_acc"] > 0.5  # 8 balanced classes: chance is 0.125
    batches = {epoch["batches"] for epoch in result["epochs"]}
    assert len(batches) == 1 and batches.pop() > 1


def test_subgraph_samplers_train_gcn_with_all_edges_only() -> None:
    ds = fastgl.data.synthetic_node_classification(num_nodes=200)
    with pytest.raises(ValueError, match="the saint-rw sampler trains gcn only"):
        quiet(ds, model="sage", sampler="saint-rw")
    with pytest.raises(ValueError, match="the frontier sampler aggregates over all of a"):
        quiet(ds, model="gcn", sampler="frontier", fanouts=[10, 10])


def test_the_command_line_trains_with_a_subgraph_sampler(tmp_path) -> None:
    from fastgl import cli

    summary = tmp_path / "summary.json"
    argv = ["train", "--sampler", "saint-edge", "--model", "gcn", "--num-nodes", "600"]
    argv += ["--epochs", "1", "--no-progress", "--out-dir", str(tmp_path / "run")]
    assert cli.main([*argv, "--summary-json", str(summary)]) == 0
    config = json.loads(summary.read_text())["config"]
    assert config["sampler"] == "saint-edge" and config["fanouts"] == [-1, -1]


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
def test_subgraph_samplers_train_cora_within_2_points_of_neighbor_sampling() -> None:
    """GCN on Cora, `fastgl train`'s defaults but 100 epochs (about 512 vertices a subgraph,
    evaluated with the exact GCN), seeds 0-3. Measured means: neighbor 0.798, saint-rw 0.802,
    saint-node 0.784, saint-edge 0.800, frontier 0.804, cluster 0.804."""
    from fastgl.data import read_planetoid

    dataset = read_planetoid(PLANETOID, "cora", normalize_features=True)
    means = {
        sampler: sum(
            quiet(dataset, model="gcn", sampler=sampler, seed=seed, epochs=100)["test_acc"]
            for seed in range(4)
        )
        / 4
        for sampler in ("neighbor", *SUBGRAPH_SAMPLERS)
    }
    for mean in means.values():
        assert mean >= means["neighbor"] - 0.02, means
    assert means["neighbor"] > 0.78, means
