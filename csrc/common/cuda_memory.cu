// The GPU half of check.h's device_memory_bytes.
#include "common/check.h"
#include "common/cuda_utils.cuh"

namespace fastgl {

int64_t cuda_memory_bytes(c10::DeviceIndex device) {
  const c10::cuda::CUDAGuard device_guard(device);
  size_t free_bytes = 0, total_bytes = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(total_bytes);
}

}  // namespace fastgl
