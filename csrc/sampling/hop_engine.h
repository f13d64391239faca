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
// A relational call (heterogeneous sampling, hetero_hops.h) runs the same stages with the node
// types as its batches and a hop's pairs in blocks, one per relation that draws (PairBlocks):
// host-side sizes are planned per group of batches (all of them, or each node type).
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

// The engine's worst-case buffers may take this share of the device's memory unless a caller
// gives a budget (`requested` >= 0); a hop past it waits for its exact size instead.
constexpr int64_t kBudgetShare = 16;
inline int64_t engine_budget(int64_t requested, const at::Device& device) {
  return requested >= 0 ? requested : device_memory_bytes(device) / kBudgetShare;
}

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

// The per-call counters on the device, in one tensor: uploaded once (with seed_ptr and, for a
// relational call, the node types' id ranges), and the prefix [fault, node counts, edge counts,
// relation edge counts, relation offsets' length] read back once.
class Ledger {
 public:
  Ledger(int64_t num_batches, int64_t num_hops, int64_t num_relations, int64_t type_entries)
      : b_(num_batches), l_(num_hops) {
    const int64_t levels = l_ + 1;
    size_ = 0;
    fault_ = take(1);
    node_counts_ = take(b_ * levels);
    edge_counts_ = take(b_ * l_);
    relation_edges_ = take(num_relations * l_);
    ptr_total_ = take(1);
    node_total_ = take(b_);
    seed_ptr_ = take(b_ + 1);
    type_start_ = take(type_entries);
    new_off_ = take(levels * (b_ + 1));
    local_base_ = take(levels * b_);
    item_off_ = take(l_ * (b_ + 1));
    layer_off_ = take(l_ * (b_ + 1));
    node_start_ = take(b_);
    edge_start_ = take(b_ * l_);
  }

  // The initial contents: no fault, zero counts, the seed offsets and the type ranges.
  at::Tensor initial(const std::vector<int64_t>& seed_offsets,
                     const std::vector<int64_t>& type_start) const {
    at::Tensor host = at::zeros({size_}, at::kLong);
    int64_t* data = host.data_ptr<int64_t>();
    data[fault_] = kNoFault;
    std::copy(seed_offsets.begin(), seed_offsets.end(), data + seed_ptr_);
    std::copy(type_start.begin(), type_start.end(), data + type_start_);
    return host;
  }
  int64_t readback_size() const { return node_total_; }
  // Where the read-back prefix holds each count.
  int64_t node_counts_at() const { return node_counts_; }
  int64_t edge_counts_at() const { return edge_counts_; }
  int64_t relation_edges_at() const { return relation_edges_; }
  int64_t ptr_total_at() const { return ptr_total_; }

  void bind(int64_t* device) { base_ = device; }
  int64_t* fault() const { return base_ + fault_; }
  int64_t* node_counts() const { return base_ + node_counts_; }
  int64_t* edge_counts() const { return base_ + edge_counts_; }
  int64_t* relation_edges() const { return base_ + relation_edges_; }
  int64_t* ptr_total() const { return base_ + ptr_total_; }
  int64_t* node_total() const { return base_ + node_total_; }
  int64_t* seed_ptr() const { return base_ + seed_ptr_; }
  const int64_t* type_start() const { return base_ + type_start_; }
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
  int64_t fault_, node_counts_, edge_counts_, relation_edges_, ptr_total_, node_total_, seed_ptr_,
      type_start_, new_off_, local_base_, item_off_, layer_off_, node_start_, edge_start_;
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

// One pair block of a hop, planned on the host (PairBlocks holds the device's copy).
struct HostBlock {
  int64_t src, dst, row_base, fanout, relation, pairs;
};

// The columns of a relational hop's block table (K blocks, B batches), one int64 tensor that is
// filled on the host and uploaded: PairBlocks points into its device copy.
struct BlockColumns {
  int64_t *start, *src, *dst, *row_base, *fanout, *relation, *stream_base, *ptr_base, *batch_pairs,
      *timed;

