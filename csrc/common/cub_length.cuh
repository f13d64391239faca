// Item counts as CUB's device-wide algorithms take them. CCCL 2.7 and later take an int64 count;
// earlier CUB scans take an int, which a longer input would overflow without a word, so there a
// longer input is an error instead.
#pragma once

#include "common/check.h"

#include <cub/version.cuh>

#include <climits>
#include <cstdint>

namespace fastgl::cuda {

#if CUB_VERSION >= 200700
inline int64_t cub_length(const char* /*op*/, int64_t n) { return n; }
#else
inline int cub_length(const char* op, int64_t n) {
  FASTGL_CHECK(n <= INT_MAX, op, n, " items are more than this CUDA toolkit's CUB sorts or scans ",
               "in one call (2^31 - 1); CUDA 12.8 or later lifts the limit");
  return static_cast<int>(n);
}
#endif

}  // namespace fastgl::cuda
