#include "common/block_pool.h"

#include <array>
#include <cstdlib>
#include <mutex>
#include <vector>

#if defined(__unix__)
#include <pthread.h>
#endif

namespace fastgl {
namespace {

constexpr std::size_t kAlignment = 64;
// Size classes 2^18 .. 2^62 bytes; larger requests cannot be met anyway.
constexpr int kMaxClass = 62;

// Size class c holds blocks of 2^c bytes.
int size_class(std::size_t bytes) {
  if (bytes > (std::size_t{1} << kMaxClass)) throw std::bad_alloc();
  int c = 0;
  while ((std::size_t{1} << c) < bytes) ++c;
  return c;
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
    void* block = nullptr;
    if (posix_memalign(&block, kAlignment, std::size_t{1} << c) == 0) return block;
    // Out of memory: the blocks kept for reuse may be what is missing.
    release_all();
    if (posix_memalign(&block, kAlignment, std::size_t{1} << c) == 0) return block;
    throw std::bad_alloc();
  }

  // Keeps the block for reuse, making room by freeing the largest kept blocks of other classes
  // when the pool is full: the most recent sizes are the likeliest to be asked for again.
  void give_back(void* block, int c) noexcept {
    const std::size_t bytes = std::size_t{1} << c;
    if (bytes <= kMaxPooledBytes) {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int other = kMaxClass; other >= 0 && free_bytes_ + bytes > kMaxPooledBytes; --other) {
        while (!free_[other].empty() && free_bytes_ + bytes > kMaxPooledBytes) {
          std::free(free_[other].back());
          free_[other].pop_back();
          free_bytes_ -= std::size_t{1} << other;
        }
      }
      try {
        free_[c].push_back(block);
        free_bytes_ += bytes;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember the block: it is freed below instead.
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

  // fork() copies only the forking thread: the child must not inherit the mutex locked by another
  // thread (a DataLoader worker forked while a tensor deleter returns a block, say).
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
  std::array<std::vector<void*>, kMaxClass + 1> free_;
  std::size_t free_bytes_ = 0;
};

// Never destroyed: tensors holding pool blocks may be freed during interpreter shutdown, after
// static destructors have run.
BlockPool& pool() {
  static BlockPool* const instance = [] {
    auto* created = new BlockPool();
#if defined(__unix__)
    pthread_atfork([] { pool().lock_for_fork(); }, [] { pool().unlock_after_fork(); },
                   [] { pool().unlock_after_fork(); });
#endif
    return created;
  }();
  return *instance;
}

}  // namespace

void* pool_allocate(std::size_t bytes) {
  if (bytes < kMinPooledBytes) {
    // malloc's alignment (16 bytes) suits every element type the pool serves.
    void* block = std::malloc(bytes == 0 ? 1 : bytes);
    if (block == nullptr) throw std::bad_alloc();
    return block;
  }
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