  static int64_t size(int64_t k, int64_t b) { return (k + 1) + 8 * k + (b + 1); }
  static BlockColumns at(int64_t* table, int64_t k, int64_t b) {
    BlockColumns c{};
    c.start = table;
    c.src = c.start + k + 1;
    c.dst = c.src + k;
    c.row_base = c.dst + k;
    c.fanout = c.row_base + k;
    c.relation = c.fanout + k;
    c.stream_base = c.relation + k;
    c.ptr_base = c.stream_base + k;
    c.batch_pairs = c.ptr_base + k;
    c.timed = c.batch_pairs + b + 1;
    return c;
  }
};

// A hop's pair blocks on the device: the table PairBlocks points into (relational hops only).
struct DeviceBlocks {
  at::Tensor table;
  PairBlocks view;
};

// A hop's edge buffers, and the scan of its draw counts (where each transit's edges start).
struct HopEdges {
  at::Tensor slots, col, edge_id;  // slots hold the local ids once numbered
  at::Tensor pair_ptr;  // the pairs' edge offsets, kept for the blocks' CSC offsets (hop-wise)
  DeviceBlocks blocks;
  const int64_t* frontier_off;
  int64_t pairs;
};

// Capacities per group of batches (the call's batches together, or each node type).
using GroupSizes = std::vector<int64_t>;

template <typename index_t, typename weight_t, typename Exec>
class HopEngine {
 public:
  HopEngine(const HopsInputs& in, Exec& exec, int64_t budget_bytes)
      : in_(in),
        cfg_(in.cfg),
        rel_(in.relations),
        relational_(in.relations.present()),
        exec_(exec),
        options_(exec.options()),
        // Never more than the device holds: a worst case past it waits for its exact size.
        budget_(std::min(budget_bytes, device_memory_bytes(in.indptr.device()))),
        num_batches_(in.seed_ptr.numel() - 1),
        num_hops_(static_cast<int64_t>(in.cfg.fanouts.size())),
        num_seeds_(in.seeds.numel()),
        g_(csc_of<index_t, weight_t>(in)),
        num_nodes_(relational_ ? rel_.type_start.back() : g_.num_nodes),
        ledger_(num_batches_, num_hops_, rel_.count(),
                static_cast<int64_t>(rel_.type_start.size())) {
    int64_t largest = 0;
    for (int64_t b = 0; b < num_batches_; ++b) {
      largest = std::max(largest, in.seed_offsets[b + 1] - in.seed_offsets[b]);
    }
    // A relational call numbers its trees over all seeds, a batch's over its own.
    const int64_t trees = relational_ ? num_seeds_ : largest;
    key_range_ = std::max<int64_t>(1, cfg_.disjoint ? trees * num_nodes_ : num_nodes_);
    FASTGL_CHECK(num_batches_ <= INT64_MAX / key_range_, in_.op, num_batches_,
                 " batches of node keys below ", key_range_,
                 " overflow the device table's int64 keys; sample fewer batches per call");
    for (int64_t group = 0; group < num_groups(); ++group) {
      key_space_ = saturating_add(key_space_, group_key_space(group));
    }
  }

