// CPU reference for frontier_sample (frontier_sample.h states the semantics): samplers in
// parallel (the paper's inter-subgraph parallelism, Algorithm 5), each popping through its own
// Dashboard.
#include "sampling/frontier_sample.h"

#include "common/page_advice.h"
#include "common/philox.h"
#include "sampling/neighbor_draw.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <unordered_set>
#include <vector>

namespace fastgl::sampling {
namespace {

// A popped walker's vertex in IA.
constexpr int64_t kPopped = -1;

// One sampler's Dashboard (Zeng et al., §IV-B): DB, one entry per unit of a walker's weight, each
// naming its block in IA; IA, per block the walker's vertex (kPopped once popped) and its size.
// Every entry below `fill_` names a block, and only those are probed: what lies above is never
// read, so DB is neither cleared between samplers nor past the fill mark. Reused from sampler to
// sampler.
class Dashboard {
 public:
  void reset(int64_t capacity) {
    db_.resize(capacity);
    block_vertex_.clear();
    block_size_.clear();
    fill_ = live_entries_ = 0;
  }

  bool empty() const { return live_entries_ == 0; }

  // Appends a walker at `vertex` with `entries` entries (Algorithm 4, ADD_TO_FRONTIER), first
  // compacting DB when they would pass its end.
  void add(int64_t vertex, int64_t entries) {
    if (entries == 0) return;  // a walker nothing can pop
    if (fill_ + entries > static_cast<int64_t>(db_.size())) cleanup(entries);
    const int64_t block = static_cast<int64_t>(block_vertex_.size());
    block_vertex_.push_back(vertex);
    block_size_.push_back(entries);
    std::fill_n(db_.begin() + fill_, entries, block);
    fill_ += entries;
    live_entries_ += entries;
  }

  // Pops a walker (Algorithm 4, POP_FRONTIER): uniform probes of DB below the fill mark, drawn
  // from `rng` at indices *draw, *draw + 1, ..., until one hits a live walker's entry; the
  // walker is then marked popped. Returns its vertex. The Dashboard must not be empty.
  int64_t pop(RandomStream& rng, uint64_t* draw, double eta) {
    // Dead entries pile up below the fill mark between cleanups; compacting when they pass
    // (eta - 1) live ones keeps the expected probes per pop at most eta.
    if (static_cast<double>(fill_) > eta * static_cast<double>(live_entries_)) cleanup(0);
    // A popped walker's entries keep its block, marked popped in IA (the paper writes INV over
    // them): the probe tells them apart alike, without a write per unit of the hub's degree.
    int64_t block = 0;
    do {
      block = db_[rng.below((*draw)++, fill_)];
    } while (block_vertex_[block] == kPopped);
    live_entries_ -= block_size_[block];
    const int64_t vertex = block_vertex_[block];
    block_vertex_[block] = kPopped;
    return vertex;
  }

 private:
  // Moves the live blocks to DB's front in order (Algorithm 4, CLEANUP), renumbering them, and
  // doubles DB should `room` more entries still not fit after them.
  void cleanup(int64_t room) {
    int64_t fill = 0, kept = 0;
    for (size_t block = 0; block < block_vertex_.size(); ++block) {
      if (block_vertex_[block] == kPopped) continue;
      const int64_t size = block_size_[block];
      // Blocks keep their order, so `fill` is at or before this block's start: the writes never
      // reach a live block not yet moved.
      std::fill_n(db_.begin() + fill, size, kept);
      block_vertex_[kept] = block_vertex_[block];
      block_size_[kept] = size;
      fill += size;
      ++kept;
    }
    block_vertex_.resize(kept);
    block_size_.resize(kept);
    fill_ = fill;
    const int64_t needed = fill_ + room;
    if (needed > static_cast<int64_t>(db_.size())) {
      const int64_t size = std::max<int64_t>(needed, 2 * static_cast<int64_t>(db_.size()));
      // Walkers crowding a hub of an uncapped skewed graph can ask for m times its degree.
      check_output_fits(kFrontierOp, "a sampler's Dashboard (cap max_entries)", size, 8,
                        at::Device(at::kCPU));
      db_.resize(size);
    }
  }

  std::vector<int64_t> db_, block_vertex_, block_size_;
  int64_t fill_ = 0, live_entries_ = 0;
};

// The straightforward pop the paper starts from (§IV-A), O(m) per pop: one uniform draw below
// the walkers' total entries, found by a scan of their running sum. The walker a move pops keeps
// its slot for the vertex the move adds.
class WalkerScan {
 public:
  void reset(int64_t /*capacity*/) {
    vertex_.clear();
    entries_.clear();
    total_ = 0;
    freed_ = -1;
  }

  bool empty() const { return total_ == 0; }

  void add(int64_t vertex, int64_t entries) {
    if (freed_ >= 0) {
      vertex_[freed_] = vertex;
      entries_[freed_] = entries;
      freed_ = -1;
    } else {
      vertex_.push_back(vertex);
      entries_.push_back(entries);
    }
    total_ += entries;
  }

  int64_t pop(RandomStream& rng, uint64_t* draw, double /*eta*/) {
    const int64_t share = rng.below((*draw)++, total_);
    int64_t walker = 0;
    for (int64_t sum = entries_[0]; sum <= share; sum += entries_[++walker]) {
    }
    total_ -= entries_[walker];
    entries_[walker] = 0;
    freed_ = walker;
    return vertex_[walker];
  }

 private:
  std::vector<int64_t> vertex_, entries_;
  int64_t total_ = 0, freed_ = -1;
};

// The call's inputs and outputs, and one sampler's run over them.
template <typename index_t>
struct FrontierRun {
  const int64_t* indptr;
  const index_t* indices;
  int64_t num_nodes, num_edges, frontier_size, moves, max_entries;
  double eta;
  uint64_t key;
  int64_t initial_capacity;
  int64_t *frontier, *popped, *added;

