#include "common/prefault.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace fastgl {

#if defined(__linux__)
namespace {

// Linux 5.14's value; older headers lack the name.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

// Below this, faulting on demand costs too little to matter.
constexpr uintptr_t kMinBytes = uintptr_t{4} << 20;
// Each task populates at least this much (one system call).
constexpr uintptr_t kChunkBytes = uintptr_t{2} << 20;

std::atomic<bool> populate_supported{true};

bool first_page_resident(uintptr_t page, uintptr_t page_size) {
  unsigned char resident = 0;
  if (mincore(reinterpret_cast<void*>(page), page_size, &resident) != 0) return true;
  return (resident & 1) != 0;
}

}  // namespace

void prefault_for_write(const at::Tensor& t) {
  if (!t.defined() || !t.device().is_cpu() || !t.is_contiguous() || t.nbytes() < kMinBytes ||
      !populate_supported.load(std::memory_order_relaxed)) {
    return;
  }
  const uintptr_t page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(t.data_ptr());
  // Whole pages inside the tensor only: the partial pages at its ends may belong to others.
  const uintptr_t first = (start + page_size - 1) & ~(page_size - 1);
  const uintptr_t last = (start + t.nbytes()) & ~(page_size - 1);
  if (last <= first || first_page_resident(first, page_size)) return;
  const int64_t chunks = static_cast<int64_t>((last - first + kChunkBytes - 1) / kChunkBytes);
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    const uintptr_t from = first + static_cast<uintptr_t>(begin) * kChunkBytes;
    const uintptr_t to = std::min(last, first + static_cast<uintptr_t>(end) * kChunkBytes);
    if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0 &&
        errno == EINVAL) {
      populate_supported.store(false, std::memory_order_relaxed);
    }
  });
}

#else

void prefault_for_write(const at::Tensor&) {}

#endif

}  // namespace fastgl
