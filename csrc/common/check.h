// Input checks shared by every op and backend. Each message names the op and the argument,
// what was expected and what came, so a user can fix the call without reading the source.
#pragma once

#include "common/multiversion.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace fastgl {

// `op: <message>`; the op name prefix is what makes errors searchable.
#define FASTGL_CHECK(cond, op, ...) TORCH_CHECK((cond), op, ": ", __VA_ARGS__)

inline void check_defined(const char* op, const char* name, const at::Tensor& t) {
  FASTGL_CHECK(t.defined(), op, name, " is undefined");
}

inline void check_dim(const char* op, const char* name, const at::Tensor& t, int64_t dim) {
  check_defined(op, name, t);
  FASTGL_CHECK(t.dim() == dim, op, name, " must be ", dim, "-D, got shape ", t.sizes());
}

// 1-D tensor of node or edge ids: int32 or int64.
inline void check_index_vector(const char* op, const char* name, const at::Tensor& t) {
  check_dim(op, name, t, 1);
  FASTGL_CHECK(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt, op, name,
               " must be int32 or int64, got ", t.scalar_type());
}

inline void check_dtype(const char* op, const char* name, const at::Tensor& t,
                        at::ScalarType expected) {
  check_defined(op, name, t);
  FASTGL_CHECK(t.scalar_type() == expected, op, name, " must be ", expected, ", got ",
               t.scalar_type());
}

inline void check_same_device(const char* op, const char* name, const at::Tensor& t,
                              const char* ref_name, const at::Tensor& ref) {
  FASTGL_CHECK(t.device() == ref.device(), op, name, " is on ", t.device(), " but ", ref_name,
               " is on ", ref.device(), "; move them to the same device");
}

// Smallest and largest of n > 0 ids, in one vectorized pass (ATen's int64 aminmax is not).
template <typename T>
FASTGL_MULTIVERSION std::pair<int64_t, int64_t> min_max_span(const T* ids, int64_t n) {
  T lo = ids[0], hi = ids[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = ids[i] < lo ? ids[i] : lo;
    hi = ids[i] > hi ? ids[i] : hi;
  }
  return {lo, hi};
}

inline std::pair<int64_t, int64_t> min_max_ids_cpu(const at::Tensor& ids) {
  constexpr int64_t kGrain = 1 << 16;
  const at::Tensor c = ids.contiguous();
  return AT_DISPATCH_INDEX_TYPES(c.scalar_type(), "min_max_ids", [&] {
    const index_t* data = c.data_ptr<index_t>();
    const int64_t n = c.numel();
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / kGrain));
    std::vector<std::pair<int64_t, int64_t>> part(parts);
    at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t lo = p * n / parts, hi = (p + 1) * n / parts;
        part[p] = min_max_span(data + lo, hi - lo);
      }
    });
    std::pair<int64_t, int64_t> all = part[0];
    for (const auto& [lo, hi] : part) all = {std::min(all.first, lo), std::max(all.second, hi)};
    return all;
  });
}

// Smallest and largest value of a non-empty id tensor. One min/max reduction; on CUDA this
// synchronizes once (not twice), which the ops checking ranges need anyway to size outputs.
inline std::pair<int64_t, int64_t> min_max_ids(const at::Tensor& ids) {
  if (ids.device().is_cpu()) return min_max_ids_cpu(ids);
  auto [lo, hi] = at::aminmax(ids);
  const at::Tensor bounds = at::stack({lo, hi}).to(at::kLong).cpu();
  return {bounds[0].item<int64_t>(), bounds[1].item<int64_t>()};
}

// All values in [0, bound).
inline void check_ids_in_range(const char* op, const char* name, const at::Tensor& ids,
                               int64_t bound) {
  if (ids.numel() == 0) return;
  const auto [low, high] = min_max_ids(ids);
  FASTGL_CHECK(low >= 0, op, name, " id ", low, " is negative");
  FASTGL_CHECK(high < bound, op, name, " id ", high, " out of range for a graph of ", bound,
               " nodes");
}

}  // namespace fastgl
