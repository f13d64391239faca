// CPU csc_from_coo: a parallel counting sort. Edges are scattered to their target's slots with
// atomic cursors (fast, but the order within a node then depends on thread timing), and each
// node's slots are sorted back into input order, which makes the sort stable again.
#include "graph/csc_from_coo.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>

namespace fastgl::graph {
namespace {

constexpr int64_t kEdgeGrain = 1 << 16;
constexpr int64_t kNodeGrain = 1 << 12;

template <typename index_t>
at::Tensor count_in_edges(const index_t* target, int64_t num_edges, int64_t num_nodes) {
  at::Tensor counts = at::zeros({num_nodes}, at::kLong);
  int64_t* count = counts.data_ptr<int64_t>();
  at::parallel_for(0, num_edges, kEdgeGrain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) __atomic_fetch_add(&count[target[e]], 1, __ATOMIC_RELAXED);
  });
  return counts;
}

template <typename index_t>
at::Tensor stable_slot_order(const index_t* target, int64_t num_edges, const at::Tensor& counts) {
  const int64_t num_nodes = counts.numel();
  at::Tensor cursor = at::cumsum(counts, 0) - counts;  // first free slot of each node
  const at::Tensor start = cursor.clone();
  at::Tensor perm = at::empty({num_edges}, at::kLong);
  int64_t* next_slot = cursor.data_ptr<int64_t>();
  int64_t* slot_edge = perm.data_ptr<int64_t>();
  at::parallel_for(0, num_edges, kEdgeGrain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      slot_edge[__atomic_fetch_add(&next_slot[target[e]], 1, __ATOMIC_RELAXED)] = e;
    }
  });
  const int64_t* first = start.data_ptr<int64_t>();
  const int64_t* count = counts.data_ptr<int64_t>();
  at::parallel_for(0, num_nodes, kNodeGrain, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      std::sort(slot_edge + first[v], slot_edge + first[v] + count[v]);
    }
  });
  return perm;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> csc_from_coo_cpu(const at::Tensor& src,
                                                                const at::Tensor& dst,
                                                                int64_t num_nodes) {
  check_csc_from_coo_inputs(src, dst, num_nodes);
  const at::Tensor dst_c = dst.contiguous();
  const int64_t num_edges = dst_c.numel();
  return AT_DISPATCH_INDEX_TYPES(dst_c.scalar_type(), "csc_from_coo_cpu", [&] {
    const index_t* target = dst_c.data_ptr<index_t>();
    const at::Tensor counts = count_in_edges(target, num_edges, num_nodes);
    return csc_from_permutation(src, counts, stable_slot_order(target, num_edges, counts));
  });
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("csc_from_coo", &csc_from_coo_cpu); }

}  // namespace fastgl::graph
