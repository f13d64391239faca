// _hetero_sample_hops (internal): every hop of heterogeneous multi-hop neighbor sampling
// (fastgl/sampling/hetero.py's HeteroNeighborSampler) on the device sampling engine
// (hop_engine.h), with one synchronization per call instead of a few per hop.
//
// The graph is a heterogeneous graph's combined CSC (fastgl.hetero.CombinedCSC): node type t
// holds the global ids type_start[t] .. type_start[t + 1] - 1, and relation r's in-edges of a node
// with global id v (of type dst[r]) are the slots indptr[row_base[r] + v] .. indptr[row_base[r] +
// v + 1]; eid gives each slot's id within its relation. `seeds` are global ids, seed_counts[t] of
// type t first, node types in order. Each node type numbers its nodes apart: its distinct seeds
// in first-occurrence order, then its nodes new at hop 1, 2, ... At hop h every transit of type
// dst[r] draws fanouts[h * R + r] in-edges along every relation r (hop-wise: the nodes new at the
// hop before; layer-wise: every node so far), from Philox key hop_key(seed, h) and stream p for
// the hop's p-th (relation, transit) pair, relation-major in relation order. A type's nodes new at
// a hop are the sources of its relations' draws in relation order, each relation's in transit
// order: the samples of the reference (sample_ranges + one id_map per node type and hop), bit for
// bit. `disjoint`: seed i grows tree i (over all types), node keys i * N + global id.
//
// Temporal sampling (`slot_time` and `tree_time` given; disjoint and unweighted): indices and eid
// are the time-sorted view (each row ascending in time), slot_time an int64 key per slot and
// tree_time per tree (seed), keys that compare as the times do (fastgl/sampling/temporal.py's
// time_keys); a pair of a relation r with timed[r] draws from its row's prefix of slots whose key
// is at most its tree's, `latest`: takes that prefix's last fanout slots (fanout -1: all).
//
// Returns
//   nodes       int64 [sum n_t]     global id of every node, type-major
//   node_counts int64 [T, L+1]      nodes of each type new at each hop (seeds first)
//   row         int64 [sum e]       local id (in its source type) of each drawn edge's source
//   col         int64 [sum e]       local id (in its destination type) of its transit
//   edge_ids    int64 [sum e]       eid of each drawn slot
//   edge_counts int64 [R, L]        edges each relation drew at each hop
//   seed_local  int64 [len(seeds)]  local id of every seed in its type
//   tree        int64 [sum n_t]     disjoint: each node's tree (seed index); empty otherwise
//   indptr      int64 [...]         hop by hop, relation by relation (relation order), for each
//                                   relation that drew at the hop (fanout != 0, its destination
//                                   type had transits): the CSC offsets of its edges over its
//                                   transits, transits + 1 entries from 0
// The edges are type-major by source type, then hop by hop, then relation by relation (relation
// order), each relation's grouped by transit.
//
// `budget_bytes` caps the engine's worst-case buffers (0: every hop waits for its exact size);
// -1 takes the backend's default. CPU runs the engine's host harness (the CUDA backend's stages
// on CPU threads), which tests compare with the reference.
#pragma once

#include "sampling/hop_engine.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace fastgl::sampling {

using HeteroHopsResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor,
                                    at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

constexpr const char* kHeteroHopsOp = "hetero_sample_hops";
// Hops per call: the device's counters hold a few entries per (node type, hop), and a call
// without relations has no fanouts to bound them.
constexpr int64_t kMaxHeteroHops = 1 << 16;
// Upper bound on the engine's device counters per (node type or relation, hop) (hop_engine.h's
// Ledger), for the check that they fit.
constexpr int64_t kCountersPerTypeHop = 8;

