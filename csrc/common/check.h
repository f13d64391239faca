// Input checks shared by every op and backend. Each message names the op and the argument,
// what was expected and what came, so a user can fix the call without reading the source.
// Also the one conversion every op entry applies to its optional tensors once they are checked.
#pragma once

#include "common/checked_once.h"

#include <ATen/ATen.h>

#include <c10/util/string_view.h>
#include <atomic>

#include <string>
#include <utility>

namespace fastgl {

// Lowers `smallest` to `value` when smaller, from any thread: the CPU kernels keep the first bad
// item (the smallest encoded fault, the first decreasing offset) whatever the thread count.
inline void keep_smallest(std::atomic<int64_t>& smallest, int64_t value) {
  int64_t seen = smallest.load();
  while (value < seen && !smallest.compare_exchange_weak(seen, value)) {
  }
}

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

// All values in [0, bound); returns the largest.
inline int64_t check_ids_in_range(const char* op, const char* name, const at::Tensor& ids,
                                  int64_t bound) {
  if (ids.numel() == 0) return -1;
  const auto [low, high] = min_max_ids(ids);
  FASTGL_CHECK(low >= 0, op, name, " id ", low, " is negative");
  FASTGL_CHECK(high < bound, op, name, " id ", high, " out of range for a graph of ", bound,
               " nodes");
  return high;
}

// check_ids_in_range for ids that ops read again and again (a structure's `indices`): skipped
// while the tensor is unchanged since it last passed (checked_once.h). Returns the largest id,
// or the bound on it that the record holds.
inline int64_t check_structure_ids(const char* op, const char* name, const at::Tensor& ids,
                                   int64_t bound) {
  if (const std::optional<int64_t> known = known_max_id(ids); known && *known < bound) {
    return *known;
  }
  const int64_t max_id = check_ids_in_range(op, name, ids, bound);
  remember_id_range(ids, max_id);
  return max_id;
}

// An optional argument as the backends take it: contiguous, or undefined when absent.
inline at::Tensor contiguous_or_undefined(const c10::optional<at::Tensor>& t) {
  return t.has_value() ? t->contiguous() : at::Tensor();
}

// String arguments compared and printed through one type: c10::string_view differs across the
// supported torch versions (its own class on 2.2, std::string_view later).
inline std::string as_string(c10::string_view value) {
  return std::string(value.data(), value.size());
}

// Bytes of memory `device` has in all (check.cpp): the host's RAM, or the GPU's.
int64_t device_memory_bytes(const at::Device& device);
#ifdef FASTGL_WITH_CUDA
int64_t cuda_memory_bytes(c10::DeviceIndex device);  // cuda_memory.cu
#endif

// An output of `entries` entries of `entry_bytes` each, sized by the op's arguments (a fanout, a
// node count), fits the device's memory: a larger request is an error naming the op, not an
// allocator failure without it (or, under memory overcommit, the process killed mid-write).
inline void check_output_fits(const char* op, const char* what, int64_t entries,
                              int64_t entry_bytes, const at::Device& device) {
  const int64_t memory = device_memory_bytes(device);
  FASTGL_CHECK(entries <= memory / entry_bytes, op, what, " would need ", entries, " entries of ",
               entry_bytes, " bytes, more than the ", memory >> 20, " MiB of memory on ",
               device.str());
}

// An offset array (CSC `indptr`): 1-D int64 with at least one entry. Its values are checked by
// check_offsets, or, by the samplers, for the rows they read.
inline void check_offsets_tensor(const char* op, const char* name, const at::Tensor& offsets) {
  check_dim(op, name, offsets, 1);
  check_dtype(op, name, offsets, at::kLong);
  FASTGL_CHECK(offsets.numel() >= 1, op, name, " must have num_rows + 1 >= 1 entries");
}

// What is wrong with the values of a CPU offset array for `num_edges` edges (check.cpp), in one
// parallel pass: "" when it starts at 0, never decreases and ends at num_edges.
std::string offsets_error_cpu(const char* name, const at::Tensor& offsets, int64_t num_edges);

// What is wrong with the values of an offset array (check_offsets_tensor passed), "" when
// nothing: one pass over the array; on CUDA one reduction and one synchronization.
inline std::string offsets_error(const char* name, const at::Tensor& offsets, int64_t num_edges) {
  if (offsets.device().is_cpu()) return offsets_error_cpu(name, offsets, num_edges);
  const int64_t n = offsets.numel();
  const at::Tensor valid = (offsets[0] == 0) & (offsets[n - 1] == num_edges) &
                           (offsets.narrow(0, 1, n - 1) >= offsets.narrow(0, 0, n - 1)).all();
  if (valid.item<bool>()) return "";
  return std::string(name) +
         " is not a valid offset array: it must start at 0, never decrease and end at " +
         std::to_string(num_edges) + " (the number of edges)";
}

// check_offsets_tensor and every value: starts at 0, never decreases, ends at `num_edges`, for
// the ops that read every row anyway; skipped for an array known valid (checked_once.h).
inline void check_offsets(const char* op, const char* name, const at::Tensor& offsets,
                          int64_t num_edges) {
  check_offsets_tensor(op, name, offsets);
  if (offsets_known_valid(offsets, num_edges)) return;
  const std::string error = offsets_error(name, offsets, num_edges);
  FASTGL_CHECK(error.empty(), op, error);
  remember_valid_offsets(offsets, num_edges);
}

}  // namespace fastgl
