// Input checks shared by every op and backend. Each message names the op and the argument,
// what was expected and what came, so a user can fix the call without reading the source.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>

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

// min_max_ids on a non-empty CPU tensor (check.cpp): one vectorized, parallel pass; ATen's int64
// aminmax is not vectorized. Compiled once, with OpenMP and the CPU clones, not in every file
// that includes this header (nvcc compiles without either).
std::pair<int64_t, int64_t> min_max_ids_cpu(const at::Tensor& ids);

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