  HopsResult run() {
    ledger_tensor_ = exec_.upload(ledger_.initial(in_.seed_offsets, rel_.type_start));
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
  // ---- sizes, planned per group of batches -------------------------------------------------

  int64_t num_groups() const { return relational_ ? num_batches_ : 1; }

  // Distinct keys a group can hold: N per batch, or per tree (disjoint); a node type's ids.
  int64_t group_key_space(int64_t group) const {
    if (!relational_) {
      return saturating_mul(cfg_.disjoint ? num_seeds_ : num_batches_, num_nodes_);
    }
    const int64_t ids = rel_.type_start[group + 1] - rel_.type_start[group];
    return saturating_mul(cfg_.disjoint ? num_seeds_ : 1, ids);
  }

  int64_t per_pair_bound(int64_t fanout) const {
    if (fanout < 0) return kUnbounded;
    return cfg_.replace ? fanout : std::min(fanout, g_.num_edges);
  }

  // Lanes per pair to draw: a weighted row is drawn by a warp without replacement (its keys a
  // round at a time); otherwise a lane per draw (a weighted draw with replacement is lane 0's
  // scan, but each lane inserts its own draws).
  int draw_lanes(const std::vector<HostBlock>& blocks) const {
    if (g_.weight && !cfg_.replace) return kWarpLanes;
    int lanes = 1;
    for (const HostBlock& block : blocks) {
      lanes = std::max(lanes, lanes_for(per_pair_bound(block.fanout)));
    }
    return lanes;
  }

  // Device memory of a hop whose edge buffers hold `edges` (and its level buffer the new nodes).
  int64_t level_bytes(int64_t edges) const {
    return saturating_add(saturating_mul(edges, kBytesPerEdge),
                          saturating_mul(std::min(edges, key_space_), kBytesPerNode));
  }

  // The groups' total: unbounded if any group is.
  static int64_t sum(const GroupSizes& sizes) {
    int64_t total = 0;
    for (int64_t size : sizes) {
      if (size == kUnbounded) return kUnbounded;
      total = saturating_add(total, size);
    }
    return total;
  }

  // The seeds' level: each group's seeds.
  GroupSizes seed_capacities() const {
    if (!relational_) return {std::min(num_seeds_, key_space_)};
    GroupSizes caps(num_batches_);
    for (int64_t b = 0; b < num_batches_; ++b) {
      caps[b] = std::min(in_.seed_offsets[b + 1] - in_.seed_offsets[b], group_key_space(b));
    }
    return caps;
  }

  // Per group, the nodes hop h's pairs can draw for: the last level's, or (layer-wise) all so far.
  GroupSizes transit_capacities(int64_t h, const std::vector<GroupSizes>& levels) const {
    if (!cfg_.layerwise) return levels[h - 1];
    GroupSizes caps(num_groups(), 0);
    for (int64_t l = 0; l < h; ++l) {
      for (int64_t group = 0; group < num_groups(); ++group) {
        caps[group] = saturating_add(caps[group], levels[l][group]);
      }
    }
    return caps;
  }

  // Hop h's pair blocks: the frontier as one block, or one per relation that draws at the hop,
  // ordered by (source type, relation) (PairBlocks).
  std::vector<HostBlock> blocks_of(int64_t h, const GroupSizes& transits) const {
    if (!relational_) return {{0, 0, 0, cfg_.fanouts[h - 1], 0, transits[0]}};
    std::vector<HostBlock> blocks;
    for (int64_t r = 0; r < rel_.count(); ++r) {
      const int64_t fanout = rel_.fanout(h - 1, r), pairs = transits[rel_.dst[r]];
      if (fanout != 0 && pairs > 0) {
        blocks.push_back({rel_.src[r], rel_.dst[r], rel_.row_base[r], fanout, r, pairs});
      }
    }
    std::stable_sort(blocks.begin(), blocks.end(),
                     [](const HostBlock& a, const HostBlock& b) { return a.src < b.src; });
    return blocks;
  }

  static int64_t pairs_of(const std::vector<HostBlock>& blocks) {
    int64_t pairs = 0;
    for (const HostBlock& block : blocks) pairs = saturating_add(pairs, block.pairs);
    return pairs;
  }

  // Per group, the most items the blocks can bring it (kUnbounded for fanout -1).
  GroupSizes worst_items(const std::vector<HostBlock>& blocks) const {
    GroupSizes items(num_groups(), 0);
    for (const HostBlock& block : blocks) {
      const int64_t bound = per_pair_bound(block.fanout);
      int64_t& group = items[block.src];
      group = bound == kUnbounded || group == kUnbounded
                  ? kUnbounded
                  : saturating_add(group, saturating_mul(block.pairs, bound));
    }
    return items;
  }

  // A level's node capacity per group, from its items (`edges` in all: each group's bound, cut
  // to the total that is known).
  GroupSizes level_capacities(const GroupSizes& items, int64_t edges) const {
    GroupSizes caps(items.size());
    for (size_t group = 0; group < items.size(); ++group) {
      const int64_t bound = items[group] == kUnbounded ? edges : std::min(items[group], edges);
      caps[group] = std::min(bound, group_key_space(static_cast<int64_t>(group)));
    }
    return caps;
  }

  // Keys of the levels whose worst case is known before the call (up to the first hop that must
  // wait for its size): the table's first capacity.
  int64_t planned_keys() const {
    std::vector<GroupSizes> levels{seed_capacities()};
    int64_t keys = num_seeds_, bytes = 0;
    for (int64_t h = 1; h <= num_hops_; ++h) {
      const GroupSizes items = worst_items(blocks_of(h, transit_capacities(h, levels)));
      const int64_t edges = sum(items);
      if (edges == kUnbounded) break;
      bytes = saturating_add(bytes, level_bytes(edges));
      if (bytes > budget_) break;
      levels.push_back(level_capacities(items, edges));
      keys = std::min(saturating_add(keys, sum(levels.back())), key_space_);
    }
    return keys;
  }

  void allocate_table(int64_t keys) {
    FASTGL_CHECK(keys <= INT64_MAX / 4, in_.op, "a table for ", keys, " nodes overflows int64");
    const int64_t capacity = idmap::table_capacity(keys);
    check_output_fits(in_.op, "the node table", capacity, 3 * sizeof(int64_t), in_.indptr.device());
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
            num_nodes_,
            cfg_.disjoint,
            relational_ ? ledger_.type_start() : nullptr};
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
                 {}, seed_capacities());
    next_base_ = num_seeds_;  // the seeds hold positions 0 .. S - 1
  }

