// CUDA sample_ranges: a group of lanes per pair (common/lanes.h) through the same RangesView as
// the CPU reference, so both return identical samples. Ranges are arbitrary slices (not rows
// shared by many pairs), so NextDoor's transit grouping, which caches a shared row per block,
// has nothing to share here.
#include "common/cuda_lanes.cuh"
#include "common/cuda_utils.cuh"
#include "sampling/sample_ranges.h"

#include <torch/library.h>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::kThreadsPerBlock;
using fastgl::cuda::run_group_stage_kernel;

// Lanes per pair (counting: count_lanes). The fanouts are device data, so the width cannot follow
// them: a weighted range is drawn without replacement by a warp; weighted draws with replacement
// are one lane's scan, so a pair gets one lane; an unweighted range is counted by one lane and
// drawn by a half warp (a draw per lane for fanouts up to 16, more per lane past that).
constexpr int kUnweightedDrawLanes = 16;

template <typename weight_t>
int draw_lanes(const RangesView<weight_t>& view) {
  if (view.weighted) return view.replace ? 1 : kWarpLanes;
  return kUnweightedDrawLanes;
}

// Each pair's draw count, checked as it is computed; the first bad pair (smallest encoded
// fault) is kept in `first_fault` for the host, which reads it with the output size.
template <typename weight_t>
struct CountRangeDraws {
  RangesView<weight_t> view;
  int64_t* counts;
  int64_t* first_fault;

  __device__ void operator()(int64_t p, const fastgl::cuda::WarpLanes& lanes) const {
    const int64_t draws = view.draws(p, lanes);
    lanes.one([&] {
      counts[p] = draws < 0 ? 0 : draws;
      if (draws < 0) fastgl::cuda::keep_smallest(first_fault, encode_range_fault(p, -draws));
    });
  }
};

template <typename weight_t>
struct DrawRanges {
  RangesView<weight_t> view;
  const int64_t* ptr;
  int64_t* slots;
  int64_t* scratch;  // Floyd's raw picks, one per slot; null when no pair keeps any

  __device__ void operator()(int64_t p, const fastgl::cuda::WarpLanes& lanes) const {
    view.draw(p, ptr[p + 1] - ptr[p], slots + ptr[p], scratch ? scratch + ptr[p] : nullptr, lanes);
  }
};

struct CudaSampleRanges {
  template <typename weight_t>
  static RangesResult run(const RangesView<weight_t>& view, const RangesTensors& in) {
    const int64_t num_pairs = in.starts.numel();  // > 0: the entry returned early otherwise
    const auto options = in.starts.options();
    const cudaStream_t stream = fastgl::cuda::current_stream();

    at::Tensor counts = at::empty({num_pairs}, options);
    at::Tensor first_fault = at::full({1}, kNoRangeFault, options);
    const int count_width = count_lanes(view.weighted);
    run_group_stage_kernel<<<blocks_for(num_pairs * count_width), kThreadsPerBlock, 0, stream>>>(
        num_pairs, count_width,
        CountRangeDraws<weight_t>{view, counts.data_ptr<int64_t>(),
                                  first_fault.data_ptr<int64_t>()});
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
    // Only uniform draws without replacement keep raw picks; the others never touch it.
    const bool picks = view.weight == nullptr && !view.replace;
    if (picks)
      check_output_fits(kRangesOp, "the draws' scratch", total, sizeof(int64_t),
                        in.starts.device());
    const at::Tensor scratch = at::empty({picks ? total : 0}, options);
    int64_t* const scratch_data = picks ? scratch.data_ptr<int64_t>() : nullptr;
    const int draw_width = draw_lanes(view);
    run_group_stage_kernel<<<blocks_for(num_pairs * draw_width), kThreadsPerBlock, 0, stream>>>(
        num_pairs, draw_width,
        DrawRanges<weight_t>{view, ptr.data_ptr<int64_t>(), slots.data_ptr<int64_t>(),
                             scratch_data});
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {ptr, slots};
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("sample_ranges", &sample_ranges_entry<CudaSampleRanges>);
}

}  // namespace fastgl::sampling
