// CUDA csc_from_coo: a stable radix sort of the edges by target (at::sort, stable=true) gives
// the same slot order as the CPU counting sort.
#include "common/cuda_utils.cuh"
#include "graph/csc_from_coo.h"

#include <torch/library.h>

#include <tuple>

namespace fastgl::graph {
namespace {

// Slot order -> CSC arrays.
CscArrays csc_from_permutation(const at::Tensor& src, const at::Tensor& counts,
                               const at::Tensor& perm) {
  at::Tensor indptr = at::zeros({counts.numel() + 1}, counts.options().dtype(at::kLong));
  indptr.narrow(0, 1, counts.numel()).copy_(at::cumsum(counts, 0));
  return {indptr, src.index_select(0, perm), perm};
}

struct CudaCscFromCoo {
  static CscArrays run(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes) {
    const at::Tensor target = dst.to(at::kLong);
    // c10::optional<bool>: a plain `true` would pick the (dim, descending) overload instead.
    const at::Tensor perm =
        std::get<1>(at::sort(target, c10::optional<bool>(true), /*dim=*/0, /*descending=*/false));
    const at::Tensor counts = at::bincount(target, /*weights=*/{}, /*minlength=*/num_nodes);
    return csc_from_permutation(src, counts, perm);
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("csc_from_coo", &csc_from_coo_entry<CudaCscFromCoo>); }

}  // namespace fastgl::graph
