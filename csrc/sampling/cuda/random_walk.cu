// CUDA random_walk through the same WalkView::step as the CPU reference (random_walk.h), so both
// return the same walks. Two schedules:
//   * transit (the default): NextDoor's transit parallelism (transit_schedule.h), one step of all
//     walks per round, the walks grouped by current node. Nodes holding few walks get a thread
//     per walk in node order (neighboring threads read the same row); nodes holding many get
//     thread blocks that cache the node's row (and weights) in shared memory once for all their
//     walks. Costs per step a sort, a schedule of a few small tensors and four host
//     synchronizations (the sizes of its unique_consecutive, its two nonzero and its block
//     count), so walks of many steps over few walks may run faster under "sample".
//   * sample: a thread per walk runs it to the end; no scheduling, scattered reads.
#include "common/cuda_utils.cuh"
#include "sampling/cuda/row_cache.cuh"
#include "sampling/random_walk.h"
#include "sampling/transit_schedule.h"

#include <torch/library.h>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::keep_smallest;
using fastgl::cuda::kThreadsPerBlock;

// A node holding this many walks in a step is worth a thread block that caches its row.
constexpr int64_t kMinBlockTierWalks = 32;

// A step's fault (0: none) of walk `walk`.
__device__ void keep_first_fault(int64_t* first_fault, int64_t walk, int64_t fault) {
  if (fault != 0) keep_smallest(first_fault, encode_walk_fault(walk, fault));
}

// The rows' own checks cannot see offsets that start late or end early: checked once per call.
template <typename index_t, typename weight_t>
__global__ void check_offset_ends_kernel(WalkView<index_t, weight_t> view, int64_t* first_fault) {
  // Not through keep_first_fault: kBadOffsetEnds is 0, which it reads as a step without fault.
  if (!valid_offset_ends(view.indptr, view.num_nodes, view.num_edges)) {
    keep_smallest(first_fault, encode_walk_fault(0, kBadOffsetEnds));
  }
}

template <typename index_t, typename weight_t>
__global__ void walk_thread_per_walk_kernel(WalkView<index_t, weight_t> view, int64_t num_walks,
                                            int64_t* first_fault) {
  for (int64_t w = global_thread_index(); w < num_walks; w += global_thread_stride()) {
    for (int64_t t = 0; t < view.length; ++t) keep_first_fault(first_fault, w, view.step(w, t));
  }
}

// Step t of the thread tier's walks, `positions` indexing the walks' transit order.
template <typename index_t, typename weight_t>
__global__ void step_thread_per_walk_kernel(WalkView<index_t, weight_t> view, int64_t t,
                                            const int64_t* order, const int64_t* positions,
                                            int64_t num_positions, int64_t* first_fault) {
  for (int64_t i = global_thread_index(); i < num_positions; i += global_thread_stride()) {
    const int64_t w = order[positions[i]];
    keep_first_fault(first_fault, w, view.step(w, t));
  }
}

// Step t of one chunk of up to blockDim walks standing at the same node.
template <typename index_t, typename weight_t>
__global__ void step_block_per_node_kernel(WalkView<index_t, weight_t> view, int64_t t,
                                           TransitSchedule::Device schedule, int64_t cache_capacity,
                                           int64_t* first_fault) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int64_t segment = schedule.block_segment[blockIdx.x];
  const int64_t node = schedule.segment_transit[segment];  // -1: ended walks, which only pad
  const int64_t chunk_begin =
      schedule.segment_start[segment] + schedule.block_chunk[blockIdx.x] * blockDim.x;
  const int64_t segment_end = schedule.segment_start[segment + 1];
  const int64_t chunk_walks = min(static_cast<int64_t>(blockDim.x), segment_end - chunk_begin);

  // Cache the row when it is readable (a walk that fails on it reports that itself) and reading
  // it once saves reads: weighted steps scan the whole row, unweighted ones read one slot each.
  int64_t start = 0, degree = -1;
  if (node >= 0) {
    start = view.indptr[node];
    const int64_t end = view.indptr[node + 1];
    if (valid_adjacency(start, end, view.num_edges)) degree = end - start;
  }
  const bool cached =
      0 <= degree && degree <= cache_capacity && (view.weight != nullptr || chunk_walks >= degree);
  CachedRow<index_t, weight_t> row{nullptr, nullptr};
  if (cached) {  // the same for every thread of the block: the barrier is reached by all
    row = cache_row(shared_bytes, cache_capacity, view.indices + start,
                    view.weight ? view.weight + start : nullptr, degree);
  }

  const int64_t position = chunk_begin + threadIdx.x;
  if (position < segment_end) {
    const int64_t w = schedule.order[position];
    keep_first_fault(first_fault, w, view.step(w, t, row.targets, row.weight));
  }
}

