// One step of one random walk (random_walk.h states the semantics), written once for host and
// device: every CUDA schedule and the CPU's transit schedule call WalkView::step, the CPU's sample
// schedule its parts (begin_step, the trials, take) in the same order, so the backends agree walk
// for walk and differ only in how steps are scheduled. The draws are neighbor_draw.h's.
#pragma once

#include "common/philox.h"
#include "sampling/neighbor_draw.h"
#include "sampling/sample_hops.h"

#include <c10/macros/Macros.h>

#include <cstdint>

namespace fastgl::sampling {

// What ends a walk with an error. Faults are found while walking, so both backends report the
// smallest encoded one: the first bad walk, whatever the thread count or the schedule.
enum WalkFault : int64_t {
  kBadOffsetEnds = 0,  // not a walk's: encoded as 0, below every walk's fault
  kBadWalkRow = 1,
  kBadWalkWeights = 2,
  kBadWalkTarget = 3,
  kUnsortedWalkRow = 4,
  kNegativeEdgeId = 5,
  kNumWalkFaults = 8,
};

C10_HOST_DEVICE inline int64_t encode_walk_fault(int64_t walk, int64_t fault) {
  return walk * kNumWalkFaults + fault;
}

// A start that is not a node: below every encoded fault, because the starts are checked before
// the graph is read.
constexpr int64_t kBadStartsFault = -1;

// The restart decision's uniform, in units of 2^-53 (exact in a double).
constexpr int64_t kRestartScale = int64_t{1} << 53;

// Rejected node2vec trials before the exact enumerated draw. Each trial accepts with probability
// at least min(1/p, 1, 1/q) / max(1/p, 1, 1/q): the enumeration is rare unless that ratio is
// small (1/16 for p = 0.25, q = 4 leaves a row of far candidates to it a third of the time).
constexpr int64_t kMaxTrials = 16;

// How a node relates to a sorted row, or that the probes of the search saw it unsorted.
enum class RowMembership { kAbsent, kPresent, kUnsorted };

// Binary search of `x` in a row that must ascend. The probes keep the values bounding the search
// interval, so a probe outside them proves the row unsorted, which the op reports. Checking the
// probes costs nothing; proving a row sorted would cost a scan of it per step, so an unsorted row
// whose probes happen to look sorted goes unnoticed (rows from CSCGraph.out_csr ascend).
// The search one probe at a time (RowSearch), so that the CPU kernel can interleave the searches
// of many walks and prefetch each one's next probe; find_in_row runs it to the end.
template <typename index_t>
struct RowSearch {
  const index_t* row;
  int64_t degree, x;
  int64_t lo = 0, hi = degree, below = INT64_MIN, above = INT64_MAX;

  C10_HOST_DEVICE bool done() const { return lo >= hi; }
  C10_HOST_DEVICE const index_t* next_probe() const { return row + lo + (hi - lo) / 2; }

  // One probe; false when it proves the row unsorted.
  C10_HOST_DEVICE bool advance() {
    const int64_t mid = lo + (hi - lo) / 2, value = static_cast<int64_t>(row[mid]);
    if (value < below || value > above) return false;
    // Selects, not branches: the side a probe takes is a coin flip no predictor learns.
    const bool right = value < x;
    lo = right ? mid + 1 : lo;
    hi = right ? hi : mid;
    below = right ? value : below;
    above = right ? above : value;
    return true;
  }

