// The stages of the device sampling engine (hop_engine.h), one functor each, written once for
// host and device: a CUDA kernel runs `stage(i)` for every index of its range, and so does the
// host harness that CI runs without a GPU (DESIGN.md §7), over the same index ranges, with real
// atomics on the shared hash table. Nothing here reads a count on the host: every stage takes
// its bound from device memory and idles past it, so a whole call is enqueued without a wait.
//
// The layout every stage agrees on. A call samples B batches. Its items are numbered by
// *level*: level 0 holds the seeds, level h >= 1 the edges drawn at hop h. Within a level the
// items are batch-major and, within a batch, in the CPU kernel's sequential order (pair by pair,
// draw by draw), and each item has a *position* base[level] + index, with the levels' bases
// increasing. One hash table keyed by (batch, node key) serves the whole call and keeps, per
// key, the smallest position that carried it, so the first occurrence of a node in its batch
// is the one the CPU finds, and a key seen at an earlier level keeps its first position. The
// nodes new at a level are numbered by a scan over its items' "first occurrence" flags.
#pragma once

#include "common/portable_atomics.h"
#include "idmap/table_probe.h"
#include "sampling/neighbor_draw.h"
#include "sampling/sample_hops.h"

#include <cstdint>

namespace fastgl::sampling::hops {

using idmap::TableView;

// Faults, kept as the smallest code any stage reports: level first, so the first level with a
// fault is reported, as the CPU kernel stops at its first bad hop; then the kind, in the order
// in which the CPU kernel checks within a hop.
enum FaultKind : int64_t { kBadSeed = 0, kBadIndptr = 1, kBadWeight = 2, kBadSource = 3 };
constexpr int64_t kNoFault = INT64_MAX;
constexpr int kFaultIdBits = 54, kFaultKindBits = 2, kFaultLevelBits = 7;
constexpr int64_t kFaultIdMask = (int64_t{1} << kFaultIdBits) - 1;
// Levels past it share it (a call of that many hops is unheard of); one below the field's top,
// so that no fault encodes to kNoFault.
constexpr int64_t kMaxFaultLevel = (int64_t{1} << kFaultLevelBits) - 2;
// The id of an indptr fault that is about the array's ends, not one node's row.
constexpr int64_t kOffsetEndsId = kFaultIdMask;

C10_HOST_DEVICE inline int64_t encode_fault(int64_t level, FaultKind kind, int64_t id) {
  const int64_t capped = level < kMaxFaultLevel ? level : kMaxFaultLevel;
  return (capped << (kFaultIdBits + kFaultKindBits)) |
         (static_cast<int64_t>(kind) << kFaultIdBits) | (id & kFaultIdMask);
}
inline FaultKind fault_kind(int64_t code) {
  return static_cast<FaultKind>((code >> kFaultIdBits) & ((1 << kFaultKindBits) - 1));
}
inline int64_t fault_id(int64_t code) { return code & kFaultIdMask; }

C10_HOST_DEVICE inline void report_fault(int64_t* fault, int64_t level, FaultKind kind,
                                         int64_t id) {
  atomic_lower(fault, encode_fault(level, kind, id));
}

// What every stage shares: the table, the local id of each of its slots, the fault word, and
// how node keys (node, or tree * N + node when disjoint) combine with their batch.
//
// A relational call (heterogeneous sampling, hetero_hops.h) numbers the nodes of each node type
// apart: its batches are the node types, batch b holding the global ids type_start[b] ..
// type_start[b + 1] - 1, and a node's rows in the CSC are its relations' (PairBlocks below).
struct CallView {
  TableView table;
  int64_t* local_of;  // [capacity] local id of the key in each slot, once numbered
  int64_t* fault;
  int64_t key_range;  // node keys are below it: (batch, key) -> batch * key_range + key
  int64_t num_nodes;
  bool disjoint;
  const int64_t* type_start;  // relational: [B + 1]; null: every batch spans all N nodes

  C10_HOST_DEVICE bool relational() const { return type_start != nullptr; }
  // Whether `node` may join batch b: any node of the graph, or one of the batch's node type.
  C10_HOST_DEVICE bool admits(int64_t batch, int64_t node) const {
    const int64_t lo = relational() ? type_start[batch] : 0;
    const int64_t hi = relational() ? type_start[batch + 1] : num_nodes;
    return node >= lo && node < hi;
  }

