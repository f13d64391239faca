// csc_from_coo: edge list -> CSC over incoming edges (a counting sort by target).
//
//   indptr  int64 [N+1]  in-edges of node v are slots indptr[v] .. indptr[v+1]
//   indices [E]          source of each slot, dtype of `src`
//   perm    int64 [E]    position in the input edge list of each slot; within a node, slots keep
//                        the input order (a stable sort), so the layout is deterministic.
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>


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
  // indptr's num_nodes + 1 int64 entries must be addressable.
  FASTGL_CHECK(num_nodes < (int64_t{1} << 59), op, "num_nodes ", num_nodes, " is too large");
  check_ids_in_range(op, "src", src, num_nodes);
  check_ids_in_range(op, "dst", dst, num_nodes);
}

}  // namespace fastgl::graph
