// CPU reference for frontier_sample (frontier_sample.h states the semantics): samplers in
// parallel (the paper's inter-subgraph parallelism, Algorithm 5), each popping through its own
// Dashboard, each thread keeping several in flight (SamplerBatch).
#include "sampling/frontier_sample.h"

#include "common/member_bits.h"
#include "common/philox.h"
#include "sampling/dashboard.h"
#include "sampling/neighbor_draw.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <vector>

namespace fastgl::sampling {
namespace {

// One sampler's Dashboard (Zeng et al., §IV-B; its rules in dashboard.h): DB, a block of entries
// per walker, each naming it in IA; IA, per block the walker's vertex (kPoppedWalker once
// popped), where its entries start and how many, and its weight. An entry stands for `entry_weight`
// units of weight, the block's last for the rest (the paper's Dashboard: entry_weight 1, an entry
// per unit of degree). Every entry below `fill_` names a block, and only those are probed: what
// lies above is never read, so DB is neither cleared between samplers nor past the fill mark.
// Reused from sampler to sampler.
class Dashboard {
 public:
  void reset(int64_t capacity, int64_t entry_weight, double eta) {
    eta_ = eta;
    db_.resize(capacity);
    blocks_.clear();
    fill_ = live_entries_ = 0;
    entry_weight_ = entry_weight;
  }

  bool empty() const { return live_entries_ == 0; }

  // Appends a walker at `vertex` of `weight` (Algorithm 4, ADD_TO_FRONTIER), first compacting
  // DB when its entries would pass its end.
  void add(int64_t vertex, int64_t weight) {
    if (weight == 0) return;  // a walker nothing can pop
    const int64_t entries = dashboard_entries(weight, entry_weight_);
    if (fill_ + entries > static_cast<int64_t>(db_.size())) cleanup(entries);
    std::fill_n(db_.begin() + fill_, entries, static_cast<int64_t>(blocks_.size()));
    blocks_.push_back(DashboardBlock{vertex, fill_, entries, weight});
    fill_ += entries;
    live_entries_ += entries;
  }

  // Pops a walker (Algorithm 4, POP_FRONTIER): uniform probes of DB below the fill mark, drawn
  // from `rng` at indices *draw, *draw + 1, ..., until one hits a live walker's entry and keeps
  // it: always a full entry, a block's last with probability its share of entry_weight (one
  // more draw). Each walker thus comes with probability proportional to its weight. The walker
  // is then marked popped; returns its vertex. The Dashboard must not be empty.
  int64_t pop(RandomStream& rng, uint64_t* draw) {
    // Dead entries pile up below the fill mark between cleanups.
    if (needs_compaction(fill_, live_entries_, eta_)) cleanup(0);
    while (true) {
      const int64_t at = rng.below((*draw)++, fill_);
      // A popped walker's entries keep its block, marked popped in IA (the paper writes INV
      // over them): the probe tells them apart alike, without a write per entry.
      DashboardBlock& block = blocks_[db_[at]];
      if (block.vertex == kPoppedWalker) continue;
      const int64_t share = probe_share(block, at, entry_weight_);
      if (share < entry_weight_ && rng.below((*draw)++, entry_weight_) >= share) continue;
      live_entries_ -= block.entries;
      const int64_t vertex = block.vertex;
      block.vertex = kPoppedWalker;
      return vertex;
    }
  }

 private:
  static_assert(sizeof(DashboardBlock) + sizeof(int64_t) <= kDashboardEntryBytes);

