// CPU sample_hops (sample_hops.h). The batches of a window are sampled one after another; each
// hop of a batch draws its transits' neighbors in parallel chunks, writing neighbors, edge ids
// and targets straight into the window's edge arrays, while one thread relabels the drawn
// chunks in order through the batch's hash table (Fused-Map), which lives across hops: nothing
// is re-inserted or re-sorted, and the first-occurrence numbering is the sequential one
// whatever the thread count.
#include "sampling/sample_hops.h"
#include "common/block_pool.h"
#include "common/ordered_pipeline.h"
#include "common/pooled_tensor.h"
#include "idmap/cpu/growing_id_map.h"
#include "sampling/neighbor_draw.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <utility>
#include <vector>

namespace fastgl::sampling {
namespace {

using idmap::GrowingIdMap;

constexpr int64_t kPairGrain = 256;
// How far ahead the passes over random nodes and edges prefetch what they will read (indptr
// entries, `indices`, `eid`): enough misses in flight to hide their latency, few enough that the
// lines are still there when used.
constexpr int64_t kPrefetchDistance = 16;

// The window's arrays and a hop's scratch come from the block pool: a sampler call's buffers are
// the size of the last call's, and recycled they cost no page faults (block_pool.h). Resizing
// leaves new elements uninitialized: edge arrays are sized first and then written in full.
using Buffer = PooledVector<int64_t>;

// What a window of batches has sampled so far, in the op's output layout: batch-major edges
// (each batch's hop by hop) and nodes, and the per-batch counts.
struct WindowSample {
  Buffer row, col, edge_ids, nodes, in_degrees, tree;
  std::vector<int64_t> node_counts, edge_counts;  // [B][L+1] and [B][L], flattened
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

  // Samples every hop of one batch, appending its edges and nodes to the window's.
  void sample(const BatchInput& in, WindowSample& out) const {
    GrowingIdMap nodes;
    for (int64_t i = 0; i < in.num_seeds; ++i) {
      in.seed_local[i] = cfg_.disjoint ? i * g_.num_nodes + in.seeds[i] : in.seeds[i];
    }
    nodes.relabel(in.seed_local, in.num_seeds);
    out.node_counts.push_back(nodes.size());
    int64_t frontier_begin = 0;
    for (int64_t h = 0; h < static_cast<int64_t>(cfg_.fanouts.size()); ++h) {
      const int64_t frontier_end = nodes.size();
      const int64_t first_edge = static_cast<int64_t>(out.row.size());
      draw_and_relabel(in.index, cfg_.hop(h), frontier_begin, frontier_end, nodes, out);
      out.node_counts.push_back(nodes.size() - frontier_end);
      out.edge_counts.push_back(static_cast<int64_t>(out.row.size()) - first_edge);
      frontier_begin = cfg_.layerwise ? 0 : frontier_end;
    }
    append_nodes(nodes.keys(), out);
  }

 private:
  int64_t node_of(int64_t key) const { return cfg_.disjoint ? key % g_.num_nodes : key; }

  Adjacency in_edges_of(int64_t node) const {
    return sampling::in_edges_of(kHopsOp, g_.col_start, node, g_.num_edges);
  }

  // Transits are random nodes, so their indptr entries are cache misses: requested a few
  // transits ahead, they overlap.
  void prefetch_offsets(int64_t key) const { __builtin_prefetch(g_.col_start + node_of(key)); }

  // Appends the edges the transits keys[begin, end) draw, their sources relabeled (Fused-Map).
  // Chunks of pairs are drawn in parallel, each into its own slots behind a prefix sum of the
  // draw counts, while one thread relabels the drawn chunks in order (row holds a neighbor's
  // key until then), so the first-occurrence numbering is the sequential one.
  void draw_and_relabel(int64_t batch_index, const DrawConfig& hop, int64_t begin, int64_t end,
                        GrowingIdMap& nodes, WindowSample& window) const {
    const int64_t num_pairs = end - begin;
    check_frontier_size(num_pairs);
    const int64_t* transit_key = nodes.keys().data() + begin;
    PooledVector<int64_t> offset(num_pairs + 1, 0);
    // Each transit's in-edge range, read here once: the draws below then find it in order
    // instead of missing on the transit's indptr entries a second time. Not zero-filled: the
    // counting pass writes every entry.
    PooledVector<Adjacency> adjacency(num_pairs);
    at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        if (p + kPrefetchDistance < hi) prefetch_offsets(transit_key[p + kPrefetchDistance]);
        adjacency[p] = in_edges_of(node_of(transit_key[p]));
        offset[p + 1] = checked_draws(
            kHopsOp, num_draws(hop, g_.weight_from(adjacency[p].start), adjacency[p].degree),
            node_of(transit_key[p]));
      }
    });
    check_draws_fit(kHopsOp, num_pairs, hop.fanout, hop.replace, g_.num_edges);
    for (int64_t p = 0; p < num_pairs; ++p) offset[p + 1] += offset[p];

