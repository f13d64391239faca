// random_walk's transit schedule (NextDoor's transit parallelism, Jangda et al., EuroSys '21,
// §3, §5.2), one step of every walk at a time, written once for the CUDA kernel and the CPU,
// which runs the same decomposition as the GPU path's host check. Step t sorts the walks by
// their current node (transit order) and cuts that order into chunks of kTransitChunk walks, a
// CUDA thread block's worth. A chunk whose walks all stand at one node reads that node's row
// once into a cache (the block's shared memory; a CPU thread's buffer) when that saves reads;
// any other chunk steps its walks from the graph, the walks at one node side by side so that
// they read the same lines. Nothing in a step depends on a size known only on the device, so a
// CUDA step enqueues a sort and one kernel and never waits.
#pragma once

#include "sampling/row_cache.h"
#include "sampling/walk_step.h"

#include <c10/macros/Macros.h>

#include <cstdint>

namespace fastgl::sampling {

constexpr int64_t kTransitChunk = 256;

// The row a transit chunk caches: `node`'s `degree` out-edges from CSR slot `start`, or none
// (degree -1).
struct ChunkRow {
  int64_t node, start, degree;
};

// Chunks of a transit order of `num_walks` walks.
C10_HOST_DEVICE inline int64_t transit_num_chunks(int64_t num_walks) {
  return (num_walks + kTransitChunk - 1) / kTransitChunk;
}

// Walks in chunk `chunk` of a transit order of `num_walks` walks.
C10_HOST_DEVICE inline int64_t transit_chunk_walks(int64_t num_walks, int64_t chunk) {
  const int64_t left = num_walks - chunk * kTransitChunk;
  return left < kTransitChunk ? left : kTransitChunk;
}

// What chunk `chunk` of step t's transit order `order` (walk ids sorted by current node, ended
// walks, -1, first) caches, given a cache of `capacity` edges.
template <typename index_t, typename weight_t>
C10_HOST_DEVICE inline ChunkRow transit_chunk_row(const WalkView<index_t, weight_t>& view,
                                                  const int64_t* order, int64_t num_walks,
                                                  int64_t chunk, int64_t t, int64_t capacity) {
  constexpr ChunkRow kNone{-1, 0, -1};
  const int64_t first = chunk * kTransitChunk, walks = transit_chunk_walks(num_walks, chunk);
  const int64_t node = view.node(order[first], t);
  // The order is sorted: when the chunk's ends stand at one node, so does every walk between.
  if (node < 0 || node != view.node(order[first + walks - 1], t)) return kNone;
  const int64_t start = view.indptr[node], end = view.indptr[node + 1];
  // A row that cannot be read is left to the walks, which report it.
  if (!valid_adjacency(start, end, view.num_edges) || end - start > capacity) return kNone;
  // Weighted steps scan the whole row; unweighted ones read one slot each.
  if (view.weight == nullptr && walks < end - start) return kNone;
  return {node, start, end - start};
}

}  // namespace fastgl::sampling