  C10_HOST_DEVICE int64_t node_of(int64_t key) const {
    return disjoint && num_nodes > 0 ? key % num_nodes : key;
  }
  C10_HOST_DEVICE int64_t composite(int64_t batch, int64_t key) const {
    return batch * key_range + key;
  }
  // Inserts (batch, key) for the item at `position`; returns its slot, or kNoSlot (a fault).
  C10_HOST_DEVICE int64_t insert(int64_t batch, int64_t key, int64_t position,
                                 int64_t level) const {
    const int64_t slot = idmap::find_or_insert_slot(table, composite(batch, key));
    if (slot == idmap::kNoSlot) {
      // The engine sizes the table for every key the call can produce: unreachable unless that
      // bound is wrong, and then an error rather than a lost node.
      report_fault(fault, level, kBadSource, kFaultIdMask);
      return slot;
    }
    idmap::claim_position(table, slot, position);
    return slot;
  }
};

// The batch of item i of a level whose items are batch-major with offsets off[0 .. B]: the b with
// off[b] <= i < off[b + 1] (empty batches skipped), by binary search.
C10_HOST_DEVICE inline int64_t batch_of_item(const int64_t* off, int64_t num_batches, int64_t i) {
  int64_t lo = 0, hi = num_batches;  // off[lo] <= i < off[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (off[mid] <= i) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// A node buffer: one level's new nodes (batch-major, each batch's in first-occurrence order), or
// the window of all nodes so far that layer-wise hops draw from.
struct NodeList {
  int64_t* key;
  int64_t* batch;
  int64_t* local;   // local id in its batch
  int64_t* degree;  // in-degree (level buffers only)
};

// The nodes a hop draws from: list[p] for p < *count, batch b's at off[b] .. off[b + 1].
struct Frontier {
  NodeList list;
  const int64_t* off;  // [B + 1]
};

// How a hop's pairs map to its frontier. Homogeneous (count == 0): pair p is frontier node p, which
// draws from its own row into its own batch, from stream pair_stream(b, p - off[b]). Relational:
// the pairs form blocks, one per relation that draws at the hop, ordered by (source type,
// relation) so that each batch's items are contiguous and in the order the reference relabels
// them; block k's j-th pair is the j-th transit of batch dst[k], draws fanout[k] edges from row
// row_base[k] + node into batch src[k], from stream stream_base[k] + j: the pairs numbered
// relation-major in the graph's relation order, as the reference numbers them.
struct PairBlocks {
  int64_t count;            // K; 0: homogeneous
  const int64_t* start;     // [K + 1] each block's first pair
  const int64_t* src;       // [K] the batch its drawn nodes join
  const int64_t* dst;       // [K] its transits' batch
  const int64_t* row_base;  // [K]
  const int64_t* fanout;    // [K]
  const int64_t* relation;  // [K] position in the graph's relation order
  int64_t* stream_base;     // [K] written by PlaceBlocks
  int64_t* ptr_base;        // [K] where its CSC offsets go in the relational output (PlaceBlocks)
  const int64_t* batch_pairs;  // [B + 1] batch b's items are drawn by pairs batch_pairs[b] ..
  // Temporal calls (times null otherwise): whether block k's relation has times, the time key
  // of every slot (each row ascending) and of every tree, and the "last" strategy.
  const int64_t* timed = nullptr;  // [K]
  const int64_t* slot_time = nullptr;
  const int64_t* tree_time = nullptr;
  bool latest = false;
};

// One pair of a hop, resolved.
struct Pair {
  int64_t transit;  // its node's index in the frontier list; -1 past the frontier's end
  int64_t batch;    // the batch its draws join
  int64_t row_base;
  int64_t fanout;
  uint64_t stream;
  bool timed;  // its range is cut to its tree's time
};

// Batch b's entries of a list with batch offsets off: off[b] .. off[b + 1].
C10_HOST_DEVICE inline int64_t batch_size(const int64_t* off, int64_t b) {
  return off[b + 1] - off[b];
}

// Block k of a relational hop: the k with start[k] <= p < start[k + 1].
C10_HOST_DEVICE inline int64_t block_of(const PairBlocks& blocks, int64_t p) {
  return batch_of_item(blocks.start, blocks.count, p);
}

C10_HOST_DEVICE inline Pair resolve_pair(const PairBlocks& blocks, const Frontier& frontier,
                                         int64_t num_batches, int64_t hop_fanout, int64_t p) {
  if (blocks.count == 0) {
    if (p >= frontier.off[num_batches]) return {-1, 0, 0, 0, 0, false};
    const int64_t b = frontier.list.batch[p];
    return {p, b, 0, hop_fanout, pair_stream(b, p - frontier.off[b]), false};
  }
  const int64_t k = block_of(blocks, p), j = p - blocks.start[k], d = blocks.dst[k];
  if (j >= batch_size(frontier.off, d)) return {-1, 0, 0, 0, 0, false};
  return {frontier.off[d] + j,
          blocks.src[k],
          blocks.row_base[k],
          blocks.fanout[k],
          static_cast<uint64_t>(blocks.stream_base[k] + j),
          blocks.slot_time != nullptr && blocks.timed[k] != 0};
}

// The slots a pair draws from, and how many: its row [start, end) with its fanout, or for a
// timed pair (temporal sampling, fastgl/sampling/temporal.py's TimeSortedRows.ranges) the row's
// prefix of slots no later than its tree's time (each row ascends in time, so a binary search
// finds it), and with the "last" strategy that prefix's last `fanout` slots, every one taken.
struct PairRange {
  int64_t start, end, fanout;
};

C10_HOST_DEVICE inline PairRange pair_range(const PairBlocks& blocks, const CallView& call,
                                            int64_t key, const Pair& pair, int64_t start,
                                            int64_t end) {
  if (!pair.timed) return {start, end, pair.fanout};
  const int64_t time = blocks.tree_time[key / call.num_nodes];  // temporal calls are disjoint
  int64_t lo = start, hi = end;  // the prefix ends at the first slot past the time
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (blocks.slot_time[mid] <= time) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (!blocks.latest || pair.fanout < 0) return {start, lo, pair.fanout};
  return {lo - start > pair.fanout ? lo - pair.fanout : start, lo, -1};
}

// A block's entries in the relational CSC offsets: one per transit and a closing one, none
// without transits (its relation drew nothing at the hop).
C10_HOST_DEVICE inline int64_t offset_entries(int64_t transits) {
  return transits > 0 ? transits + 1 : 0;
}

// One thread, before a relational hop draws: each block's first stream (the pairs of the blocks
// of earlier relations before it) and where its CSC offsets go (count + 1 entries for a block
// with transits, relation-major after the earlier hops'; `ptr_total` runs over the call).
struct PlaceBlocks {
  PairBlocks blocks;
  const int64_t* frontier_off;
  int64_t* ptr_total;

  C10_HOST_DEVICE void operator()(int64_t) const {
    int64_t added = 0;
    for (int64_t k = 0; k < blocks.count; ++k) {
      int64_t streams = 0, entries = 0;
      for (int64_t other = 0; other < blocks.count; ++other) {
        if (blocks.relation[other] >= blocks.relation[k]) continue;
        const int64_t transits = batch_size(frontier_off, blocks.dst[other]);
        streams += transits;
        entries += offset_entries(transits);
      }
      blocks.stream_base[k] = streams;
      blocks.ptr_base[k] = *ptr_total + entries;
      added += offset_entries(batch_size(frontier_off, blocks.dst[k]));
    }
    *ptr_total += added;
  }
};

// Per-level counters, kept on the device (hop_engine.h's Ledger lays them out).
struct LevelBook {
  const int64_t* item_off;  // [B + 1] the level's items of batch b: item_off[b] .. [b + 1]
  int64_t* new_off;         // [B + 1] batch b's new nodes in the level's buffer; [B]: all
  int64_t* local_base;      // [B] nodes of batch b before this level
};

// ---- level 0: the seeds ----------------------------------------------------------------------

// Seed i of batch b inserts its key at position i; a seed out of range (of its node type, in a
// relational call) is a fault and no node.
// The first index also checks indptr's ends, as the CPU kernel does before any row is read.
template <typename index_t, typename weight_t>
struct InsertSeeds {
  CallView call;
  Csc<index_t, weight_t> g;
  const int64_t* seeds;
  const int64_t* seed_ptr;  // [B + 1]
  int64_t num_batches, num_seeds;
  int64_t* slot_of;  // [S]

  C10_HOST_DEVICE void operator()(int64_t i) const {
    if (i == 0 && num_seeds > 0 && !valid_offset_ends(g.col_start, g.num_nodes, g.num_edges)) {
      report_fault(call.fault, 0, kBadIndptr, kOffsetEndsId);
    }
    const int64_t seed = seeds[i];
    const int64_t b = batch_of_item(seed_ptr, num_batches, i);
    if (!call.admits(b, seed)) {
      report_fault(call.fault, 0, kBadSeed, i);
      slot_of[i] = idmap::kNoSlot;
      return;
    }
    // A relational call's trees are numbered over all its seeds, a batch's within the batch.
    const int64_t tree = call.relational() ? i : i - seed_ptr[b];
    const int64_t key = call.disjoint ? tree * call.num_nodes + seed : seed;
    slot_of[i] = call.insert(b, key, i, 0);
  }
};

// ---- a hop: count, draw, then the level stages below --------------------------------------

// The CSC row pair `pair` draws from: its transit's node, offset by its relation's rows.
C10_HOST_DEVICE inline int64_t row_of(const CallView& call, const Frontier& frontier,
                                      const Pair& pair) {
  return pair.row_base + call.node_of(frontier.list.key[pair.transit]);
}

// Pair p's draw count (0 past the frontier's end or for a faulty row, which is reported). A
// group of lanes shares the pair, so that a weighted hub row's weights are counted together.
template <typename index_t, typename weight_t>
struct CountDraws {
  CallView call;
  Csc<index_t, weight_t> g;
  Frontier frontier;
  PairBlocks blocks;
  int64_t num_batches, level;
  DrawConfig cfg;
  int64_t* counts;

  template <typename Lanes>
  C10_HOST_DEVICE void operator()(int64_t p, const Lanes& lanes) const {
    const Pair pair = resolve_pair(blocks, frontier, num_batches, cfg.fanout, p);
    if (pair.transit < 0) {
      lanes.one([&] { counts[p] = 0; });
      return;
    }
    const int64_t row = row_of(call, frontier, pair);
    const int64_t start = g.col_start[row], end = g.col_start[row + 1];
    if (!valid_adjacency(start, end, g.num_edges)) {
      lanes.one([&] {
        report_fault(call.fault, level, kBadIndptr, row);
        counts[p] = 0;
      });
      return;
    }
    const PairRange range =
        pair_range(blocks, call, frontier.list.key[pair.transit], pair, start, end);
    const DrawConfig draw{range.fanout, cfg.replace, cfg.key};
    const int64_t draws =
        num_draws_in_lanes(lanes, draw, g.weight_from(range.start), range.end - range.start);
    lanes.one([&] {
      if (draws == kInvalidWeights) report_fault(call.fault, level, kBadWeight, row);
      counts[p] = draws == kInvalidWeights ? 0 : draws;
    });
  }
};

// Pair p draws its edges (neighbor_draw.h, from its own Philox stream, as the CPU kernel) into
// its run ptr[p] .. ptr[p + 1] of the hop's items, gathers each source, checks it and inserts
// its key: the item's slot, its transit's local id (col) and its edge id. A group of lanes
// (common/lanes.h) shares the pair: they draw together, then each inserts its own draws, so the
// table's probes of one pair are in flight at once.
template <typename index_t, typename weight_t>
struct DrawAndInsert {
  CallView call;
  Csc<index_t, weight_t> g;
  Frontier frontier;
  PairBlocks blocks;
  int64_t num_batches, level, base;  // base: position of the hop's item 0
  DrawConfig cfg;
  const int64_t* ptr;  // [pairs + 1] scan of the counts
  int64_t* slot_of;    // holds the drawn offsets until they are replaced by slots
  int64_t* col;
  int64_t* edge_id;  // the draws' scratch until it receives the edge ids

  template <typename Lanes>
  C10_HOST_DEVICE void operator()(int64_t p, const Lanes& lanes) const {
    const int64_t first = ptr[p], count = ptr[p + 1] - first;
    if (count == 0) return;  // also every pair past the frontier's end
    const Pair pair = resolve_pair(blocks, frontier, num_batches, cfg.fanout, p);
    const int64_t key = frontier.list.key[pair.transit], b = pair.batch;
    const int64_t row = row_of(call, frontier, pair);
    const PairRange range =
        pair_range(blocks, call, key, pair, g.col_start[row], g.col_start[row + 1]);
    const int64_t start = range.start, degree = range.end - range.start;
    const DrawConfig draw{range.fanout, cfg.replace, cfg.key};
    draw_neighbor_offsets_in_lanes(lanes, draw, pair.stream, g.weight_from(start), degree, count,
                                   slot_of + first, edge_id + first);
    const int64_t tree_base = key - call.node_of(key);  // tree * N, or 0
    const int64_t transit_local = frontier.list.local[pair.transit];
    lanes.each(count, [&](int64_t j) {
      const int64_t e = first + j, slot = start + slot_of[e];
      const int64_t source = static_cast<int64_t>(g.source[slot]);
      col[e] = transit_local;
      edge_id[e] = g.eid ? g.eid[slot] : slot;
      if (!call.admits(b, source)) {
        report_fault(call.fault, level, kBadSource, slot);
        slot_of[e] = idmap::kNoSlot;
        return;
      }
      slot_of[e] = call.insert(b, tree_base + source, base + e, level);
    });
  }
};

// ---- every level: flag, (scan), book, assign ------------------------------------------------

// is_new[i]: item i is its key's first occurrence in the call (0 past the level's end).
struct FlagFirstOccurrences {
  TableView table;
  const int64_t* slot_of;
  const int64_t* num_items;  // device count
  int64_t base;
  int64_t* is_new;

  C10_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t slot = i < *num_items ? slot_of[i] : idmap::kNoSlot;
    is_new[i] = slot != idmap::kNoSlot && table.first[slot] == base + i;
  }
};

// One thread's bookkeeping after a level's scan (rank = exclusive scan of is_new): per batch,
// where its items and new nodes start, how many nodes it had before, and the counts the op
// returns. For a hop, the items of batch b are the draws of its pairs (edge offsets from ptr);
// for layer-wise sampling, the next hop's frontier offsets (all nodes so far). A relational hop
// also counts each relation's edges.
struct BookLevel {
  LevelBook book;
  int64_t num_batches, level, num_levels;  // num_levels = L + 1
  const int64_t* rank;
  const int64_t* pair_ptr;  // hops: the scan of the draw counts; null for the seeds
  PairBlocks blocks;        // hops: batch b's pairs are blocks.batch_pairs[b] ..
  int64_t* item_off_out;    // hops: written here, then read as book.item_off
  int64_t* node_total;      // [B] running
  int64_t* node_counts;     // [B, L + 1]
  int64_t* edge_counts;     // [B, L]
  int64_t* relation_edges;  // relational hops: [R, L]; else null
  int64_t* next_layer_off;  // layer-wise: [B + 1] offsets of all nodes so far; else null