// One step of every walk in transit order: `current` is the nodes' column t.
template <typename index_t, typename weight_t>
void step_in_transit_order(const WalkView<index_t, weight_t>& view, const at::Tensor& current,
                           int64_t t, int64_t* first_fault, cudaStream_t stream) {
  const TransitSchedule schedule =
      schedule_by_transit(current, kMinBlockTierWalks, kThreadsPerBlock);
  const int64_t thread_walks = schedule.thread_tier.numel();
  if (thread_walks > 0) {
    step_thread_per_walk_kernel<<<blocks_for(thread_walks), kThreadsPerBlock, 0, stream>>>(
        view, t, schedule.order.data_ptr<int64_t>(), schedule.thread_tier.data_ptr<int64_t>(),
        thread_walks, first_fault);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  const int64_t block_items = schedule.block_segment.numel();
  if (block_items > 0) {
    const int64_t capacity = row_cache_capacity<index_t, weight_t>(view.weight != nullptr);
    step_block_per_node_kernel<<<block_items, kThreadsPerBlock, kRowCacheBytes, stream>>>(
        view, t, schedule.device(), capacity, first_fault);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// Once every walk has taken its steps: each slot taken becomes its edge id.
template <typename index_t, typename weight_t>
__global__ void name_edges_kernel(WalkView<index_t, weight_t> view, int64_t num_positions,
                                  int64_t* first_fault) {
  for (int64_t i = global_thread_index(); i < num_positions; i += global_thread_stride()) {
    keep_first_fault(first_fault, i / view.length, view.name_edge(i));
  }
}

struct CudaRandomWalk {
  static constexpr WalkSchedule kAutoSchedule = WalkSchedule::kTransit;

  template <typename index_t, typename weight_t>
  static int64_t run(const WalkView<index_t, weight_t>& view, const at::Tensor& nodes,
                     WalkSchedule schedule) {
    const int64_t num_walks = nodes.size(0);  // > 0 and length > 0: the entry returned otherwise
    const cudaStream_t stream = fastgl::cuda::current_stream();
    at::Tensor first_fault = at::full({1}, kNoWalkFault, nodes.options());
    int64_t* fault = first_fault.data_ptr<int64_t>();
    check_offset_ends_kernel<<<1, 1, 0, stream>>>(view, fault);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    if (schedule == WalkSchedule::kSample) {
      walk_thread_per_walk_kernel<<<blocks_for(num_walks), kThreadsPerBlock, 0, stream>>>(
          view, num_walks, fault);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    } else {
      for (int64_t t = 0; t < view.length; ++t) {
        step_in_transit_order(view, nodes.select(1, t), t, fault, stream);
      }
    }
    if (view.eid != nullptr) {
      const int64_t num_positions = num_walks * view.length;
      name_edges_kernel<<<blocks_for(num_positions), kThreadsPerBlock, 0, stream>>>(
          view, num_positions, fault);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return first_fault.item<int64_t>();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("random_walk", &random_walk_entry<CudaRandomWalk>); }

}  // namespace fastgl::sampling
