// CPU reference for random_walk: every step through WalkView (walk_step.h), shared with the CUDA
// kernels: whole (step) or in its parts, begin_step, the trials and take. "sample" walks whole
// walks in parallel (each thread a group of walks at a time, advanced together step by step, the
// trials of node2vec's moves interleaved: walk_group); "transit" steps all walks together,
// ordered by current node each step (NextDoor's transit order: walks at one node read its row one
// after another). Both give the same walks at any thread count.
#include "sampling/random_walk.h"

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
// Walks a thread advances together, one step of each in turn (see walk_group).
constexpr int64_t kWalkGroup = 32;

// Prefetches what step t of walk w reads after its row's bounds: the target of its first
// candidate, drawn here when the row is unweighted (a weighted draw reads the row's weights
// first). Returns the candidate's offset, or -1 when it drew none; for node2vec the draw is its
// trial 0, whose level goes to `level`.
// node2vec's searches of the previous node's row prefetch their own probes, one round ahead
// (advance_trial): prefetching the lines of the search's first levels here as well was slower,
// on R-MAT products and on Slashdot (a search reads one line of each level, not all of them).
template <typename index_t, typename weight_t>
int64_t prefetch_move(const WalkView<index_t, weight_t>& view, int64_t w, int64_t t,
                      double* level) {
  const int64_t current = view.node(w, t);  // >= 0: the walk is live (walk_group)
  if (current >= view.num_nodes) return -1;
  const int64_t row_start = view.indptr[current], row_end = view.indptr[current + 1];
  if (!valid_adjacency(row_start, row_end, view.num_edges) || row_start == row_end) return -1;
  int64_t first = -1;
  if (view.weight == nullptr) {
    const WalkRow<index_t, weight_t> row{row_start, row_end - row_start, view.indices + row_start,
                                         nullptr};
    // Only node2vec's trials need a level (converting one at every DeepWalk step cost 10-18 %),
    // and a row of one edge has none (weighing_node): its draw computes no Philox block.
    if (view.second_order && row.degree > 1) {
      const Trial drawn = view.trial(w, t, 0, row);
      first = drawn.offset;
      *level = drawn.level;
    } else {
      first = view.candidate(w, t, row);
    }
    __builtin_prefetch(row.targets + first);
  }
  return first;
}

// A node2vec move whose trials are under way: its candidate's target is being read (`searching`
// false) or the previous node's row is being searched for it, one probe per round.
template <typename index_t, typename weight_t>
struct PendingTrial {
  int64_t walk, trial, offset;
  WalkRow<index_t, weight_t> row;
  PreviousNode<index_t> previous;
  bool searching;
  double level;  // the trial's acceptance level, drawn with its candidate
  RowSearch<index_t> search;
};

// One round of a pending trial: reads what the last round prefetched and prefetches what the
// next one reads. Returns true when the move is over (taken, or faulted). The trials, biases and
// acceptances are WalkView::draw_second_order's, one probe of the search at a time.
template <typename index_t, typename weight_t, typename Fault>
bool advance_trial(const WalkView<index_t, weight_t>& view, int64_t t,
                   PendingTrial<index_t, weight_t>& p, const Fault& keep_fault) {
  // Only the round that reads the candidate can find it to be the previous node: its search is
  // then empty and ends in that round, as is the search of a level that needs none (an empty
  // search finds no neighbor, which settles such a level as the neighbor test would).
  bool is_previous = false;
  if (!p.searching) {
    const int64_t x = static_cast<int64_t>(p.row.targets[p.offset]);
    is_previous = x == p.previous.node;
    const bool searched = !is_previous && view.needs_search(p.level);
    p.search = RowSearch<index_t>{p.previous.targets, searched ? p.previous.degree : 0, x};
    p.searching = true;
  } else if (!p.search.advance()) {
    keep_fault(p.walk, kUnsortedWalkRow);
    return true;
  }
  if (!p.search.done()) {
    __builtin_prefetch(p.search.next_probe());
    return false;
  }
  int64_t fault = 0;
  if (p.level < view.bias_of(is_previous, p.search.membership())) {
    fault = view.take(p.walk, t, p.row, p.offset);
  } else if (++p.trial < kMaxTrials) {
    const Trial next = view.trial(p.walk, t, p.trial, p.row);
    p.offset = next.offset;
    p.level = next.level;
    __builtin_prefetch(p.row.targets + p.offset);
    p.searching = false;
    return false;
  } else {
    fault = view.draw_enumerated(p.walk, t, p.row, p.previous, &p.offset);
    if (fault == 0) fault = view.take(p.walk, t, p.row, p.offset);
  }
  if (fault != 0) keep_fault(p.walk, fault);
  return true;
}

// The node2vec moves of a group under way: their trials, kept in place, and the positions of
// those not over yet (rounds drop the finished ones from the list, not the trials).
template <typename index_t, typename weight_t>
struct GroupTrials {
  std::array<PendingTrial<index_t, weight_t>, kWalkGroup> trial;
  std::array<int32_t, kWalkGroup> pending;
};