  C10_HOST_DEVICE void operator()(int64_t) const {
    if (pair_ptr) {
      for (int64_t b = 0; b <= num_batches; ++b) item_off_out[b] = pair_ptr[blocks.batch_pairs[b]];
    }
    if (relation_edges) {
      for (int64_t k = 0; k < blocks.count; ++k) {
        relation_edges[blocks.relation[k] * (num_levels - 1) + level - 1] =
            pair_ptr[blocks.start[k + 1]] - pair_ptr[blocks.start[k]];
      }
    }
    for (int64_t b = 0; b < num_batches; ++b) {
      const int64_t lo = book.item_off[b], hi = book.item_off[b + 1];
      const int64_t added = rank[hi] - rank[lo];
      book.new_off[b] = rank[lo];
      book.local_base[b] = node_total[b];
      node_total[b] += added;
      node_counts[b * num_levels + level] = added;
      if (pair_ptr) edge_counts[b * (num_levels - 1) + level - 1] = hi - lo;
    }
    book.new_off[num_batches] = rank[book.item_off[num_batches]];
    if (next_layer_off) {
      next_layer_off[0] = 0;
      for (int64_t b = 0; b < num_batches; ++b) {
        next_layer_off[b + 1] = next_layer_off[b] + node_total[b];
      }
    }
  }
};

// Item i learns its key's local id: from the table when the key is older than the level, else
// from the rank of its first occurrence in the level. A first occurrence also writes its node
// (key, batch, local id, in-degree) into the level's buffer and its slot's local id.
// slot_of[i] is replaced by the local id in place (-1 for a faulty item).
template <typename index_t, typename weight_t>
struct AssignLocalIds {
  CallView call;
  Csc<index_t, weight_t> g;
  LevelBook book;
  int64_t num_batches, level, base;
  const int64_t* rank;
  int64_t* slot_of;  // in: slots; out: local ids
  NodeList nodes;    // the level's buffer

