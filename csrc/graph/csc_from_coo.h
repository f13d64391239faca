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

inline void check_csc_from_coo_inputs(const at::Tensor& src, const at::Tensor& dst,
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
  check_ids_in_range(op, "src", src, num_nodes);
  check_ids_in_range(op, "dst", dst, num_nodes);
}

using CscArrays = std::tuple<at::Tensor, at::Tensor, at::Tensor>;  // indptr, indices, perm

// The op's entry point, shared by the backends: check, make the edge list contiguous on its
// device, let `Backend::run(src, dst, num_nodes)` sort it into CSC arrays, and remember the
// result as checked (checked_once.h) so its first use skips the structure checks: its offsets
// end at the edge count, and its indices are `src`'s ids, which the input check bounded by
// num_nodes.
template <typename Backend>
CscArrays csc_from_coo_entry(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes) {
  check_csc_from_coo_inputs(src, dst, num_nodes);
  const c10::DeviceGuard device_guard(dst.device());
  const at::Tensor src_c = src.contiguous(), dst_c = dst.contiguous();
  auto [indptr, indices, perm] = Backend::run(src_c, dst_c, num_nodes);
  remember_valid_offsets(indptr, indices.numel());
  remember_id_range(indices, num_nodes - 1);
  return {std::move(indptr), std::move(indices), std::move(perm)};
}

}  // namespace fastgl::graph
