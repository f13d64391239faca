"""The CPU block pool (common/block_pool.h): a sampler's large buffers are recycled between calls
instead of being faulted in afresh, without ever handing out a buffer that is still in use."""

import gc
import json
import mmap
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fastgl import CSCGraph, NeighborSampler
from fastgl.ops import cached_bytes, empty_cache

FANOUTS = [15, 10]
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def sampler():
    # 2,048 seeds x fanouts [15, 10] on 50,000 nodes of degree ~20 draw ~300,000 edges: 2.4 MB
    # per edge array, well above the pool's 256 KB threshold.
    gen = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 50_000, (2, 1_000_000), generator=gen)
    graph = CSCGraph.from_edge_index(edge_index, num_nodes=50_000)
    seeds = torch.randperm(50_000, generator=gen)[:2048]
    return NeighborSampler(graph, FANOUTS), seeds


def sample(sampler, seeds, seed=1):
    return sampler.sample(seeds, torch.Generator().manual_seed(seed))


def snapshot(result):
    return {
        name: getattr(result, name).clone()
        for name in ("nodes", "row", "col", "eid", "in_degrees", "seed_index")
    }


def test_live_results_keep_their_buffers(sampler):
    # Every result below is alive while the next calls run, each drawn with its own seed: a
    # buffer handed out twice would show as a result that changed after its call.
    s, seeds = sampler
    results = [sample(s, seeds, seed) for seed in range(3)]
    snapshots = [snapshot(result) for result in results]
    del results[1], snapshots[1]  # its buffers go back to the pool and the next call takes them
    for seed in (3, 4):
        results.append(sample(s, seeds, seed))
        snapshots.append(snapshot(results[-1]))
    for result, expected in zip(results, snapshots):
        for name, tensor in expected.items():
            assert torch.equal(getattr(result, name), tensor), name
    assert not torch.equal(snapshots[0]["row"][:1000], snapshots[1]["row"][:1000])  # seeds differ
    assert int(results[0].row.numel()) > 200_000  # the sizes the pool is for


def test_freed_results_return_to_the_pool_and_empty_cache_frees_them(sampler):
    s, seeds = sampler
    gc.collect()  # results of earlier tests give their buffers back now, not during the checks
    empty_cache()
    assert cached_bytes() == 0
    result = sample(s, seeds)
    in_use = sum(t.numel() * t.element_size() for t in (result.row, result.col, result.eid))
    held_after_call = cached_bytes()  # the call's scratch (hash table, per-hop arrays)
    del result
    assert cached_bytes() >= held_after_call + in_use
    freed = cached_bytes()
    assert empty_cache() == freed
    assert cached_bytes() == 0


def test_induced_subgraph_outputs_come_from_the_pool():
    """induced_subgraphs' row/col/eid (hundreds of MB at products scale) are pooled too: freed,
    they go back to the pool; a live result keeps its buffers while later calls run."""
    gen = torch.Generator().manual_seed(2)
    graph = CSCGraph.from_edge_index(torch.randint(0, 50_000, (2, 1_000_000), generator=gen))
    nodes = torch.cat([torch.randperm(50_000, generator=gen)[:20_000] for _ in range(2)])
    ptr = torch.tensor([0, 20_000, 40_000])
    first = graph.induced_subgraphs(nodes, ptr)
    expected = [t.clone() for t in first]
    gc.collect()
    empty_cache()
    second = graph.induced_subgraphs(nodes.flip(0), ptr)
    held = cached_bytes()
    in_use = sum(t.numel() * t.element_size() for t in second[:3])
    assert in_use > 3 * 1_000_000  # each array well above the pool's 256 KB threshold
    del second
    assert cached_bytes() >= held + in_use
    graph.induced_subgraphs(nodes, ptr)  # takes the freed buffers while `first` is alive
    assert all(torch.equal(t, e) for t, e in zip(first, expected))


# In a fresh process (no allocator history): the page faults of four identical sampler calls on
# the sampler fixture's graph, on one thread (the counter follows the calling thread only).
FAULTS_OF_REPEATED_CALLS = """
import json, sys
import torch
from fastgl import CSCGraph, NeighborSampler
from page_faults import open_fault_counter, read_counter
torch.set_num_threads(1)
gen = torch.Generator().manual_seed(0)
graph = CSCGraph.from_edge_index(torch.randint(0, 50_000, (2, 1_000_000), generator=gen),
                                 num_nodes=50_000)
seeds = torch.randperm(50_000, generator=gen)[:2048]
sampler = NeighborSampler(graph, [15, 10])
counter = open_fault_counter()
if counter is None:
    print(json.dumps(None))
    sys.exit()
faults = []
for _ in range(4):
    before = read_counter(counter)
    result = sampler.sample(seeds, torch.Generator().manual_seed(1))
    faults.append(read_counter(counter) - before)
    del result
print(json.dumps(faults))
"""


def transparent_huge_pages_always() -> bool:
    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return mode.exists() and "[always]" in mode.read_text()


@pytest.mark.skipif(
    mmap.PAGESIZE != 4096 or transparent_huge_pages_always(),
    reason="the fault counts below assume 4 KB pages on demand",
)
def test_repeated_calls_take_almost_no_page_faults():
    child = subprocess.run(
        [sys.executable, "-c", FAULTS_OF_REPEATED_CALLS],
        cwd=TESTS,
        capture_output=True,
        text=True,
        check=True,
    )
    faults = json.loads(child.stdout)
    if faults is None:
        pytest.skip("perf_event_open refused (kernel.perf_event_paranoid) or unknown platform")
    # The first call faults its buffers in page by page (about 2,700 faults); the next ones find
    # them in the pool, resident. Left to glibc they took 2,200 and 1,400 faults more.
    first, later = faults[0], faults[1:]
    assert first > 1000, faults
    assert sum(later) < first // 5, faults


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_samples_with_the_inherited_pool(sampler):
    # DataLoader workers are forked: the child inherits the pool (lock included) and must use it.
    # Like a DataLoader worker it runs torch on one thread: GNU OpenMP cannot start a parallel
    # region in a child forked after the parent used one (plain torch hangs there too).
    s, seeds = sampler
    expected = snapshot(sample(s, seeds))  # its buffers are in the pool at fork time
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(60)  # a deadlock ends the child instead of the test run
            torch.set_num_threads(1)
            result = snapshot(sample(s, seeds))
            same = all(torch.equal(result[name], expected[name]) for name in expected)
            os._exit(0 if same and cached_bytes() >= 0 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