  C10_HOST_DEVICE void operator()(int64_t i) const {
    if (i >= book.item_off[num_batches]) return;
    const int64_t slot = slot_of[i];
    if (slot == idmap::kNoSlot) {
      slot_of[i] = -1;
      return;
    }
    const int64_t composite = call.table.keys[slot], first = call.table.first[slot];
    const int64_t b = composite / call.key_range, key = composite - b * call.key_range;
    if (first < base) {  // numbered at an earlier level
      slot_of[i] = call.local_of[slot];
      return;
    }
    const int64_t local = book.local_base[b] + rank[first - base] - book.new_off[b];
    slot_of[i] = local;
    if (first != base + i) return;
    const int64_t n = rank[i];
    nodes.key[n] = key;
    nodes.batch[n] = b;
    nodes.local[n] = local;
    nodes.degree[n] = call.relational() ? 0 : in_degree(call.node_of(key));
    call.local_of[slot] = local;
  }

  // A node's in-degree (its row's length), checked, as the next hop reads the row; a relational
  // node has a row per relation, which its pairs check as they read them.
  C10_HOST_DEVICE int64_t in_degree(int64_t t) const {
    const int64_t start = g.col_start[t], end = g.col_start[t + 1];
    if (!valid_adjacency(start, end, g.num_edges)) {
      report_fault(call.fault, level + 1, kBadIndptr, t);
    }
    return end - start;
  }
};

// Layer-wise hops draw from every node so far: the window (batch b's nodes at off[b] + local)
// is rebuilt from the last one and the newest level, i over both lists back to back.
struct MergeWindow {
  NodeList old_window, level_nodes, window;
  const int64_t* old_count;  // device counts of both lists
  const int64_t* level_count;
  int64_t old_capacity;
  const int64_t* off;  // [B + 1] the new window's batch offsets

