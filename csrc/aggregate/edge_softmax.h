// edge_softmax: softmax of edge scores over each destination's in-edges (rows of `indptr`),
// per head. scores/out are [E, H] in CSC slot order. Backward: grad_in = y * (g - sum_row(g*y)).
// The per-row math is host/device code shared by both backends.
#pragma once

#include "common/check.h"
#include "common/page_advice.h"

#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <c10/macros/Macros.h>

#include <cmath>
#include <limits>

namespace fastgl::aggregate {

inline void check_edge_softmax_inputs(const char* op, const at::Tensor& indptr,
                                      const at::Tensor& scores) {
  check_offsets_tensor(op, "indptr", indptr);
  check_dim(op, "scores", scores, 2);
  FASTGL_CHECK(at::isFloatingType(scores.scalar_type()), op,
               "scores must be a floating-point tensor, got ", scores.scalar_type());
  check_same_device(op, "scores", scores, "indptr", indptr);
  // An indptr already checked for this many edges needs no read-back (a synchronization on CUDA).
  if (offsets_known_valid(indptr, scores.size(0))) return;
  const int64_t num_edges = indptr[-1].item<int64_t>();
  FASTGL_CHECK(scores.size(0) == num_edges, op, "scores has ", scores.size(0),
               " rows but the structure has ", num_edges, " edges");
  check_offsets(op, "indptr", indptr, num_edges);
}

inline void check_edge_softmax_backward_inputs(const at::Tensor& indptr, const at::Tensor& out,
                                               const at::Tensor& grad) {
  check_edge_softmax_inputs("edge_softmax_backward", indptr, out);
  FASTGL_CHECK(grad.sizes() == out.sizes() && grad.scalar_type() == out.scalar_type(),
               "edge_softmax_backward", "grad must match out in shape and dtype");
  check_same_device("edge_softmax_backward", "grad", grad, "indptr", indptr);
}

C10_HOST_DEVICE inline float exp_of(float v) { return expf(v); }
C10_HOST_DEVICE inline double exp_of(double v) { return exp(v); }

// Softmax of head h over slots first..last of one destination.
template <typename scalar_t>
C10_HOST_DEVICE void softmax_segment(const scalar_t* scores, scalar_t* out, int64_t first,
                                     int64_t last, int64_t heads, int64_t h) {
  using acc_t = at::opmath_type<scalar_t>;
  acc_t largest = -std::numeric_limits<acc_t>::infinity();
  for (int64_t k = first; k < last; ++k) {
    const acc_t s = static_cast<acc_t>(scores[k * heads + h]);
    largest = s > largest ? s : largest;
  }
  acc_t total = 0;
  for (int64_t k = first; k < last; ++k) {
    total += exp_of(static_cast<acc_t>(scores[k * heads + h]) - largest);
  }
  for (int64_t k = first; k < last; ++k) {
    out[k * heads + h] =
        static_cast<scalar_t>(exp_of(static_cast<acc_t>(scores[k * heads + h]) - largest) / total);
  }
}

template <typename scalar_t>
C10_HOST_DEVICE void softmax_backward_segment(const scalar_t* out, const scalar_t* grad,
                                              scalar_t* grad_scores, int64_t first, int64_t last,
                                              int64_t heads, int64_t h) {
  using acc_t = at::opmath_type<scalar_t>;
  acc_t dot = 0;
  for (int64_t k = first; k < last; ++k) {
    dot += static_cast<acc_t>(grad[k * heads + h]) * static_cast<acc_t>(out[k * heads + h]);
  }
  for (int64_t k = first; k < last; ++k) {
    const int64_t i = k * heads + h;
    grad_scores[i] =
        static_cast<scalar_t>(static_cast<acc_t>(out[i]) * (static_cast<acc_t>(grad[i]) - dot));
  }
}

// The rows of one edge_softmax call as the backends' kernels take them: each head of row r is
// the segment of slots row_start[r] .. row_start[r + 1] of a [E, heads] array.
struct SoftmaxRows {
  const int64_t* row_start;
  int64_t num_rows, heads;
};

// The op entry points, shared by the backends: check, make the inputs' device current and the
// inputs contiguous, allocate the [E, H] result, skip the kernel when it is empty, dispatch on
// the dtype; then `Backend::forward(rows, scores, out)` or
// `Backend::backward(rows, out, grad, grad_scores)`, the backend's row kernel.
template <typename Backend>
at::Tensor edge_softmax_entry(const at::Tensor& indptr, const at::Tensor& scores) {
  check_edge_softmax_inputs("edge_softmax", indptr, scores);
  const c10::DeviceGuard device_guard(scores.device());
  const at::Tensor scores_c = scores.contiguous(), indptr_c = indptr.contiguous();
  at::Tensor out = empty_for_write(scores_c.sizes(), scores_c.options());
  if (out.numel() == 0) return out;
  const SoftmaxRows rows{indptr_c.data_ptr<int64_t>(), indptr.numel() - 1, scores.size(1)};
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, scores.scalar_type(), "edge_softmax",
      [&] { Backend::forward(rows, scores_c.data_ptr<scalar_t>(), out.data_ptr<scalar_t>()); });
  return out;
}

template <typename Backend>
at::Tensor edge_softmax_backward_entry(const at::Tensor& indptr, const at::Tensor& out,
                                       const at::Tensor& grad) {
  check_edge_softmax_backward_inputs(indptr, out, grad);
  const c10::DeviceGuard device_guard(out.device());
  const at::Tensor out_c = out.contiguous(), grad_c = grad.contiguous();
  const at::Tensor indptr_c = indptr.contiguous();
  at::Tensor grad_scores = empty_for_write(out_c.sizes(), out_c.options());
  if (grad_scores.numel() == 0) return grad_scores;
  const SoftmaxRows rows{indptr_c.data_ptr<int64_t>(), indptr.numel() - 1, out.size(1)};
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, out.scalar_type(), "edge_softmax_backward", [&] {
        Backend::backward(rows, out_c.data_ptr<scalar_t>(), grad_c.data_ptr<scalar_t>(),
                          grad_scores.data_ptr<scalar_t>());
      });
  return grad_scores;
}

}  // namespace fastgl::aggregate
