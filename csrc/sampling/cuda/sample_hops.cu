// CUDA sample_hops (sample_hops.h): the device sampling engine (hop_engine.h) with its stages as
// kernels. A call enqueues a fixed run of kernels per hop (NextDoor's per-pair draws fused with
// the edge-id gather and FastGL's Fused-Map insert into one table that lives for the whole call)
// and synchronizes once, at the end, to read the counts and the fault word; only a hop whose
// worst case is unbounded (fanout -1) or over the memory budget waits once more for its size.
// The host harness (cpu/sample_hops_staged.cpp) runs the same stages in CI.
#include "common/cub_length.cuh"
#include "common/cuda_lanes.cuh"
#include "common/cuda_utils.cuh"
#include "sampling/hetero_hops.h"

#include <c10/cuda/CUDAFunctions.h>
#include <torch/library.h>
#include <cub/device/device_scan.cuh>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

template <typename Stage>
__global__ void run_stage_kernel(int64_t n, Stage stage) {
  for (int64_t i = global_thread_index(); i < n; i += global_thread_stride()) stage(i);
}

struct CudaExec {
  at::TensorOptions device_options;
  cudaStream_t stream;
  const char* op;  // the name errors carry

  at::TensorOptions options() const { return device_options; }

  template <typename Stage>
  void for_each(int64_t n, const Stage& stage) const {
    if (n == 0) return;
    run_stage_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(n, stage);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  template <typename Stage>
  void for_each_group(int64_t n, int width, const Stage& stage) const {
    if (n == 0) return;
    fastgl::cuda::run_group_stage_kernel<<<blocks_for(n * width), kThreadsPerBlock, 0, stream>>>(
        n, width, stage);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  template <typename Stage>
  void single(const Stage& stage) const {
    run_stage_kernel<<<1, 1, 0, stream>>>(1, stage);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }

  void exclusive_scan(const int64_t* in, int64_t* out, int64_t n) const {
    C10_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(int64_t), stream));
    if (n == 0) return;
    const auto length = fastgl::cuda::cub_length(op, n);
    size_t bytes = 0;
    C10_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out + 1, length, stream));
    const at::Tensor scratch =
        at::empty({static_cast<int64_t>(bytes)}, device_options.dtype(at::kByte));
    C10_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(scratch.data_ptr(), bytes, in, out + 1, length, stream));
  }

  // Through pinned memory, so the copy is asynchronous; the caching host allocator keeps the
  // staging buffer alive until the copy has run.
  at::Tensor upload(const at::Tensor& host) const {
    const at::Tensor pinned = at::empty_like(host, at::TensorOptions().pinned_memory(true));
    pinned.copy_(host);
    return pinned.to(device_options, /*non_blocking=*/true);
  }

  // The call's (or a waiting hop's) one synchronization, made through c10 so that
  // torch.cuda.set_sync_debug_mode sees and counts it.
  at::Tensor read(const at::Tensor& device) const {
    at::Tensor pinned =
        at::empty(device.sizes(), device.options().device(at::kCPU).pinned_memory(true));
    pinned.copy_(device, /*non_blocking=*/true);
    c10::cuda::stream_synchronize(stream);
    return pinned;
  }
};

struct CudaSampleHops {
  static HopsResult run_engine(const HopsInputs& in, int64_t budget_bytes) {
    const CudaExec exec{in.seeds.options().dtype(at::kLong), fastgl::cuda::current_stream(), in.op};
    return hops::run_hop_engine(in, exec, hops::engine_budget(budget_bytes, in.indptr.device()));
  }
  static HopsResult run(const HopsInputs& in) { return run_engine(in, -1); }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("sample_hops", &sample_hops_entry<CudaSampleHops>);
  m.impl("_hetero_sample_hops", &hetero_sample_hops_entry<CudaSampleHops>);
}

}  // namespace fastgl::sampling