// Step t of the group's live walks, `walks[0 .. count)`: first-order moves at once; node2vec's
// trials in rounds over all the group's pending moves, so that their candidates' reads and their
// searches' probes, each a likely cache miss and each depending on the one before, overlap
// across walks. `first_offset[i]` is walks[i]'s first candidate when prefetch_move drew it, else
// -1, and for node2vec `first_level[i]` its level.
template <typename index_t, typename weight_t, typename Fault>
void step_group(const WalkView<index_t, weight_t>& view, const int64_t* walks, int32_t count,
                int64_t t, const int64_t* first_offset, const double* first_level,
                GroupTrials<index_t, weight_t>& trials, const Fault& keep_fault) {
  int32_t n = 0;
  for (int32_t i = 0; i < count; ++i) {
    const int64_t w = walks[i];
    const WalkMove<index_t, weight_t> move = view.begin_step(w, t);
    int64_t fault = move.result;
    if (move.draws) {
      if (move.previous >= 0) {
        const Trial drawn = first_offset[i] >= 0 ? Trial{first_offset[i], first_level[i]}
                                                 : view.trial(w, t, 0, move.row);
        PendingTrial<index_t, weight_t>& p = trials.trial[n];
        p.walk = w;
        p.trial = 0;
        p.offset = drawn.offset;
        p.level = drawn.level;
        p.row = move.row;
        p.previous = view.previous_row(move.previous);
        p.searching = false;
        trials.pending[n] = n;
        ++n;
        continue;
      }
      const int64_t drawn = first_offset[i];
      const int64_t offset = drawn >= 0 ? drawn : view.candidate(w, t, move.row);
      fault = view.take(w, t, move.row, offset);
    }
    if (fault != 0) keep_fault(w, fault);
  }
  while (n > 0) {
    int32_t kept = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t j = trials.pending[i];
      if (!advance_trial(view, t, trials.trial[j], keep_fault)) trials.pending[kept++] = j;
    }
    n = kept;
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
// time. A walk alone waits for each read in turn (its row's bounds, the target it drew, node2vec's
// search of the previous row; its next row depends on the target), but the steps of different
// walks are independent: the group's row bounds are prefetched together, then what each walk's
// move reads, and only then does each walk step, mostly from cache. A walk that ends (a dead end,
// a restart that ends it, a fault) leaves the group's list with its outputs padded to the end, so
// the later steps do not test it again: which walks have ended is unpredictable, and such tests
// cost mispredicted branches in every loop over the group.
template <typename index_t, typename weight_t, typename Fault>
void walk_group(const WalkView<index_t, weight_t>& view, int64_t begin, int64_t end,
                const Fault& keep_fault) {
  GroupTrials<index_t, weight_t> trials{};
  TORCH_INTERNAL_ASSERT(end - begin <= kWalkGroup);
  std::array<int64_t, kWalkGroup> first_offset, live;
  std::array<double, kWalkGroup> first_level;
  int32_t count = 0;
  for (int64_t w = begin; w < end; ++w) live[count++] = w;
  for (int64_t t = 0; t < view.length && count > 0; ++t) {
    for (int32_t i = 0; i < count; ++i) {
      const int64_t current = view.node(live[i], t);
      if (current < view.num_nodes) __builtin_prefetch(view.indptr + current);
    }
    for (int32_t i = 0; i < count; ++i) {
      first_offset[i] = prefetch_move(view, live[i], t, &first_level[i]);
    }
    step_group(view, live.data(), count, t, first_offset.data(), first_level.data(), trials,
               keep_fault);
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

struct CpuRandomWalk {
  static constexpr WalkSchedule kAutoSchedule = WalkSchedule::kSample;

  template <typename index_t, typename weight_t>
  static int64_t run(const WalkView<index_t, weight_t>& view, const at::Tensor& nodes,
                     WalkSchedule schedule) {
    if (!valid_offset_ends(view.indptr, view.num_nodes, view.num_edges)) {
      return encode_walk_fault(0, kBadOffsetEnds);
    }
    const int64_t num_walks = nodes.size(0);
    std::atomic<int64_t> first_fault{kNoWalkFault};
    auto keep_fault = [&](int64_t w, int64_t fault) {
      keep_smallest(first_fault, encode_walk_fault(w, fault));  // names the first bad walk
    };
    auto step = [&](int64_t w, int64_t t) {
      const int64_t fault = view.step(w, t);
      if (fault != 0) keep_fault(w, fault);
    };
    if (schedule == WalkSchedule::kSample) {
      at::parallel_for(0, num_walks, kWalkGrain, [&](int64_t begin, int64_t end) {
        for (int64_t group = begin; group < end; group += kWalkGroup) {
          const int64_t group_end = std::min(end, group + kWalkGroup);
          walk_group(view, group, group_end, keep_fault);
          // While the group's slots are in cache.
          if (view.eid) name_edges(view, group * view.length, group_end * view.length, keep_fault);
        }
      });
      return first_fault.load();
    }
    for (int64_t t = 0; t < view.length; ++t) {
      // Ended walks (node -1) sort first and only pad.
      const at::Tensor order =
          std::get<1>(at::sort(nodes.select(1, t), c10::optional<bool>(true), 0, false));
      const int64_t* walk_of = order.data_ptr<int64_t>();
      at::parallel_for(0, num_walks, kStepGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) step(walk_of[i], t);
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