  C10_HOST_DEVICE RowMembership membership() const {
    return hi < degree && above == x ? RowMembership::kPresent : RowMembership::kAbsent;
  }
};

template <typename index_t>
C10_HOST_DEVICE inline RowMembership find_in_row(const index_t* row, int64_t degree, int64_t x) {
  RowSearch<index_t> search{row, degree, x};
  while (!search.done()) {
    if (!search.advance()) return RowMembership::kUnsorted;
  }
  return search.membership();
}

// a * b rounded on its own: on the GPU the compiler would otherwise fuse it with the sum it feeds
// (an FMA rounds once), and the enumerated draw would differ from the CPU's.
C10_HOST_DEVICE inline double product_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// A move's row: the current node's out-edges, in global or (a CUDA block's) shared memory.
template <typename index_t, typename weight_t>
struct WalkRow {
  int64_t start, degree;
  const index_t* targets;
  const weight_t* weight;  // null when unweighted
};

// The walk's previous node u and its out-row, for node2vec's bias of a candidate.
template <typename index_t>
struct PreviousNode {
  int64_t node;
  const index_t* targets;
  int64_t degree;
};

// A step after its checks (WalkView::begin_step): the row it draws from and the previous node of
// a second-order move (-1 for a first-order one), or, when `draws` is false, the step is over
// with `result` (0 or a WalkFault).
template <typename index_t, typename weight_t>
struct WalkMove {
  bool draws;
  int64_t result;
  WalkRow<index_t, weight_t> row;
  int64_t previous;
};

// A node2vec trial's draws: its candidate's slot in the row and its acceptance level (the trial
// accepts a candidate of bias b when the level is below b).
struct Trial {
  int64_t offset;
  double level;
};

// The kernels' view of the call; every backend walks through step(), or through its parts:
// begin_step, the draw (draw_second_order's trials: trial, needs_search, bias, draw_enumerated)
// and take.
template <typename index_t, typename weight_t>
struct WalkView {
  const int64_t* indptr;
  const index_t* indices;
  const weight_t* weight;  // null when unweighted
  const int64_t* eid;      // the id of each CSR slot's edge; null: the slot itself
  int64_t num_nodes, num_edges, length;
  double inv_p, inv_q, max_bias;  // node2vec's biases 1/p, 1/q and their bound max(1/p, 1, 1/q)
  bool second_order;              // p != 1 or q != 1
  double restart_prob;
  bool ppr;
  uint64_t seed;
  int64_t* nodes;  // [S, length + 1], column 0 holding the starts
  int64_t* edges;  // [S, length]: the CSR slot each step took (-1 for none), then its edge id

  C10_HOST_DEVICE int64_t node(int64_t w, int64_t t) const { return nodes[w * (length + 1) + t]; }

  // Whether walk w starts outside the graph. Such a walk is ended before its first step (its
  // start overwritten with -1) so that no step reads a row of it; the call then reports
  // kBadStartsFault.
  C10_HOST_DEVICE bool drop_bad_start(int64_t w) const {
    int64_t* start = nodes + w * (length + 1);
    if (0 <= *start && *start < num_nodes) return false;
    *start = -1;
    return true;
  }

  // Step t of walk w: writes nodes[w, t+1] and the slot it took to edges[w, t] and returns 0, or
  // the WalkFault that ended the walk (padded like a terminated one). `cached_targets` and
  // `cached_weight`, when not null, are the current node's row as a CUDA block cached it in shared
  // memory.
  C10_HOST_DEVICE int64_t step(int64_t w, int64_t t, const index_t* cached_targets = nullptr,
                               const weight_t* cached_weight = nullptr) const {
    const WalkMove<index_t, weight_t> move = begin_step(w, t, cached_targets, cached_weight);
    if (!move.draws) return move.result;
    int64_t offset = 0;
    if (move.previous >= 0) {
      const int64_t fault = draw_second_order(w, t, move.row, previous_row(move.previous), &offset);
      if (fault != 0) return fault;
    } else {
      offset = candidate(w, t, move.row);
    }
    return take(w, t, move.row, offset);
  }

  // Step t up to its draw: pads its outputs (until a move succeeds, an ended or faulty walk pads),
  // then ends it for an ended walk, a restart, a teleport, a dead end or a bad row, or returns
  // the row to draw from.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE WalkMove<index_t, weight_t> begin_step(
      int64_t w, int64_t t, const index_t* cached_targets = nullptr,
      const weight_t* cached_weight = nullptr) const {
    int64_t* next = nodes + w * (length + 1) + t + 1;
    *next = -1;
    edges[w * length + t] = -1;
    WalkMove<index_t, weight_t> over{false, 0, {}, -1};
    const int64_t current = node(w, t), start = node(w, 0);
    if (current < 0) return over;
    if (restart_prob > 0 && restarts(w, t)) {
      if (ppr) *next = start;
      return over;
    }
    const int64_t row_start = indptr[current], row_end = indptr[current + 1];
    over.result = kBadWalkRow;
    if (!valid_adjacency(row_start, row_end, num_edges)) return over;
    const WalkRow<index_t, weight_t> row{
        row_start, row_end - row_start, cached_targets ? cached_targets : indices + row_start,
        weight == nullptr ? nullptr : (cached_weight ? cached_weight : weight + row_start)};
    const int64_t count =
        num_draws(DrawConfig{1, true, hop_key(seed, 2 * t)}, row.weight, row.degree);
    over.result = kBadWalkWeights;
    if (count == kInvalidWeights) return over;
    over.result = 0;
    if (count == 0) {
      if (ppr && current != start) *next = start;  // a dead start would teleport forever
      return over;
    }
    return {true, 0, row, weighing_node(w, t, row.degree)};
  }

