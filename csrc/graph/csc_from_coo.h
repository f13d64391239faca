// csc_from_coo: edge list -> CSC over incoming edges (a counting sort by target).
//
//   indptr  int64 [N+1]  in-edges of node v are slots indptr[v] .. indptr[v+1]
//   indices [E]          source of each slot, dtype of `src`
//   perm    int64 [E]    position in the input edge list of each slot; within a node, slots keep
//                        the input order (a stable sort), so the layout is deterministic.
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>

#include <tuple>
#include <utility>

namespace fastgl::graph {

// Returns the largest source id (or the bound on it that checked_once.h holds): the largest id
// the CSC's indices can hold. The ids of a structure's own arrays (the backward pass transposes
// a block whose sources the sampler recorded) are not checked again.
inline int64_t check_csc_from_coo_inputs(const at::Tensor& src, const at::Tensor& dst,
                                         int64_t num_nodes) {
  constexpr const char* op = "csc_from_coo";
  check_index_vector(op, "src", src);
  check_index_vector(op, "dst", dst);
  check_same_device(op, "dst", dst, "src", src);
  FASTGL_CHECK(src.numel() == dst.numel(), op, "src has ", src.numel(), " entries but dst has ",
               dst.numel());
  FASTGL_CHECK(num_nodes >= 0, op, "num_nodes must be >= 0, got ", num_nodes);
  // indptr and the per-node counts it is built from (int64 each) must fit in memory.
  check_output_fits(op, "indptr and its counts", num_nodes, 2 * sizeof(int64_t), src.device());
  const int64_t max_src = check_structure_ids(op, "src", src, num_nodes);
  check_structure_ids(op, "dst", dst, num_nodes);
  return max_src;
}

using CscArrays = std::tuple<at::Tensor, at::Tensor, at::Tensor>;  // indptr, indices, perm

// The op's entry point, shared by the backends: check, make the edge list contiguous on its
// device, let `Backend::run(src, dst, num_nodes)` sort it into CSC arrays, and remember the
// result as checked (checked_once.h) so its first use skips the structure checks: its offsets
// end at the edge count, its indices are `src`'s ids, and `perm` numbers the edges (the
// backward pass of aggregation gathers edge weights by it).
template <typename Backend>
CscArrays csc_from_coo_entry(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes) {
  const int64_t max_src = check_csc_from_coo_inputs(src, dst, num_nodes);
  const c10::DeviceGuard device_guard(dst.device());
  const at::Tensor src_c = src.contiguous(), dst_c = dst.contiguous();
  auto [indptr, indices, perm] = Backend::run(src_c, dst_c, num_nodes);
  remember_valid_offsets(indptr, indices.numel());
  remember_id_range(indices, max_src);
  remember_id_range(perm, perm.numel() - 1);
  return {std::move(indptr), std::move(indices), std::move(perm)};
}

}  // namespace fastgl::graph