    const int64_t first = static_cast<int64_t>(window.row.size());
    check_output_fits(kHopsOp, "the sampled edges", first + offset[num_pairs], 3 * sizeof(int64_t),
                      at::kCPU);
    for (auto* edges : {&window.row, &window.col, &window.edge_ids}) {
      edges->resize(first + offset[num_pairs]);
    }
    // The relabeling appends to the keys the transits point into: they are copied first.
    const PooledVector<int64_t> transits(transit_key, transit_key + num_pairs);
    auto pairs_of = [&](int64_t chunk) {
      return std::make_pair(chunk * kPairGrain, std::min(num_pairs, (chunk + 1) * kPairGrain));
    };
    produce_parallel_consume_in_order(
        (num_pairs + kPairGrain - 1) / kPairGrain,
        [&](int64_t chunk) {
          const auto [lo, hi] = pairs_of(chunk);
          for (int64_t p = lo; p < hi; ++p) {
            draw_slots(pair_stream(batch_index, p), hop, adjacency[p], first + offset[p],
                       offset[p + 1] - offset[p], window);
          }
          gather_sources(transits.data(), begin, lo, hi, first, offset.data(), window);
        },
        [&](int64_t chunk) {
          const auto [lo, hi] = pairs_of(chunk);
          nodes.relabel(window.row.data() + first + offset[lo], offset[hi] - offset[lo]);
        });
  }

  // Pair `stream` draws `count` of a transit's in-edges into edge_ids[first ..] as CSC slots.
  void draw_slots(uint64_t stream, const DrawConfig& hop, Adjacency in_edges, int64_t first,
                  int64_t count, WindowSample& window) const {
    int64_t* slot = window.edge_ids.data() + first;
    draw_neighbor_offsets(hop, stream, g_.weight_from(in_edges.start), in_edges.degree, count,
                          slot);
    for (int64_t j = 0; j < count; ++j) slot[j] += in_edges.start;
  }

  // For the edges of pairs lo .. hi, all drawn: the source key goes to row, the transit's local
  // id to col, and the edge id replaces the slot. The slots are random reads into `indices` and
  // `eid`, mostly cache misses; with every slot known up front they are prefetched a few edges
  // ahead, so many misses are in flight at once instead of one per pair.
  void gather_sources(const int64_t* transit_key, int64_t frontier_begin, int64_t lo, int64_t hi,
                      int64_t first, const int64_t* offset, WindowSample& window) const {
    int64_t* slot = window.edge_ids.data();
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
        check_source_id(kHopsOp, source, g_.num_nodes);
        window.row[j] = tree_base + source;
        window.col[j] = frontier_begin + p;
        slot[j] = g_.eid ? g_.eid[edge] : edge;
      }
    }
  }

  // The batch's nodes as graph ids, with their in-degrees (and trees when disjoint).
  void append_nodes(const GrowingIdMap::Keys& keys, WindowSample& out) const {
    const int64_t first = static_cast<int64_t>(out.nodes.size());
    const int64_t n = static_cast<int64_t>(keys.size());
    out.nodes.resize(first + n);
    out.in_degrees.resize(first + n);
    if (cfg_.disjoint) out.tree.resize(first + n);
    at::parallel_for(0, n, kPairGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        if (i + kPrefetchDistance < hi) prefetch_offsets(keys[i + kPrefetchDistance]);
        const int64_t node = node_of(keys[i]);
        out.nodes[first + i] = node;
        out.in_degrees[first + i] = in_edges_of(node).degree;
        if (cfg_.disjoint) out.tree[first + i] = keys[i] / g_.num_nodes;
      }
    });
  }

  const Csc<index_t, weight_t>& g_;
  const HopsConfig& cfg_;
};

// Sizes the window's buffers by its first batch, with some headroom: growing them batch by batch
// would move them to fresh memory again and again, which costs page faults on top of the copies.
void reserve_for_window(WindowSample& out, int64_t num_batches) {
  for (Buffer* buffer :
       {&out.row, &out.col, &out.edge_ids, &out.nodes, &out.in_degrees, &out.tree}) {
    buffer->reserve(buffer->size() * num_batches * 5 / 4);
  }
}

