// sample_neighbors: one hop of neighbor sampling for a list of (sample, transit) pairs.
//
// Pair p draws from the in-edges of transits[p]; its draws are keyed by (seed, p) only, so the
// result does not depend on how a backend schedules pairs. Returns
//   ptr       int64 [P+1]  pair p owns outputs ptr[p] .. ptr[p+1]
//   neighbors int64 [ptr[P]] source node of each drawn edge
//   edge_pos  int64 [ptr[P]] position of each drawn edge in `indices` (the CSC edge slot)
#pragma once

#include "common/check.h"
#include "sampling/neighbor_draw.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace fastgl::sampling {

using SampleResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

constexpr const char* kBadIndptrError =
    "indptr is not a valid CSC offset array (it must start at 0, never decrease and end at "
    "len(indices)); build graphs with fastgl.CSCGraph, which checks this";
constexpr const char* kBadWeightError =
    "weight must be finite and non-negative, with a finite sum over each node's in-edges";

// A pair's draw count from num_draws, checked: a row with unusable weights is an error.
inline int64_t checked_draws(const char* op, int64_t draws, int64_t node) {
  FASTGL_CHECK(draws >= 0, op, kBadWeightError, " (node ", node, ")");
  return draws;
}

// The sampled graph's CSC arrays, as every sampling op takes them: int64 `indptr` with at least
// one entry, int32/int64 `indices`, and optional float32/float64 per-edge `weight`, one device.
inline void check_csc_inputs(const char* op, const at::Tensor& indptr, const at::Tensor& indices,
                             const c10::optional<at::Tensor>& weight) {
  check_offsets_tensor(op, "indptr", indptr);
  check_index_vector(op, "indices", indices);
  check_same_device(op, "indices", indices, "indptr", indptr);
  if (weight.has_value()) {
    check_dim(op, "weight", *weight, 1);
    FASTGL_CHECK(weight->scalar_type() == at::kFloat || weight->scalar_type() == at::kDouble, op,
                 "weight must be float32 or float64, got ", weight->scalar_type());
    FASTGL_CHECK(weight->numel() == indices.numel(), op, "weight has ", weight->numel(),
                 " entries but the graph has ", indices.numel(), " edges");
    check_same_device(op, "weight", *weight, "indptr", indptr);
  }
}

// `eid`, when given, names each CSR slot's edge: one int64 per entry of `indices`.
inline void check_edge_ids(const char* op, const c10::optional<at::Tensor>& eid,
                           const at::Tensor& indices, const at::Tensor& indptr) {
  if (!eid.has_value()) return;
  check_dim(op, "eid", *eid, 1);
  check_dtype(op, "eid", *eid, at::kLong);
  FASTGL_CHECK(eid->numel() == indices.numel(), op, "eid has ", eid->numel(),
               " entries but the graph has ", indices.numel(), " edges");
  check_same_device(op, "eid", *eid, "indptr", indptr);
}

// A node's in-edges: CSC slots [start, start + degree).
struct Adjacency {
  int64_t start, degree;
};

// A node's in-edge range read from `col_start` (CPU kernels), checked as it is read: the
// samplers never scan the whole indptr.
inline Adjacency in_edges_of(const char* op, const int64_t* col_start, int64_t node,
                             int64_t num_edges) {
  const int64_t start = col_start[node], stop = col_start[node + 1];
  FASTGL_CHECK(valid_adjacency(start, stop, num_edges), op, kBadIndptrError, " (node ", node, ")");
  return {start, stop - start};
}

// A drawn neighbor read from `indices` (CPU kernels; they check each as they gather it).
inline void check_source_id(const char* op, int64_t source, int64_t num_nodes) {
  FASTGL_CHECK(0 <= source && source < num_nodes, op, "indices id ", source,
               " out of range for a graph of ", num_nodes, " nodes");
}

inline void check_fanout(const char* op, int64_t fanout) {
  FASTGL_CHECK(fanout >= -1, op, "fanout must be -1 (all neighbors) or >= 0, got ", fanout);
}

// The draws of `num_pairs` pairs must fit an int64 array before they are counted: with
// replacement a pair draws `fanout` edges whatever its degree, else at most all `num_edges`.
inline void check_draws_fit(const char* op, int64_t num_pairs, int64_t fanout, bool replace,
                            int64_t num_edges) {
  constexpr int64_t kMaxEntries = INT64_MAX / 8;  // bytes of an int64 array must be addressable
  const int64_t per_pair =
      replace && fanout >= 0 ? fanout : (fanout < 0 ? num_edges : std::min(fanout, num_edges));
  FASTGL_CHECK(per_pair == 0 || num_pairs <= kMaxEntries / per_pair, op, num_pairs,
               " transits drawing up to ", per_pair, " edges each overflow an int64 edge array");
}

inline void check_sample_neighbors_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                          const c10::optional<at::Tensor>& weight,
                                          const at::Tensor& transits, int64_t fanout,
                                          bool replace) {
  constexpr const char* op = "sample_neighbors";
  check_csc_inputs(op, indptr, indices, weight);
  check_index_vector(op, "transits", transits);
  check_dtype(op, "transits", transits, at::kLong);
  check_same_device(op, "transits", transits, "indptr", indptr);
  check_fanout(op, fanout);
  check_draws_fit(op, transits.numel(), fanout, replace, indices.numel());
  check_ids_in_range(op, "transits", transits, indptr.numel() - 1);
}

// Calls `kernel(index_t{}, weight)` with the index type of `indices` and `weight` as a typed
// pointer into the (contiguous) weights: a null `const float*` when unweighted.
template <typename Kernel>
auto dispatch_csc_types(const at::Tensor& indices, const at::Tensor& weight_contiguous,
                        Kernel kernel) {
  return AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "sample_csc", [&] {
    if (!weight_contiguous.defined()) {
      return kernel(index_t{}, static_cast<const float*>(nullptr));
    }
    return AT_DISPATCH_FLOATING_TYPES(weight_contiguous.scalar_type(), "sample_csc", [&] {
      return kernel(index_t{},
                    static_cast<const scalar_t*>(weight_contiguous.data_ptr<scalar_t>()));
    });
  });
}

// The op's entry point, shared by the backends: check the inputs, make them contiguous, pick the
// index and weight types, then call `Backend::run<index_t>(weight, indptr, indices, transits,
// cfg)`, where `weight` is a typed pointer (a null `const float*` when unweighted).
template <typename Backend>
SampleResult sample_neighbors_entry(const at::Tensor& indptr, const at::Tensor& indices,
                                    const c10::optional<at::Tensor>& weight,
                                    const at::Tensor& transits, int64_t fanout, bool replace,
                                    int64_t seed) {
  check_sample_neighbors_inputs(indptr, indices, weight, transits, fanout, replace);
  const c10::DeviceGuard device_guard(indptr.device());
  const DrawConfig cfg{fanout, replace, static_cast<uint64_t>(seed)};
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor transits_c = transits.contiguous(), weight_c = contiguous_or_undefined(weight);
  return dispatch_csc_types(indices_c, weight_c, [&](auto index_tag, auto weight_ptr) {
    return Backend::template run<decltype(index_tag)>(weight_ptr, indptr_c, indices_c, transits_c,
                                                      cfg);
  });
}

}  // namespace fastgl::sampling
