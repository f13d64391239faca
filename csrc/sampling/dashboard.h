// The Dashboard's rules (Zeng et al., Accurate, Efficient and Scalable Graph Embedding, IPDPS
// 2019, §IV-B, Algorithms 3 and 4), written once for host and device: frontier_sample's CPU
// kernel pops with one thread per sampler, its CUDA kernel with a warp, and both follow these
// rules, so that they keep the same blocks, clean up at the same moves and draw the same samples.
#pragma once

#include "sampling/neighbor_draw.h"

#include <c10/macros/Macros.h>

#include <cmath>
#include <cstdint>

namespace fastgl::sampling {

// A walker's record in IA: its vertex (kPoppedWalker once popped), where its block of DB entries
// starts, how many entries, and its weight.
struct DashboardBlock {
  int64_t vertex, start, entries, weight;
};

constexpr int64_t kPoppedWalker = -1;

// The entries of a walker of `weight` > 0 when an entry stands for `entry_weight` units: all
// full but the last, which holds the rest.
C10_HOST_DEVICE inline int64_t dashboard_entries(int64_t weight, int64_t entry_weight) {
  return (weight - 1) / entry_weight + 1;
}

// The weight the entry at DB slot `at` of `block` stands for: `entry_weight`, or the rest for the
// block's last. A probe on it keeps the walker outright when it is a full entry, and otherwise
// with probability share / entry_weight (one more draw), so that every walker comes with
// probability proportional to its weight.
C10_HOST_DEVICE inline int64_t probe_share(const DashboardBlock& block, int64_t at,
                                           int64_t entry_weight) {
  const int64_t last = block.start + block.entries - 1;
  return at == last ? block.weight - (block.entries - 1) * entry_weight : entry_weight;
}

// Before a pop: whether dead entries have passed (eta - 1) live ones, which compacting keeps the
// expected probes per pop at most eta (times entry_weight over the walkers' mean weight per
// entry).
C10_HOST_DEVICE inline bool needs_compaction(int64_t fill, int64_t live_entries, double eta) {
  return static_cast<double>(fill) > eta * static_cast<double>(live_entries);
}

// DB's size after a cleanup that left `fill` live entries, `room` more to add: eta times their
// sum when it is bigger, at least doubling it, so that (eta - 1) times the live entries come in
// before the next cleanup rewrites them.
C10_HOST_DEVICE inline int64_t grown_capacity(int64_t capacity, int64_t fill, int64_t room,
                                              double eta) {
  const auto needed = static_cast<int64_t>(ceil(eta * static_cast<double>(fill + room)));
  if (needed <= capacity) return capacity;
  return needed > 2 * capacity ? needed : 2 * capacity;
}

// The popping weight of `vertex`: its in-degree, at most `max_entries` when that is >= 1; -1 for
// a row that cannot be read.
C10_HOST_DEVICE inline int64_t frontier_weight(const int64_t* indptr, int64_t vertex,
                                               int64_t num_edges, int64_t max_entries) {
  const int64_t start = indptr[vertex], stop = indptr[vertex + 1];
  if (!valid_adjacency(start, stop, num_edges)) return -1;
  const int64_t degree = stop - start;
  return max_entries > 0 && max_entries < degree ? max_entries : degree;
}

}  // namespace fastgl::sampling
