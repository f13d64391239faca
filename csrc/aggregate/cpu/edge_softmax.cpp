// CPU edge_softmax forward/backward: (row, head) pairs in parallel over edge_softmax.h.
#include "aggregate/edge_softmax.h"
#include "common/page_advice.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kGrain = 256;

// Calls segment(first, last, h) for every (row, head) of the structure, in parallel.
template <typename Segment>
void for_each_row_head(const at::Tensor& indptr, int64_t heads, const Segment& segment) {
  const int64_t num_rows = indptr.numel() - 1;
  const int64_t* row_start = indptr.data_ptr<int64_t>();
  at::parallel_for(0, num_rows * heads, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / heads;
      segment(row_start[row], row_start[row + 1], i % heads);
    }
  });
}

}  // namespace

at::Tensor edge_softmax_cpu(const at::Tensor& indptr, const at::Tensor& scores) {
  check_edge_softmax_inputs("edge_softmax", indptr, scores);
  const at::Tensor scores_c = scores.contiguous(), indptr_c = indptr.contiguous();
  at::Tensor out = at::empty_like(scores_c);
  prefault_for_write(out);
  const int64_t heads = scores.size(1);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, scores.scalar_type(), "edge_softmax_cpu", [&] {
        const scalar_t* s = scores_c.data_ptr<scalar_t>();
        scalar_t* y = out.data_ptr<scalar_t>();
        for_each_row_head(indptr_c, heads, [&](int64_t first, int64_t last, int64_t h) {
          softmax_segment(s, y, first, last, heads, h);
        });
      });
  return out;
}

at::Tensor edge_softmax_backward_cpu(const at::Tensor& indptr, const at::Tensor& out,
                                     const at::Tensor& grad) {
  check_edge_softmax_backward_inputs(indptr, out, grad);
  const at::Tensor out_c = out.contiguous(), grad_c = grad.contiguous();
  const at::Tensor indptr_c = indptr.contiguous();
  at::Tensor grad_scores = at::empty_like(out_c);
  prefault_for_write(grad_scores);
  const int64_t heads = out.size(1);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, out.scalar_type(), "edge_softmax_backward_cpu", [&] {
        const scalar_t* y = out_c.data_ptr<scalar_t>();
        const scalar_t* g = grad_c.data_ptr<scalar_t>();
        scalar_t* gs = grad_scores.data_ptr<scalar_t>();
        for_each_row_head(indptr_c, heads, [&](int64_t first, int64_t last, int64_t h) {
          softmax_backward_segment(y, g, gs, first, last, heads, h);
        });
      });
  return grad_scores;
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("edge_softmax", &edge_softmax_cpu);
  m.impl("edge_softmax_backward", &edge_softmax_backward_cpu);
}

}  // namespace fastgl::aggregate
