// page_advice.h: prefault_for_write, one madvise(MADV_POPULATE_WRITE) per thread over its share
// of a fresh output's pages, and advise_huge_pages, one madvise(MADV_HUGEPAGE). Neither changes
// the contents of memory.
#include "common/page_advice.h"

#include <ATen/Parallel.h>

#include <algorithm>
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
// Huge pages pay off once random reads span more than the TLB covers with 4 KB pages (a few MB).
constexpr uintptr_t kMinHugePageBytes = uintptr_t{32} << 20;
constexpr uintptr_t kHugePageBytes = uintptr_t{2} << 20;
// Threads split the pages in chunks of this size (at least one chunk per thread's call).
constexpr uintptr_t kChunkBytes = uintptr_t{2} << 20;

uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Whether this kernel knows MADV_POPULATE_WRITE, asked once on a private page of our own: an
// error on a caller's memory (a driver's mapping, say) says nothing about the kernel.
bool populate_supported() {
  static const bool supported = [] {
    void* page =
        mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return false;
    const bool ok = madvise(page, page_size(), MADV_POPULATE_WRITE) == 0;
    munmap(page, page_size());
    return ok;
  }();
  return supported;
}

bool resident(uintptr_t page) {
  unsigned char in_core = 0;
  if (mincore(reinterpret_cast<void*>(page), page_size(), &in_core) != 0) return true;
  return (in_core & 1) != 0;
}

}  // namespace

void prefault_for_write(const at::Tensor& t) {
  if (!t.defined() || !t.device().is_cpu() || !t.is_contiguous() || t.nbytes() < kMinBytes ||
      !populate_supported()) {
    return;
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(t.data_ptr());
  // Whole pages inside the tensor only: the partial pages at its ends are shared with other
  // allocations, already resident or not ours to commit.
  const uintptr_t first = (start + page_size() - 1) & ~(page_size() - 1);
  const uintptr_t last = (start + t.nbytes()) & ~(page_size() - 1);
  if (last <= first || resident(first)) return;
  const int64_t chunks = static_cast<int64_t>((last - first + kChunkBytes - 1) / kChunkBytes);
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    const uintptr_t from = first + static_cast<uintptr_t>(begin) * kChunkBytes;
    const uintptr_t to = std::min(last, first + static_cast<uintptr_t>(end) * kChunkBytes);
    // A failure (no memory, a special mapping) leaves the pages to fault in on demand.
    madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  });
}

void advise_huge_pages(const at::Tensor& t) {
  if (!t.defined() || !t.device().is_cpu() || !t.is_contiguous() ||
      t.nbytes() < kMinHugePageBytes) {
    return;
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(t.data_ptr());
  const uintptr_t first = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (start + t.nbytes()) & ~(kHugePageBytes - 1);
  // Advice only: a kernel without transparent huge pages refuses it, and 4 KB pages remain.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

#else

void prefault_for_write(const at::Tensor&) {}
void advise_huge_pages(const at::Tensor&) {}

#endif

}  // namespace fastgl
