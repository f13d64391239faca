// CPU reference for sddmm: rows in parallel, each edge's dot product accumulated in the op-math
// type (fp32 for fp16/bf16 inputs).
#include "aggregate/sddmm.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kRowGrain = 64;

struct CpuSddmm {
  template <typename scalar_t, typename index_t>
  static void run(const SddmmCall<scalar_t, index_t>& call) {
    using acc_t = at::opmath_type<scalar_t>;
    const int64_t dim = call.dim;
    at::parallel_for(0, call.num_rows, kRowGrain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const scalar_t* a_row = call.a + r * dim;
        for (int64_t k = call.row_start[r]; k < call.row_start[r + 1]; ++k) {
          const scalar_t* b_row = call.b + static_cast<int64_t>(call.column[k]) * dim;
          acc_t dot = 0;
          for (int64_t f = 0; f < dim; ++f) {
            dot += static_cast<acc_t>(a_row[f]) * static_cast<acc_t>(b_row[f]);
          }
          call.out[k] = static_cast<scalar_t>(dot);
        }
      }
    });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("sddmm", &sddmm_entry<CpuSddmm>); }

}  // namespace fastgl::aggregate
