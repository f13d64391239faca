"""Structure checks are made once per tensor version (csrc/common/checked_once.h): an op skips
the offset and id-range checks of a structure that passed them and has not changed since, and
checks again after any in-place change made through torch, or for a new tensor at the same
address. Writes that bypass torch's version counter (here a NumPy view) are the documented blind
spot; the tests use one to observe that a check was skipped, with values that stay in bounds."""

import pytest
import torch

import fastgl  # noqa: F401  (registers the ops)

ops = torch.ops.fastgl
X = torch.randn(4, 3)


def _valid_structure():
    return torch.tensor([0, 1, 2, 3, 4]), torch.tensor([1, 2, 3, 0])


def _decrease_behind_torchs_back(indptr):
    """[0, 1, 2, 3, 4] -> [0, 2, 1, 3, 4]: a decreasing row, whose reads stay in bounds."""
    view = indptr.numpy()
    view[1], view[2] = 2, 1


def test_a_checked_structure_is_not_checked_again_while_unchanged():
    indptr, indices = _valid_structure()
    ops.spmm(indptr, indices, None, X)
    _decrease_behind_torchs_back(indptr)
    ops.spmm(indptr, indices, None, X)  # skipped: the version did not change
    fresh = indptr.clone()
    with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
        ops.spmm(fresh, indices, None, X)


def test_csc_from_coo_outputs_start_out_checked():
    indptr, indices, _ = ops.csc_from_coo(torch.tensor([1, 2, 3, 0]), torch.tensor([0, 1, 2, 3]), 4)
    _decrease_behind_torchs_back(indptr)
    ops.spmm(indptr, indices, None, X)  # skipped: remembered when it was built


@pytest.mark.parametrize("change", ["indptr", "indices"])
def test_an_in_place_change_through_torch_is_checked(change):
    indptr, indices = _valid_structure()
    ops.spmm(indptr, indices, None, X)
    if change == "indptr":
        indptr[1] = 3
        message = r"^spmm: indptr decreases"
    else:
        indices[0] = 7
        message = r"^spmm: indices id 7 out of range for a graph of 4 nodes"
    with pytest.raises(RuntimeError, match=message):
        ops.spmm(indptr, indices, None, X)


def test_an_in_place_change_in_inference_mode_is_checked():
    indptr, indices = _valid_structure()
    ops.spmm(indptr, indices, None, X)
    with torch.inference_mode():
        indptr[1] = 3
    with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
        ops.spmm(indptr, indices, None, X)


def test_inference_tensors_are_checked_every_time():
    with torch.inference_mode():
        indptr, indices = _valid_structure()
        ops.spmm(indptr, indices, None, X)
        _decrease_behind_torchs_back(indptr)
        with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
            ops.spmm(indptr, indices, None, X)


def test_a_new_tensor_at_a_dead_ones_address_is_checked():
    for _ in range(50):
        indptr, indices = _valid_structure()
        ops.spmm(indptr, indices, None, X)
        del indptr
        bad = torch.tensor([0, 3, 1, 3, 4])  # often allocated where the dead one was
        with pytest.raises(RuntimeError, match=r"^spmm: indptr decreases"):
            ops.spmm(bad, indices, None, X)


def test_an_id_range_is_known_only_below_the_bound_it_was_checked_for():
    indptr, indices = _valid_structure()
    ops.spmm(indptr, indices, None, X)  # ids in [0, 3]
    with pytest.raises(RuntimeError, match=r"^spmm: indices id 3 out of range for a graph of 3"):
        ops.spmm(indptr, indices, None, X[:3])


def test_offsets_are_known_valid_only_for_their_edge_count():
    indptr, indices = _valid_structure()
    ops.spmm(indptr, indices, None, X)  # valid for 4 edges
    with pytest.raises(RuntimeError, match=r"^spmm: indptr\[-1\] is 4 but must be 5"):
        ops.spmm(indptr, torch.cat([indices, indices[:1]]), None, X)
