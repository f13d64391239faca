// The size of the row cache a CUDA thread block fills for many pairs or walks standing at one
// node (cuda/row_cache.cuh), in a header of its own so that the host checks of the CUDA
// schedules (random_walk's CPU transit schedule) cache rows of the same lengths.
#pragma once

#include <cstdint>

namespace fastgl::sampling {

// Dynamic shared memory per block for a cached row; longer rows are read from global memory
// (still shared through L1/L2 by the block's threads).
constexpr int64_t kRowCacheBytes = 32 * 1024;

// Edges a row cache holds. A multiple of 8, so the targets behind the weights stay 8-byte
// aligned whatever the two types.
template <typename index_t, typename weight_t>
inline int64_t row_cache_capacity(bool weighted) {
  const int64_t bytes_per_edge = sizeof(index_t) + (weighted ? sizeof(weight_t) : 0);
  return (kRowCacheBytes / bytes_per_edge) / 8 * 8;
}

}  // namespace fastgl::sampling
