"""The R-MAT generator: shape, determinism, id range, quadrant probabilities, heavy tail."""

import pytest
import torch

from fastgl.data.rmat import RMAT_PRESETS, _draw_raw_ids, rmat_edge_index, rmat_graph


def test_shape_dtype_and_range():
    ei = rmat_edge_index(12, num_edges=30_001, num_nodes=3_000, seed=1)
    assert ei.shape == (2, 30_001) and ei.dtype == torch.int64
    assert int(ei.min()) >= 0 and int(ei.max()) < 3_000


def test_edge_factor_counts_nodes():
    assert rmat_edge_index(8, edge_factor=4).shape == (2, 1024)
    assert rmat_edge_index(8, edge_factor=2.5, num_nodes=100).shape == (2, 250)
    assert rmat_edge_index(8, num_edges=0).shape == (2, 0)


def test_deterministic_and_seeded():
    before = torch.get_rng_state()
    first = rmat_edge_index(10, edge_factor=8, seed=3)
    assert torch.equal(torch.get_rng_state(), before)  # the global RNG is left alone
    assert torch.equal(first, rmat_edge_index(10, edge_factor=8, seed=3))
    assert not torch.equal(first, rmat_edge_index(10, edge_factor=8, seed=4))


def test_undirected_stores_both_directions():
    ei = rmat_edge_index(9, num_edges=2_001, undirected=True, seed=2)
    half = ei.shape[1] // 2
    assert ei.shape[1] == 2_000
    assert torch.equal(ei[:, half:], ei[:, :half].flip(0))


def test_quadrant_probabilities_at_every_level():
    a, b, c = 0.5, 0.2, 0.25
    count, scale = 200_000, 6  # 6 levels: one draw of four levels and one of two
    src, dst = _draw_raw_ids(count, scale, (a, b, c), torch.Generator().manual_seed(0), {})
    assert int(src.max()) < 1 << scale and int(dst.max()) < 1 << scale
    for level in range(scale):
        bit = scale - 1 - level
        src_bit, dst_bit = (src >> bit) & 1, (dst >> bit) & 1
        quadrant = torch.bincount(src_bit * 2 + dst_bit, minlength=4).double() / count
        expected = torch.tensor([a, b, c, 1 - a - b - c], dtype=torch.float64)
        # Standard error is at most sqrt(0.25 / 2e5) ~ 0.0011; allow 5 of them.
        assert torch.allclose(quadrant, expected, atol=0.0056), (level, quadrant)


def test_zero_probability_quadrant_never_drawn():
    src, dst = _draw_raw_ids(50_000, 9, (0.5, 0.3, 0.2), torch.Generator().manual_seed(1), {})
    assert int((src & dst).sum()) == 0  # d = 0: no level sets both bits


def test_heavy_tailed_degrees_with_hubs_spread_out():
    hub_ids = []
    for seed in range(4):
        ei = rmat_edge_index(12, edge_factor=16, seed=seed)
        degree = torch.bincount(ei[1], minlength=1 << 12).double()
        assert degree.max() > 25 * degree.mean()  # an Erdos-Renyi graph would give ~2x
        assert (degree == 0).double().mean() > 0.05
        hub_ids.append(int(degree.argmax()))
    # Without the node permutation the hub would always be raw id 0.
    assert len(set(hub_ids)) > 1


def test_rmat_graph_presets_and_overrides():
    graph = rmat_graph("tiny")
    tiny = RMAT_PRESETS["tiny"]
    assert graph.num_nodes == tiny["num_nodes"] and graph.num_edges == tiny["num_edges"]
    other = rmat_graph("tiny", seed=5)
    assert not torch.equal(graph.indices, other.indices)
    assert rmat_graph(dict(scale=5, edge_factor=2)).num_nodes == 32


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(scale=8),  # neither edge_factor nor num_edges
        dict(scale=8, edge_factor=2, num_edges=10),  # both
        dict(scale=8, edge_factor=2, num_nodes=257),  # more nodes than 2^scale
        dict(scale=8, edge_factor=2, a=0.7, b=0.2, c=0.2),  # a + b + c > 1
        dict(scale=-1, edge_factor=2),
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="rmat_edge_index"):
        rmat_edge_index(**kwargs)


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown preset"):
        rmat_graph("huge")
