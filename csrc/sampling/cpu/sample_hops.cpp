// CPU sample_hops (sample_hops.h): per batch and hop, one draw pass over the transits writes the
// neighbors, edge ids and targets straight into the batch's edge arrays, and one relabel pass
// turns the neighbors into local ids through the batch's hash table, which lives across hops
// (nothing is re-inserted or re-sorted). A window of at least as many batches as threads runs a
// batch per thread; fewer batches draw each hop's transits in parallel and relabel in order, so
// the first-occurrence numbering is the sequential one whatever the thread count.
#include "idmap/cpu/sharded_table.h"
#include "sampling/neighbor_draw.h"
#include "sampling/sample_hops.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>

namespace fastgl::sampling {
namespace {

using idmap::hash_id;
using idmap::IdTable;

constexpr int64_t kPairGrain = 256;
// How far ahead the relabel pass prefetches table slots: enough lookups in flight to hide a
// cache miss, few enough that the lines are still there when used.
constexpr int64_t kPrefetchDistance = 16;

template <typename index_t, typename weight_t>
struct Csc {
  const int64_t* col_start;
  const index_t* source;
  const weight_t* weight;  // null when unweighted
  const int64_t* eid;      // null: an edge's id is its slot
  int64_t num_nodes, num_edges;

  const weight_t* weights_of(int64_t node) const {
    return weight ? weight + col_start[node] : nullptr;
  }
};

// One mini-batch being sampled: its node keys (node id, or tree * N + node when disjoint) in
// local-id order, the table from key to local id, and its edges so far.
struct BatchSample {
  std::vector<int64_t> keys, row, col, edge_ids;
  std::vector<int64_t> node_counts, edge_counts;
  IdTable table;

  explicit BatchSample(int64_t num_seeds) : table(num_seeds) {}

  int64_t local_id(int64_t key) {
    const int64_t next = static_cast<int64_t>(keys.size());
    const int64_t local = table.find_or_insert(key, hash_id(key), next);
    if (local == next) keys.push_back(key);
    return local;
  }
};

struct BatchInput {
  int64_t index;
  const int64_t* seeds;
  int64_t num_seeds;
  int64_t* seed_local;  // output: local id of every seed
};

template <typename index_t, typename weight_t>
class HopSampler {
 public:
  HopSampler(const Csc<index_t, weight_t>& g, const HopsConfig& cfg) : g_(g), cfg_(cfg) {}

  BatchSample sample(const BatchInput& in) const {
    BatchSample batch(in.num_seeds);
    for (int64_t i = 0; i < in.num_seeds; ++i) {
      const int64_t key = cfg_.disjoint ? i * g_.num_nodes + in.seeds[i] : in.seeds[i];
      in.seed_local[i] = batch.local_id(key);
    }
    batch.node_counts.push_back(static_cast<int64_t>(batch.keys.size()));
    int64_t frontier_begin = 0;
    for (int64_t h = 0; h < static_cast<int64_t>(cfg_.fanouts.size()); ++h) {
      const int64_t frontier_end = static_cast<int64_t>(batch.keys.size());
      const int64_t first_edge = static_cast<int64_t>(batch.row.size());
      draw(in.index, cfg_.hop(h), frontier_begin, frontier_end, batch);
      relabel(first_edge, batch);
      batch.node_counts.push_back(static_cast<int64_t>(batch.keys.size()) - frontier_end);
      batch.edge_counts.push_back(static_cast<int64_t>(batch.row.size()) - first_edge);
      frontier_begin = cfg_.layerwise ? 0 : frontier_end;
    }
    return batch;
  }

 private:
  int64_t node_of(int64_t key) const { return cfg_.disjoint ? key % g_.num_nodes : key; }

  // Appends the edges the transits keys[begin, end) draw: row holds the neighbors' keys until
  // relabel() turns them into local ids. Pairs run in parallel (inline inside a batch-parallel
  // region); each writes its own slots behind a prefix sum of the draw counts.
  void draw(int64_t batch_index, const DrawConfig& hop, int64_t begin, int64_t end,
            BatchSample& batch) const {
    const int64_t num_pairs = end - begin;
    check_frontier_size(num_pairs);
    const int64_t* transit_key = batch.keys.data() + begin;
    std::vector<int64_t> offset(num_pairs + 1, 0);
    at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t t = node_of(transit_key[p]);
        const int64_t start = g_.col_start[t], stop = g_.col_start[t + 1];
        FASTGL_CHECK(valid_adjacency(start, stop, g_.num_edges), kHopsOp, kBadIndptrError,
                     " (node ", t, ")");
        offset[p + 1] = num_draws(hop, g_.weights_of(t), stop - start);
      }
    });
    for (int64_t p = 0; p < num_pairs; ++p) offset[p + 1] += offset[p];

