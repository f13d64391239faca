// CUDA sample_ranges: a thread per pair through the same RangesView as the CPU reference, so
// both return identical samples. Ranges are arbitrary slices (not rows shared by many pairs), so
// NextDoor's transit grouping, which caches a shared row per block, has nothing to share here.
#include "common/cuda_utils.cuh"
#include "sampling/sample_ranges.h"

#include <torch/library.h>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

// Each pair's draw count, checked as it is computed; the first bad pair (smallest encoded
// fault) is kept in `first_fault` for the host, which reads it with the output size.
template <typename weight_t>
__global__ void count_range_draws_kernel(RangesView<weight_t> view, int64_t num_pairs,
                                         int64_t* counts, int64_t* first_fault) {
  for (int64_t p = global_thread_index(); p < num_pairs; p += global_thread_stride()) {
    const int64_t draws = view.draws(p);
    counts[p] = draws < 0 ? 0 : draws;
    if (draws < 0) {
      atomicMin(reinterpret_cast<long long*>(first_fault),
                static_cast<long long>(encode_range_fault(p, -draws)));
    }
  }
}

template <typename weight_t>
__global__ void draw_ranges_kernel(RangesView<weight_t> view, int64_t num_pairs, const int64_t* ptr,
                                   int64_t* slots) {
  for (int64_t p = global_thread_index(); p < num_pairs; p += global_thread_stride()) {
    view.draw(p, ptr[p + 1] - ptr[p], slots + ptr[p]);
  }
}

struct CudaSampleRanges {
  template <typename weight_t>
  static RangesResult run(const RangesView<weight_t>& view, const RangesTensors& in) {
    const int64_t num_pairs = in.starts.numel();  // > 0: the entry returned early otherwise
    const auto options = in.starts.options();
    const cudaStream_t stream = fastgl::cuda::current_stream();

    at::Tensor counts = at::empty({num_pairs}, options);
    at::Tensor first_fault = at::full({1}, kNoRangeFault, options);
    count_range_draws_kernel<<<blocks_for(num_pairs), kThreadsPerBlock, 0, stream>>>(
        view, num_pairs, counts.data_ptr<int64_t>(), first_fault.data_ptr<int64_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    // Faulty pairs count 0 and every count is at most view.max_draws: the sum cannot overflow.
    at::Tensor ptr = at::zeros({num_pairs + 1}, options);
    ptr.narrow(0, 1, num_pairs).copy_(at::cumsum(counts, 0));
    // One synchronization reads both the output size and the fault word.
    const at::Tensor read_back = at::cat({ptr.narrow(0, num_pairs, 1), first_fault}).cpu();
    const int64_t total = read_back.data_ptr<int64_t>()[0];
    check_range_counts(read_back.data_ptr<int64_t>()[1], total, in);

    at::Tensor slots = at::empty({total}, options);
    if (total == 0) return {ptr, slots};
    draw_ranges_kernel<<<blocks_for(num_pairs), kThreadsPerBlock, 0, stream>>>(
        view, num_pairs, ptr.data_ptr<int64_t>(), slots.data_ptr<int64_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {ptr, slots};
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("sample_ranges", &sample_ranges_entry<CudaSampleRanges>);
}

}  // namespace fastgl::sampling
