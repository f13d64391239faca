// Counter-based random numbers keyed by logical position (DESIGN.md §3).
//
// A draw is a pure function of (key, stream, index): `key` comes from the op's torch.Generator
// once per call, `stream` is the logical unit of work (e.g. one (sample, transit) pair) and
// `index` numbers the draws inside it. Nothing depends on which thread runs the work or in
// which order, so CPU and CUDA kernels produce the same sample for the same key.
#pragma once

#include <ATen/core/PhiloxRNGEngine.h>
#include <c10/macros/Macros.h>

#include <cstdint>

namespace fastgl {

// 64 random bits for draw `index` of `stream`. One Philox block yields 128 bits, i.e. two draws.
C10_HOST_DEVICE inline uint64_t random_u64(uint64_t key, uint64_t stream, uint64_t index) {
  at::Philox4_32 engine(key, stream, index >> 1);
  uint32_t a = engine();
  uint32_t b = engine();
  if (index & 1) {
    a = engine();
    b = engine();
  }
  return (static_cast<uint64_t>(a) << 32) | b;
}

// Uniform integer in [0, bound), bound > 0. The modulo bias is below bound / 2^64.
C10_HOST_DEVICE inline int64_t random_below(uint64_t key, uint64_t stream, uint64_t index,
                                            int64_t bound) {
  return static_cast<int64_t>(random_u64(key, stream, index) % static_cast<uint64_t>(bound));
}

// Uniform double in the open interval (0, 1): 52 random bits plus one half, so both ends are
// excluded exactly (with 53 bits, the top value would round up to 1.0) and log() is finite.
C10_HOST_DEVICE inline double random_open01(uint64_t key, uint64_t stream, uint64_t index) {
  const uint64_t bits = random_u64(key, stream, index) >> 12;
  return (static_cast<double>(bits) + 0.5) * (1.0 / 4503599627370496.0);
}

}  // namespace fastgl