    const int64_t first = static_cast<int64_t>(batch.row.size());
    for (auto* edges : {&batch.row, &batch.col, &batch.edge_ids}) {
      edges->resize(first + offset[num_pairs]);
    }
    at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        draw_slots(pair_stream(batch_index, p), hop, node_of(transit_key[p]), first + offset[p],
                   offset[p + 1] - offset[p], batch);
      }
      gather_sources(transit_key, begin, lo, hi, first, offset.data(), batch);
    });
  }

  // Pair `stream` draws `count` in-edges of transit t into edge_ids[first ..] as CSC slots.
  void draw_slots(uint64_t stream, const DrawConfig& hop, int64_t t, int64_t first, int64_t count,
                  BatchSample& batch) const {
    const int64_t start = g_.col_start[t];
    int64_t* slot = batch.edge_ids.data() + first;
    draw_neighbor_offsets(hop, stream, g_.weights_of(t), g_.col_start[t + 1] - start, count, slot);
    for (int64_t j = 0; j < count; ++j) slot[j] += start;
  }

  // For the edges of pairs lo .. hi, all drawn: the source key goes to row, the transit's local
  // id to col, and the edge id replaces the slot. The slots are random reads into `indices` and
  // `eid`, mostly cache misses; with every slot known up front they are prefetched a few edges
  // ahead, so many misses are in flight at once instead of one per pair.
  void gather_sources(const int64_t* transit_key, int64_t frontier_begin, int64_t lo, int64_t hi,
                      int64_t first, const int64_t* offset, BatchSample& batch) const {
    int64_t* slot = batch.edge_ids.data();
    const int64_t end = first + offset[hi];
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t tree_base = transit_key[p] - node_of(transit_key[p]);  // tree * N, or 0
      for (int64_t j = first + offset[p]; j < first + offset[p + 1]; ++j) {
        if (j + kPrefetchDistance < end) {
          const int64_t ahead = slot[j + kPrefetchDistance];
          __builtin_prefetch(g_.source + ahead);
          if (g_.eid) __builtin_prefetch(g_.eid + ahead);
        }
        const int64_t edge = slot[j];
        const int64_t source = static_cast<int64_t>(g_.source[edge]);
        FASTGL_CHECK(0 <= source && source < g_.num_nodes, kHopsOp, "indices has id ", source,
                     ", out of range for a graph of ", g_.num_nodes, " nodes");
        batch.row[j] = tree_base + source;
        batch.col[j] = frontier_begin + p;
        slot[j] = g_.eid ? g_.eid[edge] : edge;
      }
    }
  }

  // Fused-Map over the hop's neighbors in draw order: a key seen for the first time gets the
  // next local id. Table slots are prefetched a few keys ahead, so misses overlap.
  static void relabel(int64_t first_edge, BatchSample& batch) {
    int64_t* key = batch.row.data();
    const int64_t end = static_cast<int64_t>(batch.row.size());
    for (int64_t j = first_edge; j < end; ++j) {
      if (j + kPrefetchDistance < end) batch.table.prefetch(hash_id(key[j + kPrefetchDistance]));
      key[j] = batch.local_id(key[j]);
    }
  }

  const Csc<index_t, weight_t>& g_;
  const HopsConfig& cfg_;
};

template <typename T>
void copy_into(const std::vector<T>& from, T* to) {
  if (!from.empty()) std::memcpy(to, from.data(), from.size() * sizeof(T));
}