  // Flag, scan, book and assign the items of a level (seeds or a hop's edges): afterwards
  // `slots` holds their local ids and levels_[level] the level's new nodes (`caps` per group).
  void number_level(int64_t level, int64_t base, const at::Tensor& slots, const int64_t* num_items,
                    int64_t capacity, const int64_t* pair_ptr, const PairBlocks& blocks,
                    GroupSizes caps) {
    at::Tensor flags = at::empty({capacity}, options_);
    at::Tensor rank = at::empty({capacity + 1}, options_);
    int64_t* slot_of = slots.data_ptr<int64_t>();
    exec_.for_each(capacity, FlagFirstOccurrences{call().table, slot_of, num_items, base,
                                                  flags.data_ptr<int64_t>()});
    exec_.exclusive_scan(flags.data_ptr<int64_t>(), rank.data_ptr<int64_t>(), capacity);
    const bool next_is_layer = cfg_.layerwise && level >= 1 && level < num_hops_;
    exec_.single(BookLevel{ledger_.book(level), num_batches_, level, num_hops_ + 1,
                           rank.data_ptr<int64_t>(), pair_ptr, blocks,
                           level == 0 ? nullptr : ledger_.item_off(level), ledger_.node_total(),
                           ledger_.node_counts(), ledger_.edge_counts(),
                           relational_ && level > 0 ? ledger_.relation_edges() : nullptr,
                           next_is_layer ? ledger_.layer_off(level + 1) : nullptr});
    levels_.emplace_back(sum(caps), options_);
    level_caps_.push_back(std::move(caps));
    exec_.for_each(capacity, AssignLocalIds<index_t, weight_t>{
                                 call(), g_, ledger_.book(level), num_batches_, level, base,
                                 rank.data_ptr<int64_t>(), slot_of, levels_.back().list()});
  }

  // The nodes hop h draws from: the last level's new nodes, or (layer-wise) every node so far.
  Frontier frontier_of(int64_t h) {
    const NodeStorage& last = levels_[h - 1];
    if (!cfg_.layerwise || h == 1) return {last.list(), ledger_.new_off(h - 1)};
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
    return {window_->list(), off};
  }

  // The device's view of a hop's blocks. Homogeneous: the frontier itself (no table). Relational:
  // the host plan uploaded (asynchronously), then each block's streams and output offsets placed
  // by one thread from the frontier's device counts.
  DeviceBlocks device_blocks(const std::vector<HostBlock>& blocks, const Frontier& frontier) {
    if (!relational_)
      return {at::Tensor(),
              {0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
               frontier.off}};
    const int64_t k = static_cast<int64_t>(blocks.size()), b = num_batches_;
    at::Tensor host = at::zeros({BlockColumns::size(k, b)}, at::kLong);
    const BlockColumns column = BlockColumns::at(host.data_ptr<int64_t>(), k, b);
    for (int64_t i = 0; i < k; ++i) {
      const HostBlock& block = blocks[i];
      column.start[i + 1] = column.start[i] + block.pairs;
      column.src[i] = block.src;
      column.dst[i] = block.dst;
      column.row_base[i] = block.row_base;
      column.fanout[i] = block.fanout;
      column.relation[i] = block.relation;
      column.timed[i] = rel_.timed.empty() ? 0 : rel_.timed[block.relation];
    }
    const std::vector<int64_t> first_pairs = batch_pairs_of(blocks);
    std::copy(first_pairs.begin(), first_pairs.end(), column.batch_pairs);
    DeviceBlocks out{exec_.upload(host), {}};
    const BlockColumns on_device = BlockColumns::at(out.table.data_ptr<int64_t>(), k, b);
    const bool temporal = in_.slot_time.defined();
    out.view = {k,
                on_device.start,
                on_device.src,
                on_device.dst,
                on_device.row_base,
                on_device.fanout,
                on_device.relation,
                on_device.stream_base,
                on_device.ptr_base,
                on_device.batch_pairs,
                on_device.timed,
                temporal ? in_.slot_time.data_ptr<int64_t>() : nullptr,
                temporal ? in_.tree_time.data_ptr<int64_t>() : nullptr,
                rel_.latest};
    exec_.single(PlaceBlocks{out.view, frontier.off, ledger_.ptr_total()});
    return out;
  }