  // The move of step t to slot `offset` of `row`: writes the target and the slot taken.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t take(int64_t w, int64_t t,
                                                   const WalkRow<index_t, weight_t>& row,
                                                   int64_t offset) const {
    const int64_t target = static_cast<int64_t>(row.targets[offset]);
    if (target < 0 || target >= num_nodes) return kBadWalkTarget;
    nodes[w * (length + 1) + t + 1] = target;
    edges[w * length + t] = row.start + offset;
    return 0;
  }

  // The offset of a first-order move's draw in `row`: sample_ranges' draw with fanout 1 from
  // stream w under step t's key.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t
  candidate(int64_t w, int64_t t, const WalkRow<index_t, weight_t>& row) const {
    RandomStream rng(hop_key(seed, 2 * t), pair_stream(0, w));
    return draw_one(rng, row);
  }

  // node2vec's trial k of step t: its candidate is the same draw from stream pair_stream(k, w)
  // (draw 0, or draws 0 and 1 when weighted), its acceptance level the stream's next draw, times
  // the bias bound: draw 1, from the Philox block the candidate's draw computed, or draw 2 when
  // weighted.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE Trial trial(int64_t w, int64_t t, int64_t k,
                                                  const WalkRow<index_t, weight_t>& row) const {
    RandomStream rng(hop_key(seed, 2 * t), pair_stream(k, w));
    const int64_t offset = draw_one(rng, row);
    return {offset, rng.open01(row.weight == nullptr ? 1 : 2) * max_bias};
  }

  // node2vec's unnormalized bias of a candidate (weights aside) from its relation to the previous
  // node: 1/p for the node itself, 1 for its out-neighbors, 1/q otherwise.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE double bias_of(bool is_previous,
                                                     RowMembership membership) const {
    return is_previous ? inv_p : (membership == RowMembership::kPresent ? 1.0 : inv_q);
  }

  // Whether a trial of acceptance `level` must search the previous node's row to settle a
  // candidate other than that node. The candidate's bias is 1 (a neighbor) or 1/q (not one): a
  // level below both accepts it either way and one at or above both rejects it, just as 1/q
  // would, so the search runs only for a level between them (never when q = 1). The trials'
  // outcomes are those of knowing every bias; only the searches are spared.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE bool needs_search(double level) const {
    return inv_q < 1.0 ? (level >= inv_q && level < 1.0) : (level >= 1.0 && level < inv_q);
  }

  // Names the edge at position i = w * length + t of `edges` once walk w has taken all its steps
  // (until then node2vec reads its slot to tell a move from a teleport): the slot becomes
  // eid[slot]. Returns 0, or kNegativeEdgeId for walk w. The CPU's sample schedule names a group's
  // edges (first-order walks) or a walk's (node2vec's lanes) as soon as they end, their slots in
  // cache.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t name_edge(int64_t i) const {
    const int64_t slot = edges[i];
    if (slot < 0) return 0;
    const int64_t id = eid[slot];
    if (id < 0) return kNegativeEdgeId;
    edges[i] = id;
    return 0;
  }

  // The node step t-1 moved from, or -1 when step t is first-order (the first step, or the first
  // after a teleport, which took no edge).
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t previous_node(int64_t w, int64_t t) const {
    return t > 0 && edges[w * length + t - 1] >= 0 ? node(w, t - 1) : -1;
  }

  // The node whose row node2vec's trials weigh step t's candidates against (the previous node),
  // or -1 when the move is first-order: p = q = 1, the first step or the first after a teleport,
  // or a row of `degree` 1, whose trials could only end on its one edge, the first-order draw's.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t weighing_node(int64_t w, int64_t t,
                                                            int64_t degree) const {
    return second_order && degree > 1 ? previous_node(w, t) : -1;
  }

  // The walk moved out of `previous` at the last step, which checked its row.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE PreviousNode<index_t> previous_row(int64_t previous) const {
    const int64_t start = indptr[previous];
    return {previous, indices + start, indptr[previous + 1] - start};
  }

  // node2vec's unnormalized bias of moving to x (weights aside), or a negative value when the
  // previous node's row is unsorted.
  C10_HOST_DEVICE double bias(int64_t x, const PreviousNode<index_t>& previous) const {
    if (x == previous.node) return inv_p;
    const RowMembership m = find_in_row(previous.targets, previous.degree, x);
    return m == RowMembership::kUnsorted ? -1 : bias_of(false, m);
  }

  C10_HOST_DEVICE int64_t draw_second_order(int64_t w, int64_t t,
                                            const WalkRow<index_t, weight_t>& row,
                                            const PreviousNode<index_t>& previous,
                                            int64_t* offset) const {
    for (int64_t k = 0; k < kMaxTrials; ++k) {
      const Trial drawn = trial(w, t, k, row);
      *offset = drawn.offset;
      const int64_t x = static_cast<int64_t>(row.targets[*offset]);
      // Unsearched, a candidate other than the previous node is weighed as a non-neighbor: the
      // same outcome at such a level (needs_search).
      const double b = x == previous.node || needs_search(drawn.level) ? bias(x, previous) : inv_q;
      if (b < 0) return kUnsortedWalkRow;
      if (drawn.level < b) return 0;
    }
    return draw_enumerated(w, t, row, previous, offset);
  }

  // The exact second-order draw: slot i with probability proportional to weight_i * bias(x_i),
  // in two passes over the row (the total, then the slot where the running sum passes a uniform
  // share of it), so no memory per slot. Should every term underflow to 0 (weights near the
  // smallest double), the last trial's candidate stands.
  C10_HOST_DEVICE int64_t draw_enumerated(int64_t w, int64_t t,
                                          const WalkRow<index_t, weight_t>& row,
                                          const PreviousNode<index_t>& previous,
                                          int64_t* offset) const {
    double total = 0;
    for (int64_t i = 0; i < row.degree; ++i) {
      const double term = slot_bias(row, i, previous);
      if (term < 0) return kUnsortedWalkRow;
      total += term;
    }
    const double share =
        RandomStream(hop_key(seed, 2 * t), pair_stream(kMaxTrials, w)).open01(0) * total;
    double cumulative = 0;
    for (int64_t i = 0; i < row.degree; ++i) {
      const double term = slot_bias(row, i, previous);
      if (term <= 0) continue;  // zero weight: never drawn
      *offset = i;  // rounding may leave the share past the sum: then the last positive slot
      cumulative += term;
      if (cumulative > share) break;
    }
    return 0;
  }

 private:
  // One slot of `row` drawn with replacement from `rng`: sample_ranges' draw of fanout 1 (the
  // draw draw_neighbor_offsets makes, on a stream the caller keeps, so that a trial's level can
  // share its Philox block).
  C10_HOST_DEVICE FASTGL_FORCE_INLINE int64_t
  draw_one(RandomStream& rng, const WalkRow<index_t, weight_t>& row) const {
    if (row.degree == 1) return 0;  // the draw's one outcome, without computing it
    int64_t offset = 0;
    draw_with_replacement(rng, row.weight, row.degree, 1, &offset);
    return offset;
  }

  // Step t's restart decision: a uniform u on 53 bits (draw 0 of stream w, key 2t+1, taken
  // modulo 2^53: sample_ranges' draw of one slot in [0, 2^53)) below restart_prob. One
  // comparison, where a weighted draw over {restart_prob, 1 - restart_prob} took three log()s.
  C10_HOST_DEVICE FASTGL_FORCE_INLINE bool restarts(int64_t w, int64_t t) const {
    RandomStream rng(hop_key(seed, 2 * t + 1), static_cast<uint64_t>(w));
    return static_cast<double>(rng.below(0, kRestartScale)) < restart_prob * kRestartScale;
  }

  // Slot i's share in the enumerated draw: its weight times its bias relative to the bound (at
  // most 1, so the row's total stays below its finite weight sum), or -1 for an unsorted row.
  C10_HOST_DEVICE double slot_bias(const WalkRow<index_t, weight_t>& row, int64_t i,
                                   const PreviousNode<index_t>& previous) const {
    const double b = bias(static_cast<int64_t>(row.targets[i]), previous);
    if (b < 0) return -1;
    const double relative = b / max_bias;
    return row.weight ? product_rounded(static_cast<double>(row.weight[i]), relative) : relative;
  }
};

}  // namespace fastgl::sampling
