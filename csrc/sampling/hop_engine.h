// The device sampling engine of sample_hops: every hop of a window of batches as a fixed run of
// stages (hop_stages.h) with no host read between them, and one synchronization at the end of
// the call, which brings back the counts and the fault word together.
//
// Per hop: count the draws, scan them, draw + gather + insert (one pass, a group of lanes per
// pair), flag first occurrences, scan the flags, one thread of bookkeeping, assign local ids
// (which also writes the hop's new nodes, the next frontier, with their in-degrees). Every buffer
// is sized for the worst case the host can bound (frontier x fanout) before the hop starts; only a
// hop whose worst case is unbounded (fanout -1) or over the memory budget waits once for its exact
// size.
//
// `Exec` runs the stages: the CUDA backend launches kernels (cuda/sample_hops.cu), the host
// harness runs the same stages over the same index ranges on CPU threads
// (cpu/sample_hops_staged.cpp), so CI checks this engine, stage order and index ranges
// included, against the CPU reference without a GPU. Exec provides
//   for_each(n, stage)  stage(i) for every i < n, in parallel
//   for_each_group(n, width, stage)  stage(i, lanes) for every i < n, each task shared by a
//                       group of `width` lanes (common/lanes.h), in parallel
//   single(stage)       stage(0) once, after everything before it
//   exclusive_scan(in, out, n)  out[0] = 0, out[i + 1] = in[0] + ... + in[i]
//   upload(host) / read(device)  copies; read waits for the work before it
//   options()           int64 options of the engine's device
#pragma once

#include "sampling/hop_stages.h"
#include "sampling/sample_hops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace fastgl::sampling::hops {

constexpr int64_t kUnbounded = -1;

