// CPU reference for random_walk: every step through WalkView (walk_step.h), shared with the CUDA
// kernels: whole (step) or in its parts, begin_step, the trials and take. "sample" walks whole
// walks in parallel, each thread a few dozen at a time so that their memory reads overlap: a
// group stepped together for first-order walks (walk_group), lanes that each advance by one read
// a round for node2vec's (walk_lanes); "transit" steps all walks together, ordered by current
// node each step, in the CUDA kernel's chunks and with its row cache (walk_transit.h), so that
// the tests that compare the schedules check the GPU's decomposition too. Both give the same
// walks at any thread count.
#include "sampling/random_walk.h"
#include "sampling/walk_transit.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>

namespace fastgl::sampling {
namespace {

// Whole walks are long units of work; single steps are short.
constexpr int64_t kWalkGrain = 64;
constexpr int64_t kStepGrain = 1024;
// First-order walks a thread advances together, one step of each in turn (see walk_group).
constexpr int64_t kWalkGroup = 32;
// node2vec walks a thread keeps in flight (see walk_lanes).
constexpr int32_t kLanes = 32;

// Prefetches what step t of first-order walk w (p = q = 1) reads after its row's bounds: the
// target of its draw, made here when the row is unweighted (a weighted draw reads the row's weights
// first). Returns the draw's offset, or -1 when it drew none.
template <typename index_t, typename weight_t>
int64_t prefetch_move(const WalkView<index_t, weight_t>& view, int64_t w, int64_t t) {
  const int64_t current = view.node(w, t);  // >= 0: the walk is live (walk_group)
  if (current >= view.num_nodes || view.weight != nullptr) return -1;
  const int64_t row_start = view.indptr[current], row_end = view.indptr[current + 1];
  if (!valid_adjacency(row_start, row_end, view.num_edges) || row_start == row_end) return -1;
  const WalkRow<index_t, weight_t> row{row_start, row_end - row_start, view.indices + row_start,
                                       nullptr};
  const int64_t offset = view.candidate(w, t, row);
  __builtin_prefetch(row.targets + offset);
  return offset;
}

// Step t of the group's live first-order walks, `walks[0 .. count)`, each taking the draw
// prefetch_move made (`drawn[i]`), or drawing now.
template <typename index_t, typename weight_t, typename Fault>
void step_group(const WalkView<index_t, weight_t>& view, const int64_t* walks, int32_t count,
                int64_t t, const int64_t* drawn, const Fault& keep_fault) {
  for (int32_t i = 0; i < count; ++i) {
    const int64_t w = walks[i];
    const WalkMove<index_t, weight_t> move = view.begin_step(w, t);
    int64_t fault = move.result;
    if (move.draws) {
      const int64_t offset = drawn[i] >= 0 ? drawn[i] : view.candidate(w, t, move.row);
      fault = view.take(w, t, move.row, offset);
    }
    if (fault != 0) keep_fault(w, fault);
  }
}

// Pads what walk w would have written after its step t, at which it ended: its nodes past t+1
// and its edges past t (the step padded its own).
template <typename index_t, typename weight_t>
void pad_after(const WalkView<index_t, weight_t>& view, int64_t w, int64_t t) {
  std::fill(view.nodes + w * (view.length + 1) + t + 2, view.nodes + (w + 1) * (view.length + 1),
            -1);
  std::fill(view.edges + w * view.length + t + 1, view.edges + (w + 1) * view.length, -1);
}

// Walks [begin, end), at most kWalkGroup of them, to their end, one step of every walk at a
// time. A walk alone waits for each read in turn (its row's bounds, then the target it drew, on
// which its next row depends), but the steps of different
// walks are independent: the group's row bounds are prefetched together, then what each walk's
// move reads, and only then does each walk step, mostly from cache. A walk that ends (a dead end,
// a restart that ends it, a fault) leaves the group's list with its outputs padded to the end, so
// the later steps do not test it again: which walks have ended is unpredictable, and such tests
// cost mispredicted branches in every loop over the group.
template <typename index_t, typename weight_t, typename Fault>
void walk_group(const WalkView<index_t, weight_t>& view, int64_t begin, int64_t end,
                const Fault& keep_fault) {
  TORCH_INTERNAL_ASSERT(end - begin <= kWalkGroup);
  TORCH_INTERNAL_ASSERT(!view.second_order);  // node2vec's moves walk in lanes (walk_lanes)
  std::array<int64_t, kWalkGroup> drawn, live;
  int32_t count = 0;
  for (int64_t w = begin; w < end; ++w) live[count++] = w;
  for (int64_t t = 0; t < view.length && count > 0; ++t) {
    for (int32_t i = 0; i < count; ++i) {
      const int64_t current = view.node(live[i], t);
      if (current < view.num_nodes) __builtin_prefetch(view.indptr + current);
    }
    for (int32_t i = 0; i < count; ++i) drawn[i] = prefetch_move(view, live[i], t);
    step_group(view, live.data(), count, t, drawn.data(), keep_fault);
    int32_t kept = 0;
    for (int32_t i = 0; i < count; ++i) {
      if (view.node(live[i], t + 1) >= 0) {
        live[kept++] = live[i];
      } else {
        pad_after(view, live[i], t);
      }
    }
    count = kept;
  }
}

// Names the edges at positions [begin, end) of the walks' edges (WalkView::name_edge), each id
// prefetched a few positions ahead: every one is a read at random in eid.
template <typename index_t, typename weight_t, typename Fault>
void name_edges(const WalkView<index_t, weight_t>& view, int64_t begin, int64_t end,
                const Fault& keep_fault) {
  constexpr int64_t kAhead = 16;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t ahead = i + kAhead < end ? view.edges[i + kAhead] : -1;
    if (ahead >= 0) __builtin_prefetch(view.eid + ahead);
    const int64_t fault = view.name_edge(i);
    if (fault != 0) keep_fault(i / view.length, fault);
  }
}

// What a walk in flight waits for: its current node's row bounds (kRow), the target of the
// candidate it drew (kCandidate), or the next probe of node2vec's search of the previous node's
// row (kSearch). Each was prefetched when the lane entered the stage.
enum class LaneStage : uint8_t { kRow, kCandidate, kSearch };

// One walk in flight: its step t and the move under way, a first-order draw of slot `offset`
// or node2vec's trial `trial` (WalkView::draw_second_order's trials, one memory read at a time).
template <typename index_t, typename weight_t>
struct Lane {
  int64_t walk, t;
  LaneStage stage;
  bool second_order;
  int64_t trial, offset;
  double level;  // the trial's acceptance level, drawn with its candidate
  WalkRow<index_t, weight_t> row;
  PreviousNode<index_t> previous;
  RowSearch<index_t> search;
};

// Step t of the lane's walk is over with `fault` (0: it moved, restarted or ended): readies step
// t+1, prefetching its row bounds. Returns true when the walk is over (its outputs padded).
template <typename index_t, typename weight_t, typename Fault>
bool end_step(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane, int64_t fault,
              const Fault& keep_fault) {
  if (fault != 0) keep_fault(lane.walk, fault);
  const int64_t next = view.node(lane.walk, lane.t + 1);  // -1 after a fault or an end
  if (next < 0) {
    pad_after(view, lane.walk, lane.t);
    return true;
  }
  if (++lane.t == view.length) return true;
  if (next < view.num_nodes) __builtin_prefetch(view.indptr + next);
  lane.stage = LaneStage::kRow;
  return false;
}

// kRow: step t's checks and its first draw, whose target it prefetches.
template <typename index_t, typename weight_t, typename Fault>
bool begin_lane_step(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane,
                     const Fault& keep_fault) {
  const WalkMove<index_t, weight_t> move = view.begin_step(lane.walk, lane.t);
  if (!move.draws) return end_step(view, lane, move.result, keep_fault);
  // Member by member: the compiler would copy the row in 16-byte loads from where begin_step's
  // result sits in 8-byte stores, and a load that spans two stores waits for both to reach the
  // cache (a failed store-to-load forward: a fifth of node2vec's time).
  lane.row.start = move.row.start;
  lane.row.degree = move.row.degree;
  lane.row.targets = move.row.targets;
  lane.row.weight = move.row.weight;
  lane.second_order = move.previous >= 0;
  if (lane.second_order) {
    lane.previous = view.previous_row(move.previous);
    lane.trial = 0;
    const Trial drawn = view.trial(lane.walk, lane.t, 0, lane.row);
    lane.offset = drawn.offset;
    lane.level = drawn.level;
  } else {
    lane.offset = view.candidate(lane.walk, lane.t, lane.row);
  }
  __builtin_prefetch(lane.row.targets + lane.offset);
  lane.stage = LaneStage::kCandidate;
  return false;
}

// A node2vec trial's candidate weighs `bias`: taken when its level is below, else the next trial
// is drawn (its target prefetched) or, after kMaxTrials, the enumerated draw decides.
template <typename index_t, typename weight_t, typename Fault>
bool weigh_trial(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane,
                 double bias, const Fault& keep_fault) {
  if (lane.level < bias) {
    return end_step(view, lane, view.take(lane.walk, lane.t, lane.row, lane.offset), keep_fault);
  }
  if (++lane.trial < kMaxTrials) {
    const Trial next = view.trial(lane.walk, lane.t, lane.trial, lane.row);
    lane.offset = next.offset;
    lane.level = next.level;
    __builtin_prefetch(lane.row.targets + lane.offset);
    lane.stage = LaneStage::kCandidate;
    return false;
  }
  int64_t fault = view.draw_enumerated(lane.walk, lane.t, lane.row, lane.previous, &lane.offset);
  if (fault == 0) fault = view.take(lane.walk, lane.t, lane.row, lane.offset);
  return end_step(view, lane, fault, keep_fault);
}

// A search that has its answer weighs the candidate; one that has not prefetches its next probe.
template <typename index_t, typename weight_t, typename Fault>
bool continue_search(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane,
                     const Fault& keep_fault) {
  if (lane.search.done()) {
    return weigh_trial(view, lane, view.bias_of(false, lane.search.membership()), keep_fault);
  }
  __builtin_prefetch(lane.search.next_probe());
  lane.stage = LaneStage::kSearch;
  return false;
}

// kCandidate: a first-order move takes its draw; node2vec's trial weighs its candidate, after a
// search of the previous node's row only when its level needs one (WalkView::needs_search).
template <typename index_t, typename weight_t, typename Fault>
bool read_candidate(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane,
                    const Fault& keep_fault) {
  if (!lane.second_order) {
    return end_step(view, lane, view.take(lane.walk, lane.t, lane.row, lane.offset), keep_fault);
  }
  const int64_t x = static_cast<int64_t>(lane.row.targets[lane.offset]);
  const bool is_previous = x == lane.previous.node;
  if (!is_previous && view.needs_search(lane.level)) {
    lane.search = RowSearch<index_t>{lane.previous.targets, lane.previous.degree, x};
    return continue_search(view, lane, keep_fault);
  }
  return weigh_trial(view, lane, view.bias_of(is_previous, RowMembership::kAbsent), keep_fault);
}

// The lane's next memory read and what follows it, up to the read after. True when the walk is
// over.
template <typename index_t, typename weight_t, typename Fault>
bool advance_lane(const WalkView<index_t, weight_t>& view, Lane<index_t, weight_t>& lane,
                  const Fault& keep_fault) {
  switch (lane.stage) {
    case LaneStage::kRow:
      return begin_lane_step(view, lane, keep_fault);
    case LaneStage::kCandidate:
      return read_candidate(view, lane, keep_fault);
    case LaneStage::kSearch:
      if (!lane.search.advance()) return end_step(view, lane, kUnsortedWalkRow, keep_fault);
      return continue_search(view, lane, keep_fault);
  }
  return true;
}

// Walks [begin, end) to their ends, kLanes of them in flight at a time. A walk alone waits for
// each read in turn (its row's bounds, the target it drew, each probe of node2vec's search; each
// read depends on the one before), but different walks are independent: a round advances every
// lane by one read (and, on a weighted row, the row's weights), which the lane's previous round
// prefetched, so the reads of all lanes
// overlap. A walk that ends hands its lane to the next walk at once, so no lane waits for
// another. Stepped in lockstep (walk_group), every node2vec step waited for its group's longest
// search: in lanes a step takes about a fifth less time on R-MAT products, where a search's
// probes miss the cache, and about 5 % more on Slashdot; first-order walks, whose steps all make
// the same two reads, are faster in lockstep (no stage to dispatch on).
template <typename index_t, typename weight_t, typename Fault>
void walk_lanes(const WalkView<index_t, weight_t>& view, int64_t begin, int64_t end,
                const Fault& keep_fault) {
  if (view.length == 0) return;
  std::array<Lane<index_t, weight_t>, kLanes> lanes{};
  int64_t next_walk = begin;
  auto start_walk = [&](Lane<index_t, weight_t>& lane) {
    lane.walk = next_walk++;
    lane.t = 0;
    lane.stage = LaneStage::kRow;
    const int64_t start = view.node(lane.walk, 0);
    if (start < view.num_nodes) __builtin_prefetch(view.indptr + start);
  };
  int32_t active = 0;
  while (active < kLanes && next_walk < end) start_walk(lanes[active++]);
  while (active > 0) {
    for (int32_t i = 0; i < active;) {
      Lane<index_t, weight_t>& lane = lanes[i];
      if (!advance_lane(view, lane, keep_fault)) {
        ++i;
        continue;
      }
      // While the walk's slots are in cache.
      if (view.eid) {
        name_edges(view, lane.walk * view.length, (lane.walk + 1) * view.length, keep_fault);
      }
      if (next_walk < end) {
        start_walk(lane);
        ++i;
      } else {
        lane = lanes[--active];  // the last lane moves here and advances in this round
      }
    }
  }
}

// Step t of the walks of transit chunks [begin, end) of `order` (walk_transit.h), a cached row
// copied into `cache` (of kRowCacheBytes) as a CUDA block copies it into shared memory, so that
// this schedule checks the GPU's on the host.
template <typename index_t, typename weight_t, typename Fault>
void step_transit_chunks(const WalkView<index_t, weight_t>& view, int64_t t, const int64_t* order,
                         int64_t num_walks, int64_t begin, int64_t end, unsigned char* cache,
                         const Fault& keep_fault) {
  const int64_t capacity = row_cache_capacity<index_t, weight_t>(view.weight != nullptr);
  const auto layout =
      RowCacheLayout<index_t, weight_t>::in(cache, capacity, view.weight != nullptr);
  for (int64_t chunk = begin; chunk < end; ++chunk) {
    const ChunkRow cached = transit_chunk_row(view, order, num_walks, chunk, t, capacity);
    // Null pointers: the steps read the row from the graph.
    RowCacheLayout<index_t, weight_t> row{nullptr, nullptr};
    if (cached.degree >= 0) {
      std::copy_n(view.indices + cached.start, cached.degree, layout.targets);
      if (view.weight) std::copy_n(view.weight + cached.start, cached.degree, layout.weight);
      row = layout;
    }
    const int64_t* walks = order + chunk * kTransitChunk;
    for (int64_t i = 0; i < transit_chunk_walks(num_walks, chunk); ++i) {
      const int64_t fault = view.step(walks[i], t, row.targets, row.weight);
      if (fault != 0) keep_fault(walks[i], fault);
    }
  }
}

struct CpuRandomWalk {
  static WalkSchedule auto_schedule(int64_t /*num_walks*/, int64_t /*num_nodes*/) {
    return WalkSchedule::kSample;
  }

