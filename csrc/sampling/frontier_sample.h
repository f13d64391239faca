// frontier_sample: Zeng et al.'s parallel frontier sampler (Accurate, Efficient and Scalable
// Graph Embedding, IPDPS 2019, §III-C and §IV; Ribeiro and Towsley's multidimensional random
// walk, NextDoor's MultiRW), `num_subgraphs` independent samplers at once.
//
// A sampler keeps a frontier of `frontier_size` walkers, m distinct vertices drawn uniformly at
// first. Each of its `budget - frontier_size` moves pops a walker with probability proportional
// to its vertex's weight (its in-degree, at most `max_entries` when that is >= 1: the paper
// caps skewed graphs' hubs at 30) and moves it to a uniform in-neighbor of that vertex, which
// joins the sample (Algorithm 3: the sample is the first frontier and every vertex a move
// reaches, so at most `budget` distinct vertices). A walker at a vertex without in-edges weighs
// 0 and is never popped; should every walker stand on one, the remaining moves are -1.
//
// The pop is the Dashboard's (Algorithms 3 and 4): an array DB holding, for each walker, a
// contiguous block of entries, and IA, one record per block (its start, size, weight and whether
// its walker still stands there). A pop probes DB at uniform positions below its fill mark until
// one holds a live entry that keeps the walker, invalidates the walker's block and appends the
// new vertex's block; when DB is full the live blocks are compacted to its front (cleanup), and
// also before a pop once dead entries pass (eta - 1) live ones. The paper gives a walker one
// entry per unit of its weight; here an entry stands for `entry_weight` units (1: the paper's),
// the block's last for what the others leave, r < entry_weight, and a probe on it keeps the
// walker with probability r / entry_weight (one more draw): the walker comes with probability
// proportional to its weight either way, but a hub's block shrinks by entry_weight, and with it
// the writing of every add and cleanup. `entry_weight` 0 takes the graph's mean in-degree
// (capped, at least 1, at most 1024). DB starts at eta * m * that mean in entries (the paper's
// enlargement factor eta); a cleanup that leaves it under eta times the live entries (and those
// to add) grows it to that, at least doubling it, so that (eta - 1) times the live entries come
// in before the next cleanup rewrites them. The same draws, popped and added vertices come out on
// any thread count: sampler s draws from Philox stream s under key `seed`. `pop` "scan" pops
// instead by a scan of the walkers' running sum of weights (the O(m)-per-pop sampler the paper
// starts from): the same distribution, other draws.
//
// Returns, for S = num_subgraphs, m = frontier_size and K = budget - m moves:
//   frontier  int64 [S, m]  each sampler's first frontier
//   popped    int64 [S, K]  the vertex each move popped (-1 once no walker can move)
//   added     int64 [S, K]  the in-neighbor it moved to, which joined the sample
#pragma once

#include "common/check.h"
#include "common/page_advice.h"
#include "sampling/sample_neighbors.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