C10_HOST_DEVICE inline int64_t saturating_mul(int64_t a, int64_t b) {
  return a != 0 && b > INT64_MAX / a ? INT64_MAX : a * b;
}
inline int64_t saturating_add(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

// Bytes of device memory a level's buffers take per slot, for the memory budget: an edge has a
// slot/local id, col, edge id, flag and rank; a node key, batch, local id, in-degree and, at
// load 1/2, two table slots of key, first position and local id.
constexpr int64_t kBytesPerEdge = 5 * sizeof(int64_t);
constexpr int64_t kBytesPerNode = 4 * sizeof(int64_t) + 2 * 3 * sizeof(int64_t);

// The per-call counters on the device, in one tensor: uploaded once (with seed_ptr), and the
// prefix [fault, node counts, edge counts] read back once.
class Ledger {
 public:
  Ledger(int64_t num_batches, int64_t num_hops) : b_(num_batches), l_(num_hops) {
    const int64_t levels = l_ + 1;
    size_ = 0;
    fault_ = take(1);
    node_counts_ = take(b_ * levels);
    edge_counts_ = take(b_ * l_);
    node_total_ = take(b_);
    seed_ptr_ = take(b_ + 1);
    new_off_ = take(levels * (b_ + 1));
    local_base_ = take(levels * b_);
    item_off_ = take(l_ * (b_ + 1));
    layer_off_ = take(l_ * (b_ + 1));
    node_start_ = take(b_);
    edge_start_ = take(b_ * l_);
  }

  // The initial contents: no fault, zero counts, the seed offsets.
  at::Tensor initial(const std::vector<int64_t>& seed_offsets) const {
    at::Tensor host = at::zeros({size_}, at::kLong);
    int64_t* data = host.data_ptr<int64_t>();
    data[fault_] = kNoFault;
    std::copy(seed_offsets.begin(), seed_offsets.end(), data + seed_ptr_);
    return host;
  }
  int64_t readback_size() const { return node_total_; }  // fault, node and edge counts

  void bind(int64_t* device) { base_ = device; }
  int64_t* fault() const { return base_ + fault_; }
  int64_t* node_counts() const { return base_ + node_counts_; }
  int64_t* edge_counts() const { return base_ + edge_counts_; }
  int64_t* node_total() const { return base_ + node_total_; }
  int64_t* seed_ptr() const { return base_ + seed_ptr_; }
  int64_t* new_off(int64_t level) const { return base_ + new_off_ + level * (b_ + 1); }
  int64_t* local_base(int64_t level) const { return base_ + local_base_ + level * b_; }
  int64_t* item_off(int64_t hop) const { return base_ + item_off_ + (hop - 1) * (b_ + 1); }
  int64_t* layer_off(int64_t hop) const { return base_ + layer_off_ + (hop - 1) * (b_ + 1); }
  int64_t* node_start() const { return base_ + node_start_; }
  int64_t* edge_start() const { return base_ + edge_start_; }
  // Offset (in entries) of a pointer into the ledger, for reading one entry back.
  int64_t index_of(const int64_t* p) const { return p - base_; }

  LevelBook book(int64_t level) const {
    return {level == 0 ? seed_ptr() : item_off(level), new_off(level), local_base(level)};
  }

 private:
  int64_t take(int64_t n) {
    const int64_t at = size_;
    size_ += n;
    return at;
  }
  int64_t b_, l_, size_;
  int64_t fault_, node_counts_, edge_counts_, node_total_, seed_ptr_, new_off_, local_base_,
      item_off_, layer_off_, node_start_, edge_start_;
  int64_t* base_ = nullptr;
};

// A node list's four arrays in one tensor.
struct NodeStorage {
  at::Tensor data;
  int64_t capacity;

  NodeStorage(int64_t capacity_, const at::TensorOptions& options)
      : data(at::empty({4 * capacity_}, options)), capacity(capacity_) {}
  NodeList list() const {
    int64_t* p = data.data_ptr<int64_t>();
    return {p, p + capacity, p + 2 * capacity, p + 3 * capacity};
  }
};

// A hop's edge buffers, and the scan of its draw counts (where each transit's edges start).
struct HopEdges {
  at::Tensor slots, col, edge_id;  // slots hold the local ids once numbered
  at::Tensor pair_ptr;  // the pairs' edge offsets, kept for the blocks' CSC offsets (hop-wise)
};

template <typename index_t, typename weight_t, typename Exec>
class HopEngine {
 public:
  HopEngine(const HopsInputs& in, Exec& exec, int64_t budget_bytes)
      : in_(in),
        cfg_(in.cfg),
        exec_(exec),
        options_(exec.options()),
        budget_(budget_bytes),
        num_batches_(in.seed_ptr.numel() - 1),
        num_hops_(static_cast<int64_t>(in.cfg.fanouts.size())),
        num_seeds_(in.seeds.numel()),
        g_(csc_of<index_t, weight_t>(in)),
        ledger_(num_batches_, num_hops_) {
    int64_t largest = 0;
    for (int64_t b = 0; b < num_batches_; ++b) {
      largest = std::max(largest, in.seed_offsets[b + 1] - in.seed_offsets[b]);
    }
    key_range_ = std::max<int64_t>(1, cfg_.disjoint ? largest * g_.num_nodes : g_.num_nodes);
    FASTGL_CHECK(num_batches_ <= INT64_MAX / key_range_, kHopsOp, num_batches_,
                 " batches of node keys below ", key_range_,
                 " overflow the device table's int64 keys; sample fewer batches per call");
    // Distinct (batch, key) pairs the call can produce: a batch has at most N nodes, a tree too.
    key_space_ = saturating_mul(cfg_.disjoint ? num_seeds_ : num_batches_, g_.num_nodes);
  }

  HopsResult run() {
    ledger_tensor_ = exec_.upload(ledger_.initial(in_.seed_offsets));
    ledger_.bind(ledger_tensor_.data_ptr<int64_t>());
    allocate_table(planned_keys());
    sample_seeds();
    for (int64_t h = 1; h <= num_hops_; ++h) sample_hop(h);
    exec_.single(PlaceBatches{num_batches_, num_hops_, ledger_.node_total(), ledger_.edge_counts(),
                              ledger_.node_start(), ledger_.edge_start()});
    const at::Tensor counts = exec_.read(ledger_tensor_.narrow(0, 0, ledger_.readback_size()));
    raise_fault(counts.data_ptr<int64_t>()[0]);
    return write_outputs(counts);
  }

 private:
  // ---- sizes -------------------------------------------------------------------------------

  int64_t per_pair_bound(int64_t h) const {
    const int64_t fanout = cfg_.fanouts[h - 1];
    if (fanout < 0) return kUnbounded;
    return cfg_.replace ? fanout : std::min(fanout, g_.num_edges);
  }

  // Lanes per pair to draw: a weighted row is drawn by a warp without replacement (its keys a
  // round at a time); otherwise a lane per draw (a weighted draw with replacement
  // is lane 0's scan, but each lane inserts its own draws).
  int draw_lanes(int64_t h) const {
    return g_.weight && !cfg_.replace ? kWarpLanes : lanes_for(per_pair_bound(h));
  }

  // Device memory of a hop whose edge buffers hold `edges` (and its level buffer the new nodes).
  int64_t level_bytes(int64_t edges) const {
    return saturating_add(saturating_mul(edges, kBytesPerEdge),
                          saturating_mul(std::min(edges, key_space_), kBytesPerNode));
  }

  // Keys of the levels whose worst case is known before the call (up to the first hop that must
  // wait for its size): the table's first capacity.
  int64_t planned_keys() const {
    int64_t keys = num_seeds_, frontier = num_seeds_, window = num_seeds_, bytes = 0;
    for (int64_t h = 1; h <= num_hops_; ++h) {
      const int64_t pairs = cfg_.layerwise ? window : frontier;
      const int64_t per_pair = per_pair_bound(h);
      if (per_pair == kUnbounded) break;
      const int64_t edges = saturating_mul(pairs, per_pair);
      const int64_t nodes = std::min(edges, key_space_);
      bytes = saturating_add(bytes, level_bytes(edges));
      if (bytes > budget_) break;
      keys = std::min(saturating_add(keys, nodes), key_space_);
      frontier = nodes;
      window = saturating_add(window, nodes);
    }
    return keys;
  }

  void allocate_table(int64_t keys) {
    FASTGL_CHECK(keys <= INT64_MAX / 4, kHopsOp, "a table for ", keys, " nodes overflows int64");
    const int64_t capacity = idmap::table_capacity(keys);
    check_output_fits(kHopsOp, "the node table", capacity, 3 * sizeof(int64_t),
                      in_.indptr.device());
    table_keys_ = at::full({capacity}, idmap::kEmptyKey, options_);
    table_first_ = at::full({capacity}, idmap::kNoPosition, options_);
    local_of_ = at::empty({capacity}, options_);
    table_allowance_ = capacity / 2;
  }

  CallView call() const {
    return {{table_keys_.data_ptr<int64_t>(), table_first_.data_ptr<int64_t>(),
             static_cast<uint64_t>(table_keys_.numel() - 1)},
            local_of_.data_ptr<int64_t>(),
            ledger_.fault(),
            key_range_,
            g_.num_nodes,
            cfg_.disjoint};
  }

  // Before a level can bring `more` new keys: a table too small for them is replaced by a larger
  // one holding the nodes numbered so far (only after a hop that waited for its size).
  void make_room_for(int64_t more) {
    const int64_t needed = std::min(saturating_add(keys_bound_, more), key_space_);
    if (needed > table_allowance_) {
      allocate_table(needed);
      for (size_t l = 0; l < levels_.size(); ++l) {
        exec_.for_each(levels_[l].capacity,
                       Reinsert{call(), levels_[l].list(), ledger_.new_off(l) + num_batches_});
      }
    }
    keys_bound_ = needed;
  }

  // ---- levels ------------------------------------------------------------------------------

  void sample_seeds() {
    make_room_for(num_seeds_);
    seed_slots_ = at::empty({num_seeds_}, options_);
    exec_.for_each(num_seeds_, InsertSeeds<index_t, weight_t>{
                                   call(), g_, in_.seeds.data_ptr<int64_t>(), ledger_.seed_ptr(),
                                   num_batches_, num_seeds_, seed_slots_.data_ptr<int64_t>()});
    number_level(0, /*base=*/0, seed_slots_, ledger_.seed_ptr() + num_batches_, num_seeds_, nullptr,
                 nullptr);
    next_base_ = num_seeds_;  // the seeds hold positions 0 .. S - 1
  }

  // Flag, scan, book and assign the items of a level (seeds or a hop's edges): afterwards
  // `slots` holds their local ids and levels_[level] the level's new nodes.
  void number_level(int64_t level, int64_t base, const at::Tensor& slots, const int64_t* num_items,
                    int64_t capacity, const int64_t* pair_ptr, const int64_t* frontier_off) {
    at::Tensor flags = at::empty({capacity}, options_);
    at::Tensor rank = at::empty({capacity + 1}, options_);
    int64_t* slot_of = slots.data_ptr<int64_t>();
    exec_.for_each(capacity, FlagFirstOccurrences{call().table, slot_of, num_items, base,
                                                  flags.data_ptr<int64_t>()});
    exec_.exclusive_scan(flags.data_ptr<int64_t>(), rank.data_ptr<int64_t>(), capacity);
    const bool next_is_layer = cfg_.layerwise && level >= 1 && level < num_hops_;
    exec_.single(BookLevel{ledger_.book(level), num_batches_, level, num_hops_ + 1,
                           rank.data_ptr<int64_t>(), pair_ptr, frontier_off,
                           level == 0 ? nullptr : ledger_.item_off(level), ledger_.node_total(),
                           ledger_.node_counts(), ledger_.edge_counts(),
                           next_is_layer ? ledger_.layer_off(level + 1) : nullptr});
    levels_.emplace_back(std::min(capacity, key_space_), options_);
    exec_.for_each(capacity, AssignLocalIds<index_t, weight_t>{
                                 call(), g_, ledger_.book(level), num_batches_, level, base,
                                 rank.data_ptr<int64_t>(), slot_of, levels_.back().list()});
  }

  // The nodes hop h draws from: the last level's new nodes, or (layer-wise) every node so far.
  Frontier frontier_of(int64_t h, int64_t& capacity) {
    const NodeStorage& last = levels_[h - 1];
    if (!cfg_.layerwise || h == 1) {
      capacity = last.capacity;
      return {last.list(), ledger_.new_off(h - 1)};
    }
    const bool first_window = h == 2;
    const NodeList old_list = first_window ? levels_[0].list() : window_->list();
    const int64_t old_capacity = first_window ? levels_[0].capacity : window_->capacity;
    const int64_t* old_count =
        first_window ? ledger_.new_off(0) + num_batches_ : ledger_.layer_off(h - 1) + num_batches_;
    NodeStorage merged(saturating_add(old_capacity, last.capacity), options_);
    const int64_t* off = ledger_.layer_off(h);
    exec_.for_each(merged.capacity,
                   MergeWindow{old_list, last.list(), merged.list(), old_count,
                               ledger_.new_off(h - 1) + num_batches_, old_capacity, off});
    // The last window is no longer needed: its memory goes back to the allocator, which reuses
    // it only after the merge (stream order).
    window_.emplace(std::move(merged));
    capacity = window_->capacity;
    return {window_->list(), off};
  }

  void sample_hop(int64_t h) {
    const DrawConfig draw = cfg_.hop(h - 1);
    int64_t pairs = 0;
    const Frontier frontier = frontier_of(h, pairs);
    at::Tensor counts = at::empty({pairs}, options_);
    at::Tensor ptr = at::empty({pairs + 1}, options_);
    exec_.for_each_group(pairs, count_lanes(g_.weight != nullptr),
                         CountDraws<index_t, weight_t>{call(), g_, frontier, num_batches_, h, draw,
                                                       counts.data_ptr<int64_t>()});
    exec_.exclusive_scan(counts.data_ptr<int64_t>(), ptr.data_ptr<int64_t>(), pairs);
    const int64_t edges = edge_capacity(h, pairs, frontier, ptr);

    make_room_for(std::min(edges, key_space_));
    at::Tensor slots = at::empty({edges}, options_), col = at::empty({edges}, options_);
    at::Tensor edge_id = at::empty({edges}, options_);
    const int64_t base = next_base_;
    next_base_ = saturating_add(next_base_, edges);
    exec_.for_each_group(
        pairs, draw_lanes(h),
        DrawAndInsert<index_t, weight_t>{call(), g_, frontier, num_batches_, h, base, draw,
                                         ptr.data_ptr<int64_t>(), slots.data_ptr<int64_t>(),
                                         col.data_ptr<int64_t>(), edge_id.data_ptr<int64_t>()});
    number_level(h, base, slots, ptr.data_ptr<int64_t>() + pairs, edges, ptr.data_ptr<int64_t>(),
                 frontier.off);
    // The pairs' edge offsets stay for the blocks' CSC offsets, which layer-wise blocks lack.
    const at::Tensor pair_ptr = cfg_.layerwise ? at::Tensor() : ptr;
    hop_edges_.push_back({slots, col, edge_id, pair_ptr});
    planned_bytes_ = saturating_add(planned_bytes_, level_bytes(edges));
    if (pair_ptr.defined()) {
      planned_bytes_ =
          saturating_add(planned_bytes_, saturating_mul(pairs + 1, int64_t{sizeof(int64_t)}));
    }
  }

  // The hop's edge buffers' size: frontier x fanout when that is bounded and within the budget,
  // else the exact count, read back (the one wait such a hop costs).
  int64_t edge_capacity(int64_t h, int64_t pairs, const Frontier& frontier, const at::Tensor& ptr) {
    const int64_t per_pair = per_pair_bound(h);
    if (per_pair != kUnbounded) {
      const int64_t worst = saturating_mul(pairs, per_pair);
      if (saturating_add(planned_bytes_, level_bytes(worst)) <= budget_) return worst;
    }
    const at::Tensor sizes = exec_.read(
        at::cat({ledger_tensor_.narrow(0, ledger_.index_of(frontier.off + num_batches_), 1),
                 ptr.narrow(0, pairs, 1), ledger_tensor_.narrow(0, 0, 1)}));
    const int64_t* size = sizes.data_ptr<int64_t>();
    raise_fault(size[2]);  // a bad row makes the counts meaningless
    check_frontier_size(size[0]);
    check_draws_fit(kHopsOp, size[0], cfg_.fanouts[h - 1], cfg_.replace, g_.num_edges);
    check_output_fits(kHopsOp, "the sampled edges", size[1], kBytesPerEdge, in_.indptr.device());
    return size[1];
  }

  // ---- the end of the call -----------------------------------------------------------------

  void raise_fault(int64_t code) const {
    if (code == kNoFault) return;
    const int64_t id = fault_id(code), n = g_.num_nodes;
    switch (fault_kind(code)) {
      case kBadSeed:
        // The CPU kernel's check and message (the smallest seed if one is negative, else the
        // largest): this is the error path, where its read-back costs nothing.
        check_ids_in_range(kHopsOp, "seeds", in_.seeds, n);
        FASTGL_CHECK(false, kHopsOp, "internal error: a seed fault with every seed in range");
      case kBadIndptr:
        FASTGL_CHECK(id == kOffsetEndsId, kHopsOp, kBadIndptrError, " (node ", id, ")");
        FASTGL_CHECK(false, kHopsOp, kBadIndptrError);
      case kBadWeight:
        FASTGL_CHECK(false, kHopsOp, kBadWeightError, " (node ", id, ")");
      case kBadSource:
        FASTGL_CHECK(id == kFaultIdMask, kHopsOp, "indices id ", read_one(in_.indices, id),
                     " out of range for a graph of ", n, " nodes");
        FASTGL_CHECK(false, kHopsOp, "internal error: the node table filled up");
    }
  }

  int64_t read_one(const at::Tensor& t, int64_t i) const {
    return exec_.read(t.narrow(0, i, 1).to(at::kLong)).template data_ptr<int64_t>()[0];
  }

  HopsResult write_outputs(const at::Tensor& counts) const {
    const int64_t b = num_batches_, l = num_hops_;
    const int64_t* c = counts.data_ptr<int64_t>();
    const at::Tensor node_counts = counts.narrow(0, 1, b * (l + 1)).view({b, l + 1}).clone();
    const at::Tensor edge_counts = counts.narrow(0, 1 + b * (l + 1), b * l).view({b, l}).clone();
    int64_t total_nodes = 0, total_edges = 0;
    for (int64_t i = 0; i < b * (l + 1); ++i) total_nodes += c[1 + i];
    for (int64_t i = 0; i < b * l; ++i) total_edges += c[1 + b * (l + 1) + i];

    at::Tensor nodes = at::empty({total_nodes}, options_);
    at::Tensor degrees = at::empty({total_nodes}, options_);
    at::Tensor tree = at::empty({cfg_.disjoint ? total_nodes : 0}, options_);
    at::Tensor col_ptr = at::empty({cfg_.layerwise ? 0 : total_nodes + b}, options_);
    for (size_t level = 0; level < levels_.size(); ++level) {
      exec_.for_each(levels_[level].capacity,
                     WriteNodes{levels_[level].list(), ledger_.new_off(level) + b,
                                ledger_.node_start(), g_.num_nodes, cfg_.disjoint,
                                nodes.data_ptr<int64_t>(), degrees.data_ptr<int64_t>(),
                                tree.data_ptr<int64_t>(), in_edge_offsets(level, col_ptr)});
    }
    if (!cfg_.layerwise) {
      exec_.for_each(b, CloseInEdgeOffsets{ledger_.node_start(), ledger_.node_total(),
                                           ledger_.edge_counts(), l, col_ptr.data_ptr<int64_t>()});
    }
    at::Tensor row = at::empty({total_edges}, options_), col = at::empty({total_edges}, options_);
    at::Tensor edge_ids = at::empty({total_edges}, options_);
    for (int64_t h = 1; h <= l; ++h) {
      const HopEdges& hop = hop_edges_[h - 1];
      exec_.for_each(hop.slots.numel(),
                     WriteEdges{ledger_.item_off(h), b, l, h - 1, ledger_.edge_start(),
                                hop.slots.data_ptr<int64_t>(), hop.col.data_ptr<int64_t>(),
                                hop.edge_id.data_ptr<int64_t>(), row.data_ptr<int64_t>(),
                                col.data_ptr<int64_t>(), edge_ids.data_ptr<int64_t>()});
    }
    return {nodes,       node_counts, row,     col,  edge_ids,
            edge_counts, seed_slots_, degrees, tree, col_ptr};
  }

  // How the nodes of `level` find their in-edge offsets (hop-wise only).
  InEdgeOffsets in_edge_offsets(size_t level, const at::Tensor& col_ptr) const {
    if (cfg_.layerwise) return {};
    const int64_t l = num_hops_, next = static_cast<int64_t>(level) + 1;
    const bool last = next > l;
    return {col_ptr.data_ptr<int64_t>(),
            last ? nullptr : hop_edges_[level].pair_ptr.data_ptr<int64_t>(),
            last ? nullptr : ledger_.item_off(next),
            ledger_.edge_start(),
            ledger_.edge_counts(),
            l,
            static_cast<int64_t>(level)};
  }

  const HopsInputs& in_;
  const HopsConfig& cfg_;
  Exec& exec_;
  at::TensorOptions options_;
  int64_t budget_;
  int64_t num_batches_, num_hops_, num_seeds_;
  Csc<index_t, weight_t> g_;
  int64_t key_range_ = 1, key_space_ = 0;
  Ledger ledger_;
  at::Tensor ledger_tensor_, table_keys_, table_first_, local_of_, seed_slots_;
  int64_t table_allowance_ = 0, keys_bound_ = 0;
  int64_t next_base_ = 0, planned_bytes_ = 0;
  std::vector<NodeStorage> levels_;
  std::optional<NodeStorage> window_;  // layer-wise: every node so far
  std::vector<HopEdges> hop_edges_;
};

// sample_hops on the engine: the op's empty cases as the CPU kernel returns them, else one
// HopEngine run. `budget_bytes` caps the worst-case buffers (see HopEngine::edge_capacity).
template <typename Exec>
HopsResult run_hop_engine(const HopsInputs& in, Exec& exec, int64_t budget_bytes) {
  const int64_t num_batches = in.seed_ptr.numel() - 1;
  const int64_t num_hops = static_cast<int64_t>(in.cfg.fanouts.size());
  if (in.seeds.numel() == 0) {
    const at::Tensor none = at::empty({0}, exec.options());
    // Hop-wise, each (empty) batch's offsets are the one entry 0.
    const at::Tensor col_ptr = at::zeros({in.cfg.layerwise ? 0 : num_batches}, exec.options());
    return {none, at::zeros({num_batches, num_hops + 1}, at::kLong),
            none, none,
            none, at::zeros({num_batches, num_hops}, at::kLong),
            none, none,
            none, col_ptr};
  }
  return dispatch_csc_types(in.indices, in.weight, [&](auto index_tag, auto weight_ptr) {
    using index_t = decltype(index_tag);
    using weight_t = std::remove_const_t<std::remove_pointer_t<decltype(weight_ptr)>>;
    return HopEngine<index_t, weight_t, Exec>(in, exec, budget_bytes).run();
  });
}

}  // namespace fastgl::sampling::hops
