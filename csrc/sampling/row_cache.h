// The size of the row cache a CUDA thread block fills for many pairs or walks standing at one
// node (cuda/row_cache.cuh), in a header of its own so that the host checks of the CUDA
// schedules (random_walk's CPU transit schedule) cache rows of the same lengths.
#pragma once

#include <c10/macros/Macros.h>

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

// Where a row cache of `capacity` edges keeps its row: the weights first (when weighted), the
// targets behind them. Written once for the CUDA block's shared memory and the CPU's buffer.
template <typename index_t, typename weight_t>
struct RowCacheLayout {
  weight_t* weight;  // null when unweighted
  index_t* targets;

  C10_HOST_DEVICE static RowCacheLayout in(unsigned char* cache, int64_t capacity, bool weighted) {
    weight_t* weight = reinterpret_cast<weight_t*>(cache);
    return {weighted ? weight : nullptr,
            reinterpret_cast<index_t*>(weight + (weighted ? capacity : 0))};
  }
};

}  // namespace fastgl::sampling
