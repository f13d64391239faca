// CPU reference for spmm, es_spmm and sddmm: accumulation in the op-math type (fp32 for fp16/bf16
// inputs), edges of a row in order. Sums run on the partitioned, vectorized kernel of
// sum_rows.h; max (with its winning slots) on the generic row kernel below.
#include "aggregate/spmm.h"
#include "aggregate/cpu/sum_rows.h"
#include "common/page_advice.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <type_traits>
#include <vector>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kRowGrain = 64;

// Row r reduces the edges `selector` picks from it, in slot order; `arg_out` (the winning slot
// per feature) is written when not null.
template <template <typename> class Reducer, typename Selector, typename scalar_t, typename index_t>
void spmm_rows(const at::Tensor& indptr, const at::Tensor& indices, const scalar_t* weight,
               const at::Tensor& x, Selector selector, at::Tensor& out, int64_t* arg_out) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t num_rows = indptr.numel() - 1, dim = x.size(1);
  const int64_t* row_start = indptr.data_ptr<int64_t>();
  const index_t* column = indices.data_ptr<index_t>();
  const scalar_t* x_data = x.data_ptr<scalar_t>();
  scalar_t* out_data = out.data_ptr<scalar_t>();
  at::parallel_for(0, num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
    std::vector<Reducer<acc_t>> acc(dim);
    for (int64_t r = begin; r < end; ++r) {
      acc.assign(dim, Reducer<acc_t>{});
      const int64_t degree = row_start[r + 1] - row_start[r];
      for (int64_t slot = 0; slot < selector.count(degree); ++slot) {
        const int64_t k = row_start[r] + selector.edge(slot, degree);
        const acc_t w = weight ? static_cast<acc_t>(weight[k]) : acc_t(1);
        const scalar_t* x_row = x_data + static_cast<int64_t>(column[k]) * dim;
        for (int64_t f = 0; f < dim; ++f) acc[f].add(w * static_cast<acc_t>(x_row[f]), k);
      }
      for (int64_t f = 0; f < dim; ++f) {
        out_data[r * dim + f] = static_cast<scalar_t>(acc[f].result());
        if (arg_out) arg_out[r * dim + f] = acc[f].arg();
      }
    }
  });
}

template <typename scalar_t, typename index_t>
void sddmm_rows(const at::Tensor& indptr, const at::Tensor& indices, const at::Tensor& a,
                const at::Tensor& b, at::Tensor& out) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t num_rows = indptr.numel() - 1, dim = a.size(1);
  const int64_t* row_start = indptr.data_ptr<int64_t>();
  const index_t* column = indices.data_ptr<index_t>();
  const scalar_t* a_data = a.data_ptr<scalar_t>();
  const scalar_t* b_data = b.data_ptr<scalar_t>();
  scalar_t* out_data = out.data_ptr<scalar_t>();
  at::parallel_for(0, num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* a_row = a_data + r * dim;
      for (int64_t k = row_start[r]; k < row_start[r + 1]; ++k) {
        const scalar_t* b_row = b_data + static_cast<int64_t>(column[k]) * dim;
        acc_t dot = 0;
        for (int64_t f = 0; f < dim; ++f) {
          dot += static_cast<acc_t>(a_row[f]) * static_cast<acc_t>(b_row[f]);
        }
        out_data[k] = static_cast<scalar_t>(dot);
      }
    }
  });
}

struct CpuSpmm {
  template <template <typename> class Reducer, typename Selector>
  static at::Tensor run(const at::Tensor& indptr, const at::Tensor& indices,
                        const c10::optional<at::Tensor>& weight, const at::Tensor& x,
                        Selector selector, int64_t* arg_out);
};

template <template <typename> class Reducer, typename Selector>
at::Tensor CpuSpmm::run(const at::Tensor& indptr, const at::Tensor& indices,
                        const c10::optional<at::Tensor>& weight, const at::Tensor& x,
                        Selector selector, int64_t* arg_out) {
  const at::Tensor x_c = x.contiguous(), indptr_c = indptr.contiguous();
  const at::Tensor indices_c = indices.contiguous();
  const at::Tensor weight_c = weight.has_value() ? weight->contiguous() : at::Tensor();
  at::Tensor out = at::empty({indptr.numel() - 1, x.size(1)}, x.options());
  prefault_for_write(out);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "spmm_cpu", [&] {
    AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "spmm_cpu", [&] {
      const scalar_t* w = weight_c.defined() ? weight_c.data_ptr<scalar_t>() : nullptr;
      if constexpr (std::is_same_v<Reducer<double>, SumReducer<double>>) {
        const SumRowsArgs<scalar_t, index_t, Selector> args{indptr_c.data_ptr<int64_t>(),
                                                            indices_c.data_ptr<index_t>(),
                                                            w,
                                                            x_c.data_ptr<scalar_t>(),
                                                            out.data_ptr<scalar_t>(),
                                                            x.size(1),
                                                            selector};
        sum_rows(args, indptr.numel() - 1, x.size(0));
      } else {
        spmm_rows<Reducer, Selector, scalar_t, index_t>(indptr_c, indices_c, w, x_c, selector, out,
                                                        arg_out);
      }
    });
  });
  return out;
}

}  // namespace

at::Tensor sddmm_cpu(const at::Tensor& indptr, const at::Tensor& indices, const at::Tensor& a,
                     const at::Tensor& b) {
  check_sddmm_inputs(indptr, indices, a, b);
  const at::Tensor a_c = a.contiguous(), b_c = b.contiguous(), indptr_c = indptr.contiguous();
  const at::Tensor indices_c = indices.contiguous();
  at::Tensor out = at::empty({indices.numel()}, a.options());
  prefault_for_write(out);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, a.scalar_type(), "sddmm_cpu", [&] {
    AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "sddmm_cpu", [&] {
      sddmm_rows<scalar_t, index_t>(indptr_c, indices_c, a_c, b_c, out);
    });
  });
  return out;
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("spmm", &spmm_entry<CpuSpmm>);
  m.impl("spmm_max", &spmm_max_entry<CpuSpmm>);
  m.impl("es_spmm", &es_spmm_entry<CpuSpmm>);
  m.impl("sddmm", &sddmm_cpu);
}

}  // namespace fastgl::aggregate