  // Moves the live blocks to DB's front in order (Algorithm 4, CLEANUP), renumbering them, and
  // grows DB to eta * (their entries + `room`), at least doubling it, when it is smaller: filled
  // again after a few adds, a DB just big enough made walkers crowding the hubs of Slashdot
  // clean up so often that the cleanups took a fifth of the sampler's time.
  void cleanup(int64_t room) {
    int64_t fill = 0, kept = 0;
    for (const DashboardBlock& block : blocks_) {
      if (block.vertex == kPoppedWalker) continue;
      // Blocks keep their order, so `fill` is at or before this block's start: the writes never
      // reach a live block not yet moved.
      std::fill_n(db_.begin() + fill, block.entries, kept);
      blocks_[kept++] = DashboardBlock{block.vertex, fill, block.entries, block.weight};
      fill += block.entries;
    }
    blocks_.resize(kept);
    fill_ = fill;
    const int64_t size = grown_capacity(static_cast<int64_t>(db_.size()), fill_, room, eta_);
    if (size > static_cast<int64_t>(db_.size())) {
      // Walkers crowding a hub of an uncapped skewed graph can ask for eta * m times its entries.
      check_output_fits(kFrontierOp, "a sampler's Dashboard (cap max_entries, or lower eta)", size,
                        kDashboardEntryBytes, at::Device(at::kCPU));
      db_.resize(size);
    }
  }

  std::vector<int64_t> db_;
  std::vector<DashboardBlock> blocks_;
  int64_t fill_ = 0, live_entries_ = 0, entry_weight_ = 1;
  double eta_ = 0;  // the enlargement factor, set by reset
};

// The straightforward pop the paper starts from (§IV-A), O(m) per pop: one uniform draw below
// the walkers' total weight, found by a scan of their running sum. The walker a move pops keeps
// its slot for the vertex the move adds.
class WalkerScan {
 public:
  void reset(int64_t /*capacity*/, int64_t /*entry_weight*/, double /*eta*/) {
    vertex_.clear();
    weight_.clear();
    total_ = 0;
    freed_ = -1;
  }

  bool empty() const { return total_ == 0; }

  void add(int64_t vertex, int64_t weight) {
    if (freed_ >= 0) {
      vertex_[freed_] = vertex;
      weight_[freed_] = weight;
      freed_ = -1;
    } else {
      vertex_.push_back(vertex);
      weight_.push_back(weight);
    }
    total_ += weight;
  }

  int64_t pop(RandomStream& rng, uint64_t* draw) {
    const int64_t share = rng.below((*draw)++, total_);
    int64_t walker = 0;
    for (int64_t sum = weight_[0]; sum <= share; sum += weight_[++walker]) {
    }
    total_ -= weight_[walker];
    weight_[walker] = 0;
    freed_ = walker;
    return vertex_[walker];
  }

