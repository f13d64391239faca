// Counter-based random numbers keyed by logical position (docs/contracts.md, Randomness).
//
// A draw is a pure function of (key, stream, index): `key` comes from the op's torch.Generator
// once per call, `stream` is the logical unit of work (e.g. one (sample, transit) pair) and
// `index` numbers the draws inside it. Nothing depends on which thread runs the work or in
// which order, so CPU and CUDA kernels produce the same sample for the same key.
//
// The generator is Philox-4x32-10, bit for bit the one of at::Philox4_32 (ATen/core/
// PhiloxRNGEngine.h) with seed = key, subsequence = stream and offset = index / 2: draw 2i takes
// the first 64 bits of block i, draw 2i+1 the last 64. It is written out here so that it inlines
// (the engine's out-of-line copy was a quarter of the CPU sampling time) and so that a stream
// read in order computes each block once for two draws.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

#if defined(__CUDACC__)
#define FASTGL_FORCE_INLINE __forceinline__
#else
#define FASTGL_FORCE_INLINE inline __attribute__((always_inline))
#endif

namespace fastgl {

struct PhiloxBlock {
  uint32_t word[4];
};

C10_HOST_DEVICE FASTGL_FORCE_INLINE uint32_t mul_high(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

// Block `block` of Philox-4x32-10 for (key, stream): counter = (block, stream), key = key.
C10_HOST_DEVICE FASTGL_FORCE_INLINE PhiloxBlock philox_block(uint64_t key, uint64_t stream,
                                                             uint64_t block) {
  constexpr uint32_t kMultiplierA = 0xD2511F53, kMultiplierB = 0xCD9E8D57;
  constexpr uint32_t kKeyStepA = 0x9E3779B9, kKeyStepB = 0xBB67AE85;
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
#if defined(__CUDACC__)
#pragma unroll
#else
#pragma GCC unroll 10
#endif
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kKeyStepA;
      k1 += kKeyStepB;
    }
    const uint32_t hi_a = mul_high(kMultiplierA, c0), lo_a = kMultiplierA * c0;
    const uint32_t hi_b = mul_high(kMultiplierB, c2), lo_b = kMultiplierB * c2;
    c0 = hi_b ^ c1 ^ k0;
    c1 = lo_b;
    c2 = hi_a ^ c3 ^ k1;
    c3 = lo_a;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// The draws of one stream. Reading them in increasing index order (as the samplers mostly do)
// computes each Philox block once; any order gives the same values.
class RandomStream {
 public:
  C10_HOST_DEVICE RandomStream(uint64_t key, uint64_t stream) : key_(key), stream_(stream) {}

  // 64 random bits for draw `index`.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE uint64_t bits(uint64_t index) {
    const uint64_t block = index >> 1;
    if (!has_block_ || block != block_index_) {
      block_ = philox_block(key_, stream_, block);
      block_index_ = block;
      has_block_ = true;
    }
    // A select, not an index: a dynamically indexed array would live in GPU local memory.
    return index & 1 ? (static_cast<uint64_t>(block_.word[2]) << 32) | block_.word[3]
                     : (static_cast<uint64_t>(block_.word[0]) << 32) | block_.word[1];
  }

  // Uniform integer in [0, bound), bound > 0. The modulo bias is below bound / 2^64.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t below(uint64_t index, int64_t bound) {
    return static_cast<int64_t>(bits(index) % static_cast<uint64_t>(bound));
  }

  // Uniform double in the open interval (0, 1): 52 random bits plus one half, so both ends are
  // excluded exactly (with 53 bits, the top value would round up to 1.0) and log() is finite.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE double open01(uint64_t index) {
    return (static_cast<double>(bits(index) >> 12) + 0.5) * (1.0 / 4503599627370496.0);
  }

 private:
  uint64_t key_, stream_;
  uint64_t block_index_ = 0;
  bool has_block_ = false;
  PhiloxBlock block_{};
};

}  // namespace fastgl
