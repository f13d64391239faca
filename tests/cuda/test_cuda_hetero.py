"""HeteroNeighborSampler on the GPU against the CPU (temporal sampling too): the same sample,
draw for draw, and one synchronization per call, on the device engine.

Every draw is a pure function of (key, pair, draw index) (docs/contracts.md, "Randomness") and
the sampler's pairs, relabeling and layout are built the same way on both devices, so for one
Philox key the CUDA sample equals the CPU sample exactly. The key normally comes from the
generator of the graph's device (CPU and CUDA generators give different keys for the same
seed), so both run ``_sample`` with one explicit key.
"""

import pytest
import torch

from benchmarks.device_counts import count_syncs
from fastgl import HeteroCSCGraph
from fastgl.sampling import HeteroNeighborSampler

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
AT = ("paper", "at", "venue")
NONE = ("venue", "hosts", "venue")  # no edges
NUM_NODES = {"author": 3000, "paper": 2000, "venue": 40, "empty": 0}
HUB_DEGREE = 50_000  # paper 0 is cited this often: a transit far past the shared-memory cache


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _pairs(num_src, num_dst, num_edges, generator):
    src = torch.randint(0, num_src, (num_edges,), generator=generator)
    dst = torch.randint(0, num_dst, (num_edges,), generator=generator)
    return torch.stack([src, dst])


def _edges(dtype):
    g = _gen(0)
    hub = torch.stack(
        [
            torch.randint(0, 2000, (HUB_DEGREE,), generator=g),
            torch.zeros(HUB_DEGREE, dtype=torch.int64),
        ]
    )
    edges = {
        WRITES: _pairs(3000, 2000, 20_000, g),
        CITES: torch.cat([_pairs(2000, 2000, 15_000, g), hub], 1),
        AT: _pairs(2000, 40, 2000, g),
        NONE: torch.zeros(2, 0, dtype=torch.int64),
    }
    return {etype: ei.to(dtype) for etype, ei in edges.items()}


_GRAPHS = {}


def _graphs(dtype, weight_dtype):
    """``(cpu graph, the same on the GPU)``, built once per dtype pair."""
    key = (dtype, weight_dtype)
    if key not in _GRAPHS:
        edges, g = _edges(dtype), _gen(1)
        weights = None
        if weight_dtype is not None:
            weights = {}
            for etype, ei in edges.items():
                w = torch.rand(ei.shape[1], generator=g, dtype=torch.float64) + 0.05
                w[torch.rand(ei.shape[1], generator=g) < 0.2] = 0
                weights[etype] = w.to(weight_dtype)
        cpu = HeteroCSCGraph.from_edge_index_dict(edges, NUM_NODES, weights)
        _GRAPHS[key] = (cpu, cpu.to("cuda"))
    return _GRAPHS[key]


def _seeds():
    return {
        "paper": torch.cat(
            [torch.tensor([0, 5, 0]), torch.randint(0, 2000, (300,), generator=_gen(2))]
        ),
        "venue": torch.tensor([3, 39]),
        "empty": torch.zeros(0, dtype=torch.int64),
    }


def _assert_same(got, expected):
    for field in ("nodes", "row", "col", "eid", "seed_index", "in_degrees", "batch"):
        g, e = getattr(got, field), getattr(expected, field)
        assert (g is None) == (e is None), field
        for key in e or {}:
            assert g[key].is_cuda, f"{field}[{key}] is not on the GPU"
            assert torch.equal(g[key].cpu(), e[key]), f"{field}[{key}] differs"
    assert got.num_sampled_nodes == expected.num_sampled_nodes
    assert got.num_sampled_edges == expected.num_sampled_edges
    for got_layer, expected_layer in zip(got.blocks, expected.blocks):
        for etype, block in expected_layer.items():
            assert torch.equal(got_layer[etype].indptr.cpu(), block.indptr)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"replace": True},
        {"layerwise": True},
        {"disjoint": True},
        {"weighted": True},
        {"weighted": True, "replace": True},
    ],
    ids=str,
)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_hetero_sampler_cuda_equals_cpu(dtype, options):
    weighted = options.get("weighted", False)
    weight_dtypes = [torch.float32, torch.float64] if weighted else [None]
    fanouts = {WRITES: [10, 3], CITES: [15, -1], AT: [2, 0], NONE: [5, 5]}
    if options.get("layerwise"):
        fanouts[CITES] = [15, 4]
    for weight_dtype in weight_dtypes:
        cpu, gpu = _graphs(dtype, weight_dtype)
        cpu_sampler = HeteroNeighborSampler(cpu, fanouts, **options)
        gpu_sampler = HeteroNeighborSampler(gpu, fanouts, **options)
        seeds = _seeds()
        for key in (0, 12345, (1 << 62) - 1):
            expected = cpu_sampler._sample(seeds, key)
            got = gpu_sampler._sample({t: s.cuda() for t, s in seeds.items()}, key)
            _assert_same(got, expected)


