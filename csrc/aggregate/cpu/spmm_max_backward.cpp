// CPU reference for the max-aggregation backward ops (see spmm_max_backward.h): sources (for x)
// and rows (for the edge weights) in parallel, each summed by one thread in slot order, in the
// op-math type.
#include "aggregate/spmm_max_backward.h"
#include "common/page_advice.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kRowGrain = 64;

template <typename scalar_t, typename index_t>
void max_backward_x_rows(const at::Tensor& t_indptr, const at::Tensor& t_rows,
                         const at::Tensor& t_slots, const scalar_t* weight, const at::Tensor& arg,
                         const at::Tensor& grad, at::Tensor& grad_x) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t num_src = t_indptr.numel() - 1, dim = grad.size(1);
  const int64_t* start = t_indptr.data_ptr<int64_t>();
  const index_t* rows = t_rows.data_ptr<index_t>();
  const int64_t* slots = t_slots.data_ptr<int64_t>();
  const int64_t* winner = arg.data_ptr<int64_t>();
  const scalar_t* grad_data = grad.data_ptr<scalar_t>();
  scalar_t* out = grad_x.data_ptr<scalar_t>();
  at::parallel_for(0, num_src, kRowGrain, [&](int64_t begin, int64_t end) {
    std::vector<acc_t> acc(dim);
    for (int64_t s = begin; s < end; ++s) {
      acc.assign(dim, acc_t(0));
      for (int64_t j = start[s]; j < start[s + 1]; ++j) {
        const int64_t r = static_cast<int64_t>(rows[j]), e = slots[j];
        const acc_t w = weight ? static_cast<acc_t>(weight[e]) : acc_t(1);
        for (int64_t f = 0; f < dim; ++f) {
          if (winner[r * dim + f] == e) acc[f] += w * static_cast<acc_t>(grad_data[r * dim + f]);
        }
      }
      for (int64_t f = 0; f < dim; ++f) out[s * dim + f] = static_cast<scalar_t>(acc[f]);
    }
  });
}

// Row r owns its edges' entries: each feature adds its term to the edge that won it.
template <typename scalar_t, typename index_t>
void max_backward_weight_rows(const at::Tensor& indptr, const at::Tensor& indices,
                              const at::Tensor& x, const at::Tensor& arg, const at::Tensor& grad,
                              at::Tensor& grad_weight) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t num_rows = indptr.numel() - 1, dim = grad.size(1);
  const int64_t* start = indptr.data_ptr<int64_t>();
  const index_t* column = indices.data_ptr<index_t>();
  const int64_t* winner = arg.data_ptr<int64_t>();
  const scalar_t* grad_data = grad.data_ptr<scalar_t>();
  const scalar_t* x_data = x.data_ptr<scalar_t>();
  scalar_t* out = grad_weight.data_ptr<scalar_t>();
  at::parallel_for(0, num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
    std::vector<acc_t> acc;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t first = start[r], last = start[r + 1];
      acc.assign(last - first, acc_t(0));
      for (int64_t f = 0; f < dim; ++f) {
        const int64_t e = winner[r * dim + f];
        if (e < first || e >= last) continue;  // -1: an empty row has no winner
        const int64_t source = static_cast<int64_t>(column[e]);
        acc[e - first] += static_cast<acc_t>(grad_data[r * dim + f]) *
                          static_cast<acc_t>(x_data[source * dim + f]);
      }
      for (size_t k = 0; k < acc.size(); ++k) out[first + k] = static_cast<scalar_t>(acc[k]);
    }
  });
}

}  // namespace

at::Tensor spmm_max_backward_x_cpu(const at::Tensor& t_indptr, const at::Tensor& t_rows,
                                   const at::Tensor& t_slots,
                                   const c10::optional<at::Tensor>& weight, const at::Tensor& arg,
                                   const at::Tensor& grad) {
  check_spmm_max_backward_x_inputs(t_indptr, t_rows, t_slots, weight, arg, grad);
  const at::Tensor t_indptr_c = t_indptr.contiguous(), t_rows_c = t_rows.contiguous();
  const at::Tensor t_slots_c = t_slots.contiguous(), arg_c = arg.contiguous();
  const at::Tensor grad_c = grad.contiguous();
  const at::Tensor weight_c = weight.has_value() ? weight->contiguous() : at::Tensor();
  at::Tensor grad_x = at::empty({t_indptr.numel() - 1, grad.size(1)}, grad.options());
  prefault_for_write(grad_x);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_x_cpu", [&] {
        AT_DISPATCH_INDEX_TYPES(t_rows.scalar_type(), "spmm_max_backward_x_cpu", [&] {
          const scalar_t* w = weight_c.defined() ? weight_c.data_ptr<scalar_t>() : nullptr;
          max_backward_x_rows<scalar_t, index_t>(t_indptr_c, t_rows_c, t_slots_c, w, arg_c, grad_c,
                                                 grad_x);
        });
      });
  return grad_x;
}

at::Tensor spmm_max_backward_weight_cpu(const at::Tensor& indptr, const at::Tensor& indices,
                                        const at::Tensor& x, const at::Tensor& arg,
                                        const at::Tensor& grad) {
  check_spmm_max_backward_weight_inputs(indptr, indices, x, arg, grad);
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor x_c = x.contiguous(), arg_c = arg.contiguous(), grad_c = grad.contiguous();
  at::Tensor grad_weight = at::empty({indices.numel()}, grad.options());
  prefault_for_write(grad_weight);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, grad.scalar_type(), "spmm_max_backward_weight_cpu", [&] {
        AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "spmm_max_backward_weight_cpu", [&] {
          max_backward_weight_rows<scalar_t, index_t>(indptr_c, indices_c, x_c, arg_c, grad_c,
                                                      grad_weight);
        });
      });
  return grad_weight;
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("spmm_max_backward_x", &spmm_max_backward_x_cpu);
  m.impl("spmm_max_backward_weight", &spmm_max_backward_weight_cpu);
}

}  // namespace fastgl::aggregate
