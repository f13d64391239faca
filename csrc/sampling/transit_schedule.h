// NextDoor's transit-parallel scheduling (Jangda et al., EuroSys '21, §5.2, §6.1), reusable by
// every sampler built on it (neighbor sampling now; random walks and the other NextDoor
// applications later).
//
// A hop of sampling is a list of (sample, transit) pairs. Grouping the pairs by transit vertex
// lets all pairs that reach the same transit share one read of its adjacency. Transits are then
// split by how many pairs they serve:
//   * thread tier: transits with few pairs. One thread per pair, pairs laid out in transit order so
//     the threads of a warp read the same adjacency lists (sub-warp groups share cache lines);
//   * block tier: transits with many pairs. One thread block per chunk of up to blockDim pairs of a
//     transit (several blocks per transit for the largest: NextDoor's grid tier); the block caches
//     the transit's adjacency (and weights) in shared memory once and every thread reads it there.
#pragma once

#include <ATen/ATen.h>

namespace fastgl::sampling {

struct TransitSchedule {
  at::Tensor order;            // int64 [P]: pair ids sorted by transit (stable)
  at::Tensor segment_transit;  // int64 [S]: transit of each segment of `order`
  at::Tensor segment_start;    // int64 [S+1]: segment s is order[segment_start[s] .. [s+1])
  at::Tensor thread_tier;      // int64: positions in `order` handled one thread per pair
  at::Tensor block_segment;    // int64 [W]: segment of block-tier work item w
  at::Tensor block_chunk;      // int64 [W]: which chunk of `chunk_size` pairs item w covers

  // Raw pointers for kernels (the tensors must outlive the launch).
  struct Device {
    const int64_t* order;
    const int64_t* segment_transit;
    const int64_t* segment_start;
    const int64_t* block_segment;
    const int64_t* block_chunk;
  };
  Device device() const {
    return {order.data_ptr<int64_t>(), segment_transit.data_ptr<int64_t>(),
            segment_start.data_ptr<int64_t>(), block_segment.data_ptr<int64_t>(),
            block_chunk.data_ptr<int64_t>()};
  }
};

// `min_block_pairs`: a transit with at least this many pairs goes to the block tier.
inline TransitSchedule schedule_by_transit(const at::Tensor& transits, int64_t min_block_pairs,
                                           int64_t chunk_size) {
  TransitSchedule s;
  // c10::optional<bool>: a plain `true` would pick the (dim, descending) overload instead.
  auto [sorted_transits, order] =
      at::sort(transits, c10::optional<bool>(true), /*dim=*/0, /*descending=*/false);
  auto [segment_transit, segment_of_position, segment_len] =
      at::unique_consecutive(sorted_transits, /*return_inverse=*/true, /*return_counts=*/true);
  s.order = order;
  s.segment_transit = segment_transit;
  s.segment_start = at::zeros({segment_len.numel() + 1}, segment_len.options());
  s.segment_start.narrow(0, 1, segment_len.numel()).copy_(at::cumsum(segment_len, 0));

  const at::Tensor in_block_tier = segment_len >= min_block_pairs;
  s.thread_tier =
      at::nonzero(in_block_tier.logical_not().index_select(0, segment_of_position)).view({-1});
  const at::Tensor block_segments = at::nonzero(in_block_tier).view({-1});
  // Rounded up without forming len + chunk_size - 1, which overflows for huge chunk sizes.
  const at::Tensor chunks =
      at::floor_divide(segment_len.index_select(0, block_segments) - 1, chunk_size) + 1;
  // Passing the output size spares repeat_interleave two device syncs each.
  const int64_t num_items = chunks.sum().item<int64_t>();
  s.block_segment = at::repeat_interleave(block_segments, chunks, /*dim=*/0, num_items);
  // Chunk number within the segment: item index minus the index of the segment's first item.
  const at::Tensor first_item = at::cumsum(chunks, 0) - chunks;
  s.block_chunk = at::arange(num_items, chunks.options()) -
                  at::repeat_interleave(first_item, chunks, /*dim=*/0, num_items);
  return s;
}

}  // namespace fastgl::sampling
