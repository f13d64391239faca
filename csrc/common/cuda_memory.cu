// The GPU half of check.h's device_memory_bytes.
#include "common/check.h"
#include "common/cuda_utils.cuh"

#include <array>
#include <atomic>

namespace fastgl {

int64_t cuda_memory_bytes(c10::DeviceIndex device) {
  // Asked once per device (0: not yet): samplers check an output size per hop.
  static std::array<std::atomic<int64_t>, C10_COMPILE_TIME_MAX_GPUS> total_by_device{};
  std::atomic<int64_t>& total = total_by_device.at(device);
  if (total.load() == 0) {
    const c10::cuda::CUDAGuard device_guard(device);
    size_t free_bytes = 0, total_bytes = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    total.store(static_cast<int64_t>(total_bytes));
  }
  return total.load();
}

}  // namespace fastgl
