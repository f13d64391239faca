"""Temporal sampling on the GPU: for the same Philox key, the same sample as on the CPU, node
for node and edge for edge (the time sort is stable, the binary search and the relabeling are
deterministic, and the device engine draws what sample_ranges draws), with one synchronization
per call when the seeds' times are given."""

import pytest
import torch
from reference import assert_same_subgraph, check_temporal_sample, random_edge_index

from benchmarks.device_counts import count_syncs
from fastgl import CSCGraph, TemporalNeighborSampler
from fastgl.sampling.temporal import _sample_temporal


def _gen(seed):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("strategy", ["uniform", "last"])
@pytest.mark.parametrize("kind", ["node", "edge"])
@pytest.mark.parametrize("replace", [False, True])
def test_cuda_equals_cpu(strategy, kind, replace):
    edge_index = random_edge_index(3000, 60_000, seed=1)
    hub = torch.stack([torch.randint(0, 3000, (20_000,), generator=_gen(2)), torch.zeros(20_000)])
    edge_index = torch.cat([edge_index, hub.long()], 1)  # node 0: 20,000+ in-edges
    times = torch.randint(
        0, 500, (3000 if kind == "node" else edge_index.shape[1],), generator=_gen(3)
    )
    seeds = torch.cat(
        [torch.zeros(50, dtype=torch.long), torch.randint(0, 3000, (500,), generator=_gen(4))]
    )
    seed_time = torch.randint(0, 500, (seeds.numel(),), generator=_gen(5))
    cpu_graph = CSCGraph.from_edge_index(edge_index, num_nodes=3000)
    options = dict(strategy=strategy, replace=replace)
    options["node_time" if kind == "node" else "edge_time"] = times
    cpu = TemporalNeighborSampler(cpu_graph, [10, 5, -1], **options)
    options["node_time" if kind == "node" else "edge_time"] = times.cuda()
    gpu = TemporalNeighborSampler(cpu_graph.to("cuda"), [10, 5, -1], **options)
    for key in (0, 12345, 2**61 + 7):
        expected = _sample_temporal(cpu, seeds, seed_time, key)
        got = _sample_temporal(gpu, seeds.cuda(), seed_time.cuda(), key)
        assert got.nodes.is_cuda
        assert_same_subgraph(got, expected)
        assert torch.equal(got.batch.cpu(), expected.batch)
        assert torch.equal(got.in_degrees.cpu(), expected.in_degrees)
    check_temporal_sample(
        expected,
        edge_index,
        seeds,
        seed_time,
        [10, 5, -1],
        strategy,
        replace,
        node_time=times if kind == "node" else None,
        edge_time=times if kind == "edge" else None,
    )


def test_cuda_sample_with_a_cuda_generator():
    edge_index = random_edge_index(500, 5000, seed=6).cuda()
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=500)
    sampler = TemporalNeighborSampler(graph, [4, 4], node_time=torch.arange(500).cuda())
    seeds = torch.arange(0, 500, 7).cuda()
    a = sampler.sample(seeds, generator=torch.Generator(device="cuda").manual_seed(1))
    b = sampler.sample(seeds, generator=torch.Generator(device="cuda").manual_seed(1))
    assert_same_subgraph(a, b)
    check_temporal_sample(
        a, edge_index, seeds, seeds, [4, 4], "uniform", False, node_time=torch.arange(500)
    )


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_cuda_temporal_sampling_synchronizes_once(strategy):
    """All hops on the device engine; a seed out of range still raises the CPU's error."""
    edge_index = random_edge_index(2000, 30_000, seed=7).cuda()
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=2000)
    node_time = torch.randint(0, 100, (2000,), generator=_gen(8)).cuda()
    sampler = TemporalNeighborSampler(graph, [10, 5, 3], node_time=node_time, strategy=strategy)
    seeds = torch.randint(0, 2000, (512,), generator=_gen(9)).cuda()
    seed_time = torch.randint(0, 100, (512,), generator=_gen(10)).cuda()
    sampler.sample(seeds, seed_time)  # the kernels' first use
    assert count_syncs(lambda: sampler.sample(seeds, seed_time)) == 1
    with pytest.raises(ValueError, match="seed id 2000 out of range for a graph of 2000 nodes"):
        sampler.sample(torch.tensor([1, 2000], device="cuda"), seed_time[:2])