@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("kind", ["node", "edge"])
@pytest.mark.parametrize("replace", [False, True])
def test_temporal_hetero_sampler_cuda_equals_cpu(kind, strategy, replace):
    """Temporal sampling on the GPU: the same time-sorted view (stable sorts), prefix search
    and draws as on the CPU, so the same sample for one Philox key. Venues (node times) and
    AT (edge times) are untimed: drawn uniformly, as PyG does."""
    cpu, gpu = _graphs(torch.int64, None)
    g = _gen(7)
    if kind == "node":
        option = "node_time"
        times = {"author": torch.randint(0, 500, (3000,), generator=g)}
        times["paper"] = torch.rand(2000, generator=g, dtype=torch.float64) * 500
    else:
        option = "edge_time"
        times = {WRITES: torch.randint(0, 500, (cpu.num_edges[WRITES],), generator=g)}
        times[CITES] = torch.randint(0, 500, (cpu.num_edges[CITES],), generator=g)
    seeds = _seeds()
    seed_time = {t: torch.randint(0, 500, (s.numel(),), generator=g) for t, s in seeds.items()}
    fanouts = {WRITES: [10, 3], CITES: [15, 4], AT: [2, 0], NONE: [5, 5]}
    options = dict(replace=replace, strategy=strategy)
    cpu_sampler = HeteroNeighborSampler(cpu, fanouts, **options, **{option: times})
    cuda_times = {k: v.cuda() for k, v in times.items()}
    gpu_sampler = HeteroNeighborSampler(gpu, fanouts, **options, **{option: cuda_times})
    cuda_seeds = {t: s.cuda() for t, s in seeds.items()}
    cuda_seed_time = {t: s.cuda() for t, s in seed_time.items()}
    for key in (0, 12345, (1 << 62) - 1):
        expected = cpu_sampler._sample(seeds, key, seed_time)
        got = gpu_sampler._sample(cuda_seeds, key, cuda_seed_time)
        _assert_same(got, expected)
        assert sum(sum(c) for c in expected.num_sampled_edges.values()) > 0


@pytest.mark.parametrize(
    "options",
    [{}, {"layerwise": True}, {"disjoint": True}, {"weighted": True}, {"replace": True}],
    ids=str,
)
def test_hetero_sampler_synchronizes_once_per_call(options):
    """All hops run on the device engine: one read-back per call (the counts and the fault
    word), whatever the number of hops, node types and relations; a hop with fanout -1 waits
    once more for its size."""
    weighted = options.get("weighted", False)
    _, gpu = _graphs(torch.int64, torch.float32 if weighted else None)
    seeds = {t: s.cuda() for t, s in _seeds().items()}
    bounded = {WRITES: [10, 3, 2], CITES: [15, 4, 2], AT: [2, 0, 1], NONE: [5, 5, 5]}
    sampler = HeteroNeighborSampler(gpu, bounded, **options)
    sampler.sample(seeds)  # the kernels' first use
    assert count_syncs(lambda: sampler.sample(seeds)) == 1
    unbounded = {**bounded, AT: [2, -1, 1]}
    assert count_syncs(lambda: HeteroNeighborSampler(gpu, unbounded, **options).sample(seeds)) == 2


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_temporal_hetero_sampler_synchronizes_once_per_call(strategy):
    """Temporal sampling with the seeds' times given: one read-back per call too."""
    _, gpu = _graphs(torch.int64, None)
    g = _gen(8)
    node_time = {"author": torch.randint(0, 500, (3000,), generator=g).cuda()}
    seeds = {t: s.cuda() for t, s in _seeds().items()}
    seed_time = {
        t: torch.randint(0, 500, (s.numel(),), generator=g).cuda() for t, s in seeds.items()
    }
    fanouts = {WRITES: [10, 3], CITES: [15, 4], AT: [2, 0], NONE: [5, 5]}
    sampler = HeteroNeighborSampler(gpu, fanouts, node_time=node_time, strategy=strategy)
    sampler.sample(seeds, seed_time=seed_time)  # the kernels' first use
    assert count_syncs(lambda: sampler.sample(seeds, seed_time=seed_time)) == 1


def test_hetero_seed_out_of_range_on_cuda_raises_the_cpu_error():
    _, gpu = _graphs(torch.int64, None)
    sampler = HeteroNeighborSampler(gpu, [3, 2])
    with pytest.raises(ValueError, match=r"seeds\['paper'\] has 'paper' id 2000, out of range"):
        sampler.sample({"paper": torch.tensor([1, 2000], device="cuda")})


def test_graph_to_cuda_rebuilds_the_combined_arrays():
    cpu, gpu = _graphs(torch.int64, torch.float32)
    assert gpu.device.type == "cuda" and gpu.node_offsets.is_cuda
    for field, value in cpu.combined._asdict().items():
        assert torch.equal(getattr(gpu.combined, field).cpu(), value), field


def test_cuda_generator_and_seeds_on_the_wrong_device():
    _, gpu = _graphs(torch.int64, None)
    sampler = HeteroNeighborSampler(gpu, [3, 2])
    seeds = {"paper": torch.tensor([1, 2], device="cuda")}
    generator = torch.Generator(device="cuda").manual_seed(0)
    first = sampler.sample(seeds, generator=generator.manual_seed(0))
    again = sampler.sample(seeds, generator=generator.manual_seed(0))
    _assert_same(again, _to_cpu(first))
    with pytest.raises(
        ValueError, match=r"seeds\['paper'\] must be on the graph's device cuda.*, got cpu"
    ):
        sampler.sample({"paper": torch.tensor([1])})


def _to_cpu(sub):
    """``sub`` with its tensors on the CPU (blocks rebuilt from them)."""
    fields = {}
    for name in ("nodes", "row", "col", "eid", "seed_index", "in_degrees", "batch"):
        value = getattr(sub, name)
        fields[name] = None if value is None else {k: v.cpu() for k, v in value.items()}
    return type(sub)(
        num_sampled_nodes=sub.num_sampled_nodes,
        num_sampled_edges=sub.num_sampled_edges,
        layerwise=sub.layerwise,
        **fields,
    )
