// sample_ranges: neighbor-style draws from explicit slot ranges instead of a graph's rows.
//
// Pair p draws from the slots [starts[p], ends[p]) of some edge array (a CSC `indices`, or the
// part of a row that a caller has found valid, as temporal sampling does with time-sorted rows):
// fanouts[p] == -1 takes every slot of the range, 0 none, k > 0 draws k slots (without
// replacement min(k, size) distinct ones; with replacement k, none from an empty range). With
// `weight` (float32/float64, one per slot) the draws are proportional to weight[slot], zero
// weights are never drawn and every range must lie inside [0, len(weight)). The draws are
// sample_neighbors' (neighbor_draw.h) with Philox key `seed` and stream p, so ranges taken from
// indptr[t] .. indptr[t + 1] with one fanout draw exactly sample_neighbors' edge_pos. Returns
//   ptr   int64 [P+1]     pair p owns slots[ptr[p] .. ptr[p+1])
//   slots int64 [ptr[P]]  the drawn slots
#pragma once

#include "common/check.h"
#include "common/page_advice.h"
#include "sampling/neighbor_draw.h"
#include "sampling/sample_neighbors.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <tuple>
#include <type_traits>

namespace fastgl::sampling {

using RangesResult = std::tuple<at::Tensor, at::Tensor>;

constexpr const char* kRangesOp = "sample_ranges";

// What can be wrong with one pair; the values are read per pair by the kernels (a separate scan
// would read the inputs twice), so both backends report the first bad pair through these codes.
enum RangeFault : int64_t {
  kNegativeStart = 1,
  kEndBelowStart = 2,
  kBadRangeFanout = 3,
  kPastWeights = 4,
  kBadRangeWeights = 5,
  kTooManyDraws = 6,
  kNumRangeFaults = 8,
};

// A fault of pair p as one number that orders by pair: the CUDA count kernel keeps the smallest
// with one atomicMin, so both backends name the first bad pair whatever the scheduling.
C10_HOST_DEVICE inline int64_t encode_range_fault(int64_t pair, int64_t fault) {
  return pair * kNumRangeFaults + fault;
}

// No fault: the CUDA fault word starts here.
constexpr int64_t kNoRangeFault = INT64_MAX;

// The kernels' view of the call: contiguous inputs.
template <typename weight_t>
struct RangesView {
  const int64_t* starts;
  const int64_t* ends;
  const int64_t* fanouts;
  const weight_t* weight;  // null when unweighted, and for an empty weight tensor
  bool weighted;
  int64_t num_weights;
  // Largest draw count a pair may have: with every pair below it, the counts' sum fits an int64
  // array whose bytes are addressable, so the prefix sum cannot overflow.
  int64_t max_draws;
  bool replace;
  uint64_t key;

  // Slots pair p draws, or minus its RangeFault. Checks everything the draws will read.
  C10_HOST_DEVICE int64_t draws(int64_t p) const {
    const int64_t fault = range_fault(p);
    if (fault != 0) return fault;
    return capped(num_draws(config(p), weight_from(p), ends[p] - starts[p]));
  }

  // draws(p) by a group of lanes (common/lanes.h), which count a weighted range together.
  template <typename Lanes>
  C10_HOST_DEVICE int64_t draws(int64_t p, const Lanes& lanes) const {
    const int64_t fault = range_fault(p);
    if (fault != 0) return fault;
    return capped(num_draws_in_lanes(lanes, config(p), weight_from(p), ends[p] - starts[p]));
  }

  // Writes the `count` slots (count from draws(p)) pair p draws to out[0 .. count).
  C10_HOST_DEVICE void draw(int64_t p, int64_t count, int64_t* out) const {
    const int64_t start = starts[p];
    draw_neighbor_offsets(config(p), static_cast<uint64_t>(p), weight_from(p), ends[p] - start,
                          count, out);
    for (int64_t j = 0; j < count; ++j) out[j] += start;
  }

  // draw(p, ...) by a group of lanes; `scratch` holds `count` entries (Floyd's raw picks).
  template <typename Lanes>
  C10_HOST_DEVICE void draw(int64_t p, int64_t count, int64_t* out, int64_t* scratch,
                            const Lanes& lanes) const {
    draw_neighbor_offsets_in_lanes(lanes, config(p), static_cast<uint64_t>(p), weight_from(p),
                                   ends[p] - starts[p], count, out, scratch);
    const int64_t start = starts[p];
    lanes.each(count, [&](int64_t j) { out[j] += start; });
  }