inline void check_hetero_relations(const Relations& rel, int64_t num_hops, int64_t num_rows) {
  constexpr const char* op = kHeteroHopsOp;
  const std::vector<int64_t>& start = rel.type_start;
  FASTGL_CHECK(!start.empty() && start[0] == 0, op,
               "type_start must run from 0 over the node types (T + 1 entries)");
  const int64_t num_types = static_cast<int64_t>(start.size()) - 1;
  for (int64_t t = 0; t < num_types; ++t) {
    FASTGL_CHECK(start[t + 1] >= start[t], op, "type_start must never decrease, but entry ", t + 1,
                 " is ", start[t + 1], " < ", start[t]);
  }
  const int64_t r = rel.count();
  FASTGL_CHECK(
      static_cast<int64_t>(rel.dst.size()) == r && static_cast<int64_t>(rel.row_base.size()) == r,
      op, "src_type, dst_type and row_base must have one entry per relation, got ", r, ", ",
      rel.dst.size(), " and ", rel.row_base.size());
  FASTGL_CHECK(num_hops >= 0 && num_hops <= kMaxHeteroHops, op, "num_hops must be in [0, ",
               kMaxHeteroHops, "], got ", num_hops);
  FASTGL_CHECK(static_cast<int64_t>(rel.fanouts.size()) == num_hops * r, op,
               "fanouts must have num_hops * num_relations = ", num_hops, " * ", r,
               " entries, got ", rel.fanouts.size());
  for (int64_t i = 0; i < r; ++i) {
    const int64_t src = rel.src[i], dst = rel.dst[i];
    FASTGL_CHECK(src >= 0 && src < num_types && dst >= 0 && dst < num_types, op, "relation ", i,
                 " joins node types ", src, " and ", dst, " of ", num_types);
    FASTGL_CHECK(rel.row_base[i] >= -start[dst] && rel.row_base[i] <= num_rows - start[dst + 1], op,
                 "relation ", i, "'s rows ", rel.row_base[i] + start[dst], " .. ",
                 rel.row_base[i] + start[dst + 1], " are not rows of indptr (", num_rows, ")");
  }
  for (int64_t fanout : rel.fanouts) check_fanout(op, fanout);
}

inline void check_hetero_times(const c10::optional<at::Tensor>& slot_time,
                               const c10::optional<at::Tensor>& tree_time, const Relations& rel,
                               const at::Tensor& indptr, const at::Tensor& indices,
                               const c10::optional<at::Tensor>& weight, const at::Tensor& seeds,
                               bool disjoint) {
  constexpr const char* op = kHeteroHopsOp;
  if (!slot_time.has_value() && !tree_time.has_value()) {
    FASTGL_CHECK(rel.timed.empty() && !rel.latest, op,
                 "timed and latest are for temporal calls, which give slot_time and tree_time");
    return;
  }
  FASTGL_CHECK(slot_time.has_value() && tree_time.has_value(), op,
               "give slot_time and tree_time together");
  const std::pair<const char*, const at::Tensor*> keys[] = {{"slot_time", &*slot_time},
                                                            {"tree_time", &*tree_time}};
  for (const auto& [name, t] : keys) {
    check_dim(op, name, *t, 1);
    check_dtype(op, name, *t, at::kLong);
    check_same_device(op, name, *t, "indptr", indptr);
  }
  FASTGL_CHECK(slot_time->numel() == indices.numel(), op,
               "slot_time must have one entry per slot (", indices.numel(), "), got ",
               slot_time->numel());
  FASTGL_CHECK(tree_time->numel() == seeds.numel(), op, "tree_time must have one entry per seed (",
               seeds.numel(), "), got ", tree_time->numel());
  FASTGL_CHECK(disjoint, op, "temporal sampling is disjoint: each tree has its seed's time");
  FASTGL_CHECK(!weight.has_value(), op, "temporal draws are unweighted");
  FASTGL_CHECK(rel.count() == static_cast<int64_t>(rel.timed.size()), op,
               "timed must have one entry per relation (", rel.count(), "), got ",
               rel.timed.size());
  for (int64_t t : rel.timed) FASTGL_CHECK(t == 0 || t == 1, op, "timed entries are 0 or 1");
}

// The seed counts (one per node type) as seed offsets, checked against the seeds, and the
// disjoint node keys' range.
inline std::vector<int64_t> hetero_seed_offsets(at::IntArrayRef seed_counts, int64_t num_types,
                                                int64_t num_seeds, int64_t num_nodes,
                                                bool disjoint) {
  constexpr const char* op = kHeteroHopsOp;
  FASTGL_CHECK(static_cast<int64_t>(seed_counts.size()) == num_types, op,
               "seed_counts must have one entry per node type (", num_types, "), got ",
               seed_counts.size());
  std::vector<int64_t> offsets{0};
  for (int64_t count : seed_counts) {
    FASTGL_CHECK(count >= 0 && count <= num_seeds - offsets.back(), op,
                 "seed_counts must be non-negative and sum to len(seeds) = ", num_seeds);
    offsets.push_back(offsets.back() + count);
  }
  FASTGL_CHECK(offsets.back() == num_seeds, op, "seed_counts sum to ", offsets.back(),
               ", not len(seeds) = ", num_seeds);
  FASTGL_CHECK(!disjoint || num_nodes == 0 || num_seeds <= INT64_MAX / num_nodes, op,
               "disjoint sampling of ", num_seeds, " seeds on ", num_nodes,
               " nodes overflows int64 node keys");
  return offsets;
}

