// CPU gather_rows: rows are independent, so threads split them and memcpy whole rows.
#include "features/gather_rows.h"
#include "common/page_advice.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>

namespace fastgl::features {
namespace {

struct CpuGatherRows {
  static void check_placement(const at::Tensor& x, const at::Tensor& out, const RowCopy&) {
    FASTGL_CHECK(x.device().is_cpu() && out.device().is_cpu(), "gather_rows",
                 "x and out must both be on the CPU here, got ", x.device(), " and ", out.device());
  }

  static void run(const at::Tensor& x, const int64_t* src_rows, const at::Tensor& out,
                  const int64_t* dst_rows, const RowCopy& copy) {
    const char* src = static_cast<const char*>(x.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    // Without out_index the first num_rows rows are written in full; scattered rows are not.
    if (!dst_rows) prefault_for_write(out.narrow(0, 0, copy.num_rows));
    // About 64 KB per task: small rows are batched, large rows still spread over threads.
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / copy.row_bytes);
    at::parallel_for(0, copy.num_rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t from = src_rows ? src_rows[i] : i, to = dst_rows ? dst_rows[i] : i;
        std::memcpy(dst + to * copy.row_bytes, src + from * copy.row_bytes, copy.row_bytes);
      }
    });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("gather_rows", &gather_rows_entry<CpuGatherRows>); }

}  // namespace fastgl::features
