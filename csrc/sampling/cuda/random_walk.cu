// CUDA random_walk through the same WalkView::step as the CPU reference (random_walk.h), so both
// return the same walks. Two schedules, neither waiting for the device until the end:
//   * transit: NextDoor's transit parallelism (walk_transit.h), one step of all walks per
//     round. A device radix sort orders the walks by current node; a thread block then takes a
//     chunk of that order, caching the row in shared memory when the chunk's walks all stand at
//     one node.
//   * sample: a thread per walk runs it to the end; no sorting, scattered reads.
// "auto" takes transit only where rows repeat within a step: when there are at least as many
// walks as nodes.
// A call reads the device once, at the end: the first fault, which the starts check (a kernel)
// and every step keep.
#include "common/cub_length.cuh"
#include "common/cuda_utils.cuh"
#include "sampling/cuda/row_cache.cuh"
#include "sampling/random_walk.h"
#include "sampling/walk_transit.h"

#include <torch/library.h>
#include <cub/device/device_radix_sort.cuh>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::keep_smallest;
using fastgl::cuda::kThreadsPerBlock;

static_assert(kTransitChunk == kThreadsPerBlock, "a transit chunk is one thread block's walks");

// A step's fault (0: none) of walk `walk`.
__device__ void keep_first_fault(int64_t* first_fault, int64_t walk, int64_t fault) {
  if (fault != 0) keep_smallest(first_fault, encode_walk_fault(walk, fault));
}

// Ends the walks that start outside the graph (so that no step reads a row of theirs) and checks
// the offsets' ends, which the rows' own checks cannot see.
template <typename index_t, typename weight_t>
__global__ void check_walk_inputs_kernel(WalkView<index_t, weight_t> view, int64_t num_walks,
                                         int64_t* first_fault) {
  for (int64_t w = global_thread_index(); w < num_walks; w += global_thread_stride()) {
    if (view.drop_bad_start(w)) keep_smallest(first_fault, kBadStartsFault);
  }
  // Not through keep_first_fault: kBadOffsetEnds is 0, which it reads as a step without fault.
  if (global_thread_index() == 0 &&
      !valid_offset_ends(view.indptr, view.num_nodes, view.num_edges)) {
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

// The radix sort's keys: walk w's node at step t, plus one, so that ended walks (-1) sort first
// as they do on the CPU.
template <typename index_t, typename weight_t>
__global__ void transit_keys_kernel(WalkView<index_t, weight_t> view, int64_t num_walks, int64_t t,
                                    uint64_t* keys) {
  for (int64_t w = global_thread_index(); w < num_walks; w += global_thread_stride()) {
    keys[w] = static_cast<uint64_t>(view.node(w, t) + 1);
  }
}

// Step t of the walks in chunks of transit order `order`, a block per chunk.
template <typename index_t, typename weight_t>
__global__ void step_transit_chunks_kernel(WalkView<index_t, weight_t> view, int64_t t,
                                           const int64_t* order, int64_t num_walks,
                                           int64_t num_chunks, int64_t cache_capacity,
                                           int64_t* first_fault) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  // The whole block takes the same chunks and the same branches: all reach the barriers.
  for (int64_t chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    const ChunkRow cached = transit_chunk_row(view, order, num_walks, chunk, t, cache_capacity);
    CachedRow<index_t, weight_t> row{nullptr, nullptr};
    if (cached.degree >= 0) {
      row = cache_row(shared_bytes, cache_capacity, view.indices + cached.start,
                      view.weight ? view.weight + cached.start : nullptr, cached.degree);
    }
    if (threadIdx.x < transit_chunk_walks(num_walks, chunk)) {
      const int64_t w = order[chunk * kTransitChunk + threadIdx.x];
      keep_first_fault(first_fault, w, view.step(w, t, row.targets, row.weight));
    }
    if (cached.degree >= 0) __syncthreads();  // the next chunk's row overwrites this one
  }
}

// Each step's transit order, by a device radix sort of (node + 1, walk id) over the bits the
// node ids use; its buffers and scratch serve every step of the call.
class TransitOrder {
 public:
  TransitOrder(int64_t num_walks, int64_t num_nodes, const at::TensorOptions& options,
               cudaStream_t stream)
      : num_walks_(num_walks),
        // Keys run from 0 (an ended walk) to num_nodes.
        end_bit_(std::max(1, 64 - __builtin_clzll(static_cast<uint64_t>(num_nodes) | 1))),
        stream_(stream),
        keys_(at::empty({2, num_walks}, options)),
        walk_ids_(at::arange(num_walks, options)),
        order_(at::empty({num_walks}, options)) {
    size_t bytes = 0;
    sort(nullptr, bytes);
    scratch_ = at::empty({static_cast<int64_t>(bytes)}, options.dtype(at::kByte));
  }

  // The walks sorted by their node at step t (stable: ties keep walk order).
  template <typename index_t, typename weight_t>
  const int64_t* at_step(const WalkView<index_t, weight_t>& view, int64_t t) {
    transit_keys_kernel<<<blocks_for(num_walks_), kThreadsPerBlock, 0, stream_>>>(
        view, num_walks_, t, unsorted_keys());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    size_t bytes = scratch_.numel();
    sort(scratch_.data_ptr(), bytes);
    return order_.data_ptr<int64_t>();
  }

 private:
  uint64_t* unsorted_keys() { return reinterpret_cast<uint64_t*>(keys_.data_ptr<int64_t>()); }

  void sort(void* scratch, size_t& bytes) {
    C10_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        scratch, bytes, unsorted_keys(), unsorted_keys() + num_walks_,
        walk_ids_.data_ptr<int64_t>(), order_.data_ptr<int64_t>(),
        fastgl::cuda::cub_length(kWalkOp, num_walks_), 0, end_bit_, stream_));
  }

  int64_t num_walks_;
  int end_bit_;
  cudaStream_t stream_;
  at::Tensor keys_, walk_ids_, order_, scratch_;
};

