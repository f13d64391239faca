// CPU reference for sample_ranges: pairs in parallel, each through neighbor_draw.h (via
// RangesView), so a range drawn here is what sample_neighbors draws from the same row.
#include "sampling/sample_ranges.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::sampling {
namespace {

constexpr int64_t kPairGrain = 256;

struct CpuSampleRanges {
  template <typename weight_t>
  static RangesResult run(const RangesView<weight_t>& view, const RangesTensors& in) {
    const int64_t num_pairs = in.starts.numel();
    at::Tensor ptr = at::empty({num_pairs + 1}, in.starts.options());
    int64_t* out_ptr = ptr.data_ptr<int64_t>();
    out_ptr[0] = 0;
    at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) out_ptr[p + 1] = view.draws(p);
    });
    // The prefix sum is sequential anyway; reporting the first bad pair found here (a negative
    // count is a fault) keeps the error independent of the thread count. Each count is at most
    // view.max_draws, so the sum cannot overflow.
    int64_t first_fault = kNoRangeFault;
    for (int64_t p = 0; p < num_pairs; ++p) {
      if (out_ptr[p + 1] < 0) {
        first_fault = encode_range_fault(p, -out_ptr[p + 1]);
        break;
      }
      out_ptr[p + 1] += out_ptr[p];
    }
    const int64_t total = first_fault == kNoRangeFault ? out_ptr[num_pairs] : 0;
    check_range_counts(first_fault, total, in);

    at::Tensor slots = empty_for_write({total}, in.starts.options());
    int64_t* out_slot = slots.data_ptr<int64_t>();
    at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        view.draw(p, out_ptr[p + 1] - out_ptr[p], out_slot + out_ptr[p]);
      }
    });
    return {ptr, slots};
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("sample_ranges", &sample_ranges_entry<CpuSampleRanges>);
}

}  // namespace fastgl::sampling