  void sample_hop(int64_t h) {
    const DrawConfig draw = cfg_.hop(h - 1);
    const Frontier frontier = frontier_of(h);
    const std::vector<HostBlock> blocks = blocks_of(h, transit_capacities(h, level_caps_));
    const int64_t pairs = pairs_of(blocks);
    DeviceBlocks device = device_blocks(blocks, frontier);
    at::Tensor counts = at::empty({pairs}, options_);
    at::Tensor ptr = at::empty({pairs + 1}, options_);
    exec_.for_each_group(
        pairs, count_lanes(g_.weight != nullptr),
        CountDraws<index_t, weight_t>{call(), g_, frontier, device.view, num_batches_, h, draw,
                                      counts.data_ptr<int64_t>()});
    exec_.exclusive_scan(counts.data_ptr<int64_t>(), ptr.data_ptr<int64_t>(), pairs);
    GroupSizes items = worst_items(blocks);
    const int64_t edges = edge_capacity(h, blocks, items, frontier, ptr);

    make_room_for(std::min(edges, key_space_));
    at::Tensor slots = at::empty({edges}, options_), col = at::empty({edges}, options_);
    at::Tensor edge_id = at::empty({edges}, options_);
    const int64_t base = next_base_;
    next_base_ = saturating_add(next_base_, edges);
    exec_.for_each_group(
        pairs, draw_lanes(blocks),
        DrawAndInsert<index_t, weight_t>{call(), g_, frontier, device.view, num_batches_, h, base,
                                         draw, ptr.data_ptr<int64_t>(), slots.data_ptr<int64_t>(),
                                         col.data_ptr<int64_t>(), edge_id.data_ptr<int64_t>()});
    number_level(h, base, slots, ptr.data_ptr<int64_t>() + pairs, edges, ptr.data_ptr<int64_t>(),
                 device.view, level_capacities(items, edges));
    // The pairs' edge offsets stay for the blocks' CSC offsets, which homogeneous layer-wise
    // blocks lack.
    const at::Tensor pair_ptr = cfg_.layerwise && !relational_ ? at::Tensor() : ptr;
    hop_edges_.push_back({slots, col, edge_id, pair_ptr, std::move(device), frontier.off, pairs});
    planned_bytes_ = saturating_add(planned_bytes_, level_bytes(edges));
    if (pair_ptr.defined()) {
      planned_bytes_ =
          saturating_add(planned_bytes_, saturating_mul(pairs + 1, int64_t{sizeof(int64_t)}));
    }
  }

  // The hop's edge buffers' size: its pairs' worst case when that is bounded and within the
  // budget, else the exact count, read back (the one wait such a hop costs); a relational hop
  // then also learns each group's exact items.
  int64_t edge_capacity(int64_t h, const std::vector<HostBlock>& blocks, GroupSizes& items,
                        const Frontier& frontier, const at::Tensor& ptr) {
    const int64_t worst = sum(items);
    if (worst != kUnbounded && saturating_add(planned_bytes_, level_bytes(worst)) <= budget_) {
      return worst;
    }
    if (relational_) return exact_relational_edges(blocks, items, frontier, ptr);
    const int64_t pairs = ptr.numel() - 1;
    const at::Tensor sizes = exec_.read(
        at::cat({ledger_tensor_.narrow(0, ledger_.index_of(frontier.off + num_batches_), 1),
                 ptr.narrow(0, pairs, 1), ledger_tensor_.narrow(0, 0, 1)}));
    const int64_t* size = sizes.data_ptr<int64_t>();
    raise_fault(size[2]);  // a bad row makes the counts meaningless
    check_frontier_size(size[0]);
    check_draws_fit(in_.op, size[0], cfg_.fanouts[h - 1], cfg_.replace, g_.num_edges);
    check_output_fits(in_.op, "the sampled edges", size[1], kBytesPerEdge, in_.indptr.device());
    return size[1];
  }

