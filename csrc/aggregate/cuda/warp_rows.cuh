// The launch shape of the aggregation kernels: one warp per row, kRowsPerBlock rows per block
// (FastGL's X), lanes along 32 feature columns (Y), more feature tiles on grid.y.
#pragma once

#include <cstdint>

namespace fastgl::aggregate {

constexpr int kWarp = 32;
// Rows per block (X; the feature tile Y is one warp wide). A first choice, to be tuned on a GPU.
constexpr int kRowsPerBlock = 8;

// The sum of `value` over the warp's lanes, in lane 0 (a fixed tree: deterministic).
template <typename acc_t>
__device__ inline acc_t warp_sum(acc_t value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

inline dim3 warp_row_threads() { return dim3(kWarp, kRowsPerBlock); }

inline dim3 warp_row_blocks(int64_t num_rows, int64_t num_features) {
  constexpr int64_t kMaxGridY = 65535;
  const int64_t feature_tiles = (num_features + kWarp - 1) / kWarp;
  const int64_t tiles = feature_tiles < kMaxGridY ? feature_tiles : kMaxGridY;
  return dim3(static_cast<unsigned>((num_rows + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned>(tiles > 0 ? tiles : 1));
}

}  // namespace fastgl::aggregate
