// CUDA sample_neighbors: NextDoor's transit-parallel engine (transit_schedule.h) driving the
// same per-pair draws as the CPU reference (neighbor_draw.h), so both return identical samples.
#include "common/cuda_utils.cuh"
#include "sampling/cuda/row_cache.cuh"
#include "sampling/neighbor_draw.h"
#include "sampling/sample_neighbors.h"
#include "sampling/transit_schedule.h"

#include <torch/library.h>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::blocks_for;
using fastgl::cuda::global_thread_index;
using fastgl::cuda::global_thread_stride;
using fastgl::cuda::kThreadsPerBlock;

// A transit with this many pairs is worth a thread block that caches its adjacency.
constexpr int64_t kMinBlockTierPairs = 32;

template <typename index_t, typename weight_t>
struct GraphView {
  const int64_t* col_start;
  const index_t* source;
  const weight_t* weight;  // null when unweighted
};

struct PairOutput {
  const int64_t* ptr;
  int64_t* neighbor;
  int64_t* edge_pos;
};

// Input faults the count kernel flags; one synchronization reads them with the output size.
enum CountFault { kBadIndptr = 0, kBadWeight = 1, kNumCountFaults = 2 };

template <typename index_t, typename weight_t>
__global__ void count_draws_kernel(GraphView<index_t, weight_t> g, int64_t num_nodes,
                                   int64_t num_edges, const int64_t* transits, int64_t num_pairs,
                                   DrawConfig cfg, int64_t* counts, int64_t* faults) {
  if (global_thread_index() == 0 && !valid_offset_ends(g.col_start, num_nodes, num_edges)) {
    faults[kBadIndptr] = 1;
  }
  for (int64_t p = global_thread_index(); p < num_pairs; p += global_thread_stride()) {
    const int64_t t = transits[p], start = g.col_start[t], end = g.col_start[t + 1];
    if (!valid_adjacency(start, end, num_edges)) {
      counts[p] = 0;
      faults[kBadIndptr] = 1;
      continue;
    }
    const int64_t draws = num_draws(cfg, g.weight ? g.weight + start : nullptr, end - start);
    if (draws == kInvalidWeights) faults[kBadWeight] = 1;
    counts[p] = draws == kInvalidWeights ? 0 : draws;
  }
}

// Draws pair p's edges and writes them; `source`/`weight` point at the transit's adjacency,
// in shared memory (block tier) or global memory.
template <typename index_t, typename weight_t>
__device__ void emit_pair(const DrawConfig& cfg, int64_t p, int64_t start, int64_t degree,
                          const index_t* source, const weight_t* weight, PairOutput out) {
  const int64_t first = out.ptr[p], count = out.ptr[p + 1] - first;
  int64_t* offsets = out.edge_pos + first;
  draw_neighbor_offsets(cfg, static_cast<uint64_t>(p), weight, degree, count, offsets);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t offset = offsets[j];
    out.neighbor[first + j] = static_cast<int64_t>(source[offset]);
    offsets[j] = start + offset;
  }
}

template <typename index_t, typename weight_t>
__global__ void sample_thread_per_pair_kernel(GraphView<index_t, weight_t> g,
                                              const int64_t* transits, const int64_t* order,
                                              const int64_t* positions, int64_t num_positions,
                                              DrawConfig cfg, PairOutput out) {
  for (int64_t i = global_thread_index(); i < num_positions; i += global_thread_stride()) {
    const int64_t p = order[positions[i]], t = transits[p], start = g.col_start[t];
    emit_pair(cfg, p, start, g.col_start[t + 1] - start, g.source + start,
              g.weight ? g.weight + start : nullptr, out);
  }
}

template <typename index_t, typename weight_t>
__global__ void sample_block_per_transit_kernel(GraphView<index_t, weight_t> g,
                                                TransitSchedule::Device schedule,
                                                int64_t cache_capacity, DrawConfig cfg,
                                                PairOutput out) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int64_t segment = schedule.block_segment[blockIdx.x];
  const int64_t t = schedule.segment_transit[segment];
  const int64_t start = g.col_start[t], degree = g.col_start[t + 1] - start;
  const index_t* source = g.source + start;
  const weight_t* weight = g.weight ? g.weight + start : nullptr;

  // Cache the adjacency once for all pairs of this chunk when that saves reads: weighted draws
  // scan the weights, `take all` copies every edge, and many pairs can draw more edges than the
  // transit has.
  const int64_t chunk_begin =
      schedule.segment_start[segment] + schedule.block_chunk[blockIdx.x] * blockDim.x;
  const int64_t segment_end = schedule.segment_start[segment + 1];
  const int64_t chunk_pairs = min(static_cast<int64_t>(blockDim.x), segment_end - chunk_begin);
  const bool worth_caching =
      weight != nullptr || cfg.fanout < 0 || chunk_pairs * cfg.fanout >= degree;
  if (degree <= cache_capacity && worth_caching) {
    const CachedRow<index_t, weight_t> row =
        cache_row(shared_bytes, cache_capacity, source, weight, degree);
    source = row.targets;
    weight = row.weight;
  }

  const int64_t pair_index = chunk_begin + threadIdx.x;
  if (pair_index < segment_end) {
    emit_pair(cfg, schedule.order[pair_index], start, degree, source, weight, out);
  }
}

