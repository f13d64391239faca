"""Tests for fastgl.train: the GraphSAGE layer math and the training loop on the real sampler."""

import pytest
import torch

from fastgl.data import synthetic_node_classification
from fastgl.train import BlockEdges, GraphSAGE, SAGELayer, mean_aggregate, train_graphsage


def test_mean_aggregate_matches_dense_reference() -> None:
    gen = torch.Generator().manual_seed(0)
    num_src, num_dst, num_edges = 30, 10, 80
    h = torch.randn(num_src, 5, generator=gen, dtype=torch.float64)
    src = torch.randint(num_src, (num_edges,), generator=gen)
    dst = torch.randint(num_dst - 2, (num_edges,), generator=gen)  # last two dst: no in-edges
    adjacency = torch.zeros(num_dst, num_src, dtype=torch.float64).index_put_((dst, src), torch.ones(num_edges, dtype=torch.float64), accumulate=True)
    expected = adjacency @ h / adjacency.sum(1, keepdim=True).clamp(min=1)
    torch.testing.assert_close(mean_aggregate(h, src, dst, num_dst), expected)
    assert bool((mean_aggregate(h, src, dst, num_dst)[-2:] == 0).all())


def test_sage_layer_gradients() -> None:
    torch.manual_seed(0)
    layer = SAGELayer(3, 2).double()
    block = BlockEdges(torch.tensor([1, 2, 3, 0]), torch.tensor([0, 0, 1, 1]), 4, 2)
    h = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: layer(t, block), (h,))


def test_graphsage_rejects_wrong_block_count() -> None:
    model = GraphSAGE(4, 8, 2, num_layers=2)
    block = BlockEdges(torch.tensor([0]), torch.tensor([0]), 1, 1)
    with pytest.raises(ValueError, match="1 blocks for a model of 2 layers"):
        model(torch.zeros(1, 4), [block])


def quiet(**kwargs):
    ds = synthetic_node_classification(num_nodes=3000, seed=1)
    return train_graphsage(ds, progress=False, log=lambda line: None, **kwargs)


def test_training_learns_and_reports() -> None:
    result = quiet(epochs=3)
    assert result["test_acc"] > 0.85  # a 1-layer MLP gets about 0.55 on these features
    assert result["epochs"][-1]["loss"] < result["epochs"][0]["loss"]
    assert len(result["epochs"]) == 3 and result["num_nodes"] == 3000
    for key in ("sample_s", "gather_s", "compute_s"):
        assert 0 < result[key] <= result["epoch_time_s"]


def test_training_is_reproducible() -> None:
    def accuracies(result):
        return [(e["loss"], e["train_acc"], e["val_acc"]) for e in result["epochs"]] + [result["test_acc"]]

    assert accuracies(quiet(epochs=2, seed=5)) == accuracies(quiet(epochs=2, seed=5))
    assert accuracies(quiet(epochs=2, seed=5)) != accuracies(quiet(epochs=2, seed=6))


def test_training_logs_one_line_per_epoch() -> None:
    lines = []
    ds = synthetic_node_classification(num_nodes=1000)
    train_graphsage(ds, epochs=2, progress=False, log=lines.append)
    assert [line.split(" |")[0] for line in lines[:2]] == ["epoch 1/2", "epoch 2/2"]
    assert lines[-1].startswith("test acc ")


def test_training_rejects_bad_arguments() -> None:
    ds = synthetic_node_classification(num_nodes=200)
    with pytest.raises(ValueError, match="fanouts"):
        train_graphsage(ds, fanouts=(), progress=False)
    with pytest.raises(ValueError, match="epochs"):
        train_graphsage(ds, epochs=0, progress=False)
