"""Outputs large enough to be populated in bulk before the kernels write them (common/page_advice):
the results stay exact, and the kernels no longer take one page fault per output page."""

import ctypes
import mmap
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from page_faults import counting_page_faults

from fastgl import CSCGraph
from fastgl.nn.functional import aggregate, edge_softmax
from fastgl.ops import csc_from_coo, gather_rows

# 100,000 x 128 float32 = 51 MB: above glibc's largest mmap threshold (32 MB), so every such
# output is a fresh mapping whose pages are not resident yet.
NUM_ROWS, DIM = 100_000, 128
MADV_POPULATE_WRITE = 23


def populate_write_supported() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    page = libc.mmap(
        None,
        mmap.PAGESIZE,
        mmap.PROT_READ | mmap.PROT_WRITE,
        mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
        -1,
        0,
    )
    if page in (None, ctypes.c_void_p(-1).value):
        return False
    try:
        return (
            libc.madvise(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE), MADV_POPULATE_WRITE)
            == 0
        )
    finally:
        libc.munmap(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE))


@pytest.fixture(scope="module")
def two_in_edges_per_row():
    gen = torch.Generator().manual_seed(0)
    indptr = torch.arange(0, 2 * NUM_ROWS + 1, 2)
    indices = torch.randint(0, NUM_ROWS, (2 * NUM_ROWS,), generator=gen)
    weight = torch.rand(2 * NUM_ROWS, generator=gen)
    x = torch.randn(NUM_ROWS, DIM, generator=gen)
    return indptr, indices, weight, x


def test_large_sum_and_max_match_reference(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    messages = (weight.unsqueeze(1) * x[indices]).view(NUM_ROWS, 2, DIM)
    out = torch.ops.fastgl.spmm(indptr, indices, weight, x)
    torch.testing.assert_close(out, messages.sum(1))
    out_max, arg = torch.ops.fastgl.spmm_max(indptr, indices, weight, x)
    best, slot = messages.max(1)
    assert torch.equal(out_max, best)
    # arg is the winning edge's position; random floats leave no ties to break.
    assert torch.equal(arg, indptr[:-1].unsqueeze(1) + slot)


def test_large_max_backward_matches_reference(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    graph = CSCGraph(indptr, indices)
    x = x.clone().requires_grad_()
    grad = torch.randn(NUM_ROWS, DIM, generator=torch.Generator().manual_seed(1))
    aggregate(graph, x, weight, reduce="max").backward(grad)
    x_ref = x.detach().clone().requires_grad_()
    (weight.unsqueeze(1) * x_ref[indices]).view(NUM_ROWS, 2, DIM).amax(1).backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad)


def test_large_edge_softmax_matches_reference(two_in_edges_per_row):
    indptr, indices, _, _ = two_in_edges_per_row
    heads = 8  # [E, 8] float32: 6.4 MB, above the 4 MB from which outputs are populated
    scores = torch.randn(indices.numel(), heads, generator=torch.Generator().manual_seed(2))
    out = edge_softmax(CSCGraph(indptr, indices), scores)
    expected = scores.view(NUM_ROWS, 2, heads).softmax(1).view(-1, heads)
    torch.testing.assert_close(out, expected)


def test_large_gather_matches_indexing(two_in_edges_per_row):
    _, indices, _, x = two_in_edges_per_row
    rows = indices[:NUM_ROWS]
    out = torch.empty(NUM_ROWS, DIM)
    gather_rows(x, rows, out=out)
    assert torch.equal(out, x[rows])


def test_large_gather_into_part_of_out(two_in_edges_per_row):
    _, indices, _, x = two_in_edges_per_row
    rows = indices[: NUM_ROWS // 2]
    out = torch.full((NUM_ROWS, DIM), 7.0)
    gather_rows(x, rows, out=out)  # writes the first half, leaves the rest alone
    assert torch.equal(out[: NUM_ROWS // 2], x[rows])
    assert bool((out[NUM_ROWS // 2 :] == 7.0).all())
    scattered = torch.full((NUM_ROWS, DIM), 7.0)
    targets = torch.randperm(NUM_ROWS, generator=torch.Generator().manual_seed(3))[: NUM_ROWS // 2]
    gather_rows(x, rows, out=scattered, out_index=targets)
    expected = torch.full((NUM_ROWS, DIM), 7.0)
    expected[targets] = x[rows]
    assert torch.equal(scattered, expected)


@pytest.mark.skipif(
    not populate_write_supported(), reason="needs Linux >= 5.14 (madvise MADV_POPULATE_WRITE)"
)
def test_large_output_is_populated_in_bulk(two_in_edges_per_row):
    indptr, indices, weight, x = two_in_edges_per_row
    output_pages = NUM_ROWS * DIM * x.element_size() // mmap.PAGESIZE
    with counting_page_faults() as faults_so_far:
        out = torch.ops.fastgl.spmm(indptr, indices, weight, x)
        faults = faults_so_far()
    # Faulting on demand costs one fault per output page (12,500 here); populated in bulk, the
    # kernel's writes take none of them.
    assert faults < output_pages // 4, (faults, output_pages)
    assert out.shape == (NUM_ROWS, DIM)


def vm_flags_at(address: int) -> list:
    """The VmFlags of this process's mapping that holds ``address`` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(bound, 16) for bound in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


def check_csc_huge_page_advice() -> None:
    # 5M edges: indices and perm are 40 MB each, above the 32 MB from which the hint is given;
    # indptr (8 KB) is below it.
    num_nodes, num_edges = 1000, 5_000_000
    gen = torch.Generator().manual_seed(0)
    src, dst = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    indptr, indices, perm = csc_from_coo(src, dst, num_nodes)
    two_mb = 2 << 20
    for name, array in (("indices", indices), ("perm", perm)):
        interior = (array.data_ptr() + two_mb - 1) // two_mb * two_mb
        assert "hg" in vm_flags_at(interior), name  # MADV_HUGEPAGE was given
    assert "hg" not in vm_flags_at(indptr.data_ptr())
    expected_perm = torch.sort(dst, stable=True).indices
    assert torch.equal(perm, expected_perm)
    assert torch.equal(indices, src[expected_perm])
    assert torch.equal(
        indptr,
        torch.cat(
            [torch.zeros(1, dtype=torch.long), torch.bincount(dst, minlength=num_nodes).cumsum(0)]
        ),
    )


@pytest.mark.skipif(
    not Path("/sys/kernel/mm/transparent_hugepage/enabled").exists(),
    reason="needs Linux with transparent huge pages",
)
def test_csc_arrays_ask_for_huge_pages():
    # In a fresh process: after other tests, glibc may hand the small indptr memory inside a
    # region an earlier large (advised, then freed) array left in its heap.
    child = subprocess.run(
        [sys.executable, "-c", "import test_large_outputs as t; t.check_csc_huge_page_advice()"],
        cwd=Path(__file__).resolve().parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-3000:]
