// sample_hops: every hop of multi-hop neighbor sampling for a window of mini-batches, each hop
// one fused pass that draws the neighbors, relabels them (FastGL's Fused-Map, ASPLOS '24, §4.3)
// and gathers their edge ids: no separate unique, sort, search or mask compaction.
//
// Batch b's seeds are seeds[seed_ptr[b] .. seed_ptr[b+1]). Its nodes are numbered locally: the
// distinct seeds in first-occurrence order, then the nodes new at hop 1, hop 2, ..., each in
// first-occurrence order. At hop h the batch's transits are the nodes new at hop h-1
// (hop-wise, PyG's NeighborLoader), or every node so far (`layerwise`, DGL's NeighborSampler:
// a layer's destinations are the prefix of its sources). Each transit draws `fanouts[h]`
// in-edges exactly as `sample_neighbors` does, with Philox key hop_key(seed, h) and stream
// (b << 40) | p for the batch's p-th transit, so batch 0 draws what `sample_neighbors` would.
// `disjoint`: every seed grows its own tree; nodes are shared by no two trees (PyG's
// disjoint=True).
//
// Returns, batch-major (batch 0's nodes, then batch 1's, ...; edges likewise, hop by hop):
//   nodes       int64 [sum n_b]  graph node id of every local node
//   node_counts int64 [B, L+1]   nodes new at each hop (seeds first)
//   row         int64 [sum e_b]  local id of each drawn neighbor (the message source)
//   col         int64 [sum e_b]  local id of the transit it was drawn for
//   edge_ids    int64 [sum e_b]  eid[slot] of each drawn edge (the slot itself without eid)
//   edge_counts int64 [B, L]     edges drawn at each hop
//   seed_local  int64 [len(seeds)] local id of every given seed (repeats share one)
//   in_degrees  int64 [sum n_b]  in-degree in the graph of every sampled node
//   tree        int64 [sum n_b]  disjoint: the seed (position in its batch) of each node's
//                                tree; empty otherwise
//   col_ptr     int64 [sum (n_b + 1)]  hop-wise: batch b's CSC offsets, n_b + 1 entries from 0
//                                to e_b: the in-edges of its local node v are its edges
//                                col_ptr_b[v] .. col_ptr_b[v + 1] (a hop's edges target the nodes
//                                new at the hop before, in order, so col ascends in each batch);
//                                empty when layer-wise, whose hops each target every node so far
//
// Hop-wise on a GPU, the op also remembers (checked_once.h) what its blocks are known to satisfy,
// for the runs SampledSubgraph.blocks cuts: block i of batch b (edges of hops 1 .. L - i) has
// valid offsets col_ptr_b[0 .. dst_i] for its e_i edges and sources row_b[0 .. e_i) below its
// src_i nodes, so aggregating over a fresh block reads nothing back to check it.
#pragma once

#include "sampling/sample_neighbors.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace fastgl::sampling {

using HopsResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor,
                              at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

// HopsResult's entries by name.
enum HopsOutput : size_t {
  kOutNodes,
  kOutNodeCounts,
  kOutRow,
  kOutCol,
  kOutEdgeIds,
  kOutEdgeCounts,
  kOutSeedLocal,
  kOutInDegrees,
  kOutTree,
  kOutColPtr
};

// Per-hop Philox key: the golden-ratio increment of splitmix64 (tests/reference.py derives the
// same keys in Python).
constexpr uint64_t kHopKeyStep = 0x9E3779B97F4A7C15ULL;
C10_HOST_DEVICE inline uint64_t hop_key(uint64_t key, int64_t hop) {
  return key + static_cast<uint64_t>(hop + 1) * kHopKeyStep;
}

// Pair p of batch b draws from Philox stream (b << kBatchStreamShift) | p.
constexpr int kBatchStreamShift = 40;
C10_HOST_DEVICE inline uint64_t pair_stream(int64_t batch, int64_t pair) {
  return (static_cast<uint64_t>(batch) << kBatchStreamShift) | static_cast<uint64_t>(pair);
}

struct HopsConfig {
  std::vector<int64_t> fanouts;
  bool replace;
  bool layerwise;
  bool disjoint;
  uint64_t key;

  DrawConfig hop(int64_t h) const { return DrawConfig{fanouts[h], replace, hop_key(key, h)}; }
};

constexpr const char* kHopsOp = "sample_hops";

