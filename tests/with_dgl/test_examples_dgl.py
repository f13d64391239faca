"""The DGL example and its fastgl version train Cora to the same accuracy, as does fastgl's own
training path. Runs in the DGL environment."""

import pytest

pytest.importorskip("dgl", reason="DGL is not installed (it runs in the DGL environment)")

from examples_support import PLANETOID, SEEDS, example_accuracy, mean, native_accuracy


@pytest.mark.skipif(not PLANETOID.exists(), reason="../shared/data/planetoid is not present")
def test_dgl_dropin_example_trains_cora_like_dgl_and_fastgl(tmp_path):
    original = [example_accuracy("dgl_graphsage.py", seed, tmp_path) for seed in SEEDS]
    dropin = [example_accuracy("dgl_graphsage_fastgl.py", seed, tmp_path) for seed in SEEDS]
    native = [native_accuracy(seed, tmp_path) for seed in SEEDS]
    assert min(original) >= 0.76 and min(dropin) >= 0.76
    assert abs(mean(dropin) - mean(original)) <= 0.025
    assert abs(mean(dropin) - mean(native)) <= 0.025