namespace fastgl::sampling {

using FrontierResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

constexpr const char* kFrontierOp = "frontier_sample";

// What a sampler can find wrong in the graph it reads; sampler s's fault is encoded as
// s * kNumFrontierFaults + fault, and the smallest one is reported, whatever the thread count.
enum FrontierFault : int64_t {
  kNoFrontierFault = 0,
  kBadFrontierRow = 1,
  kBadFrontierNeighbor = 2,
  kNumFrontierFaults = 4,
};

// The encoded fault of offsets that do not start at 0 and end at the edge count (below every
// sampler's, so it is the one reported), and of a call without fault.
constexpr int64_t kBadFrontierOffsetEnds = -1;
constexpr int64_t kNoFrontierFaultFound = INT64_MAX;

// What a backend reports: the smallest encoded fault and the vertex whose row or neighbor was
// bad.
struct FrontierFaultReport {
  int64_t first_fault = kNoFrontierFaultFound;
  int64_t node = -1;
};

enum class FrontierPop { kDashboard, kScan };

// The call's inputs and outputs as the backends read them (plain values and pointers, for host
// and device).
template <typename index_t>
struct FrontierView {
  const int64_t* indptr;
  const index_t* indices;
  int64_t num_nodes, num_edges, num_subgraphs, frontier_size, moves, max_entries, entry_weight;
  double eta;
  uint64_t key;
  int64_t initial_capacity;  // DB's first size, in entries
  int64_t *frontier, *popped, *added;
};

// The graph's mean in-degree, capped like a vertex's weight.
inline double mean_weight(int64_t num_nodes, int64_t num_edges, int64_t max_entries) {
  const double mean =
      static_cast<double>(num_edges) / static_cast<double>(std::max<int64_t>(num_nodes, 1));
  return max_entries > 0 ? std::min(mean, static_cast<double>(max_entries)) : mean;
}

// The most an entry may stand for: a walker of weight w keeps a probe on its one entry with
// probability w / entry_weight, so a weight far above the walkers' makes pops probe for ever.
constexpr int64_t kMaxEntryWeight = 1024;

// The weight of a Dashboard entry: `entry_weight`, or for 0 the mean weight, in [1, 1024]; at
// most the cap, where one entry already holds a capped walker (more would only slow the probes).
inline int64_t resolve_entry_weight(int64_t num_nodes, int64_t num_edges, int64_t max_entries,
                                    int64_t entry_weight) {
  const double mean = mean_weight(num_nodes, num_edges, max_entries);
  const int64_t weight =
      entry_weight > 0
          ? entry_weight
          : std::clamp<int64_t>(static_cast<int64_t>(std::min(mean, 1e9)), 1, kMaxEntryWeight);
  return max_entries > 0 ? std::min(weight, max_entries) : weight;
}

// Bytes a Dashboard entry may take: its DB slot, and its block's IA record when every block
// holds one entry.
constexpr int64_t kDashboardEntryBytes = 8 + 32;

// DB's first size: eta times the first frontier's expected entries (the paper's eta * m * d, d
// the graph's mean in-degree, capped like a vertex's weight, in entries of `entry_weight`), at
// least one entry per walker: at most eta * max(E, m), as m <= N.
inline int64_t dashboard_capacity(int64_t num_nodes, int64_t num_edges, int64_t frontier_size,
                                  int64_t max_entries, double eta, int64_t entry_weight) {
  const double entries = mean_weight(num_nodes, num_edges, max_entries) / entry_weight;
  return static_cast<int64_t>(
      std::ceil(eta * static_cast<double>(frontier_size) * std::max(entries, 1.0)));
}

inline void check_frontier_sample_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                         int64_t num_subgraphs, int64_t frontier_size,
                                         int64_t budget, double eta, int64_t max_entries,
                                         const std::string& pop, int64_t entry_weight) {
  constexpr const char* op = kFrontierOp;
  check_csc_inputs(op, indptr, indices, c10::nullopt);
  const int64_t num_nodes = indptr.numel() - 1;
  FASTGL_CHECK(num_subgraphs >= 0, op, "num_subgraphs must be >= 0, got ", num_subgraphs);
  FASTGL_CHECK(frontier_size >= 1, op, "frontier_size must be >= 1, got ", frontier_size);
  FASTGL_CHECK(frontier_size <= num_nodes, op, "frontier_size ", frontier_size,
               " exceeds the graph's ", num_nodes, " nodes (the first frontier is distinct)");
  FASTGL_CHECK(budget >= frontier_size, op, "budget must be >= frontier_size (", frontier_size,
               "), got ", budget);
  FASTGL_CHECK(eta > 1 && eta <= 64, op, "eta must be in (1, 64], got ", eta);
  FASTGL_CHECK(max_entries >= 0, op, "max_entries must be >= 0 (0: no cap), got ", max_entries);
  FASTGL_CHECK(entry_weight >= 0 && entry_weight <= kMaxEntryWeight, op,
               "entry_weight must be in [0, ", kMaxEntryWeight, "] (0: the mean in-degree), got ",
               entry_weight);
  FASTGL_CHECK(pop == "dashboard" || pop == "scan", op, "pop must be 'dashboard' or 'scan', got '",
               pop, "'");
  // A sampler's outputs (its frontier, pops and adds) and its fault record, in int64 entries.
  constexpr int64_t kMaxEntries = INT64_MAX / 8;
  FASTGL_CHECK(budget <= kMaxEntries / 2, op, "budget ", budget, " overflows the samples' size");
  const int64_t per_sampler = 2 * budget - frontier_size + 1;
  FASTGL_CHECK(num_subgraphs <= kMaxEntries / per_sampler, op, num_subgraphs,
               " subgraphs of budget ", budget, " overflow the samples' size");
  check_output_fits(op, "the samples", num_subgraphs * per_sampler, 8, indptr.device());
  const int64_t dashboard = dashboard_capacity(
      num_nodes, indices.numel(), frontier_size, max_entries, eta,
      resolve_entry_weight(num_nodes, indices.numel(), max_entries, entry_weight));
  check_output_fits(op, "a sampler's Dashboard", dashboard, kDashboardEntryBytes, indptr.device());
}

