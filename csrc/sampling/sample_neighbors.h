// sample_neighbors: one hop of neighbor sampling for a list of (sample, transit) pairs.
//
// Pair p draws from the in-edges of transits[p]; its draws are keyed by (seed, p) only, so the
// result does not depend on how a backend schedules pairs. Returns
//   ptr       int64 [P+1]  pair p owns outputs ptr[p] .. ptr[p+1]
//   neighbors int64 [ptr[P]] source node of each drawn edge
//   edge_pos  int64 [ptr[P]] position of each drawn edge in `indices` (the CSC edge slot)
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>

#include <tuple>

namespace fastgl::sampling {

using SampleResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

inline void check_sample_neighbors_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                          const c10::optional<at::Tensor>& weight,
                                          const at::Tensor& transits, int64_t fanout) {
  constexpr const char* op = "sample_neighbors";
  check_dim(op, "indptr", indptr, 1);
  check_dtype(op, "indptr", indptr, at::kLong);
  FASTGL_CHECK(indptr.numel() >= 1, op, "indptr must have num_nodes + 1 >= 1 entries");
  check_index_vector(op, "indices", indices);
  check_index_vector(op, "transits", transits);
  check_dtype(op, "transits", transits, at::kLong);
  check_same_device(op, "indices", indices, "indptr", indptr);
  check_same_device(op, "transits", transits, "indptr", indptr);
  FASTGL_CHECK(fanout >= -1, op, "fanout must be -1 (all neighbors) or >= 0, got ", fanout);
  if (weight.has_value()) {
    check_dim(op, "weight", *weight, 1);
    FASTGL_CHECK(weight->scalar_type() == at::kFloat || weight->scalar_type() == at::kDouble, op,
                 "weight must be float32 or float64, got ", weight->scalar_type());
    FASTGL_CHECK(weight->numel() == indices.numel(), op, "weight has ", weight->numel(),
                 " entries but the graph has ", indices.numel(), " edges");
    check_same_device(op, "weight", *weight, "indptr", indptr);
  }
  check_ids_in_range(op, "transits", transits, indptr.numel() - 1);
}

SampleResult sample_neighbors_cpu(const at::Tensor& indptr, const at::Tensor& indices,
                                  const c10::optional<at::Tensor>& weight,
                                  const at::Tensor& transits, int64_t fanout, bool replace,
                                  int64_t seed);

}  // namespace fastgl::sampling