template <typename index_t, typename weight_t>
void walk_in_transit_order(const WalkView<index_t, weight_t>& view, int64_t num_walks,
                           const at::TensorOptions& options, int64_t* first_fault,
                           cudaStream_t stream) {
  TransitOrder transit(num_walks, view.num_nodes, options, stream);
  const int64_t num_chunks = transit_num_chunks(num_walks);
  const int64_t capacity = row_cache_capacity<index_t, weight_t>(view.weight != nullptr);
  for (int64_t t = 0; t < view.length; ++t) {
    const int64_t* order = transit.at_step(view, t);
    step_transit_chunks_kernel<<<blocks_for(num_walks), kTransitChunk, kRowCacheBytes, stream>>>(
        view, t, order, num_walks, num_chunks, capacity, first_fault);
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
  static WalkSchedule auto_schedule(int64_t num_walks, int64_t num_nodes) {
    return num_walks >= num_nodes ? WalkSchedule::kTransit : WalkSchedule::kSample;
  }

  template <typename index_t, typename weight_t>
  static int64_t run(const WalkView<index_t, weight_t>& view, const at::Tensor& nodes,
                     WalkSchedule schedule) {
    const int64_t num_walks = nodes.size(0);  // > 0 and length > 0: the entry returned otherwise
    const cudaStream_t stream = fastgl::cuda::current_stream();
    at::Tensor first_fault = at::full({1}, kNoWalkFault, nodes.options());
    int64_t* fault = first_fault.data_ptr<int64_t>();
    check_walk_inputs_kernel<<<blocks_for(num_walks), kThreadsPerBlock, 0, stream>>>(
        view, num_walks, fault);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    if (schedule == WalkSchedule::kSample) {
      walk_thread_per_walk_kernel<<<blocks_for(num_walks), kThreadsPerBlock, 0, stream>>>(
          view, num_walks, fault);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    } else {
      walk_in_transit_order(view, num_walks, nodes.options(), fault, stream);
    }
    if (view.eid != nullptr) {
      const int64_t num_positions = num_walks * view.length;
      name_edges_kernel<<<blocks_for(num_positions), kThreadsPerBlock, 0, stream>>>(
          view, num_positions, fault);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return first_fault.item<int64_t>();  // the call's one synchronization
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("random_walk", &random_walk_entry<CudaRandomWalk>); }

}  // namespace fastgl::sampling
