"""Structure checks are made once per array version on the GPU (csrc/common/checked_once.h): an
op skips the offset and id-range checks (and their synchronizations) of a CUDA structure that
passed them and has not changed since, views of exactly that array that share its version
counter included, and checks again after any in-place change made through torch, fastgl's
gather_rows included, for an alias with a counter of its own, or for a new tensor. CPU
structures are checked on every call: a CPU array is easily written behind torch's back (a
NumPy view), which no version counter sees."""

import pytest
import torch

import fastgl  # noqa: F401  (registers the ops)

ops = torch.ops.fastgl
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _valid_structure(device="cpu"):
    return (
        torch.tensor([0, 1, 2, 3, 4], device=device),
        torch.tensor([1, 2, 3, 0], device=device),
        torch.randn(4, 3, device=device),
    )


def _decrease_behind_torchs_back(indptr):
    """[0, 1, 2, 3, 4] -> [0, 2, 1, 3, 4] through a NumPy view: the version does not change."""
    view = indptr.numpy()
    view[1], view[2] = 2, 1


def test_cpu_structures_are_checked_on_every_call():
    indptr, indices, x = _valid_structure()
    ops.spmm(indptr, indices, None, x)
    _decrease_behind_torchs_back(indptr)
    with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
        ops.spmm(indptr, indices, None, x)


def test_cpu_csc_from_coo_outputs_are_checked_on_use():
    indptr, indices, _ = ops.csc_from_coo(torch.tensor([1, 2, 3, 0]), torch.tensor([0, 1, 2, 3]), 4)
    _decrease_behind_torchs_back(indptr)
    with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
        ops.spmm(indptr, indices, None, torch.randn(4, 3))


def test_gather_rows_marks_its_out_changed():
    out = torch.zeros(3, 2)
    version = out._version
    ops.gather_rows(torch.ones(3, 2), None, out, None)
    assert out._version > version


def test_valid_offsets_answers_for_any_offset_array():
    """fastgl::_valid_offsets, the Python structure checks' way to the record: a yes/no answer,
    an error only for what is not an offset array at all."""
    assert ops._valid_offsets(torch.tensor([0, 1, 1, 3]), 3)
    assert not ops._valid_offsets(torch.tensor([0, 1, 1, 3]), 4)  # ends elsewhere
    assert not ops._valid_offsets(torch.tensor([1, 1, 3]), 3)  # starts elsewhere
    assert not ops._valid_offsets(torch.tensor([0, 2, 1, 3]), 3)  # decreases
    with pytest.raises(RuntimeError, match=r"^_valid_offsets: offsets must be"):
        ops._valid_offsets(torch.tensor([0, 1], dtype=torch.int32), 1)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_ids_in_range_answers_for_any_id_vector(dtype):
    """fastgl::_ids_in_range, the Python id checks' way to the record: a yes/no answer, an
    error only for what is not an id vector at all."""
    ids = torch.tensor([3, 0, 4, 4], dtype=dtype)
    assert ops._ids_in_range(ids, 5)
    assert not ops._ids_in_range(ids, 4)  # 4 is past the last node
    assert not ops._ids_in_range(torch.tensor([2, -1], dtype=dtype), 5)
    assert ops._ids_in_range(torch.tensor([], dtype=dtype), 0)
    with pytest.raises(RuntimeError, match=r"^_ids_in_range: ids must be int32 or int64"):
        ops._ids_in_range(torch.tensor([0.0]), 1)


@needs_cuda
def test_ids_in_range_reads_an_unchanged_cuda_array_once():
    """The answer that passed is remembered: asked again of the same array (a layer's next call
    on the same edge_index; a detached alias shares its counter), the record answers without a
    read-back, for any bound the known range meets; an in-place change asks the device again,
    and so does a bound the known range does not meet."""
    ids = torch.tensor([3, 0, 4], device="cuda")
    assert ops._ids_in_range(ids, 5)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        assert ops._ids_in_range(ids, 5) and ops._ids_in_range(ids.detach(), 9)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert ops._ids_in_range(ids[1:], 5)  # another run of the array: read back, and in range
    assert not ops._ids_in_range(ids, 4)
    ids[0] = 7
    assert not ops._ids_in_range(ids, 5)