// Every batch's CSC offsets over its nodes (sample_hops.h's col_ptr), hop-wise: a batch's edge
// targets ascend, so offset v is the index of its first edge whose target is >= v. Each edge
// writes the offsets of the targets from the one before it (exclusive) up to its own: every
// entry once, in parallel over the edges.
at::Tensor in_edge_offsets(const WindowSample& out, int64_t num_batches, int64_t num_hops,
                           const at::TensorOptions& options) {
  std::vector<int64_t> node_end(num_batches), edge_end(num_batches);
  int64_t nodes = 0, edges = 0;
  for (int64_t b = 0; b < num_batches; ++b) {
    for (int64_t h = 0; h <= num_hops; ++h) nodes += out.node_counts[b * (num_hops + 1) + h];
    for (int64_t h = 0; h < num_hops; ++h) edges += out.edge_counts[b * num_hops + h];
    node_end[b] = nodes;
    edge_end[b] = edges;
  }
  at::Tensor ptr = at::empty({nodes + num_batches}, options);
  int64_t* offsets = ptr.data_ptr<int64_t>();
  const int64_t* col = out.col.data();
  for (int64_t b = 0; b < num_batches; ++b) {
    const int64_t node_begin = b == 0 ? 0 : node_end[b - 1];
    const int64_t edge_begin = b == 0 ? 0 : edge_end[b - 1];
    const int64_t num_nodes = node_end[b] - node_begin, num_edges = edge_end[b] - edge_begin;
    int64_t* batch_offsets = offsets + node_begin + b;
    const int64_t* batch_col = col + edge_begin;
    at::parallel_for(0, num_edges + 1, kPairGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t e = lo; e < hi; ++e) {
        const int64_t from = e == 0 ? 0 : batch_col[e - 1] + 1;
        const int64_t to = e == num_edges ? num_nodes : batch_col[e];
        for (int64_t v = from; v <= to; ++v) batch_offsets[v] = e;
      }
    });
  }
  return ptr;
}

template <typename index_t, typename weight_t>
HopsResult sample_hops_typed(const Csc<index_t, weight_t>& g, const at::Tensor& seeds,
                             const std::vector<int64_t>& seed_offsets, const HopsConfig& cfg) {
  const int64_t num_batches = static_cast<int64_t>(seed_offsets.size()) - 1;
  const int64_t num_hops = static_cast<int64_t>(cfg.fanouts.size());
  const int64_t* seed_offset = seed_offsets.data();
  at::Tensor seed_local = at::empty({seeds.numel()}, seeds.options());
  FASTGL_CHECK(seeds.numel() == 0 || valid_offset_ends(g.col_start, g.num_nodes, g.num_edges),
               kHopsOp, kBadIndptrError);
  const HopSampler<index_t, weight_t> sampler(g, cfg);
  WindowSample out;
  // One batch at a time, each hop drawn by all threads: measured faster than a batch per thread,
  // whose working sets (tables, edges) would share the caches, and the batches' outputs then
  // need no concatenation.
  for (int64_t b = 0; b < num_batches; ++b) {
    sampler.sample(BatchInput{b, seeds.data_ptr<int64_t>() + seed_offset[b],
                              seed_offset[b + 1] - seed_offset[b],
                              seed_local.data_ptr<int64_t>() + seed_offset[b]},
                   out);
    if (b == 0 && num_batches > 1) reserve_for_window(out, num_batches);
  }
  const auto options = seeds.options();
  at::Tensor col_ptr = cfg.layerwise ? at::empty({0}, options)
                                     : in_edge_offsets(out, num_batches, num_hops, options);
  auto counts = [&](const std::vector<int64_t>& flat, int64_t width) {
    return at::tensor(flat, options).view({num_batches, width});
  };
  return {into_tensor(std::move(out.nodes), options),
          counts(out.node_counts, num_hops + 1),
          into_tensor(std::move(out.row), options),
          into_tensor(std::move(out.col), options),
          into_tensor(std::move(out.edge_ids), options),
          counts(out.edge_counts, num_hops),
          seed_local,
          into_tensor(std::move(out.in_degrees), options),
          into_tensor(std::move(out.tree), options),
          col_ptr};
}

struct CpuSampleHops {
  static HopsResult run(const HopsInputs& in) {
    check_ids_in_range(kHopsOp, "seeds", in.seeds, in.indptr.numel() - 1);
    return dispatch_csc_types(in.indices, in.weight, [&](auto index_tag, auto weight_ptr) {
      using index_t = decltype(index_tag);
      using weight_t = std::remove_const_t<std::remove_pointer_t<decltype(weight_ptr)>>;
      return sample_hops_typed(csc_of<index_t, weight_t>(in), in.seeds, in.seed_offsets, in.cfg);
    });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("sample_hops", &sample_hops_entry<CpuSampleHops>); }

}  // namespace fastgl::sampling