  // One read-back: the frontier's offsets per node type, the draw scan at each type's first
  // pair, and the fault word. Each block's actual transits bound its draws.
  int64_t exact_relational_edges(const std::vector<HostBlock>& blocks, GroupSizes& items,
                                 const Frontier& frontier, const at::Tensor& ptr) {
    const int64_t b = num_batches_;
    std::vector<at::Tensor> parts{ledger_tensor_.narrow(0, ledger_.index_of(frontier.off), b + 1)};
    for (int64_t first : batch_pairs_of(blocks)) parts.push_back(ptr.narrow(0, first, 1));
    parts.push_back(ledger_tensor_.narrow(0, 0, 1));
    const at::Tensor sizes = exec_.read(at::cat(parts));
    const int64_t* off = sizes.data_ptr<int64_t>();
    const int64_t* item_off = off + b + 1;
    raise_fault(item_off[b + 1]);  // a bad row makes the counts meaningless
    int64_t bound = 0;
    for (const HostBlock& block : blocks) {
      const int64_t transits = off[block.dst + 1] - off[block.dst];
      check_draws_fit(in_.op, transits, block.fanout, cfg_.replace, g_.num_edges);
      const int64_t per_pair = block.fanout < 0 ? g_.num_edges : per_pair_bound(block.fanout);
      bound = saturating_add(bound, saturating_mul(transits, per_pair));
    }
    FASTGL_CHECK(bound <= INT64_MAX / 8, in_.op, "the hop's pairs drawing up to ", bound,
                 " edges in all overflow an int64 edge array");
    for (int64_t group = 0; group < b; ++group)
      items[group] = item_off[group + 1] - item_off[group];
    const int64_t edges = item_off[b] - item_off[0];
    check_output_fits(in_.op, "the sampled edges", edges, kBytesPerEdge, in_.indptr.device());
    return edges;
  }

  // Where each batch's pairs start among a relational hop's blocks (PairBlocks::batch_pairs).
  std::vector<int64_t> batch_pairs_of(const std::vector<HostBlock>& blocks) const {
    std::vector<int64_t> first(num_batches_ + 1, 0);
    for (const HostBlock& block : blocks) {
      for (int64_t later = block.src + 1; later <= num_batches_; ++later) {
        first[later] += block.pairs;
      }
    }
    return first;
  }

  // ---- the end of the call -----------------------------------------------------------------

  void raise_fault(int64_t code) const {
    if (code == kNoFault) return;
    const char* op = in_.op;
    const int64_t id = fault_id(code), n = num_nodes_;
    switch (fault_kind(code)) {
      case kBadSeed:
        // The CPU kernel's check and message (the smallest seed if one is negative, else the
        // largest): this is the error path, where its read-back costs nothing.
        FASTGL_CHECK(!relational_, op, "seed ", id, " (global id ", read_one(in_.seeds, id),
                     ") is not a node of its type");
        check_ids_in_range(op, "seeds", in_.seeds, n);
        FASTGL_CHECK(false, op, "internal error: a seed fault with every seed in range");
      case kBadIndptr:
        FASTGL_CHECK(id == kOffsetEndsId, op, kBadIndptrError, relational_ ? " (row " : " (node ",
                     id, ")");
        FASTGL_CHECK(false, op, kBadIndptrError);
      case kBadWeight:
        FASTGL_CHECK(false, op, kBadWeightError, relational_ ? " (row " : " (node ", id, ")");
      case kBadSource:
        FASTGL_CHECK(id == kFaultIdMask, op, "indices id ", read_one(in_.indices, id),
                     relational_ ? " is not a node of its relation's source type (slot "
                                 : " out of range for a graph of ",
                     relational_ ? id : n, relational_ ? ")" : " nodes");
        FASTGL_CHECK(false, op, "internal error: the node table filled up");
    }
  }

  int64_t read_one(const at::Tensor& t, int64_t i) const {
    return exec_.read(t.narrow(0, i, 1).to(at::kLong)).template data_ptr<int64_t>()[0];
  }

