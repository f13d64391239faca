// CUDA gather_rows: a warp per row, copying the row in the widest word its alignment allows.
// x may sit in pinned host memory: with unified addressing its pointer is valid on the device,
// so the same kernel is the zero-copy (UVA) gather, each row crossing the bus once.
#include "common/cuda_utils.cuh"
#include "features/gather_rows.h"

#include <torch/library.h>

namespace fastgl::features {
namespace {

constexpr int kWarpSize = 32;
constexpr int kRowsPerBlock = fastgl::cuda::kThreadsPerBlock / kWarpSize;

template <typename Word>
__global__ void gather_rows_kernel(const Word* __restrict__ x, const int64_t* src_rows,
                                   Word* __restrict__ out, const int64_t* dst_rows,
                                   int64_t num_rows, int64_t row_words) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarpSize;
  for (int64_t i = first; i < num_rows; i += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t from = src_rows ? src_rows[i] : i, to = dst_rows ? dst_rows[i] : i;
    const Word* src = x + from * row_words;
    Word* dst = out + to * row_words;
    for (int64_t w = lane; w < row_words; w += kWarpSize) dst[w] = src[w];
  }
}

template <typename Word>
void launch(const void* x, const int64_t* src_rows, void* out, const int64_t* dst_rows,
            RowCopy copy) {
  const int64_t blocks =
      std::min<int64_t>((copy.num_rows + kRowsPerBlock - 1) / kRowsPerBlock, 1 << 20);
  gather_rows_kernel<Word>
      <<<blocks, fastgl::cuda::kThreadsPerBlock, 0, fastgl::cuda::current_stream()>>>(
          static_cast<const Word*>(x), src_rows, static_cast<Word*>(out), dst_rows, copy.num_rows,
          copy.row_bytes / static_cast<int64_t>(sizeof(Word)));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Widest of 16/8/4/2/1 bytes dividing the row size and both base addresses.
int word_bytes(const void* x, const void* out, int64_t row_bytes) {
  const auto alignment = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(out) |
                         static_cast<uintptr_t>(row_bytes);
  for (int bytes = 16; bytes > 1; bytes /= 2) {
    if (alignment % bytes == 0) return bytes;
  }
  return 1;
}

struct CudaGatherRows {
  static void check_placement(const at::Tensor& x, const at::Tensor& out, const RowCopy& copy) {
    FASTGL_CHECK(out.is_cuda(), "gather_rows", "out must be on the GPU when index or x is, got ",
                 out.device());
    // Zero-byte rows read nothing; their host tensor has no storage, which cannot be pinned.
    const bool readable_from_host = x.is_pinned() || copy.row_bytes == 0;
    FASTGL_CHECK(x.device() == out.device() || (x.device().is_cpu() && readable_from_host),
                 "gather_rows", "x is on ", x.device(),
                 (x.device().is_cpu() ? " and not pinned" : ""), "; with out on ", out.device(),
                 " x must be on the same GPU or in pinned host memory (x.pin_memory())");
  }

  static void run(const at::Tensor& x, const int64_t* src_rows, const at::Tensor& out,
                  const int64_t* dst_rows, const RowCopy& copy) {
    const void* src = x.data_ptr();
    void* dst = out.data_ptr();
    switch (word_bytes(src, dst, copy.row_bytes)) {
      case 16:
        return launch<uint4>(src, src_rows, dst, dst_rows, copy);
      case 8:
        return launch<uint2>(src, src_rows, dst, dst_rows, copy);
      case 4:
        return launch<uint32_t>(src, src_rows, dst, dst_rows, copy);
      case 2:
        return launch<uint16_t>(src, src_rows, dst, dst_rows, copy);
      default:
        return launch<uint8_t>(src, src_rows, dst, dst_rows, copy);
    }
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("gather_rows", &gather_rows_entry<CudaGatherRows>); }

}  // namespace fastgl::features
