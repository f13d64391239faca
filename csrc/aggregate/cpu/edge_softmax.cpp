// CPU edge_softmax forward/backward: (row, head) pairs in parallel over edge_softmax.h.
#include "aggregate/edge_softmax.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::aggregate {
namespace {

constexpr int64_t kGrain = 256;

// Calls segment(first, last, h) for every (row, head) of the structure, in parallel.
template <typename Segment>
void for_each_row_head(const SoftmaxRows& rows, const Segment& segment) {
  at::parallel_for(0, rows.num_rows * rows.heads, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / rows.heads;
      segment(rows.row_start[row], rows.row_start[row + 1], i % rows.heads);
    }
  });
}

struct CpuEdgeSoftmax {
  template <typename scalar_t>
  static void forward(const SoftmaxRows& rows, const scalar_t* scores, scalar_t* out) {
    for_each_row_head(rows, [&](int64_t first, int64_t last, int64_t h) {
      softmax_segment(scores, out, first, last, rows.heads, h);
    });
  }

  template <typename scalar_t>
  static void backward(const SoftmaxRows& rows, const scalar_t* out, const scalar_t* grad,
                       scalar_t* grad_scores) {
    for_each_row_head(rows, [&](int64_t first, int64_t last, int64_t h) {
      softmax_backward_segment(out, grad, grad_scores, first, last, rows.heads, h);
    });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("edge_softmax", &edge_softmax_entry<CpuEdgeSoftmax>);
  m.impl("edge_softmax_backward", &edge_softmax_backward_entry<CpuEdgeSoftmax>);
}

}  // namespace fastgl::aggregate