  // Entries of `vertex` (its in-degree, capped), or -1 with *bad_node set for a bad row.
  int64_t entries_of(int64_t vertex, int64_t* bad_node) const {
    const int64_t start = indptr[vertex], stop = indptr[vertex + 1];
    if (!valid_adjacency(start, stop, num_edges)) {
      *bad_node = vertex;
      return -1;
    }
    const int64_t degree = stop - start;
    return max_entries > 0 ? std::min(degree, max_entries) : degree;
  }

  // Sampler s, popping through `dashboard` (a Dashboard or a WalkerScan); returns its
  // FrontierFault, *bad_node the vertex at fault.
  template <typename Pop>
  int64_t sample(int64_t s, Pop& dashboard, int64_t* bad_node) const {
    RandomStream rng(key, static_cast<uint64_t>(s));
    int64_t* first = frontier + s * frontier_size;
    // Floyd's draws 0 .. m-1, membership by hash: a scan would cost O(m^2) for m walkers.
    std::unordered_set<int64_t> seen;
    seen.reserve(2 * frontier_size);
    int64_t recorded = 0;
    draw_uniform_without_replacement(rng, num_nodes, frontier_size, first,
                                     [&](const int64_t* chosen, int64_t m, int64_t pick) {
                                       for (; recorded < m; ++recorded)
                                         seen.insert(chosen[recorded]);
                                       return seen.count(pick) > 0;
                                     });
    uint64_t draw = static_cast<uint64_t>(frontier_size);
    dashboard.reset(initial_capacity);
    for (int64_t i = 0; i < frontier_size; ++i) {
      const int64_t entries = entries_of(first[i], bad_node);
      if (entries < 0) return kBadFrontierRow;
      dashboard.add(first[i], entries);
    }
    int64_t* pops = popped + s * moves;
    int64_t* adds = added + s * moves;
    for (int64_t k = 0; k < moves; ++k) {
      if (dashboard.empty()) {
        std::fill(pops + k, pops + moves, -1);
        std::fill(adds + k, adds + moves, -1);
        break;
      }
      const int64_t u = dashboard.pop(rng, &draw, eta);
      const int64_t start = indptr[u], degree = indptr[u + 1] - start;  // checked when u joined
      const int64_t v = static_cast<int64_t>(indices[start + rng.below(draw++, degree)]);
      if (v < 0 || v >= num_nodes) {
        *bad_node = u;
        return kBadFrontierNeighbor;
      }
      const int64_t entries = entries_of(v, bad_node);
      if (entries < 0) return kBadFrontierRow;
      dashboard.add(v, entries);
      pops[k] = u;
      adds[k] = v;
    }
    return kNoFrontierFault;
  }
};

FrontierResult frontier_sample_cpu(const at::Tensor& indptr, const at::Tensor& indices,
                                   int64_t num_subgraphs, int64_t frontier_size, int64_t budget,
                                   double eta, int64_t max_entries, c10::string_view pop_method,
                                   int64_t seed) {
  const std::string pop = as_string(pop_method);
  check_frontier_sample_inputs(indptr, indices, num_subgraphs, frontier_size, budget, eta,
                               max_entries, pop);
  const int64_t moves = budget - frontier_size, num_nodes = indptr.numel() - 1;
  const auto options = indptr.options();
  at::Tensor frontier = empty_for_write({num_subgraphs, frontier_size}, options);
  at::Tensor popped = empty_for_write({num_subgraphs, moves}, options);
  at::Tensor added = empty_for_write({num_subgraphs, moves}, options);
  if (num_subgraphs == 0) return {frontier, popped, added};
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  FASTGL_CHECK(valid_offset_ends(indptr_c.data_ptr<int64_t>(), num_nodes, indices.numel()),
               kFrontierOp, kBadIndptrError);
  std::atomic<int64_t> first_fault{INT64_MAX};
  std::vector<int64_t> bad_nodes(num_subgraphs, -1);
  AT_DISPATCH_INDEX_TYPES(indices_c.scalar_type(), kFrontierOp, [&] {
    const FrontierRun<index_t> run{
        indptr_c.data_ptr<int64_t>(),
        indices_c.data_ptr<index_t>(),
        num_nodes,
        indices.numel(),
        frontier_size,
        moves,
        max_entries,
        eta,
        static_cast<uint64_t>(seed),
        dashboard_capacity(num_nodes, indices.numel(), frontier_size, max_entries, eta),
        frontier.data_ptr<int64_t>(),
        popped.data_ptr<int64_t>(),
        added.data_ptr<int64_t>()};
    auto sample_all = [&](auto pop) {
      at::parallel_for(0, num_subgraphs, 1, [&](int64_t begin, int64_t end) {
        decltype(pop) dashboard;
        for (int64_t s = begin; s < end; ++s) {
          const int64_t fault = run.sample(s, dashboard, &bad_nodes[s]);
          if (fault != kNoFrontierFault) keep_smallest(first_fault, s * kNumFrontierFaults + fault);
        }
      });
    };
    if (pop == "dashboard") {
      sample_all(Dashboard{});
    } else {
      sample_all(WalkerScan{});
    }
  });
  const int64_t fault = first_fault.load();
  if (fault != INT64_MAX) {
    raise_frontier_fault(fault, bad_nodes[fault / kNumFrontierFaults], num_nodes);
  }
  return {frontier, popped, added};
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("frontier_sample", &frontier_sample_cpu); }

}  // namespace fastgl::sampling
