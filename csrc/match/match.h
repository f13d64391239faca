// FastGL's Match-Reorder (Zhu et al., ASPLOS '24, §4.1): which feature rows of the previous
// mini-batch can be reused by the next one (match), and how much every pair of batches in a
// window overlaps (overlap_counts, the numerators of the match-degree matrix that Reorder's
// greedy order reads).
//
// match(prev, next)[j] = position of next[j] in prev, or -1. prev holds distinct ids >= 0.
// overlap_counts(nodes, offsets)[i][j] = |set i ∩ set j|, where set s = nodes[offsets[s] ..
// offsets[s+1]) holds distinct ids >= 0; at most 64 sets (one bit each per node).
// Both are hash-based like Fused-Map and share its tables (idmap/).
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>

#include <cstdint>

namespace fastgl::match {

constexpr int64_t kMaxSets = 64;
constexpr const char* kDuplicatePrevError = "prev_nodes must hold distinct ids, got a repeated id";
constexpr const char* kNegativeIdError = "node ids must be >= 0, got a negative id";
constexpr const char* kDuplicateInSetError =
    "every node set must hold distinct ids, got a node twice in one set";

inline void check_match_inputs(const at::Tensor& prev, const at::Tensor& next) {
  check_index_vector("match", "prev_nodes", prev);
  check_index_vector("match", "next_nodes", next);
  check_same_device("match", "next_nodes", next, "prev_nodes", prev);
}

// Validates the layout of the sets and returns their number.
inline int64_t check_overlap_counts_inputs(const at::Tensor& nodes, const at::Tensor& offsets) {
  constexpr const char* op = "overlap_counts";
  check_index_vector(op, "nodes", nodes);
  check_dim(op, "offsets", offsets, 1);
  check_dtype(op, "offsets", offsets, at::kLong);
  check_same_device(op, "offsets", offsets, "nodes", nodes);
  const int64_t num_sets = offsets.numel() - 1;
  FASTGL_CHECK(num_sets >= 0 && num_sets <= kMaxSets, op, "offsets must hold 1 to ", kMaxSets + 1,
               " entries (at most ", kMaxSets, " sets), got ", offsets.numel());
  // at most 65 values; contiguous: a strided offsets view (or .cpu() of one) is not
  const at::Tensor host = offsets.to(at::kCPU).contiguous();
  const int64_t* off = host.data_ptr<int64_t>();
  FASTGL_CHECK(off[0] == 0, op, "offsets[0] must be 0, got ", off[0]);
  for (int64_t s = 0; s < num_sets; ++s) {
    FASTGL_CHECK(off[s] <= off[s + 1], op, "offsets must be non-decreasing, got ", off[s],
                 " before ", off[s + 1]);
  }
  FASTGL_CHECK(off[num_sets] == nodes.numel(), op, "offsets must end at the number of nodes (",
               nodes.numel(), "), got ", off[num_sets]);
  if (nodes.numel() > 0) {
    const int64_t lowest = nodes.min().item<int64_t>();
    FASTGL_CHECK(lowest >= 0, op, kNegativeIdError, " (", lowest, ")");
  }
  return num_sets;
}

// The kernels fill the upper triangle (i <= j); the matrix is symmetric.
inline at::Tensor symmetric_from_upper(const at::Tensor& upper) {
  return upper + upper.triu(1).transpose(0, 1);
}

// The op entry points, shared by the backends: check, make the ids contiguous int64 on their
// device, then `Backend::match(prev, next)` (positions) or `Backend::overlap_counts(nodes,
// offsets, num_sets)` (the upper triangle of the counts, for nodes in at least one set).
template <typename Backend>
at::Tensor match_entry(const at::Tensor& prev_nodes, const at::Tensor& next_nodes) {
  check_match_inputs(prev_nodes, next_nodes);
  const c10::DeviceGuard device_guard(next_nodes.device());
  return Backend::match(prev_nodes.to(at::kLong).contiguous(),
                        next_nodes.to(at::kLong).contiguous());
}

template <typename Backend>
at::Tensor overlap_counts_entry(const at::Tensor& nodes, const at::Tensor& offsets) {
  const int64_t num_sets = check_overlap_counts_inputs(nodes, offsets);
  const c10::DeviceGuard device_guard(nodes.device());
  const at::Tensor nodes64 = nodes.to(at::kLong).contiguous();
  if (nodes64.numel() == 0) return at::zeros({num_sets, num_sets}, nodes64.options());
  return symmetric_from_upper(Backend::overlap_counts(nodes64, offsets, num_sets));
}

}  // namespace fastgl::match
