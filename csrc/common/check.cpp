// The CPU halves of check.h's id range and offset checks.
#include "common/check.h"
#include "common/multiversion.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <vector>

namespace fastgl {

namespace {

// Smallest and largest of n > 0 ids, in one vectorized pass.
template <typename T>
FASTGL_MULTIVERSION std::pair<int64_t, int64_t> min_max_span(const T* ids, int64_t n) {
  T lo = ids[0], hi = ids[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = ids[i] < lo ? ids[i] : lo;
    hi = ids[i] > hi ? ids[i] : hi;
  }
  return {lo, hi};
}

}  // namespace

std::pair<int64_t, int64_t> min_max_ids_cpu(const at::Tensor& ids) {
  constexpr int64_t kGrain = 1 << 16;
  const at::Tensor c = ids.contiguous();
  return AT_DISPATCH_INDEX_TYPES(c.scalar_type(), "min_max_ids", [&] {
    const index_t* data = c.data_ptr<index_t>();
    const int64_t n = c.numel();
    const int64_t parts =
        std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / kGrain));
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

std::string offsets_error_cpu(const char* name, const at::Tensor& offsets, int64_t num_edges) {
  const at::Tensor c = offsets.contiguous();
  const int64_t* value = c.data_ptr<int64_t>();
  const int64_t n = c.numel();
  std::ostringstream error;
  if (value[0] != 0) {
    error << name << "[0] is " << value[0] << " but must be 0";
  } else if (value[n - 1] != num_edges) {
    error << name << "[-1] is " << value[n - 1] << " but must be " << num_edges
          << " (the number of edges)";
  } else {
    // The first decrease, found in parallel: each chunk records its first, the smallest wins.
    constexpr int64_t kGrain = 1 << 16;
    std::atomic<int64_t> first_decrease{n};
    at::parallel_for(1, n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (value[i] < value[i - 1]) {
          keep_smallest(first_decrease, i);
          return;
        }
      }
    });
    const int64_t i = first_decrease.load();
    if (i < n) {
      error << name << " decreases: " << name << "[" << i << "] = " << value[i] << " < " << name
            << "[" << i - 1 << "] = " << value[i - 1];
    }
  }
  if (error.tellp() > 0) {
    error << "; offsets must start at 0, never decrease and end at the number of edges";
  }
  return error.str();
}

int64_t device_memory_bytes(const at::Device& device) {
#ifdef FASTGL_WITH_CUDA
  if (device.is_cuda()) return cuda_memory_bytes(device.index());
#endif
  // Asked once: samplers check an output size per hop.
  static const int64_t host_bytes =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return host_bytes;
}

}  // namespace fastgl