inline HopsInputs prepare_hetero_sample_hops(
    const at::Tensor& indptr, const at::Tensor& indices, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& eid, const at::Tensor& seeds, at::IntArrayRef seed_counts,
    at::IntArrayRef type_start, at::IntArrayRef src_type, at::IntArrayRef dst_type,
    at::IntArrayRef row_base, at::IntArrayRef fanouts, int64_t num_hops, bool replace,
    bool layerwise, bool disjoint, int64_t seed, const c10::optional<at::Tensor>& slot_time,
    const c10::optional<at::Tensor>& tree_time, at::IntArrayRef timed, bool latest) {
  constexpr const char* op = kHeteroHopsOp;
  check_csc_inputs(op, indptr, indices, weight);
  check_edge_ids(op, eid, indices, indptr);
  check_index_vector(op, "seeds", seeds);
  check_same_device(op, "seeds", seeds, "indptr", indptr);
  Relations rel{type_start.vec(), src_type.vec(), dst_type.vec(), row_base.vec(), fanouts.vec()};
  check_hetero_relations(rel, num_hops, indptr.numel() - 1);
  rel.timed = timed.vec();
  rel.latest = latest;
  check_hetero_times(slot_time, tree_time, rel, indptr, indices, weight, seeds, disjoint);
  const int64_t num_types = static_cast<int64_t>(rel.type_start.size()) - 1;
  // The engine's device counters: a few per (node type, hop) and per (relation, hop).
  const int64_t counters = hops::saturating_mul(hops::saturating_add(num_types, rel.count() + 1),
                                                hops::saturating_add(num_hops, 1));
  check_output_fits(op, "the per-type and per-relation counters", counters,
                    kCountersPerTypeHop * sizeof(int64_t), indptr.device());
  std::vector<int64_t> offsets =
      hetero_seed_offsets(seed_counts, num_types, seeds.numel(), rel.type_start.back(), disjoint);
  // The engine's per-hop fanout is the widest of the hop's relations (-1 before any other).
  std::vector<int64_t> widest(num_hops, 0);
  for (int64_t h = 0; h < num_hops; ++h) {
    for (int64_t r = 0; r < rel.count(); ++r) {
      const int64_t fanout = rel.fanout(h, r);
      if (widest[h] >= 0) widest[h] = fanout < 0 ? fanout : std::max(widest[h], fanout);
    }
  }
  const at::Tensor seed_ptr = at::tensor(offsets, at::kLong);
  HopsConfig cfg{std::move(widest), replace, layerwise, disjoint, static_cast<uint64_t>(seed)};
  HopsInputs in = hops_inputs(std::move(cfg), indptr, indices, weight, eid, seeds, seed_ptr,
                              std::move(offsets));
  in.relations = std::move(rel);
  in.op = op;
  in.slot_time = contiguous_or_undefined(slot_time);
  in.tree_time = contiguous_or_undefined(tree_time);
  return in;
}

// The op's entry point, shared by the backends: `Backend::run_engine(inputs, budget_bytes)`
// runs the engine (a negative budget: the backend's default).
template <typename Backend>
HeteroHopsResult hetero_sample_hops_entry(
    const at::Tensor& indptr, const at::Tensor& indices, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& eid, const at::Tensor& seeds, at::IntArrayRef seed_counts,
    at::IntArrayRef type_start, at::IntArrayRef src_type, at::IntArrayRef dst_type,
    at::IntArrayRef row_base, at::IntArrayRef fanouts, int64_t num_hops, bool replace,
    bool layerwise, bool disjoint, int64_t seed, int64_t budget_bytes,
    const c10::optional<at::Tensor>& slot_time, const c10::optional<at::Tensor>& tree_time,
    at::IntArrayRef timed, bool latest) {
  const HopsInputs inputs = prepare_hetero_sample_hops(
      indptr, indices, weight, eid, seeds, seed_counts, type_start, src_type, dst_type, row_base,
      fanouts, num_hops, replace, layerwise, disjoint, seed, slot_time, tree_time, timed, latest);
  const c10::DeviceGuard device_guard(indptr.device());
  const HopsResult out = Backend::run_engine(inputs, budget_bytes);
  return {
      std::get<kOutNodes>(out),     std::get<kOutNodeCounts>(out), std::get<kOutRow>(out),
      std::get<kOutCol>(out),       std::get<kOutEdgeIds>(out),    std::get<kOutEdgeCounts>(out),
      std::get<kOutSeedLocal>(out), std::get<kOutTree>(out),       std::get<kOutColPtr>(out)};
}

}  // namespace fastgl::sampling