// Raises the error of an encoded fault; `node` is the vertex whose row or neighbor was bad.
[[noreturn]] inline void raise_frontier_fault(int64_t encoded, int64_t node, int64_t num_nodes) {
  FASTGL_CHECK(encoded != kBadFrontierOffsetEnds, kFrontierOp, kBadIndptrError);
  const int64_t sampler = encoded / kNumFrontierFaults, fault = encoded % kNumFrontierFaults;
  FASTGL_CHECK(fault != kBadFrontierRow, kFrontierOp, kBadIndptrError, " (node ", node,
               ", subgraph ", sampler, ")");
  FASTGL_CHECK(false, kFrontierOp, "indices of node ", node,
               " hold an id out of range for a graph of ", num_nodes, " nodes (subgraph ", sampler,
               ")");
}

// The op's entry point, shared by the backends: check, allocate the samples, return early when
// there are none; otherwise `Backend::run(view, pop)` samples and reports the first fault.
template <typename Backend>
FrontierResult frontier_sample_entry(const at::Tensor& indptr, const at::Tensor& indices,
                                     int64_t num_subgraphs, int64_t frontier_size, int64_t budget,
                                     double eta, int64_t max_entries, c10::string_view pop_method,
                                     int64_t seed, int64_t entry_weight) {
  const std::string pop = as_string(pop_method);
  check_frontier_sample_inputs(indptr, indices, num_subgraphs, frontier_size, budget, eta,
                               max_entries, pop, entry_weight);
  const c10::DeviceGuard device_guard(indptr.device());
  const int64_t moves = budget - frontier_size, num_nodes = indptr.numel() - 1;
  const auto options = indptr.options();
  at::Tensor frontier = empty_for_write({num_subgraphs, frontier_size}, options);
  at::Tensor popped = empty_for_write({num_subgraphs, moves}, options);
  at::Tensor added = empty_for_write({num_subgraphs, moves}, options);
  if (num_subgraphs == 0) return {frontier, popped, added};
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const int64_t num_edges = indices.numel();
  const int64_t weight = resolve_entry_weight(num_nodes, num_edges, max_entries, entry_weight);
  const FrontierFaultReport report =
      AT_DISPATCH_INDEX_TYPES(indices_c.scalar_type(), kFrontierOp, [&] {
        const FrontierView<index_t> view{
            indptr_c.data_ptr<int64_t>(),
            indices_c.data_ptr<index_t>(),
            num_nodes,
            num_edges,
            num_subgraphs,
            frontier_size,
            moves,
            max_entries,
            weight,
            eta,
            static_cast<uint64_t>(seed),
            dashboard_capacity(num_nodes, num_edges, frontier_size, max_entries, eta, weight),
            frontier.data_ptr<int64_t>(),
            popped.data_ptr<int64_t>(),
            added.data_ptr<int64_t>()};
        return Backend::run(view,
                            pop == "dashboard" ? FrontierPop::kDashboard : FrontierPop::kScan);
      });
  if (report.first_fault != kNoFrontierFaultFound) {
    raise_frontier_fault(report.first_fault, report.node, num_nodes);
  }
  return {frontier, popped, added};
}

}  // namespace fastgl::sampling
