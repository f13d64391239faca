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
  FASTGL_CHECK(grad.size(0) == indptr.numel() - 1, op, "grad has ", grad.size(0),
               " rows but indptr has ", indptr.numel() - 1);
  FASTGL_CHECK(grad.size(1) == x.size(1), op, "grad has ", grad.size(1), " columns but x has ",
               x.size(1));
  FASTGL_CHECK(grad.scalar_type() == x.scalar_type(), op, "grad dtype ", grad.scalar_type(),
               " differs from x dtype ", x.scalar_type());
  check_structure_ids(op, "indices", indices, x.size(0));
}

}  // namespace fastgl::aggregate