inline void check_sample_hops_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                     const c10::optional<at::Tensor>& weight,
                                     const c10::optional<at::Tensor>& eid, const at::Tensor& seeds,
                                     const at::Tensor& seed_ptr, const HopsConfig& cfg) {
  constexpr const char* op = kHopsOp;
  check_csc_inputs(op, indptr, indices, weight);
  check_edge_ids(op, eid, indices, indptr);
  check_index_vector(op, "seeds", seeds);
  check_same_device(op, "seeds", seeds, "indptr", indptr);
  check_dim(op, "seed_ptr", seed_ptr, 1);
  check_dtype(op, "seed_ptr", seed_ptr, at::kLong);
  // Read on the host by both backends: a CPU seed_ptr spares a CUDA call that read.
  if (!seed_ptr.device().is_cpu()) check_same_device(op, "seed_ptr", seed_ptr, "indptr", indptr);
  FASTGL_CHECK(seed_ptr.numel() >= 1, op, "seed_ptr must have num_batches + 1 >= 1 entries");
  FASTGL_CHECK(seed_ptr.numel() - 1 < (int64_t{1} << (63 - kBatchStreamShift)), op,
               "too many batches in one call: ", seed_ptr.numel() - 1);
  for (int64_t fanout : cfg.fanouts) check_fanout(op, fanout);
  // The seeds' values are the backends' to check: the CPU kernel scans them up front, the device
  // engine (hop_engine.h) as it inserts them, with no read-back.
}

// seed_ptr (read on the host) must run from 0 to len(seeds) without decreasing; in disjoint
// mode the node keys tree * num_nodes + node of the largest batch must fit in int64.
inline void check_seed_offsets(const int64_t* seed_ptr, int64_t num_batches, int64_t num_seeds,
                               int64_t num_nodes, bool disjoint) {
  constexpr const char* op = kHopsOp;
  FASTGL_CHECK(seed_ptr[0] == 0 && seed_ptr[num_batches] == num_seeds, op,
               "seed_ptr must run from 0 to len(seeds) = ", num_seeds, ", got ", seed_ptr[0],
               " to ", seed_ptr[num_batches]);
  for (int64_t b = 0; b < num_batches; ++b) {
    const int64_t size = seed_ptr[b + 1] - seed_ptr[b];
    FASTGL_CHECK(size >= 0, op, "seed_ptr must never decrease, but entry ", b + 1, " is ",
                 seed_ptr[b + 1], " < ", seed_ptr[b]);
    FASTGL_CHECK(!disjoint || num_nodes == 0 || size <= INT64_MAX / num_nodes, op,
                 "disjoint sampling of ", size, " seeds on ", num_nodes,
                 " nodes overflows int64 node keys");
  }
}

// A heterogeneous call's node types and relations (hetero_hops.h), on the host; empty for
// sample_hops. Relation r draws fanouts[h * R + r] in-edges at hop h for each transit of node
// type dst[r], from CSC row row_base[r] + global id, into node type src[r].
struct Relations {
  std::vector<int64_t> type_start;  // [T + 1] type t's global ids: type_start[t] .. [t + 1] - 1
  std::vector<int64_t> src, dst, row_base;  // [R]
  std::vector<int64_t> fanouts;             // [L * R]
  // Temporal calls: which relations have times (1/0 per relation; empty without times), and
  // whether a timed pair takes the latest `fanout` valid slots instead of drawing.
  std::vector<int64_t> timed;
  bool latest = false;

  bool present() const { return !type_start.empty(); }
  int64_t count() const { return static_cast<int64_t>(src.size()); }
  int64_t fanout(int64_t hop, int64_t r) const { return fanouts[hop * count() + r]; }
};

// The op's arguments after the shared checks: contiguous, seeds as int64, optional tensors
// undefined when absent, and seed_ptr also read to the host (both backends need it there) and
// checked. Both backends start here.
struct HopsInputs {
  HopsConfig cfg;
  at::Tensor indptr, indices, weight, eid, seeds, seed_ptr;
  std::vector<int64_t> seed_offsets;  // seed_ptr on the host
  Relations relations = {};
  const char* op = kHopsOp;  // the name errors carry
  // Temporal calls: int64 time keys of every slot (each row ascending) and of every tree.
  at::Tensor slot_time = {}, tree_time = {};
};

// HopsInputs from checked arguments: contiguous, seeds as int64, absent tensors undefined.
inline HopsInputs hops_inputs(HopsConfig cfg, const at::Tensor& indptr, const at::Tensor& indices,
                              const c10::optional<at::Tensor>& weight,
                              const c10::optional<at::Tensor>& eid, const at::Tensor& seeds,
                              const at::Tensor& seed_ptr, std::vector<int64_t> seed_offsets) {
  return {std::move(cfg),
          indptr.contiguous(),
          indices.contiguous(),
          contiguous_or_undefined(weight),
          contiguous_or_undefined(eid),
          seeds.to(at::kLong).contiguous(),
          seed_ptr.contiguous(),
          std::move(seed_offsets)};
}

