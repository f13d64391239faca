// induced_subgraphs: the subgraphs of a CSC graph induced on many vertex sets at once, the step
// after every graph-sampling sampler (Zeng et al., Accurate, Efficient and Scalable Graph
// Embedding, IPDPS 2019, Algorithm 1; GraphSAINT) draws its vertices.
//
// Set s is nodes[ptr[s] .. ptr[s+1]], of distinct ids. Its edges are every in-edge of one of its
// vertices whose source is in the set too, grouped by target in the order of the set's vertices,
// each vertex's in-edges in slot order. Returns, over all sets in order:
//   row       int64 [M]    the source's position in its set
//   col       int64 [M]    the target's position in its set
//   edge      int64 [M]    the edge's id: eid[slot] for its CSC slot, or the slot without eid
//   edge_ptr  int64 [S+1]  set s owns edges edge_ptr[s] .. edge_ptr[s+1]
// Each set looks its sources up in a hash table of its own vertices (FastGL's Fused-Map table
// layout), so the cost is its vertices' in-edges, whatever the graph's size.
#pragma once

#include "common/check.h"
#include "sampling/sample_neighbors.h"

#include <ATen/ATen.h>

#include <tuple>

namespace fastgl::sampling {

using InducedResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

constexpr const char* kInducedOp = "induced_subgraphs";

inline void check_induced_subgraphs_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                           const c10::optional<at::Tensor>& eid,
                                           const at::Tensor& nodes, const at::Tensor& ptr) {
  constexpr const char* op = kInducedOp;
  check_csc_inputs(op, indptr, indices, c10::nullopt);
  check_edge_ids(op, eid, indices, indptr);
  check_index_vector(op, "nodes", nodes);
  check_dtype(op, "nodes", nodes, at::kLong);
  check_same_device(op, "nodes", nodes, "indptr", indptr);
  check_offsets_tensor(op, "ptr", ptr);
  check_same_device(op, "ptr", ptr, "indptr", indptr);
  check_offsets(op, "ptr", ptr, nodes.numel());
  check_ids_in_range(op, "nodes", nodes, indptr.numel() - 1);
}

}  // namespace fastgl::sampling