  template <typename index_t, typename weight_t>
  static int64_t run(const WalkView<index_t, weight_t>& view, const at::Tensor& nodes,
                     WalkSchedule schedule) {
    const int64_t num_walks = nodes.size(0);
    std::atomic<int64_t> first_fault{kNoWalkFault};
    at::parallel_for(0, num_walks, kStepGrain, [&](int64_t begin, int64_t end) {
      for (int64_t w = begin; w < end; ++w) {
        if (view.drop_bad_start(w)) keep_smallest(first_fault, kBadStartsFault);
      }
    });
    if (first_fault.load() != kNoWalkFault) return first_fault.load();
    if (!valid_offset_ends(view.indptr, view.num_nodes, view.num_edges)) {
      return encode_walk_fault(0, kBadOffsetEnds);
    }
    auto keep_fault = [&](int64_t w, int64_t fault) {
      keep_smallest(first_fault, encode_walk_fault(w, fault));  // names the first bad walk
    };
    if (schedule == WalkSchedule::kSample) {
      at::parallel_for(0, num_walks, kWalkGrain, [&](int64_t begin, int64_t end) {
        if (view.second_order) {
          walk_lanes(view, begin, end, keep_fault);
          return;
        }
        for (int64_t group = begin; group < end; group += kWalkGroup) {
          const int64_t group_end = std::min(end, group + kWalkGroup);
          walk_group(view, group, group_end, keep_fault);
          // While the group's slots are in cache.
          if (view.eid) name_edges(view, group * view.length, group_end * view.length, keep_fault);
        }
      });
      return first_fault.load();
    }
    const int64_t num_chunks = transit_num_chunks(num_walks);
    for (int64_t t = 0; t < view.length; ++t) {
      // Ended walks (node -1) sort first and only pad.
      const at::Tensor order =
          std::get<1>(at::sort(nodes.select(1, t), c10::optional<bool>(true), 0, false));
      at::parallel_for(0, num_chunks, kStepGrain / kTransitChunk, [&](int64_t begin, int64_t end) {
        alignas(16) std::array<unsigned char, kRowCacheBytes> cache;
        step_transit_chunks(view, t, order.data_ptr<int64_t>(), num_walks, begin, end, cache.data(),
                            keep_fault);
      });
    }
    if (view.eid) {
      at::parallel_for(0, num_walks, kStepGrain, [&](int64_t begin, int64_t end) {
        name_edges(view, begin * view.length, end * view.length, keep_fault);
      });
    }
    return first_fault.load();
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("random_walk", &random_walk_entry<CpuRandomWalk>); }

}  // namespace fastgl::sampling