inline HopsInputs prepare_sample_hops(const at::Tensor& indptr, const at::Tensor& indices,
                                      const c10::optional<at::Tensor>& weight,
                                      const c10::optional<at::Tensor>& eid, const at::Tensor& seeds,
                                      const at::Tensor& seed_ptr, at::IntArrayRef fanouts,
                                      bool replace, bool layerwise, bool disjoint, int64_t seed) {
  HopsConfig cfg{fanouts.vec(), replace, layerwise, disjoint, static_cast<uint64_t>(seed)};
  check_sample_hops_inputs(indptr, indices, weight, eid, seeds, seed_ptr, cfg);
  const at::Tensor host_offsets = seed_ptr.to(at::kCPU).contiguous();
  std::vector<int64_t> seed_offsets(host_offsets.data_ptr<int64_t>(),
                                    host_offsets.data_ptr<int64_t>() + host_offsets.numel());
  check_seed_offsets(seed_offsets.data(), seed_ptr.numel() - 1, seeds.numel(), indptr.numel() - 1,
                     disjoint);
  return hops_inputs(std::move(cfg), indptr, indices, weight, eid, seeds, seed_ptr,
                     std::move(seed_offsets));
}

// The graph's arrays as both backends' kernels read them (the device engine's stages on the
// host and the device alike).
template <typename index_t, typename weight_t>
struct Csc {
  const int64_t* col_start;
  const index_t* source;
  const weight_t* weight;  // null when unweighted
  const int64_t* eid;      // null: an edge's id is its slot
  int64_t num_nodes, num_edges;

  // The weights of the in-edges from CSC slot `start` on (null when unweighted).
  C10_HOST_DEVICE const weight_t* weight_from(int64_t start) const {
    return weight ? weight + start : nullptr;
  }
};

template <typename index_t, typename weight_t>
Csc<index_t, weight_t> csc_of(const HopsInputs& in) {
  return {in.indptr.data_ptr<int64_t>(),
          in.indices.data_ptr<index_t>(),
          in.weight.defined() ? in.weight.data_ptr<weight_t>() : nullptr,
          in.eid.defined() ? in.eid.data_ptr<int64_t>() : nullptr,
          in.indptr.numel() - 1,
          in.indices.numel()};
}

// Records what the hop-wise blocks of every batch satisfy (see the top of this file), from the
// counts, which are on the host: per batch, block i's destinations are the nodes of hops
// 0 .. L - i - 1, its sources add hop L - i's, its edges are those of hops 1 .. L - i.
inline void remember_sampled_blocks(const HopsResult& result) {
  const at::Tensor& node_counts = std::get<kOutNodeCounts>(result);
  const at::Tensor& edge_counts = std::get<kOutEdgeCounts>(result);
  const int64_t num_batches = node_counts.size(0), num_hops = edge_counts.size(1);
  const int64_t* nodes = node_counts.data_ptr<int64_t>();
  const int64_t* edges = edge_counts.data_ptr<int64_t>();
  int64_t ptr_begin = 0, edge_begin = 0;
  for (int64_t b = 0; b < num_batches; ++b) {
    int64_t dst = nodes[b * (num_hops + 1)], src = dst, block_edges = 0;
    for (int64_t h = 0; h < num_hops; ++h) {  // the block of hops 1 .. h + 1
      src += nodes[b * (num_hops + 1) + h + 1];
      block_edges += edges[b * num_hops + h];
      remember_valid_offsets({std::get<kOutColPtr>(result), ptr_begin, dst + 1}, block_edges);
      if (block_edges > 0) {
        remember_id_range({std::get<kOutRow>(result), edge_begin, block_edges}, src - 1);
      }
      dst = src;
    }
    ptr_begin += src + 1;
    edge_begin += block_edges;
  }
}

// The op's entry point, shared by the backends: the checked, contiguous inputs on their device
// go to `Backend::run(HopsInputs)`.
template <typename Backend>
HopsResult sample_hops_entry(const at::Tensor& indptr, const at::Tensor& indices,
                             const c10::optional<at::Tensor>& weight,
                             const c10::optional<at::Tensor>& eid, const at::Tensor& seeds,
                             const at::Tensor& seed_ptr, at::IntArrayRef fanouts, bool replace,
                             bool layerwise, bool disjoint, int64_t seed) {
  // The guard after the checks: an undefined indptr (None from Python) has no device to guard.
  HopsInputs inputs = prepare_sample_hops(indptr, indices, weight, eid, seeds, seed_ptr, fanouts,
                                          replace, layerwise, disjoint, seed);
  const c10::DeviceGuard device_guard(indptr.device());
  HopsResult result = Backend::run(inputs);
  if (!layerwise && indptr.is_cuda()) remember_sampled_blocks(result);
  return result;
}

inline void check_frontier_size(int64_t num_pairs) {
  FASTGL_CHECK(num_pairs < (int64_t{1} << kBatchStreamShift), kHopsOp, "a batch's hop has ",
               num_pairs, " transits, more than the 2^40 the random streams number");
}

}  // namespace fastgl::sampling
