// CPU reference for spmm, spmm_max and es_spmm: accumulation in the op-math type (fp32 for
// fp16/bf16 inputs), edges of a row in order. Sums run on the partitioned, vectorized kernel of
// sum_rows.h; max (with its winning slots) on the generic row kernel below.
#include "aggregate/spmm.h"
#include "aggregate/cpu/sum_rows.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <type_traits>
#include <vector>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kRowGrain = 64;

// Row r reduces the edges the call's selector picks from it, in slot order; the winning slot per
// feature is written when the call asks for it.
template <template <typename> class Reducer, typename scalar_t, typename index_t, typename Selector>
void spmm_rows(const SpmmCall<scalar_t, index_t, Selector>& call) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t dim = call.dim;
  at::parallel_for(0, call.num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
    std::vector<Reducer<acc_t>> acc(dim);
    for (int64_t r = begin; r < end; ++r) {
      acc.assign(dim, Reducer<acc_t>{});
      const int64_t degree = call.row_start[r + 1] - call.row_start[r];
      for (int64_t slot = 0; slot < call.selector.count(degree); ++slot) {
        const int64_t k = call.row_start[r] + call.selector.edge(slot, degree);
        const acc_t w = call.weight ? static_cast<acc_t>(call.weight[k]) : acc_t(1);
        const scalar_t* x_row = call.x + static_cast<int64_t>(call.column[k]) * dim;
        for (int64_t f = 0; f < dim; ++f) acc[f].add(w * static_cast<acc_t>(x_row[f]), k);
      }
      for (int64_t f = 0; f < dim; ++f) {
        call.out[r * dim + f] = static_cast<scalar_t>(acc[f].result());
        if (call.arg_out) call.arg_out[r * dim + f] = acc[f].arg();
      }
    }
  });
}

struct CpuSpmm {
  template <template <typename> class Reducer, typename scalar_t, typename index_t,
            typename Selector>
  static void run(const SpmmCall<scalar_t, index_t, Selector>& call) {
    if constexpr (std::is_same_v<Reducer<double>, SumReducer<double>>) {
      const SumRowsArgs<scalar_t, index_t, Selector> args{
          call.row_start, call.column, call.weight, call.x, call.out, call.dim, call.selector};
      sum_rows(args, call.num_rows, call.num_x_rows);
    } else {
      spmm_rows<Reducer>(call);
    }
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("spmm", &spmm_entry<CpuSpmm>);
  m.impl("spmm_max", &spmm_max_entry<CpuSpmm>);
  m.impl("es_spmm", &es_spmm_entry<CpuSpmm>);
}

}  // namespace fastgl::aggregate
