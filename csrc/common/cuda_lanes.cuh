// The device side of Lanes (common/lanes.h): `width` consecutive lanes of a warp, synchronized
// among themselves only, so that the warp's other groups run their own tasks undisturbed.
#pragma once

#include "common/cuda_utils.cuh"
#include "common/lanes.h"

namespace fastgl::cuda {

struct WarpLanes {
  int lane;       // 0 .. width - 1
  int width;      // a power of two, at most 32
  int first;      // the group's first lane within the warp
  unsigned mask;  // the group's lanes within the warp

  __device__ static WarpLanes of_this_thread(int width) {
    const int warp_lane = static_cast<int>(threadIdx.x % kWarpLanes);
    const int first = warp_lane / width * width;
    const unsigned group = width == kWarpLanes ? 0xffffffffu : (1u << width) - 1;
    return {warp_lane - first, width, first, group << first};
  }

  template <typename F>
  __device__ void each(int64_t n, const F& f) const {
    for (int64_t j = lane; j < n; j += width) f(j);
    __syncwarp(mask);
  }

  template <typename F>
  __device__ void one(const F& f) const {
    if (lane == 0) f();
    __syncwarp(mask);
  }

  template <typename F>
  __device__ int64_t sum(int64_t n, const F& f) const {
    long long total = 0;
    for (int64_t j = lane; j < n; j += width) total += static_cast<long long>(f(j));
    for (int offset = width / 2; offset > 0; offset /= 2) {
      total += __shfl_xor_sync(mask, total, offset, width);
    }
    __syncwarp(mask);  // shuffles and votes exchange registers; the barrier orders memory
    return total;
  }

  template <typename Pred>
  __device__ uint32_t ballot(const Pred& pred) const {
    const uint32_t votes = (__ballot_sync(mask, pred(lane)) & mask) >> first;
    __syncwarp(mask);
    return votes;
  }
};

// Runs stage(task, lanes) for every task < n, one group of `width` lanes per task, grid-stride.
// Whole groups share a thread block (its size is a multiple of a warp), so a group never splits.
template <typename Stage>
__global__ void run_group_stage_kernel(int64_t n, int width, Stage stage) {
  const WarpLanes lanes = WarpLanes::of_this_thread(width);
  const int64_t stride = global_thread_stride() / width;
  for (int64_t task = global_thread_index() / width; task < n; task += stride) {
    stage(task, lanes);
  }
}

}  // namespace fastgl::cuda
