// id_map: FastGL's Fused-Map (FastGL, Zhu et al., ASPLOS '24, §4.3, Algorithm 2).
//
// unique = prefix followed by the ids not in it, in first-occurrence order;
// local[i] = position of ids[i] in unique. `prefix` must hold distinct ids; ids are >= 0.
// Both backends use the open-addressing table below; CUDA fills it with atomicCAS.
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>
#include <c10/macros/Macros.h>

#include <cstdint>
#include <limits>
#include <tuple>

namespace fastgl::idmap {

constexpr int64_t kEmptyKey = -1;
constexpr int64_t kNoPosition = std::numeric_limits<int64_t>::max();

// Power-of-two capacity with load factor <= 1/2, so linear probing stays short.
inline int64_t table_capacity(int64_t num_keys) {
  int64_t capacity = 64;
  while (capacity < 2 * num_keys) capacity <<= 1;
  return capacity;
}

// splitmix64 finalizer: node ids are often dense ranges, which identity hashing would cluster.
C10_HOST_DEVICE inline uint64_t hash_id(int64_t key) {
  uint64_t x = static_cast<uint64_t>(key);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

inline void check_id_map_inputs(const at::Tensor& prefix, const at::Tensor& ids) {
  constexpr const char* op = "id_map";
  check_index_vector(op, "prefix", prefix);
  check_index_vector(op, "ids", ids);
  check_same_device(op, "ids", ids, "prefix", prefix);
}

// Messages shared by the backends (CUDA detects these in a kernel and reports them afterwards).
constexpr const char* kNegativeIdError = "ids and prefix must be >= 0, got a negative id";
constexpr const char* kDuplicatePrefixError = "prefix must hold distinct ids, got a repeated id";

// The backends, declared here because other ops build on them (match's overlap_counts).
// `run(prefix, ids)` takes both as contiguous int64 and returns the ids not in the prefix in
// first-occurrence order, and each id's local id (int64).
struct CpuIdMap {
  static std::tuple<at::Tensor, at::Tensor> run(const at::Tensor& prefix, const at::Tensor& ids);
};
#ifdef FASTGL_WITH_CUDA
struct CudaIdMap {
  static std::tuple<at::Tensor, at::Tensor> run(const at::Tensor& prefix, const at::Tensor& ids);
};
#endif

// The op's entry point, shared by the backends: check, make both inputs contiguous int64 on
// their device, run the backend, and put the prefix before its new ids.
template <typename Backend>
std::tuple<at::Tensor, at::Tensor> id_map_entry(const at::Tensor& prefix, const at::Tensor& ids) {
  check_id_map_inputs(prefix, ids);
  const c10::DeviceGuard device_guard(ids.device());
  const at::Tensor prefix64 = prefix.to(at::kLong).contiguous();
  const at::Tensor ids64 = ids.to(at::kLong).contiguous();
  const auto [new_ids, local] = Backend::run(prefix64, ids64);
  return {at::cat({prefix64, new_ids}), local};
}

}  // namespace fastgl::idmap
