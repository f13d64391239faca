// CPU reference for sample_neighbors: pairs in parallel, each through neighbor_draw.h.
#include "sampling/sample_neighbors.h"
#include "sampling/neighbor_draw.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::sampling {
namespace {

constexpr int64_t kPairGrain = 256;

struct CpuSampleNeighbors {
  template <typename index_t, typename weight_t>
  static SampleResult run(const weight_t* weight, const at::Tensor& indptr,
                          const at::Tensor& indices, const at::Tensor& transits,
                          const DrawConfig& cfg);
};

template <typename index_t, typename weight_t>
SampleResult CpuSampleNeighbors::run(const weight_t* weight, const at::Tensor& indptr,
                                     const at::Tensor& indices, const at::Tensor& transits,
                                     const DrawConfig& cfg) {
  constexpr const char* op = "sample_neighbors";
  const int64_t num_pairs = transits.numel(), num_edges = indices.numel();
  const int64_t* col_start = indptr.data_ptr<int64_t>();
  const int64_t* transit = transits.data_ptr<int64_t>();
  const index_t* source = indices.data_ptr<index_t>();
  auto edge_weights = [&](const Adjacency& in_edges) {
    return weight ? weight + in_edges.start : nullptr;
  };

  const int64_t num_nodes = indptr.numel() - 1;
  FASTGL_CHECK(num_pairs == 0 || valid_offset_ends(col_start, num_nodes, num_edges), op,
               kBadIndptrError);
  at::Tensor ptr = at::empty({num_pairs + 1}, transits.options());
  int64_t* out_ptr = ptr.data_ptr<int64_t>();
  out_ptr[0] = 0;
  at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const Adjacency in_edges = in_edges_of(op, col_start, transit[p], num_edges);
      out_ptr[p + 1] =
          checked_draws(op, num_draws(cfg, edge_weights(in_edges), in_edges.degree), transit[p]);
    }
  });
  for (int64_t p = 0; p < num_pairs; ++p) out_ptr[p + 1] += out_ptr[p];

  const int64_t total = out_ptr[num_pairs];
  check_output_fits(op, "the sample", total, 2 * sizeof(int64_t), indptr.device());
  at::Tensor neighbors = at::empty({total}, transits.options());
  at::Tensor edge_pos = at::empty({total}, transits.options());
  int64_t* out_neighbor = neighbors.data_ptr<int64_t>();
  int64_t* out_pos = edge_pos.data_ptr<int64_t>();
  at::parallel_for(0, num_pairs, kPairGrain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const Adjacency in_edges = in_edges_of(op, col_start, transit[p], num_edges);
      const int64_t first = out_ptr[p], count = out_ptr[p + 1] - first;
      draw_neighbor_offsets(cfg, p, edge_weights(in_edges), in_edges.degree, count,
                            out_pos + first);
      for (int64_t j = first; j < first + count; ++j) {
        out_pos[j] += in_edges.start;
        out_neighbor[j] = static_cast<int64_t>(source[out_pos[j]]);
        check_source_id(op, out_neighbor[j], num_nodes);
      }
    }
  });
  return {ptr, neighbors, edge_pos};
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("sample_neighbors", &sample_neighbors_entry<CpuSampleNeighbors>);
}

}  // namespace fastgl::sampling