 private:
  C10_HOST_DEVICE DrawConfig config(int64_t p) const { return {fanouts[p], replace, key}; }
  C10_HOST_DEVICE const weight_t* weight_from(int64_t p) const {
    return weight ? weight + starts[p] : nullptr;
  }
  // 0, or minus the RangeFault of a range the draws cannot read.
  C10_HOST_DEVICE int64_t range_fault(int64_t p) const {
    const int64_t start = starts[p], end = ends[p], fanout = fanouts[p];
    if (start < 0) return -kNegativeStart;
    if (end < start) return -kEndBelowStart;
    if (fanout < -1) return -kBadRangeFanout;
    if (weighted && end > num_weights) return -kPastWeights;
    return 0;
  }
  C10_HOST_DEVICE int64_t capped(int64_t count) const {
    if (count == kInvalidWeights) return -kBadRangeWeights;
    return count <= max_draws ? count : -kTooManyDraws;
  }
};

// The contiguous inputs, for the output options and for the values an error message quotes.
struct RangesTensors {
  at::Tensor starts, ends, fanouts;
  int64_t num_weights;
};

// The shapes, dtypes and devices; the values are checked per pair by RangesView::draws.
inline void check_sample_ranges_inputs(const at::Tensor& starts, const at::Tensor& ends,
                                       const c10::optional<at::Tensor>& weight,
                                       const at::Tensor& fanouts) {
  constexpr const char* op = kRangesOp;
  auto check_per_pair = [&](const char* name, const at::Tensor& t) {
    check_dim(op, name, t, 1);
    check_dtype(op, name, t, at::kLong);
    check_same_device(op, name, t, "starts", starts);
    FASTGL_CHECK(t.numel() == starts.numel(), op, name, " has ", t.numel(),
                 " entries but starts has ", starts.numel(), "; give one entry per pair");
  };
  check_per_pair("starts", starts);
  check_per_pair("ends", ends);
  check_per_pair("fanouts", fanouts);
  if (weight.has_value()) {
    check_dim(op, "weight", *weight, 1);
    FASTGL_CHECK(weight->scalar_type() == at::kFloat || weight->scalar_type() == at::kDouble, op,
                 "weight must be float32 or float64, got ", weight->scalar_type());
    check_same_device(op, "weight", *weight, "starts", starts);
  }
}

// Raises the error of an encoded fault (the values are read back from the inputs: on the GPU
// this costs a few synchronizations, on the error path only).
[[noreturn]] inline void raise_range_fault(int64_t encoded, const RangesTensors& in) {
  constexpr const char* op = kRangesOp;
  const int64_t p = encoded / kNumRangeFaults, fault = encoded % kNumRangeFaults;
  const int64_t start = in.starts[p].item<int64_t>(), end = in.ends[p].item<int64_t>();
  const int64_t fanout = in.fanouts[p].item<int64_t>(), num_weights = in.num_weights;
  FASTGL_CHECK(fault != kNegativeStart, op, "starts[", p, "] = ", start, " is negative");
  FASTGL_CHECK(fault != kEndBelowStart, op, "ends[", p, "] = ", end, " is below starts[", p,
               "] = ", start);
  FASTGL_CHECK(fault != kBadRangeFanout, op, "fanouts[", p, "] = ", fanout,
               " must be -1 (the whole range) or >= 0");
  FASTGL_CHECK(fault != kPastWeights, op, "ends[", p, "] = ", end,
               " is past the end of weight, which has ", num_weights,
               " entries (weighted ranges must lie inside [0, len(weight)])");
  FASTGL_CHECK(fault != kBadRangeWeights, op, kBadWeightError, " (pair ", p, ", slots [", start,
               ", ", end, "))");
  FASTGL_CHECK(false, op, "pair ", p, " (slots [", start, ", ", end, "), fanout ", fanout,
               ") draws more slots than an int64 output of ", in.starts.numel(), " pairs can hold");
}

// Calls `kernel(weight)` with `weight` a typed pointer into the contiguous weights, or a null
// `const float*` when unweighted.
template <typename Kernel>
auto dispatch_range_weight(const at::Tensor& weight_contiguous, Kernel kernel) {
  if (!weight_contiguous.defined()) return kernel(static_cast<const float*>(nullptr));
  return AT_DISPATCH_FLOATING_TYPES(weight_contiguous.scalar_type(), kRangesOp, [&] {
    return kernel(static_cast<const scalar_t*>(weight_contiguous.data_ptr<scalar_t>()));
  });
}

// The op's entry point, shared by the backends: check, guard the device, make the inputs
// contiguous, return early on no pairs (a zero-block grid is a launch error) and call
// `Backend::run(view, tensors)`, which returns (ptr, slots).
template <typename Backend>
RangesResult sample_ranges_entry(const at::Tensor& starts, const at::Tensor& ends,
                                 const c10::optional<at::Tensor>& weight, const at::Tensor& fanouts,
                                 bool replace, int64_t seed) {
  check_sample_ranges_inputs(starts, ends, weight, fanouts);
  const c10::DeviceGuard device_guard(starts.device());
  const int64_t num_pairs = starts.numel();
  if (num_pairs == 0) return {at::zeros({1}, starts.options()), at::empty({0}, starts.options())};
  const at::Tensor weight_c = contiguous_or_undefined(weight);
  const RangesTensors in{starts.contiguous(), ends.contiguous(), fanouts.contiguous(),
                         weight_c.defined() ? weight_c.numel() : 0};
  constexpr int64_t kMaxEntries = INT64_MAX / sizeof(int64_t);
  return dispatch_range_weight(weight_c, [&](auto weight_ptr) {
    using weight_t = std::remove_const_t<std::remove_pointer_t<decltype(weight_ptr)>>;
    const RangesView<weight_t> view{in.starts.data_ptr<int64_t>(),
                                    in.ends.data_ptr<int64_t>(),
                                    in.fanouts.data_ptr<int64_t>(),
                                    weight_ptr,
                                    weight_c.defined(),
                                    in.num_weights,
                                    kMaxEntries / num_pairs,
                                    replace,
                                    static_cast<uint64_t>(seed)};
    return Backend::run(view, in);
  });
}

// Called by the backends between their count and draw passes: the first bad pair's error, if
// any, then the output size checked against the device's memory.
inline void check_range_counts(int64_t first_fault, int64_t total, const RangesTensors& in) {
  if (first_fault != kNoRangeFault) raise_range_fault(first_fault, in);
  check_output_fits(kRangesOp, "the sample", total, sizeof(int64_t), in.starts.device());
}

}  // namespace fastgl::sampling
