// Structure checks an op may skip because one was already passed: "this offset array is valid
// for E edges", "these ids lie in [0, max]". The one mechanism by which checks are not repeated.
//
// A check that passes is remembered for the array the tensor views (its storage, held weakly,
// with the offset, length and dtype of the contiguous run) and the tensor's version counter at
// its current version. Every in-place change made through torch bumps the counter, which views
// and `detach()` share with their base (fastgl's own in-place op, gather_rows, bumps its `out`
// too), so the record answers only while the array is unchanged, and for exactly the tensors
// that share the counter and view that run; an alias with a counter of its own (`.data`,
// DLPack) is checked again. The structures fastgl builds itself are remembered as they are
// made, so their first use skips the checks too: csc_from_coo's CSC, and the offsets and
// sources of the blocks a sample_hops call returns (the runs Python cuts per batch and per
// block, sample_hops.h).
//
// Only CUDA tensors are remembered: there a check costs a synchronization, on the CPU one pass
// that is cheap next to the op, and a CPU array is easily written behind torch's back (a NumPy
// view, `.data`), which no version counter sees. On a GPU, change a graph's arrays through torch,
// or build a new graph.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

namespace fastgl {

// Elements [begin, begin + length) of a contiguous tensor, as a view Python cuts of it sees
// them (a view made in C++ has a version counter of its own, so a fact about a run of an op's
// output is remembered through the output itself); implicitly, the whole tensor.
struct TensorRun {
  const at::Tensor& tensor;
  int64_t begin, length;

  TensorRun(const at::Tensor& t) : tensor(t), begin(0), length(t.numel()) {}  // NOLINT
  TensorRun(const at::Tensor& t, int64_t first, int64_t count)
      : tensor(t), begin(first), length(count) {}
};

// `offsets` was checked: starts at 0, never decreases, ends at `num_edges`.
bool offsets_known_valid(const at::Tensor& offsets, int64_t num_edges);
void remember_valid_offsets(const TensorRun& offsets, int64_t num_edges);

// `ids` were checked to lie in [0, max_id]; known below `bound` when max_id < bound.
std::optional<int64_t> known_max_id(const at::Tensor& ids);
inline bool ids_known_below(const at::Tensor& ids, int64_t bound) {
  const std::optional<int64_t> max_id = known_max_id(ids);
  return max_id && *max_id < bound;
}
void remember_id_range(const TensorRun& ids, int64_t max_id);

// An op that writes `t` in place marks it changed, as torch's in-place ops do.
void note_in_place_write(const at::Tensor& t);

}  // namespace fastgl
