// CPU gather_rows: rows are independent, so threads split them and memcpy whole rows.
#include "features/gather_rows.h"
#include "common/page_advice.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>

namespace fastgl::features {
namespace {

void gather_rows_cpu(const at::Tensor& x, const c10::optional<at::Tensor>& index,
                     const at::Tensor& out, const c10::optional<at::Tensor>& out_index) {
  const RowCopy copy = check_gather_rows_inputs(x, index, out, out_index);
  FASTGL_CHECK(x.device().is_cpu() && out.device().is_cpu(), "gather_rows",
               "x and out must both be on the CPU here, got ", x.device(), " and ", out.device());
  note_in_place_write(out);
  if (copy.num_rows == 0 || copy.row_bytes == 0) return;
  at::Tensor index_holder, out_index_holder;
  const int64_t* src_rows = row_ids(index, index_holder);
  const int64_t* dst_rows = row_ids(out_index, out_index_holder);
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

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("gather_rows", &gather_rows_cpu); }

}  // namespace fastgl::features
