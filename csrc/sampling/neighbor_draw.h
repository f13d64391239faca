// What one (sample, transit) pair draws from the transit's in-edges. Written once for host and
// device: the CPU kernel and every CUDA scheduling tier call these functions, so the backends
// agree sample for sample and differ only in how pairs are scheduled. (The weighted draws use
// log(), which may differ by one ulp between host and device; a draw could then differ only when
// two keys or a target and a boundary lie within that ulp, about 2^-50 per comparison.)
//
// Offsets are positions within the transit's adjacency (0 .. degree-1). `weight`, when not null,
// points at the transit's first edge weight; zero-weight edges are never drawn, and the draws
// run only on rows whose weights num_draws accepted (finite, non-negative, finite sum).
#pragma once

#include "common/lanes.h"
#include "common/philox.h"

#include <c10/macros/Macros.h>

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace fastgl::sampling {

// A transit's adjacency slice is readable: 0 <= start <= end <= num_edges. Checked for every
// pair before drawing, so a malformed indptr is an error, never an out-of-bounds read.
C10_HOST_DEVICE inline bool valid_adjacency(int64_t start, int64_t end, int64_t num_edges) {
  return 0 <= start && start <= end && end <= num_edges;
}

// The ends of the offsets: 0 and num_edges. The per-pair check above cannot see an array that
// starts late or ends early, so every call that reads a row checks these two entries once.
C10_HOST_DEVICE inline bool valid_offset_ends(const int64_t* col_start, int64_t num_nodes,
                                              int64_t num_edges) {
  return col_start[0] == 0 && col_start[num_nodes] == num_edges;
}

struct DrawConfig {
  int64_t fanout;  // -1 = all neighbors
  bool replace;
  uint64_t key;  // per-call Philox key
};

// What num_draws returns for a row it cannot draw from: a weight that is NaN, negative or
// infinite, or weights whose sum overflows. Callers raise kBadWeightError for it.
constexpr int64_t kInvalidWeights = -1;

// The edges with a positive weight, or kInvalidWeights. The draws below rely on every weight of
// the row being finite and non-negative with a finite sum; this scan, num_draws', checks it.
template <typename weight_t>
C10_HOST_DEVICE inline int64_t count_drawable(const weight_t* weight, int64_t degree) {
  int64_t positive = 0;
  double total = 0;
  for (int64_t i = 0; i < degree; ++i) {
    const double w = static_cast<double>(weight[i]);
    if (!(w >= 0)) return kInvalidWeights;  // negative or NaN
    positive += w > 0;
    total += w;
  }
  return total <= DBL_MAX ? positive : kInvalidWeights;  // an infinite weight or sum
}

// Number of edges a pair draws (the output of the pair has exactly this many slots), or
// kInvalidWeights.
C10_HOST_DEVICE inline int64_t draws_from(const DrawConfig& cfg, int64_t available) {
  if (available == kInvalidWeights) return kInvalidWeights;
  if (cfg.fanout < 0) return available;
  if (available == 0) return 0;
  if (cfg.replace) return cfg.fanout;
  return available < cfg.fanout ? available : cfg.fanout;
}

template <typename weight_t>
C10_HOST_DEVICE inline int64_t num_draws(const DrawConfig& cfg, const weight_t* weight,
                                         int64_t degree) {
  return draws_from(cfg, weight ? count_drawable(weight, degree) : degree);
}

// The edges with a positive weight of a row num_draws already accepted.
template <typename weight_t>
C10_HOST_DEVICE inline int64_t count_positive(const weight_t* weight, int64_t degree) {
  int64_t positive = 0;
  for (int64_t i = 0; i < degree; ++i) positive += weight[i] > 0;
  return positive;
}

template <typename weight_t>
C10_HOST_DEVICE inline void take_all(const weight_t* weight, int64_t degree, int64_t* out) {
  int64_t n = 0;
  for (int64_t i = 0; i < degree; ++i) {
    if (!weight || weight[i] > 0) out[n++] = i;
  }
}

// Whether `pick` is among the `m` offsets chosen so far: a scan, as a fanout is small.
struct ScanChosen {
  C10_HOST_DEVICE bool operator()(const int64_t* chosen, int64_t m, int64_t pick) const {
    for (int64_t i = 0; i < m; ++i) {
      if (chosen[i] == pick) return true;
    }
    return false;
  }
};

// Uniform without replacement: Floyd's algorithm, `count` draws for any degree, no scratch memory
// beyond the output. `is_chosen(out, m, pick)` tells whether pick is among out[0 .. m); a caller
// drawing many (a frontier of a thousand walkers) passes a faster test than the scan, which
// leaves the draws as they are.
template <typename IsChosen = ScanChosen>
C10_HOST_DEVICE inline void draw_uniform_without_replacement(RandomStream& rng, int64_t degree,
                                                             int64_t count, int64_t* out,
                                                             IsChosen is_chosen = {}) {
  for (int64_t m = 0; m < count; ++m) {
    const int64_t upper = degree - count + m;  // draw from [0, upper]
    const int64_t pick = rng.below(m, upper + 1);
    out[m] = is_chosen(out, m, pick) ? upper : pick;
  }
}

// Weighted with replacement in one pass over the edges: the `count` sorted uniforms are built
// from exponential spacings (U_(j) = S_j / S_{count+1}), so no sort and no prefix-sum array.
// Output offsets come out in ascending order; as a multiset they are i.i.d. draws.
template <typename weight_t>
C10_HOST_DEVICE inline void draw_weighted_with_replacement(RandomStream& rng,
                                                           const weight_t* weight, int64_t degree,
                                                           int64_t count, int64_t* out) {
  double total_weight = 0;
  for (int64_t i = 0; i < degree; ++i) total_weight += static_cast<double>(weight[i]);
  double spacing_total = 0;
  for (int64_t j = 0; j <= count; ++j) spacing_total -= log(rng.open01(j));

  double spacing_sum = 0, cumulative = 0;
  int64_t edge = 0;
  for (int64_t j = 0; j < count; ++j) {
    spacing_sum -= log(rng.open01(j));
    const double target = spacing_sum / spacing_total * total_weight;
    // Advance to the edge whose cumulative weight first exceeds the target; skip zero weights.
    while (edge < degree - 1 &&
           (cumulative + static_cast<double>(weight[edge]) <= target || weight[edge] <= 0)) {
      cumulative += static_cast<double>(weight[edge]);
      ++edge;
    }
    while (weight[edge] <= 0) --edge;  // rounding pushed past the last positive weight
    out[j] = edge;
  }
}

// Efraimidis-Spirakis key of an edge: the `count` largest keys are a weighted sample without
// replacement. Recomputed on demand instead of stored, so the pair needs no scratch memory.
template <typename weight_t>
C10_HOST_DEVICE inline double weighted_key(RandomStream& rng, const weight_t* weight,
                                           int64_t offset) {
  return log(rng.open01(offset)) / static_cast<double>(weight[offset]);
}

// One step of the weighted draw without replacement: `out` holds the `kept` edges with the
// largest keys so far, by descending key (ties: the earlier edge first); edge `edge`, whose key
// is k, joins them when the list is not full or k beats its smallest key, `min_kept`.
template <typename weight_t>
C10_HOST_DEVICE inline void offer_by_key(RandomStream& rng, const weight_t* weight, int64_t count,
                                         int64_t edge, double k, int64_t* out, int64_t& kept,
                                         double& min_kept) {
  if (kept == count && k <= min_kept) return;
  int64_t slot = kept < count ? kept++ : count - 1;
  while (slot > 0 && weighted_key(rng, weight, out[slot - 1]) < k) {
    out[slot] = out[slot - 1];
    --slot;
  }
  out[slot] = edge;
  min_kept = weighted_key(rng, weight, out[kept - 1]);
}

// Weighted without replacement: every positive edge in turn is offered to the kept list, which
// takes it O(count log(degree/count)) times.
template <typename weight_t>
C10_HOST_DEVICE inline void draw_weighted_without_replacement(RandomStream& rng,
                                                              const weight_t* weight,
                                                              int64_t degree, int64_t count,
                                                              int64_t* out) {
  int64_t kept = 0;
  double min_kept = 0;
  for (int64_t edge = 0; edge < degree; ++edge) {
    if (weight[edge] > 0) {
      offer_by_key(rng, weight, count, edge, weighted_key(rng, weight, edge), out, kept, min_kept);
    }
  }
}

// `count` offsets drawn with replacement from `rng`: uniform, or proportional to `weight`.
template <typename weight_t>
C10_HOST_DEVICE inline void draw_with_replacement(RandomStream& rng, const weight_t* weight,
                                                  int64_t degree, int64_t count, int64_t* out) {
  if (weight == nullptr) {
    for (int64_t j = 0; j < count; ++j) out[j] = rng.below(j, degree);
  } else {
    draw_weighted_with_replacement(rng, weight, degree, count, out);
  }
}

// Fills out[0 .. num_draws) with the offsets drawn by pair `stream`.
template <typename weight_t>
C10_HOST_DEVICE inline void draw_neighbor_offsets(const DrawConfig& cfg, uint64_t stream,
                                                  const weight_t* weight, int64_t degree,
                                                  int64_t count, int64_t* out) {
  if (count == 0) return;
  const bool takes_everything =
      cfg.fanout < 0 ||
      (!cfg.replace && count == (weight ? count_positive(weight, degree) : degree));
  if (takes_everything) {
    take_all(weight, degree, out);
    return;
  }
  RandomStream rng(cfg.key, stream);
  if (cfg.replace) {
    draw_with_replacement(rng, weight, degree, count, out);
  } else if (weight == nullptr) {
    draw_uniform_without_replacement(rng, degree, count, out);
  } else {
    draw_weighted_without_replacement(rng, weight, degree, count, out);
  }
}

// ---- the same draws by a group of lanes (common/lanes.h) -----------------------------------
// A device group draws one pair's edges together: each draw is computed by its own lane where
// the algorithm allows it, so the pair's latency is one draw's, not `count` draws'. The results
// are draw_neighbor_offsets', bit for bit; the host harness checks that against the CPU kernel.

// Whether Floyd's draw m (draw_uniform_without_replacement; picks[i] is draw i's raw pick and
// low = degree - count, so draw i's upper end is low + i) hit an offset already chosen, decided
// from the picks alone so that each draw is its own lane's work. It did exactly when an earlier
// draw picked the same offset (that draw chose it, or had collided and so found it chosen), or
// when its pick is the upper end of an earlier draw that collided and therefore chose it. The
// second case asks the same question of a smaller index, so the chain ends.
C10_HOST_DEVICE inline bool floyd_collides(const int64_t* picks, int64_t m, int64_t low) {
  for (;;) {
    const int64_t pick = picks[m];
    for (int64_t i = 0; i < m; ++i) {
      if (picks[i] == pick) return true;
    }
    const int64_t upper_of = pick - low;  // the draw whose upper end the pick is, if any
    if (upper_of < 0 || upper_of >= m) return false;
    m = upper_of;
  }
}

// Lanes num_draws_in_lanes puts to use: a warp for a weighted row, one lane for an unweighted one
// (its count is its degree).
inline int count_lanes(bool weighted) { return weighted ? kWarpLanes : 1; }

// count_positive by a group of lanes, the same value on every lane.
template <typename Lanes, typename weight_t>
C10_HOST_DEVICE inline int64_t count_positive_in_lanes(const Lanes& lanes, const weight_t* weight,
                                                       int64_t degree) {
  return lanes.sum(degree, [&](int64_t i) { return weight[i] > 0; });
}

// num_draws by a group of lanes, the same value on every lane. A row whose weights are all
// finite, non-negative and at most DBL_MAX / (2 degree) has a finite sum in any order, so the
// lanes count its positive weights together; a row with any other weight (an invalid one, or
// one whose sum might overflow) is left to num_draws' own scan, on every lane.
template <typename Lanes, typename weight_t>
C10_HOST_DEVICE inline int64_t num_draws_in_lanes(const Lanes& lanes, const DrawConfig& cfg,
                                                  const weight_t* weight, int64_t degree) {
  if (weight == nullptr || degree == 0) return num_draws(cfg, weight, degree);
  const double tame = DBL_MAX / 2 / static_cast<double>(degree);
  const int64_t wild = lanes.sum(degree, [&](int64_t i) {
    const double w = static_cast<double>(weight[i]);
    return !(w >= 0 && w <= tame);
  });
  if (wild > 0) return num_draws(cfg, weight, degree);
  return draws_from(cfg, count_positive_in_lanes(lanes, weight, degree));
}

// draw_neighbor_offsets' "take every edge" case. A row draws min(positive, fanout) edges without
// replacement, so below the fanout it takes every positive edge and only a pair drawing exactly
// the fanout needs its weights counted (by the lanes together).
template <typename Lanes, typename weight_t>
C10_HOST_DEVICE inline bool takes_every_edge(const Lanes& lanes, const DrawConfig& cfg,
                                             const weight_t* weight, int64_t degree,
                                             int64_t count) {
  if (cfg.fanout < 0) return true;
  if (cfg.replace) return false;
  if (weight == nullptr) return count == degree;
  return count < cfg.fanout || count_positive_in_lanes(lanes, weight, degree) == count;
}

// draw_weighted_without_replacement by a group of lanes: the row is read a round of `width`
// edges at a time, each lane computing one key, and lane 0 offers the round's edges that may
// enter the kept list, in edge order, as the scan does. An edge the lanes pass over has a key no
// larger than the list's smallest at the round's start, which only grows once the list is full,
// so the scan would pass over it too: the same list, bit for bit. Every lane follows how full
// the list is (every positive edge enters until it is) and reads its smallest key back.
template <typename Lanes, typename weight_t>
C10_HOST_DEVICE inline void draw_weighted_without_replacement_in_lanes(
    const Lanes& lanes, uint64_t key, uint64_t stream, const weight_t* weight, int64_t degree,
    int64_t count, int64_t* out) {
  int64_t kept = 0;
  double min_kept = 0;
  for (int64_t round = 0; round < degree; round += lanes.width) {
    const uint32_t offered = lanes.ballot([&](int lane) {
      const int64_t edge = round + lane;
      if (edge >= degree || !(weight[edge] > 0)) return false;
      RandomStream rng(key, stream);
      return kept < count || weighted_key(rng, weight, edge) > min_kept;
    });
    if (offered == 0) continue;
    lanes.one([&] {
      RandomStream rng(key, stream);
      int64_t lane0_kept = kept;
      double lane0_min = min_kept;
      for (int lane = 0; lane < lanes.width; ++lane) {
        if ((offered >> lane & 1u) == 0) continue;
        const int64_t edge = round + lane;
        offer_by_key(rng, weight, count, edge, weighted_key(rng, weight, edge), out, lane0_kept,
                     lane0_min);
      }
    });
    int64_t newly = 0;
    for (uint32_t bits = offered; bits != 0; bits &= bits - 1) ++newly;
    kept = kept + newly < count ? kept + newly : count;
    // The next round's filter needs the smallest kept key; after the last round nobody does,
    // and the caller may already be writing `out` (no barrier follows this read).
    if (kept == count && round + lanes.width < degree) {
      RandomStream rng(key, stream);
      min_kept = weighted_key(rng, weight, out[count - 1]);
    }
  }
}

// draw_neighbor_offsets by a group of lanes: out[0 .. count) gets the same offsets. Uniform
// draws take one lane each (Floyd's collisions resolved by floyd_collides, with the raw picks in
// `scratch`, count entries); weighted draws without replacement share the row's keys among the
// lanes. Weighted draws with replacement stay one scan by lane 0: their targets are compared
// with a running sum of the weights, whose rounding depends on the order of the additions.
template <typename Lanes, typename weight_t>
C10_HOST_DEVICE inline void draw_neighbor_offsets_in_lanes(const Lanes& lanes,
                                                           const DrawConfig& cfg, uint64_t stream,
                                                           const weight_t* weight, int64_t degree,
                                                           int64_t count, int64_t* out,
                                                           int64_t* scratch) {
  if (count == 0) return;
  if (takes_every_edge(lanes, cfg, weight, degree, count)) {
    if (weight == nullptr) {
      lanes.each(count, [&](int64_t j) { out[j] = j; });
    } else {
      lanes.one([&] { take_all(weight, degree, out); });
    }
    return;
  }
  if (weight != nullptr && !cfg.replace) {
    draw_weighted_without_replacement_in_lanes(lanes, cfg.key, stream, weight, degree, count, out);
    return;
  }
  if (weight != nullptr) {
    lanes.one([&] {
      RandomStream rng(cfg.key, stream);
      draw_weighted_with_replacement(rng, weight, degree, count, out);
    });
    return;
  }
  if (cfg.replace) {
    lanes.each(count, [&](int64_t j) { out[j] = RandomStream(cfg.key, stream).below(j, degree); });
    return;
  }
  const int64_t low = degree - count;
  lanes.each(count,
             [&](int64_t j) { scratch[j] = RandomStream(cfg.key, stream).below(j, low + j + 1); });
  lanes.each(count,
             [&](int64_t j) { out[j] = floyd_collides(scratch, j, low) ? low + j : scratch[j]; });
}

}  // namespace fastgl::sampling
