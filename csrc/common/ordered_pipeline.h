// An ordered sequential pass overlapped with a parallel one (CPU): produce(c) runs for every
// chunk on all threads, consume(c) on one thread in chunk order, each after its produce. The
// consuming thread produces too whenever the next chunk is not ready, so with T threads the work
// takes about max((P + C) / T, C) for total produce time P and consume time C, instead of
// P / T + C when the sequential pass waits for the parallel one. sample_hops uses it to relabel
// (first-occurrence order: sequential) the neighbors of the chunks already drawn.
#pragma once

#include <ATen/Parallel.h>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace fastgl {

template <typename Produce, typename Consume>
void produce_parallel_consume_in_order(int64_t num_chunks, const Produce& produce,
                                       const Consume& consume) {
#ifndef _OPENMP
  // Built without OpenMP (setup.py found no -fopenmp): no thread team, so chunk by chunk in order.
  for (int64_t c = 0; c < num_chunks; ++c) {
    produce(c);
    consume(c);
  }
#else
  const int threads = at::in_parallel_region() ? 1 : at::get_num_threads();
  if (threads == 1 || num_chunks <= 1) {
    for (int64_t c = 0; c < num_chunks; ++c) {
      produce(c);
      consume(c);
    }
    return;
  }
  std::unique_ptr<std::atomic<bool>[]> produced(new std::atomic<bool>[num_chunks]);
  for (int64_t c = 0; c < num_chunks; ++c) produced[c].store(false, std::memory_order_relaxed);
  std::atomic<int64_t> next_to_produce{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel num_threads(threads)
  {
    try {
      const bool consumer = omp_get_thread_num() == 0;
      int64_t next_to_consume = 0;
      while (!failed.load(std::memory_order_relaxed)) {
        if (consumer && next_to_consume < num_chunks &&
            produced[next_to_consume].load(std::memory_order_acquire)) {
          consume(next_to_consume++);
          continue;
        }
        const int64_t c = next_to_produce.load(std::memory_order_relaxed) < num_chunks
                              ? next_to_produce.fetch_add(1, std::memory_order_relaxed)
                              : num_chunks;
        if (c < num_chunks) {
          produce(c);
          produced[c].store(true, std::memory_order_release);
        } else if (!consumer || next_to_consume == num_chunks) {
          break;
        } else {
          // The consumer waits for a chunk another thread is still producing: let that thread
          // have the core if they share one.
          std::this_thread::yield();
        }
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true);
    }
  }
  if (error) std::rethrow_exception(error);
#endif  // _OPENMP
}

}  // namespace fastgl