@needs_cuda
def test_an_unchanged_cuda_structure_is_not_checked_again():
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")  # a check would synchronize to read its result
    try:
        ops.spmm(indptr, indices, None, x)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@needs_cuda
def test_cuda_csc_from_coo_outputs_start_out_checked():
    indptr, indices, _ = ops.csc_from_coo(
        torch.tensor([1, 2, 3, 0], device="cuda"), torch.tensor([0, 1, 2, 3], device="cuda"), 4
    )
    x = torch.randn(4, 3, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        ops.spmm(indptr, indices, None, x)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@needs_cuda
@pytest.mark.parametrize("change", ["indptr", "indices", "indices by gather_rows"])
def test_an_in_place_change_of_a_cuda_structure_is_checked(change):
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)
    if change == "indptr":
        indptr[1] = 3
        message = r"^spmm: indptr is not a valid offset array"
    elif change == "indices":
        indices[0] = 7
        message = r"^spmm: indices id 7 out of range for a graph of 4 nodes"
    else:
        ops.gather_rows(torch.full((4,), 1 << 40, device="cuda"), None, indices, None)
        message = r"^spmm: indices id 1099511627776 out of range"
    with pytest.raises(RuntimeError, match=message):
        ops.spmm(indptr, indices, None, x)


@needs_cuda
def test_a_new_cuda_tensor_at_a_dead_ones_address_is_checked():
    for _ in range(20):
        indptr, indices, x = _valid_structure("cuda")
        ops.spmm(indptr, indices, None, x)
        del indptr
        bad = torch.tensor([0, 3, 1, 3, 4], device="cuda")  # often where the dead one was
        with pytest.raises(RuntimeError, match=r"^spmm: indptr is not a valid offset array"):
            ops.spmm(bad, indices, None, x)


@needs_cuda
def test_a_cuda_id_range_is_known_only_below_the_bound_it_was_checked_for():
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)  # ids in [0, 3]
    with pytest.raises(RuntimeError, match=r"^spmm: indices id 3 out of range for a graph of 3"):
        ops.spmm(indptr, indices, None, x[:3])


@needs_cuda
def test_cuda_offsets_are_known_valid_only_for_their_edge_count():
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)  # valid for 4 edges
    with pytest.raises(RuntimeError, match=r"^spmm: indptr is not a valid offset array"):
        ops.spmm(indptr, torch.cat([indices, indices[:1]]), None, x)


@needs_cuda
def test_a_view_of_the_same_cuda_array_is_known_and_a_shorter_one_is_not():
    """The record is per array: a view of exactly the checked run (what Python's slicing of a
    sampler's outputs makes) is known; another run of the same storage is checked."""
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        ops.spmm(indptr[:], indices.detach(), None, x)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    with pytest.raises(RuntimeError, match=r"^spmm: indptr is not a valid offset array"):
        ops.spmm(indptr[:4], indices, None, x)


@needs_cuda
def test_an_alias_with_a_version_counter_of_its_own_is_checked():
    """``.data`` views the same array with a fresh counter, at version 0 like the checked
    original's record: it must not pass for the original after a change the original's counter
    saw."""
    indptr, indices, x = _valid_structure("cuda")
    ops.spmm(indptr, indices, None, x)  # recorded at version 0
    indptr[1] = 3
    with pytest.raises(RuntimeError, match=r"^spmm: indptr is not a valid offset array"):
        ops.spmm(indptr.data, indices, None, x)


@needs_cuda
def test_valid_offsets_remembers_what_it_found_valid():
    indptr, indices, x = _valid_structure("cuda")
    assert ops._valid_offsets(indptr, 4)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        assert ops._valid_offsets(indptr, 4)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    indptr[1] = 3
    assert not ops._valid_offsets(indptr, 4)
