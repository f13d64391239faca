#include "common/block_pool.h"

#include <array>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace fastgl {
namespace {

constexpr std::size_t kAlignment = 64;
constexpr int kNumClasses = 64;

// Size class c holds blocks of 2^c bytes.
int size_class(std::size_t bytes) {
  int c = 0;
  while ((std::size_t{1} << c) < bytes) ++c;
  return c;
}

void* allocate_aligned(std::size_t bytes) {
  void* block = nullptr;
  if (posix_memalign(&block, kAlignment, bytes) != 0) throw std::bad_alloc();
  return block;
}

class BlockPool {
 public:
  void* take(int c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_[c].empty()) {
        void* block = free_[c].back();
        free_[c].pop_back();
        free_bytes_ -= std::size_t{1} << c;
        return block;
      }
    }
    return allocate_aligned(std::size_t{1} << c);
  }

  void give_back(void* block, int c) noexcept {
    const std::size_t bytes = std::size_t{1} << c;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (free_bytes_ + bytes <= kMaxPooledBytes) {
        try {
          free_[c].push_back(block);
          free_bytes_ += bytes;
          return;
        } catch (const std::bad_alloc&) {
          // No room to remember the block: it is freed below instead.
        }
      }
    }
    std::free(block);
  }

  int64_t release_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto released = static_cast<int64_t>(free_bytes_);
    for (auto& blocks : free_) {
      for (void* block : blocks) std::free(block);
      blocks.clear();
    }
    free_bytes_ = 0;
    return released;
  }

  int64_t free_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(free_bytes_);
  }

 private:
  std::mutex mutex_;
  std::array<std::vector<void*>, kNumClasses> free_;
  std::size_t free_bytes_ = 0;
};

// Never destroyed: tensors holding pool blocks may be freed during interpreter shutdown, after
// static destructors have run.
BlockPool& pool() {
  static auto* instance = new BlockPool();
  return *instance;
}

}  // namespace

void* pool_allocate(std::size_t bytes) {
  if (bytes < kMinPooledBytes) return allocate_aligned(bytes == 0 ? 1 : bytes);
  return pool().take(size_class(bytes));
}

void pool_free(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes < kMinPooledBytes) {
    std::free(block);
    return;
  }
  pool().give_back(block, size_class(bytes));
}

int64_t pool_release_free_blocks() { return pool().release_all(); }

int64_t pool_free_bytes() { return pool().free_bytes(); }

}  // namespace fastgl
