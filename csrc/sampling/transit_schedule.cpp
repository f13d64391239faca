// The transit schedule as an op of its own (`fastgl::_transit_schedule`), so the scheduling the
// CUDA engine relies on is tested on any machine: it is made of ATen calls only, so one
// registration serves every device.
#include "sampling/transit_schedule.h"

#include "common/check.h"

#include <torch/library.h>

namespace fastgl::sampling {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>
transit_schedule_op(const at::Tensor& transits, int64_t min_block_pairs, int64_t chunk_size) {
  constexpr const char* op = "_transit_schedule";
  check_dim(op, "transits", transits, 1);
  check_dtype(op, "transits", transits, at::kLong);
  FASTGL_CHECK(min_block_pairs >= 1 && chunk_size >= 1, op,
               "min_block_pairs and chunk_size must be >= 1, got ", min_block_pairs, " and ",
               chunk_size);
  const TransitSchedule s = schedule_by_transit(transits, min_block_pairs, chunk_size);
  return {s.order,       s.segment_transit, s.segment_start,
          s.thread_tier, s.block_segment,   s.block_chunk};
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CompositeExplicitAutograd, m) {
  m.impl("_transit_schedule", &transit_schedule_op);
}

}  // namespace fastgl::sampling
