// sddmm over a CSR-like structure (rows = segments of `indptr`): one dot product per edge,
//   sddmm(indptr, indices, a, b)[k] = <a[r], b[indices[k]]>   for k in row r.
// It is the edge-weight gradient of aggregation (spmm.h), reduced by one owner per edge.
#pragma once

#include "aggregate/spmm.h"
#include "common/check.h"
#include "common/page_advice.h"

#include <ATen/ATen.h>

namespace fastgl::aggregate {

inline void check_sddmm_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                               const at::Tensor& a, const at::Tensor& b) {
  constexpr const char* op = "sddmm";
  check_structure(op, indptr, indices);
  check_features(op, "a", a, indptr);
  check_features(op, "b", b, indptr);
  check_row_operand(op, "a", a, "b", b, indptr);
  check_structure_ids(op, "indices", indices, b.size(0));
}

// One SDDMM call as the backends' kernels take it: contiguous inputs as typed pointers, the
// output (one entry per edge) allocated.
template <typename scalar_t, typename index_t>
struct SddmmCall {
  const int64_t* row_start;
  const index_t* column;
  const scalar_t* a;
  const scalar_t* b;
  scalar_t* out;
  int64_t num_rows, dim;
};

// The op's entry point, shared by the backends: check, make the inputs' device current and the
// inputs contiguous, allocate the output, skip the kernel when there are no edges, dispatch on
// the dtypes, then run the backend's `Backend::run(SddmmCall)`.
template <typename Backend>
at::Tensor sddmm_entry(const at::Tensor& indptr, const at::Tensor& indices, const at::Tensor& a,
                       const at::Tensor& b) {
  check_sddmm_inputs(indptr, indices, a, b);
  const c10::DeviceGuard device_guard(a.device());
  const at::Tensor a_c = a.contiguous(), b_c = b.contiguous(), indptr_c = indptr.contiguous();
  const at::Tensor indices_c = indices.contiguous();
  at::Tensor out = empty_for_write({indices.numel()}, a.options());
  if (out.numel() == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, a.scalar_type(), "sddmm", [&] {
    AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "sddmm", [&] {
      Backend::run(SddmmCall<scalar_t, index_t>{
          indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(), a_c.data_ptr<scalar_t>(),
          b_c.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), indptr.numel() - 1, a.size(1)});
    });
  });
  return out;
}

}  // namespace fastgl::aggregate