  HopsResult write_outputs(const at::Tensor& counts) const {
    const int64_t b = num_batches_, l = num_hops_;
    const int64_t* c = counts.data_ptr<int64_t>();
    const at::Tensor node_counts =
        counts.narrow(0, ledger_.node_counts_at(), b * (l + 1)).view({b, l + 1}).clone();
    const at::Tensor edge_counts =
        relational_ ? counts.narrow(0, ledger_.relation_edges_at(), rel_.count() * l)
                          .view({rel_.count(), l})
                          .clone()
                    : counts.narrow(0, ledger_.edge_counts_at(), b * l).view({b, l}).clone();
    int64_t total_nodes = 0, total_edges = 0;
    for (int64_t i = 0; i < b * (l + 1); ++i) total_nodes += c[ledger_.node_counts_at() + i];
    for (int64_t i = 0; i < b * l; ++i) total_edges += c[ledger_.edge_counts_at() + i];

    const bool col_ptr = !cfg_.layerwise && !relational_;
    at::Tensor nodes = at::empty({total_nodes}, options_);
    at::Tensor degrees = at::empty({relational_ ? 0 : total_nodes}, options_);
    at::Tensor tree = at::empty({cfg_.disjoint ? total_nodes : 0}, options_);
    at::Tensor offsets = at::empty({relational_ ? c[ledger_.ptr_total_at()]
                                    : col_ptr   ? total_nodes + b
                                                : 0},
                                   options_);
    for (size_t level = 0; level < levels_.size(); ++level) {
      exec_.for_each(
          levels_[level].capacity,
          WriteNodes{levels_[level].list(), ledger_.new_off(level) + b, ledger_.node_start(),
                     num_nodes_, cfg_.disjoint, nodes.data_ptr<int64_t>(),
                     relational_ ? nullptr : degrees.data_ptr<int64_t>(), tree.data_ptr<int64_t>(),
                     col_ptr ? in_edge_offsets(level, offsets) : InEdgeOffsets{}});
    }
    if (col_ptr) {
      exec_.for_each(b, CloseInEdgeOffsets{ledger_.node_start(), ledger_.node_total(),
                                           ledger_.edge_counts(), l, offsets.data_ptr<int64_t>()});
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
      if (relational_) {
        const PairBlocks& blocks = hop.blocks.view;
        exec_.for_each(
            hop.pairs + blocks.count,
            WriteRelationOffsets{blocks, hop.frontier_off, hop.pair_ptr.data_ptr<int64_t>(),
                                 offsets.data_ptr<int64_t>()});
      }
    }
    return {nodes,       node_counts, row,     col,  edge_ids,
            edge_counts, seed_slots_, degrees, tree, offsets};
  }

  // How the nodes of `level` find their in-edge offsets (hop-wise, homogeneous only).
  InEdgeOffsets in_edge_offsets(size_t level, const at::Tensor& col_ptr) const {
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
  const Relations& rel_;
  bool relational_;
  Exec& exec_;
  at::TensorOptions options_;
  int64_t budget_;
  int64_t num_batches_, num_hops_, num_seeds_;
  Csc<index_t, weight_t> g_;
  int64_t num_nodes_;  // node keys' modulus: the graph's nodes, or all node types' ids
  int64_t key_range_ = 1, key_space_ = 0;
  Ledger ledger_;
  at::Tensor ledger_tensor_, table_keys_, table_first_, local_of_, seed_slots_;
  int64_t table_allowance_ = 0, keys_bound_ = 0;
  int64_t next_base_ = 0, planned_bytes_ = 0;
  std::vector<NodeStorage> levels_;
  std::vector<GroupSizes> level_caps_;  // levels_' capacities per group
  std::optional<NodeStorage> window_;   // layer-wise: every node so far
  std::vector<HopEdges> hop_edges_;
};

// sample_hops (or, with relations, heterogeneous sampling) on the engine: the op's empty cases as
// the CPU kernel returns them, else one HopEngine run. `budget_bytes` caps the worst-case buffers
// (see HopEngine::edge_capacity).
template <typename Exec>
HopsResult run_hop_engine(const HopsInputs& in, Exec& exec, int64_t budget_bytes) {
  const int64_t num_batches = in.seed_ptr.numel() - 1;
  const int64_t num_hops = static_cast<int64_t>(in.cfg.fanouts.size());
  if (in.seeds.numel() == 0) {
    const bool relational = in.relations.present();
    const at::Tensor none = at::empty({0}, exec.options());
    // Hop-wise, each (empty) batch's offsets are the one entry 0; no relation has transits.
    const at::Tensor col_ptr =
        at::zeros({in.cfg.layerwise || relational ? 0 : num_batches}, exec.options());
    const int64_t edge_rows = relational ? in.relations.count() : num_batches;
    return {none, at::zeros({num_batches, num_hops + 1}, at::kLong),
            none, none,
            none, at::zeros({edge_rows, num_hops}, at::kLong),
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
