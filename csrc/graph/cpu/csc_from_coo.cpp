// CPU csc_from_coo: a stable parallel counting sort without atomics. The edges are cut into a
// few contiguous chunks; each chunk counts its targets into a histogram of its own, the
// histograms are turned into per-chunk write cursors (node by node, chunk by chunk), and each
// chunk then writes its edges to their slots in input order. A node's slots therefore hold its
// edges in input order however many threads ran, and no slot is sorted afterwards.
#include "graph/csc_from_coo.h"
#include "common/page_advice.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

namespace fastgl::graph {
namespace {

constexpr int64_t kEdgeGrain = 1 << 15;
constexpr int64_t kNodeGrain = 1 << 14;

// Enough chunks to keep the threads busy, but the histograms (chunks x nodes) no larger than
// the edge list itself, so that a sparse graph with many nodes does not pay for empty counters.
int64_t chunk_count(int64_t num_edges, int64_t num_nodes) {
  const int64_t by_work = std::max<int64_t>(1, num_edges / kEdgeGrain);
  const int64_t by_memory = std::max<int64_t>(1, num_edges / std::max<int64_t>(num_nodes, 1));
  return std::min<int64_t>({at::get_num_threads(), by_work, by_memory});
}

// [chunks, nodes]: how many edges of each chunk target each node.
template <typename dst_t>
at::Tensor count_per_chunk(const dst_t* target, int64_t num_edges, int64_t num_nodes,
                           int64_t chunks) {
  at::Tensor counts = at::zeros({chunks, num_nodes}, at::kLong);
  int64_t* count = counts.data_ptr<int64_t>();
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* row = count + c * num_nodes;
      const int64_t stop = (c + 1) * num_edges / chunks;
      for (int64_t e = c * num_edges / chunks; e < stop; ++e) ++row[target[e]];
    }
  });
  return counts;
}

// Turns the counts into each chunk's first slot per node, in place (node-major, chunk-minor:
// chunk c's edges into v follow chunk c-1's), and fills indptr. Node ranges are scanned in
// parallel after their totals are summed.
void counts_to_cursors(at::Tensor& counts, at::Tensor& indptr) {
  const int64_t chunks = counts.size(0), num_nodes = counts.size(1);
  int64_t* count = counts.data_ptr<int64_t>();
  int64_t* ptr = indptr.data_ptr<int64_t>();
  const int64_t ranges = (num_nodes + kNodeGrain - 1) / kNodeGrain;
  std::vector<int64_t> range_start(ranges + 1, 0);
  at::parallel_for(0, ranges, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t total = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t* row = count + c * num_nodes;
        for (int64_t v = r * kNodeGrain; v < std::min(num_nodes, (r + 1) * kNodeGrain); ++v) {
          total += row[v];
        }
      }
      range_start[r + 1] = total;
    }
  });
  for (int64_t r = 0; r < ranges; ++r) range_start[r + 1] += range_start[r];
  ptr[0] = 0;
  at::parallel_for(0, ranges, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t next = range_start[r];
      for (int64_t v = r * kNodeGrain; v < std::min(num_nodes, (r + 1) * kNodeGrain); ++v) {
        for (int64_t c = 0; c < chunks; ++c) {
          int64_t& cell = count[c * num_nodes + v];
          const int64_t n = cell;
          cell = next;
          next += n;
        }
        ptr[v + 1] = next;
      }
    }
  });
}

// Each chunk writes its edges, in input order, at its cursors.
template <typename dst_t, typename src_t>
void scatter_to_slots(const dst_t* target, const src_t* source, int64_t num_edges,
                      at::Tensor& cursors, src_t* indices, int64_t* perm) {
  const int64_t chunks = cursors.size(0), num_nodes = cursors.size(1);
  int64_t* cursor = cursors.data_ptr<int64_t>();
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* next_slot = cursor + c * num_nodes;
      const int64_t stop = (c + 1) * num_edges / chunks;
      for (int64_t e = c * num_edges / chunks; e < stop; ++e) {
        const int64_t slot = next_slot[target[e]]++;
        perm[slot] = e;
        indices[slot] = source[e];
      }
    }
  });
}

struct CpuCscFromCoo {
  static CscArrays run(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes) {
    const int64_t num_edges = dst.numel();
    at::Tensor indptr = at::empty({num_nodes + 1}, at::kLong);
    at::Tensor indices = at::empty({num_edges}, src.options());
    at::Tensor perm = at::empty({num_edges}, at::kLong);
    // The samplers read these at random, edge by edge; the hint must come before the first write.
    for (const at::Tensor* t : {&indptr, &indices, &perm}) advise_huge_pages(*t);
    AT_DISPATCH_INDEX_TYPES(dst.scalar_type(), "csc_from_coo_cpu", [&] {
      using dst_t = index_t;
      const dst_t* target = dst.data_ptr<dst_t>();
      at::Tensor cursors =
          count_per_chunk(target, num_edges, num_nodes, chunk_count(num_edges, num_nodes));
      counts_to_cursors(cursors, indptr);
      AT_DISPATCH_INDEX_TYPES(src.scalar_type(), "csc_from_coo_cpu", [&] {
        scatter_to_slots(target, src.data_ptr<index_t>(), num_edges, cursors,
                         indices.data_ptr<index_t>(), perm.data_ptr<int64_t>());
      });
    });
    return {indptr, indices, perm};
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("csc_from_coo", &csc_from_coo_entry<CpuCscFromCoo>); }

}  // namespace fastgl::graph