// Concatenates the batches' samples into the op's outputs (batch-major), in parallel.
template <typename index_t, typename weight_t>
HopsResult assemble(const std::vector<BatchSample>& batches, const Csc<index_t, weight_t>& g,
                    const HopsConfig& cfg, at::Tensor seed_local,
                    const at::TensorOptions& options) {
  const int64_t num_batches = static_cast<int64_t>(batches.size());
  const int64_t num_hops = static_cast<int64_t>(cfg.fanouts.size());
  std::vector<int64_t> node_start(num_batches + 1, 0), edge_start(num_batches + 1, 0);
  at::Tensor node_counts = at::empty({num_batches, num_hops + 1}, options);
  at::Tensor edge_counts = at::empty({num_batches, num_hops}, options);
  for (int64_t b = 0; b < num_batches; ++b) {
    node_start[b + 1] = node_start[b] + static_cast<int64_t>(batches[b].keys.size());
    edge_start[b + 1] = edge_start[b] + static_cast<int64_t>(batches[b].row.size());
    copy_into(batches[b].node_counts, node_counts.data_ptr<int64_t>() + b * (num_hops + 1));
    copy_into(batches[b].edge_counts, edge_counts.data_ptr<int64_t>() + b * num_hops);
  }
  at::Tensor nodes = at::empty({node_start[num_batches]}, options);
  at::Tensor in_degrees = at::empty({node_start[num_batches]}, options);
  at::Tensor tree = at::empty({cfg.disjoint ? node_start[num_batches] : 0}, options);
  at::Tensor row = at::empty({edge_start[num_batches]}, options);
  at::Tensor col = at::empty_like(row), edge_ids = at::empty_like(row);
  at::parallel_for(0, num_batches, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const BatchSample& batch = batches[b];
      copy_into(batch.row, row.data_ptr<int64_t>() + edge_start[b]);
      copy_into(batch.col, col.data_ptr<int64_t>() + edge_start[b]);
      copy_into(batch.edge_ids, edge_ids.data_ptr<int64_t>() + edge_start[b]);
      int64_t* node = nodes.data_ptr<int64_t>() + node_start[b];
      int64_t* degree = in_degrees.data_ptr<int64_t>() + node_start[b];
      for (size_t i = 0; i < batch.keys.size(); ++i) {
        const int64_t key = batch.keys[i];
        node[i] = cfg.disjoint ? key % g.num_nodes : key;
        degree[i] = g.col_start[node[i] + 1] - g.col_start[node[i]];
        if (cfg.disjoint) tree.data_ptr<int64_t>()[node_start[b] + i] = key / g.num_nodes;
      }
    }
  });
  return {nodes, node_counts, row, col, edge_ids, edge_counts, seed_local, in_degrees, tree};
}

template <typename index_t, typename weight_t>
HopsResult sample_hops_typed(const Csc<index_t, weight_t>& g, const at::Tensor& seeds,
                             const at::Tensor& seed_ptr, const HopsConfig& cfg) {
  const int64_t num_batches = seed_ptr.numel() - 1;
  const int64_t* seed_offset = seed_ptr.data_ptr<int64_t>();
  check_seed_offsets(seed_offset, num_batches, seeds.numel(), g.num_nodes, cfg.disjoint);
  at::Tensor seed_local = at::empty({seeds.numel()}, seeds.options());
  const HopSampler<index_t, weight_t> sampler(g, cfg);
  std::vector<BatchSample> batches;
  batches.reserve(num_batches);
  for (int64_t b = 0; b < num_batches; ++b) batches.emplace_back(0);
  auto sample_batch = [&](int64_t b) {
    batches[b] = sampler.sample(BatchInput{b, seeds.data_ptr<int64_t>() + seed_offset[b],
                                           seed_offset[b + 1] - seed_offset[b],
                                           seed_local.data_ptr<int64_t>() + seed_offset[b]});
  };
  if (num_batches >= at::get_num_threads()) {
    at::parallel_for(0, num_batches, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) sample_batch(b);
    });
  } else {
    for (int64_t b = 0; b < num_batches; ++b) sample_batch(b);
  }
  return assemble(batches, g, cfg, seed_local, seeds.options());
}

}  // namespace

HopsResult sample_hops_cpu(const HopsInputs& in) {
  return dispatch_csc_types(in.indices, in.weight, [&](auto index_tag, auto weight_ptr) {
    using index_t = decltype(index_tag);
    using weight_t = std::remove_const_t<std::remove_pointer_t<decltype(weight_ptr)>>;
    const Csc<index_t, weight_t> g{in.indptr.data_ptr<int64_t>(), in.indices.data_ptr<index_t>(),
                                   weight_ptr,
                                   in.eid.defined() ? in.eid.data_ptr<int64_t>() : nullptr,
                                   in.indptr.numel() - 1, in.indices.numel()};
    return sample_hops_typed(g, in.seeds, in.seed_ptr, in.cfg);
  });
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("sample_hops", &sample_hops_entry<&sample_hops_cpu>); }

}  // namespace fastgl::sampling