  C10_HOST_DEVICE void operator()(int64_t i) const {
    const bool from_old = i < old_capacity;
    const NodeList& from = from_old ? old_window : level_nodes;
    const int64_t j = from_old ? i : i - old_capacity;
    if (j >= (from_old ? *old_count : *level_count)) return;
    const int64_t b = from.batch[j], at = off[b] + from.local[j];
    window.key[at] = from.key[j];
    window.batch[at] = b;
    window.local[at] = from.local[j];
  }
};

// A grown table (hop_engine.h) gets the nodes numbered so far back: one level's buffer, each
// key at a position below every later one and with its local id.
struct Reinsert {
  CallView call;
  NodeList nodes;
  const int64_t* count;

  C10_HOST_DEVICE void operator()(int64_t n) const {
    if (n >= *count) return;
    const int64_t slot = call.insert(nodes.batch[n], nodes.key[n], -1, 0);
    if (slot != idmap::kNoSlot) call.local_of[slot] = nodes.local[n];
  }
};

// ---- the end of the call: batch-major outputs ----------------------------------------------

// One thread: where each batch's nodes and each (batch, hop)'s edges start in the outputs.
struct PlaceBatches {
  int64_t num_batches, num_hops;
  const int64_t* node_total;
  const int64_t* edge_counts;
  int64_t* node_start;  // [B]
  int64_t* edge_start;  // [B, L]

