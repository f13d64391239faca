// Small CUDA helpers shared by the kernels. Only c10/cuda headers: the kernels must compile
// against the torch headers without a GPU or the CUDA math libraries (docs/adding-an-op.md).
#pragma once

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>

namespace fastgl::cuda {

constexpr int kThreadsPerBlock = 256;

// Blocks for n elements, capped: kernels launched with it loop grid-stride over the rest.
inline int64_t blocks_for(int64_t n, int64_t threads = kThreadsPerBlock) {
  constexpr int64_t kMaxBlocks = 1 << 20;
  const int64_t blocks = (n + threads - 1) / threads;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

// Grid-stride loop index type: 64-bit so edge counts past 2^31 are safe.
__device__ inline int64_t global_thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline int64_t global_thread_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Lowers *smallest to `value` when smaller, from any thread: the kernels keep the first bad item
// (the smallest encoded fault), whatever the schedule.
__device__ inline void keep_smallest(int64_t* smallest, int64_t value) {
  atomicMin(reinterpret_cast<long long*>(smallest), static_cast<long long>(value));
}

}  // namespace fastgl::cuda
