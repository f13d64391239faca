// A thread block that serves many pairs or walks standing at one node (sample_neighbors' block
// tier, transit_schedule.h; random_walk's transit chunks, walk_transit.h) copies the node's row
// (targets and, when weighted, weights) into shared memory once, and every thread draws from
// that copy. Shared by the CUDA samplers.
#pragma once

#include "sampling/row_cache.h"

#include <cstdint>

namespace fastgl::sampling {

template <typename index_t, typename weight_t>
struct CachedRow {
  const index_t* targets;
  const weight_t* weight;  // null when unweighted
};

// Copies a row of `degree` <= `capacity` edges into the block's dynamic shared memory `shared`
// (kRowCacheBytes), weights first, and waits for the whole block: every thread of the block
// must call it, with the same row.
template <typename index_t, typename weight_t>
__device__ CachedRow<index_t, weight_t> cache_row(unsigned char* shared, int64_t capacity,
                                                  const index_t* targets, const weight_t* weight,
                                                  int64_t degree) {
  const auto cache = RowCacheLayout<index_t, weight_t>::in(shared, capacity, weight != nullptr);
  for (int64_t i = threadIdx.x; i < degree; i += blockDim.x) {
    cache.targets[i] = targets[i];
    if (weight) cache.weight[i] = weight[i];
  }
  __syncthreads();
  return {cache.targets, cache.weight};
}

}  // namespace fastgl::sampling