template <typename index_t, typename weight_t>
SampleResult sample_typed(const weight_t* weight, const at::Tensor& indptr,
                          const at::Tensor& indices, const at::Tensor& transits,
                          const DrawConfig& cfg, const char* op) {
  const int64_t num_pairs = transits.numel();
  const GraphView<index_t, weight_t> g{indptr.data_ptr<int64_t>(), indices.data_ptr<index_t>(),
                                       weight};
  const cudaStream_t stream = fastgl::cuda::current_stream();

  at::Tensor counts = at::empty({num_pairs}, transits.options());
  at::Tensor faults = at::zeros({kNumCountFaults}, transits.options());
  if (num_pairs > 0) {
    count_draws_kernel<<<blocks_for(num_pairs), kThreadsPerBlock, 0, stream>>>(
        g, indptr.numel() - 1, indices.numel(), transits.data_ptr<int64_t>(), num_pairs, cfg,
        counts.data_ptr<int64_t>(), faults.data_ptr<int64_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  at::Tensor ptr = at::zeros({num_pairs + 1}, transits.options());
  ptr.narrow(0, 1, num_pairs).copy_(at::cumsum(counts, 0));
  // One sync reads both the output size and the fault flags.
  const at::Tensor total_and_faults = at::cat({ptr.narrow(0, num_pairs, 1), faults}).cpu();
  const int64_t* read_back = total_and_faults.data_ptr<int64_t>();
  FASTGL_CHECK(read_back[1 + kBadIndptr] == 0, op, kBadIndptrError);
  FASTGL_CHECK(read_back[1 + kBadWeight] == 0, op, kBadWeightError);
  const int64_t total = read_back[0];
  check_output_fits(op, "the sample", total, 2 * sizeof(int64_t), indptr.device());
  at::Tensor neighbors = at::empty({total}, transits.options());
  at::Tensor edge_pos = at::empty({total}, transits.options());
  if (total == 0) return {ptr, neighbors, edge_pos};

  const TransitSchedule schedule =
      schedule_by_transit(transits, kMinBlockTierPairs, kThreadsPerBlock);
  const PairOutput out{ptr.data_ptr<int64_t>(), neighbors.data_ptr<int64_t>(),
                       edge_pos.data_ptr<int64_t>()};
  const int64_t thread_tier_pairs = schedule.thread_tier.numel();
  if (thread_tier_pairs > 0) {
    sample_thread_per_pair_kernel<<<blocks_for(thread_tier_pairs), kThreadsPerBlock, 0, stream>>>(
        g, transits.data_ptr<int64_t>(), schedule.order.data_ptr<int64_t>(),
        schedule.thread_tier.data_ptr<int64_t>(), thread_tier_pairs, cfg, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  const int64_t block_items = schedule.block_segment.numel();
  if (block_items > 0) {
    const int64_t capacity = row_cache_capacity<index_t, weight_t>(weight != nullptr);
    sample_block_per_transit_kernel<<<block_items, kThreadsPerBlock, kRowCacheBytes, stream>>>(
        g, schedule.device(), capacity, cfg, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return {ptr, neighbors, edge_pos};
}

struct CudaSampleNeighbors {
  template <typename index_t, typename weight_t>
  static SampleResult run(const weight_t* weight, const at::Tensor& indptr,
                          const at::Tensor& indices, const at::Tensor& transits,
                          const DrawConfig& cfg) {
    constexpr const char* op = "sample_neighbors";
    SampleResult result = sample_typed<index_t>(weight, indptr, indices, transits, cfg, op);
    // The neighbors came from `indices`, which only the rows read were checked for: one
    // reduction over the output, unless `indices` is known to be in range.
    if (!ids_known_below(indices, indptr.numel() - 1)) {
      check_ids_in_range(op, "indices", std::get<1>(result), indptr.numel() - 1);
    }
    return result;
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("sample_neighbors", &sample_neighbors_entry<CudaSampleNeighbors>);
}

}  // namespace fastgl::sampling