 private:
  std::vector<int64_t> vertex_, weight_;
  int64_t total_ = 0, freed_ = -1;
};

// The popping weight of `vertex` (its in-degree, capped), or -1 with *bad_node set for a bad row.
template <typename index_t>
int64_t weight_of(const FrontierView<index_t>& run, int64_t vertex, int64_t* bad_node) {
  const int64_t weight = frontier_weight(run.indptr, vertex, run.num_edges, run.max_entries);
  if (weight < 0) *bad_node = vertex;
  return weight;
}

// Sampler s's first frontier, drawn from `rng` and added to `dashboard`; *draw becomes the
// stream's next draw. Returns the FrontierFault, *bad_node the vertex at fault.
template <typename index_t, typename Pop>
int64_t start_sampler(const FrontierView<index_t>& run, int64_t s, RandomStream& rng,
                      uint64_t* draw, Pop& dashboard, MemberBits& seen, int64_t* bad_node) {
  const int64_t m = run.frontier_size;
  int64_t* first = run.frontier + s * m;
  // Floyd's draws 0 .. m-1, membership by a bit per vertex (empty before and after): a scan
  // would cost O(m^2) for m walkers, and a hash set, an allocation and a probe per walker, made
  // the first frontier about a fifth of a sampler's time at budget 2m on Slashdot.
  int64_t recorded = 0;
  draw_uniform_without_replacement(rng, run.num_nodes, m, first,
                                   [&](const int64_t* chosen, int64_t drawn, int64_t pick) {
                                     for (; recorded < drawn; ++recorded) {
                                       seen.set(chosen[recorded]);
                                     }
                                     return seen.has(pick);
                                   });
  for (int64_t i = 0; i < m; ++i) seen.clear(first[i]);
  *draw = static_cast<uint64_t>(m);
  dashboard.reset(run.initial_capacity, run.entry_weight, run.eta);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t weight = weight_of(run, first[i], bad_node);
    if (weight < 0) return kBadFrontierRow;
    dashboard.add(first[i], weight);
  }
  return kNoFrontierFault;
}

// A sampler in flight and its move under way: the walker popped (`u`), then the in-edge slot
// drawn for it, then the in-neighbor it moves to (`v`).
template <typename Pop>
struct Sampler {
  int64_t s = -1;
  RandomStream rng{0, 0};
  uint64_t draw = 0;
  Pop dashboard;
  bool live = true;
  int64_t u = -1, slot = -1, v = -1;
};

// The samplers a thread keeps in flight (SamplerBatch): up to 16, as long as their pop structures
// start within 1 MiB together, about a core's L2 cache: the paper's Dashboard (an entry per unit
// of degree) takes megabytes on a large graph, and several of them in flight ran at half the
// rate of one at a time.
int64_t samplers_in_flight(int64_t pop_bytes) {
  constexpr int64_t kMaxInFlight = 16, kInFlightBytes = int64_t{1} << 20;
  return std::clamp<int64_t>(kInFlightBytes / std::max<int64_t>(pop_bytes, 1), 1, kMaxInFlight);
}

// Samplers [begin, end) of one thread, all in flight, one move of each in turn. A move is
// three reads, each depending on the one before (the popped vertex's row bounds, the neighbor
// drawn from its row, that neighbor's row bounds), out of cache on a large graph; a sampler alone
// waits for each. The samplers' moves are independent, so each stage runs over all of them,
// prefetching what the next stage reads: their reads overlap. Each sampler draws from its own
// stream, so the samples are the same as one sampler at a time.
template <typename index_t, typename Pop>
class SamplerBatch {
 public:
  SamplerBatch(const FrontierView<index_t>& run, int64_t* bad_nodes,
               std::atomic<int64_t>& first_fault)
      : run_(run), bad_nodes_(bad_nodes), first_fault_(first_fault), seen_(run.num_nodes) {}

  // The pop structures are kept from batch to batch, so their memory is allocated once.
  void sample(int64_t begin, int64_t end) {
    samplers_.resize(end - begin);
    live_ = end - begin;
    for (int64_t s = begin; s < end; ++s) {
      Sampler<Pop>& sampler = samplers_[s - begin];
      sampler.s = s;
      sampler.rng = RandomStream(run_.key, static_cast<uint64_t>(s));
      sampler.live = true;
      const int64_t code = start_sampler(run_, s, sampler.rng, &sampler.draw, sampler.dashboard,
                                         seen_, &bad_nodes_[s]);
      if (code != kNoFrontierFault) fault(sampler, code);
    }
    for (int64_t k = 0; k < run_.moves && live_ > 0; ++k) {
      for (Sampler<Pop>& sampler : samplers_) pop(sampler, k);
      for (Sampler<Pop>& sampler : samplers_) draw_neighbor(sampler);
      for (Sampler<Pop>& sampler : samplers_) read_neighbor(sampler);
      for (Sampler<Pop>& sampler : samplers_) add_neighbor(sampler, k);
    }
  }

 private:
  // The sampler takes no more moves.
  void retire(Sampler<Pop>& sampler) {
    sampler.live = false;
    --live_;
  }

  // The sampler ends with FrontierFault `code`: the smallest sampler's is the op's error.
  void fault(Sampler<Pop>& sampler, int64_t code) {
    retire(sampler);
    keep_smallest(first_fault_, sampler.s * kNumFrontierFaults + code);
  }

  // Sampler s's pop and add of move k.
  int64_t* popped(int64_t s, int64_t k) const { return run_.popped + s * run_.moves + k; }
  int64_t* added(int64_t s, int64_t k) const { return run_.added + s * run_.moves + k; }

