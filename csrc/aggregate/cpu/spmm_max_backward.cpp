// CPU reference for the max-aggregation backward ops (see spmm_max_backward.h): sources (for x)
// and rows (for the edge weights) in parallel, each summed by one thread in slot order, in the
// op-math type.
#include "aggregate/spmm_max_backward.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kRowGrain = 64;

struct CpuSpmmMaxBackward {
  template <typename scalar_t, typename index_t>
  static void grad_x(const MaxBackwardXCall<scalar_t, index_t>& call) {
    using acc_t = at::opmath_type<scalar_t>;
    const int64_t dim = call.dim;
    at::parallel_for(0, call.num_src, kRowGrain, [&](int64_t begin, int64_t end) {
      std::vector<acc_t> acc(dim);
      for (int64_t s = begin; s < end; ++s) {
        acc.assign(dim, acc_t(0));
        for (int64_t j = call.t_start[s]; j < call.t_start[s + 1]; ++j) {
          const int64_t r = static_cast<int64_t>(call.t_rows[j]), e = call.t_slots[j];
          const acc_t w = call.weight ? static_cast<acc_t>(call.weight[e]) : acc_t(1);
          for (int64_t f = 0; f < dim; ++f) {
            if (call.winner[r * dim + f] == e) {
              acc[f] += w * static_cast<acc_t>(call.grad[r * dim + f]);
            }
          }
        }
        for (int64_t f = 0; f < dim; ++f) call.grad_x[s * dim + f] = static_cast<scalar_t>(acc[f]);
      }
    });
  }

  // Row r owns its edges' entries: each feature adds its term to the edge that won it.
  template <typename scalar_t, typename index_t>
  static void grad_weight(const MaxBackwardWeightCall<scalar_t, index_t>& call) {
    using acc_t = at::opmath_type<scalar_t>;
    const int64_t dim = call.dim;
    at::parallel_for(0, call.num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
      std::vector<acc_t> acc;
      for (int64_t r = begin; r < end; ++r) {
        const int64_t first = call.row_start[r], last = call.row_start[r + 1];
        acc.assign(last - first, acc_t(0));
        for (int64_t f = 0; f < dim; ++f) {
          const int64_t e = call.winner[r * dim + f];
          if (e < first || e >= last) continue;  // -1: an empty row has no winner
          const int64_t source = static_cast<int64_t>(call.column[e]);
          acc[e - first] += static_cast<acc_t>(call.grad[r * dim + f]) *
                            static_cast<acc_t>(call.x[source * dim + f]);
        }
        for (size_t k = 0; k < acc.size(); ++k) {
          call.grad_weight[first + k] = static_cast<scalar_t>(acc[k]);
        }
      }
    });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("spmm_max_backward_x", &spmm_max_backward_x_entry<CpuSpmmMaxBackward>);
  m.impl("spmm_max_backward_weight", &spmm_max_backward_weight_entry<CpuSpmmMaxBackward>);
}

}  // namespace fastgl::aggregate
