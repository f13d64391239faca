// Backward of spmm_max (max aggregation), as ops of their own, deterministic and without float
// atomics: every output entry is summed by one owner in a fixed order.
//   spmm_max_backward_x(t_indptr, t_rows, t_slots, weight?, arg, grad)[s, f]
//       = sum over the transposed edges j of source s (edge slot e = t_slots[j], its row
//         r = t_rows[j]) with arg[r, f] == e of weight[e] * grad[r, f]
//   spmm_max_backward_weight(indptr, indices, x, arg, grad)[e]
//       = sum over the features f that edge e won in its row r (arg[r, f] == e) of
//         grad[r, f] * x[indices[e], f]
// `arg` is spmm_max's second output (the winning slot per (row, feature), -1 for empty rows); a
// slot outside row r wins nothing there. (t_indptr, t_rows, t_slots) is the transposed
// structure (rows = sources, in slot order).
#pragma once

#include "aggregate/spmm.h"
#include "common/check.h"
#include "common/page_advice.h"

#include <ATen/ATen.h>

namespace fastgl::aggregate {

inline void check_max_arg(const char* op, const at::Tensor& arg, const at::Tensor& grad,
                          const at::Tensor& indptr) {
  check_features(op, "grad", grad, indptr);
  check_dtype(op, "arg", arg, at::kLong);
  FASTGL_CHECK(arg.sizes() == grad.sizes(), op, "arg has shape ", arg.sizes(),
               " but grad has shape ", grad.sizes());
  check_same_device(op, "arg", arg, "indptr", indptr);
}

inline void check_spmm_max_backward_x_inputs(const at::Tensor& t_indptr, const at::Tensor& t_rows,
                                             const at::Tensor& t_slots,
                                             const c10::optional<at::Tensor>& weight,
                                             const at::Tensor& arg, const at::Tensor& grad) {
  constexpr const char* op = "spmm_max_backward_x";
  check_structure(op, t_indptr, t_rows, "t_indptr", "t_rows");
  check_dim(op, "t_slots", t_slots, 1);
  check_dtype(op, "t_slots", t_slots, at::kLong);
  FASTGL_CHECK(t_slots.numel() == t_rows.numel(), op, "t_slots has ", t_slots.numel(),
               " entries but t_rows has ", t_rows.numel());
  check_same_device(op, "t_slots", t_slots, "t_indptr", t_indptr);
  check_max_arg(op, arg, grad, t_indptr);
  check_structure_ids(op, "t_rows", t_rows, grad.size(0));
  check_edge_weight(op, weight, t_slots.numel(), grad, t_indptr);
  check_structure_ids(op, "t_slots", t_slots, t_slots.numel());
}

inline void check_spmm_max_backward_weight_inputs(const at::Tensor& indptr,
                                                  const at::Tensor& indices, const at::Tensor& x,
                                                  const at::Tensor& arg, const at::Tensor& grad) {
  constexpr const char* op = "spmm_max_backward_weight";
  check_structure(op, indptr, indices);
  check_features(op, "x", x, indptr);
  check_max_arg(op, arg, grad, indptr);
  check_row_operand(op, "grad", grad, "x", x, indptr);
  check_structure_ids(op, "indices", indices, x.size(0));
}

// spmm_max_backward_x as the backends' kernels take it: contiguous inputs as typed pointers, the
// [num_src, dim] gradient allocated.
template <typename scalar_t, typename index_t>
struct MaxBackwardXCall {
  const int64_t* t_start;
  const index_t* t_rows;
  const int64_t* t_slots;
  const scalar_t* weight;  // null: every weight is 1
  const int64_t* winner;   // arg
  const scalar_t* grad;
  scalar_t* grad_x;
  int64_t num_src, dim;
};

// spmm_max_backward_weight likewise, with its gradient of one entry per edge.
template <typename scalar_t, typename index_t>
struct MaxBackwardWeightCall {
  const int64_t* row_start;
  const index_t* column;
  const scalar_t* x;
  const int64_t* winner;  // arg
  const scalar_t* grad;
  scalar_t* grad_weight;
  int64_t num_rows, dim;
};

// The op entry points, shared by the backends: check, make the inputs' device current and the
// inputs contiguous, allocate the gradient, skip the kernel when it is empty, dispatch on the
// dtypes; then `Backend::grad_x(call)` or `Backend::grad_weight(call)`, the backend's kernel.
template <typename Backend>
at::Tensor spmm_max_backward_x_entry(const at::Tensor& t_indptr, const at::Tensor& t_rows,
                                     const at::Tensor& t_slots,
                                     const c10::optional<at::Tensor>& weight, const at::Tensor& arg,
                                     const at::Tensor& grad) {
  check_spmm_max_backward_x_inputs(t_indptr, t_rows, t_slots, weight, arg, grad);
  const c10::DeviceGuard device_guard(grad.device());
  const at::Tensor t_indptr_c = t_indptr.contiguous(), t_rows_c = t_rows.contiguous();
  const at::Tensor t_slots_c = t_slots.contiguous(), arg_c = arg.contiguous();
  const at::Tensor grad_c = grad.contiguous(), weight_c = contiguous_or_undefined(weight);
  const int64_t num_src = t_indptr.numel() - 1, dim = grad.size(1);
  at::Tensor grad_x = empty_for_write({num_src, dim}, grad.options());
  if (grad_x.numel() == 0) return grad_x;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_x", [&] {
        AT_DISPATCH_INDEX_TYPES(t_rows.scalar_type(), "spmm_max_backward_x", [&] {
          Backend::grad_x(MaxBackwardXCall<scalar_t, index_t>{
              t_indptr_c.data_ptr<int64_t>(), t_rows_c.data_ptr<index_t>(),
              t_slots_c.data_ptr<int64_t>(),
              weight_c.defined() ? weight_c.data_ptr<scalar_t>() : nullptr,
              arg_c.data_ptr<int64_t>(), grad_c.data_ptr<scalar_t>(), grad_x.data_ptr<scalar_t>(),
              num_src, dim});
        });
      });
  return grad_x;
}

template <typename Backend>
at::Tensor spmm_max_backward_weight_entry(const at::Tensor& indptr, const at::Tensor& indices,
                                          const at::Tensor& x, const at::Tensor& arg,
                                          const at::Tensor& grad) {
  check_spmm_max_backward_weight_inputs(indptr, indices, x, arg, grad);
  const c10::DeviceGuard device_guard(grad.device());
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor x_c = x.contiguous(), arg_c = arg.contiguous(), grad_c = grad.contiguous();
  at::Tensor grad_weight = empty_for_write({indices.numel()}, grad.options());
  if (grad_weight.numel() == 0) return grad_weight;
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_weight", [&] {
        AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "spmm_max_backward_weight", [&] {
          Backend::grad_weight(MaxBackwardWeightCall<scalar_t, index_t>{
              indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(), x_c.data_ptr<scalar_t>(),
              arg_c.data_ptr<int64_t>(), grad_c.data_ptr<scalar_t>(),
              grad_weight.data_ptr<scalar_t>(), indptr.numel() - 1, grad.size(1)});
        });
      });
  return grad_weight;
}

}  // namespace fastgl::aggregate