  // Move k's pop, or, should no walker be able to move, the end of the sampler's moves, which
  // are padded with -1.
  void pop(Sampler<Pop>& sampler, int64_t k) {
    if (!sampler.live) return;
    if (sampler.dashboard.empty()) {
      retire(sampler);
      std::fill(popped(sampler.s, k), popped(sampler.s + 1, 0), -1);
      std::fill(added(sampler.s, k), added(sampler.s + 1, 0), -1);
      return;
    }
    sampler.u = sampler.dashboard.pop(sampler.rng, &sampler.draw);
    __builtin_prefetch(run_.indptr + sampler.u);
  }

  void draw_neighbor(Sampler<Pop>& sampler) {
    if (!sampler.live) return;
    const int64_t start = run_.indptr[sampler.u];
    const int64_t degree = run_.indptr[sampler.u + 1] - start;  // checked when u joined
    sampler.slot = start + sampler.rng.below(sampler.draw++, degree);
    __builtin_prefetch(run_.indices + sampler.slot);
  }

  void read_neighbor(Sampler<Pop>& sampler) {
    if (!sampler.live) return;
    sampler.v = static_cast<int64_t>(run_.indices[sampler.slot]);
    if (sampler.v < 0 || sampler.v >= run_.num_nodes) {
      bad_nodes_[sampler.s] = sampler.u;
      fault(sampler, kBadFrontierNeighbor);
      return;
    }
    __builtin_prefetch(run_.indptr + sampler.v);
  }

  void add_neighbor(Sampler<Pop>& sampler, int64_t k) {
    if (!sampler.live) return;
    const int64_t weight = weight_of(run_, sampler.v, &bad_nodes_[sampler.s]);
    if (weight < 0) {
      fault(sampler, kBadFrontierRow);
      return;
    }
    sampler.dashboard.add(sampler.v, weight);
    *popped(sampler.s, k) = sampler.u;
    *added(sampler.s, k) = sampler.v;
  }

  const FrontierView<index_t>& run_;
  int64_t* bad_nodes_;
  std::atomic<int64_t>& first_fault_;
  MemberBits seen_;  // a first frontier's vertices while it is drawn
  std::vector<Sampler<Pop>> samplers_;
  int64_t live_ = 0;
};

struct CpuFrontierSample {
  template <typename index_t>
  static FrontierFaultReport run(const FrontierView<index_t>& run, FrontierPop pop) {
    if (!valid_offset_ends(run.indptr, run.num_nodes, run.num_edges)) {
      return {kBadFrontierOffsetEnds, -1};
    }
    std::atomic<int64_t> first_fault{kNoFrontierFaultFound};
    std::vector<int64_t> bad_nodes(run.num_subgraphs, -1);
    auto sample_all = [&](auto pop_structure, int64_t pop_bytes) {
      const int64_t in_flight = samplers_in_flight(pop_bytes);
      at::parallel_for(0, run.num_subgraphs, 1, [&](int64_t begin, int64_t end) {
        SamplerBatch<index_t, decltype(pop_structure)> batch(run, bad_nodes.data(), first_fault);
        for (int64_t first = begin; first < end; first += in_flight) {
          batch.sample(first, std::min(end, first + in_flight));
        }
      });
    };
    if (pop == FrontierPop::kDashboard) {
      sample_all(Dashboard{}, run.initial_capacity * kDashboardEntryBytes);
    } else {  // vertex and weight per walker
      sample_all(WalkerScan{}, run.frontier_size * 2 * int64_t{sizeof(int64_t)});
    }
    const int64_t fault = first_fault.load();
    if (fault == kNoFrontierFaultFound) return {};
    return {fault, bad_nodes[fault / kNumFrontierFaults]};
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("frontier_sample", &frontier_sample_entry<CpuFrontierSample>);
}

}  // namespace fastgl::sampling