  C10_HOST_DEVICE void operator()(int64_t) const {
    int64_t nodes = 0, edges = 0;
    for (int64_t b = 0; b < num_batches; ++b) {
      node_start[b] = nodes;
      nodes += node_total[b];
      for (int64_t h = 0; h < num_hops; ++h) {
        edge_start[b * num_hops + h] = edges;
        edges += edge_counts[b * num_hops + h];
      }
    }
  }
};

// Edges batch b drew in all: its edges end there in its own numbering.
C10_HOST_DEVICE inline int64_t batch_edges(const int64_t* edge_counts, int64_t num_hops,
                                           int64_t b) {
  int64_t edges = 0;
  for (int64_t h = 0; h < num_hops; ++h) edges += edge_counts[b * num_hops + h];
  return edges;
}

// Where a hop-wise node's in-edges start among its batch's edges (sample_hops.h's col_ptr): the
// nodes new at level l are hop l + 1's transits in their buffer's order, so node n's edges begin
// at pair n's entry of that hop's draw scan, counted from its batch's first edge. The last
// level's nodes draw nothing: theirs start (and end) at the batch's end.
struct InEdgeOffsets {
  int64_t* out;               // [sum (n_b + 1)]; null: layer-wise, no offsets
  const int64_t* pair_ptr;    // the next hop's draw scan; null for the last level
  const int64_t* item_off;    // the next hop's batch offsets into it
  const int64_t* edge_start;  // [B, L]
  const int64_t* edge_counts;
  int64_t num_hops, level;

