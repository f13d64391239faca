// Atomics that compile for host and device, so that code shared by a CUDA kernel and its host
// harness (DESIGN.md §7) runs with real atomics on both: CUDA's atomicCAS/atomicMin on the
// device, the GCC/Clang __atomic builtins on plain host memory.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

namespace fastgl {

// A read of a word other threads may be writing atomically (relaxed: no ordering is implied).
C10_HOST_DEVICE inline int64_t atomic_read(const int64_t* word) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const volatile long long*>(word);
#else
  return __atomic_load_n(word, __ATOMIC_RELAXED);
#endif
}

// Sets *word to `desired` if it holds `expected`; returns what it held before.
C10_HOST_DEVICE inline int64_t atomic_compare_swap(int64_t* word, int64_t expected,
                                                   int64_t desired) {
#if defined(__CUDA_ARCH__)
  return static_cast<int64_t>(atomicCAS(reinterpret_cast<unsigned long long*>(word),
                                        static_cast<unsigned long long>(expected),
                                        static_cast<unsigned long long>(desired)));
#else
  __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
#endif
}

// Lowers *word to `value` when smaller; returns what it held before.
C10_HOST_DEVICE inline int64_t atomic_lower(int64_t* word, int64_t value) {
#if defined(__CUDA_ARCH__)
  return static_cast<int64_t>(
      atomicMin(reinterpret_cast<long long*>(word), static_cast<long long>(value)));
#else
  int64_t seen = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (value < seen && !__atomic_compare_exchange_n(word, &seen, value, true, __ATOMIC_ACQ_REL,
                                                      __ATOMIC_RELAXED)) {
  }
  return seen;
#endif
}

}  // namespace fastgl
