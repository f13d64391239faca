// Large CPU buffers recycled within the process instead of handed back to the OS.
//
// glibc returns large freed blocks to the kernel (munmap, or trimming the top of the heap), and
// the next call's first write to each 4 KB page of a new block then takes a page fault that also
// zeroes the page. A sampler call at products scale (batch 1024) allocated its hash table, edge
// arrays and per-hop scratch afresh every time: 3,200 faults, a quarter of its time. Blocks of
// kMinPooledBytes or more are therefore taken from, and given back to, a process-wide pool of
// power-of-two size classes, which keeps at most kMaxPooledBytes of free blocks (the largest
// kept blocks make room for a returning one) and hands them all back when an allocation fails;
// smaller blocks use the ordinary heap. Thread-safe, and safe across fork(): a block may be freed
// on another thread than the one that took it (a tensor's deleter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace fastgl {

constexpr std::size_t kMinPooledBytes = std::size_t{1} << 18;  // 256 KB
constexpr std::size_t kMaxPooledBytes = std::size_t{1} << 30;  // kept free at most: 1 GiB

// At least `bytes` bytes, aligned to 64 (to 16 below kMinPooledBytes); throws std::bad_alloc
// when out of memory.
void* pool_allocate(std::size_t bytes);
// Gives back a block from pool_allocate(bytes), with the same `bytes`.
void pool_free(void* block, std::size_t bytes) noexcept;
// Frees every block the pool keeps; returns how many bytes that handed back to the OS.
int64_t pool_release_free_blocks();
// Bytes the pool keeps in free blocks now.
int64_t pool_free_bytes();

// std::allocator's interface over the pool. Elements are left uninitialized by a value-less
// construct (vector::resize), so arrays that are sized first and then written in full are not
// zero-filled first.
template <typename T>
struct PoolAllocator {
  static_assert(alignof(T) <= 16, "PoolAllocator: small blocks are only 16-byte aligned");
  using value_type = T;

  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { pool_free(p, n * sizeof(T)); }

  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const noexcept {
    return false;
  }
};

// The one spelling of a vector on the pool.
template <typename T>
using PooledVector = std::vector<T, PoolAllocator<T>>;

}  // namespace fastgl