  C10_HOST_DEVICE int64_t of(int64_t n, int64_t b) const {
    if (pair_ptr == nullptr) return batch_edges(edge_counts, num_hops, b);
    return edge_start[b * num_hops + level] - edge_start[b * num_hops] + pair_ptr[n] - item_off[b];
  }
};

// A level's nodes into the batch-major node outputs.
struct WriteNodes {
  NodeList nodes;
  const int64_t* count;
  const int64_t* node_start;
  int64_t num_nodes;
  bool disjoint;
  int64_t* out_nodes;
  int64_t* out_degrees;  // null: not returned (relational)
  int64_t* out_tree;     // disjoint only
  InEdgeOffsets in_edges;

  C10_HOST_DEVICE void operator()(int64_t n) const {
    if (n >= *count) return;
    const int64_t b = nodes.batch[n], at = node_start[b] + nodes.local[n], key = nodes.key[n];
    out_nodes[at] = disjoint ? key % num_nodes : key;
    if (out_degrees) out_degrees[at] = nodes.degree[n];
    if (disjoint) out_tree[at] = key / num_nodes;
    if (in_edges.out)
      in_edges.out[at + b] = in_edges.of(n, b);  // batch b's offsets follow b others'
  }
};

// The closing entry of batch b's col_ptr: its edge count.
struct CloseInEdgeOffsets {
  const int64_t* node_start;
  const int64_t* node_total;
  const int64_t* edge_counts;
  int64_t num_hops;
  int64_t* out;

  C10_HOST_DEVICE void operator()(int64_t b) const {
    out[node_start[b] + b + node_total[b]] = batch_edges(edge_counts, num_hops, b);
  }
};

// A relational hop's CSC offsets per relation: block k's transits' runs of the hop's draw scan,
// counted from the block's first edge, at ptr_base[k] (PlaceBlocks). Entry i of block k is index
// i - start[k] - k of it (a block of n pairs has n + 1 entries), for i < start[K] + K.
struct WriteRelationOffsets {
  PairBlocks blocks;
  const int64_t* frontier_off;
  const int64_t* pair_ptr;
  int64_t* out;

  C10_HOST_DEVICE void operator()(int64_t i) const {
    int64_t k = blocks.count - 1;
    while (k > 0 && blocks.start[k] + k > i) --k;
    const int64_t j = i - blocks.start[k] - k, transits = batch_size(frontier_off, blocks.dst[k]);
    if (transits == 0 || j > transits) return;
    const int64_t first = blocks.start[k];
    out[blocks.ptr_base[k] + j] = pair_ptr[first + j] - pair_ptr[first];
  }
};

// A hop's edges into the batch-major edge outputs (batch b's hop-h edges follow its earlier
// hops').
struct WriteEdges {
  const int64_t* item_off;  // [B + 1]
  int64_t num_batches, num_hops, hop;
  const int64_t* edge_start;
  const int64_t* row;  // the local ids AssignLocalIds left in slot_of
  const int64_t* col;
  const int64_t* edge_id;
  int64_t* out_row;
  int64_t* out_col;
  int64_t* out_edge_id;

  C10_HOST_DEVICE void operator()(int64_t e) const {
    if (e >= item_off[num_batches]) return;
    const int64_t b = batch_of_item(item_off, num_batches, e);
    const int64_t at = edge_start[b * num_hops + hop] + e - item_off[b];
    out_row[at] = row[e];
    out_col[at] = col[e];
    out_edge_id[at] = edge_id[e];
  }
};

}  // namespace fastgl::sampling::hops
