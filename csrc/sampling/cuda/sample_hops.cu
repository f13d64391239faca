// CUDA sample_hops (sample_hops.h). Per hop, every batch's transits go to NextDoor's
// transit-parallel engine in one call (sample_pairs_cuda, with each pair's own Philox stream),
// and one batched Fused-Map pass relabels all batches' neighbors in one device hash table keyed
// by (batch, node key): a fixed number of launches and host syncs per hop, none per batch. The
// smallest position claiming a key wins its slot (device_table.cuh), so the numbering is the
// sequential first-occurrence one and equals the CPU kernel's.
#include "idmap/cuda/device_table.cuh"
#include "sampling/sample_hops.h"

#include <torch/library.h>

#include <numeric>

namespace fastgl::sampling {
namespace {

using idmap::DeviceTableStorage;
using idmap::insert_keys;

at::Tensor host_long(const std::vector<int64_t>& values, const at::TensorOptions& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device.device());
}

std::vector<int64_t> to_host(const at::Tensor& t) {
  const at::Tensor host = t.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
}

std::vector<int64_t> exclusive_sum(const std::vector<int64_t>& counts) {
  std::vector<int64_t> start(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), start.begin() + 1);
  return start;
}

// Every node of the window so far, batch-major and in local-id order within a batch.
struct WindowNodes {
  at::Tensor keys;             // node keys: node, or tree * N + node when disjoint
  at::Tensor batch;            // batch of each node
  std::vector<int64_t> count;  // nodes per batch
  int64_t key_range;           // keys are < key_range: (batch, key) -> batch * range + key

  at::Tensor local_ids() const {  // local id of every node: position minus its batch's start
    const at::Tensor start = host_long(exclusive_sum(count), keys.options());
    return at::arange(keys.numel(), keys.options()) - start.index_select(0, batch);
  }
};

// Fused-Map for the whole window: `keys` (batch-major, batch `batch`, `per_batch` of them per
// batch) get their local ids in their batch; the ones new to it are appended to the window's
// nodes in first-occurrence order. Returns the local ids and the number of new nodes per batch.
std::pair<at::Tensor, std::vector<int64_t>> relabel(WindowNodes& nodes, const at::Tensor& keys,
                                                    const at::Tensor& batch,
                                                    const std::vector<int64_t>& per_batch) {
  const auto options = keys.options();
  const int64_t num_old = nodes.keys.numel(), n = keys.numel();
  const int64_t num_batches = static_cast<int64_t>(per_batch.size());
  const at::Tensor old_composite = nodes.batch * nodes.key_range + nodes.keys;
  const at::Tensor composite = (batch * nodes.key_range + keys).contiguous();
  const DeviceTableStorage storage(num_old + n, options);
  at::Tensor slot_of = at::empty({n}, options);
  at::Tensor unused_flags = at::zeros({1}, options.dtype(at::kInt));  // keys are valid by now
  insert_keys(storage.view(), old_composite.contiguous().data_ptr<int64_t>(), num_old, 0, true,
              nullptr, unused_flags.data_ptr<int>());
  insert_keys(storage.view(), composite.data_ptr<int64_t>(), n, num_old, false,
              slot_of.data_ptr<int64_t>(), unused_flags.data_ptr<int>());

  const at::Tensor first = storage.first.index_select(0, slot_of);
  const at::Tensor is_first = first == at::arange(num_old, num_old + n, options);
  const at::Tensor rank = at::cumsum(is_first, 0, at::kLong);  // first occurrences up to j
  // Ranks at the batches' boundaries give each batch's new-node count and rank offset.
  const std::vector<int64_t> key_start = exclusive_sum(per_batch);
  const at::Tensor rank_bounds =
      at::cat({at::zeros({1}, options), rank}).index_select(0, host_long(key_start, options));
  const std::vector<int64_t> bounds = to_host(rank_bounds);
  std::vector<int64_t> new_count(num_batches);
  for (int64_t b = 0; b < num_batches; ++b) new_count[b] = bounds[b + 1] - bounds[b];

  const at::Tensor is_old = first < num_old;
  const at::Tensor old_local = num_old
                                   ? nodes.local_ids().index_select(0, first.clamp_max(num_old - 1))
                                   : at::zeros_like(first);
  const at::Tensor new_local = host_long(nodes.count, options).index_select(0, batch) +
                               rank.index_select(0, (first - num_old).clamp_min(0)) - 1 -
                               rank_bounds.narrow(0, 0, num_batches).index_select(0, batch);
  const at::Tensor local = at::where(is_old, old_local, new_local);

  // The window's nodes with each batch's new ones behind its old ones.
  std::vector<int64_t> total(num_batches);
  for (int64_t b = 0; b < num_batches; ++b) total[b] = nodes.count[b] + new_count[b];
  const at::Tensor start = host_long(exclusive_sum(total), options);
  const at::Tensor new_keys = keys.masked_select(is_first),
                   new_batch = batch.masked_select(is_first);
  const at::Tensor old_position = start.index_select(0, nodes.batch) + nodes.local_ids();
  const at::Tensor new_position =
      start.index_select(0, new_batch) + new_local.masked_select(is_first);
  const at::Tensor position = at::cat({old_position, new_position});
  nodes.keys = at::empty({num_old + new_keys.numel()}, options)
                   .index_copy_(0, position, at::cat({nodes.keys, new_keys}));
  nodes.batch =
      at::empty_like(nodes.keys).index_copy_(0, position, at::cat({nodes.batch, new_batch}));
  nodes.count = total;
  return {local, new_count};
}

// One hop's edges, batch-major.
struct HopEdges {
  at::Tensor row, col, edge_ids, batch;
  std::vector<int64_t> count;  // per batch
};

struct Frontier {
  at::Tensor keys, local, batch;
  std::vector<int64_t> count;  // per batch
};

at::Tensor node_of(const at::Tensor& keys, int64_t num_nodes, bool disjoint) {
  return disjoint ? at::remainder(keys, num_nodes) : keys;
}

HopEdges sample_hop(const at::Tensor& indptr, const at::Tensor& indices, const at::Tensor& weight,
                    const at::Tensor& eid, const Frontier& frontier, const DrawConfig& cfg,
                    bool disjoint, WindowNodes& nodes) {
  const auto options = frontier.keys.options();
  const int64_t num_nodes = indptr.numel() - 1;
  for (int64_t count : frontier.count) check_frontier_size(count);
  check_draws_fit(kHopsOp, frontier.keys.numel(), cfg.fanout, cfg.replace, indices.numel());
  const std::vector<int64_t> frontier_start = exclusive_sum(frontier.count);
  const at::Tensor streams =
      at::bitwise_or(at::bitwise_left_shift(frontier.batch, kBatchStreamShift),
                     at::arange(frontier.keys.numel(), options) -
                         host_long(frontier_start, options).index_select(0, frontier.batch));
  const at::Tensor transits = node_of(frontier.keys, num_nodes, disjoint).contiguous();
  auto [ptr, neighbors, edge_pos] =
      sample_pairs_cuda(kHopsOp, indptr, indices, weight, transits, streams.contiguous(), cfg);
  // The neighbors are the next hop's transits: a malformed `indices` must stop here.
  if (!ids_known_below(indices, num_nodes)) {
    check_ids_in_range(kHopsOp, "indices", neighbors, num_nodes);
  }

  HopEdges edges;
  const at::Tensor per_pair =
      ptr.narrow(0, 1, transits.numel()) - ptr.narrow(0, 0, transits.numel());
  const std::vector<int64_t> edge_bounds =
      to_host(ptr.index_select(0, host_long(frontier_start, options)));
  for (size_t b = 0; b + 1 < edge_bounds.size(); ++b) {
    edges.count.push_back(edge_bounds[b + 1] - edge_bounds[b]);
  }
  const int64_t total = neighbors.numel();
  edges.batch = at::repeat_interleave(frontier.batch, per_pair, 0, total);
  edges.col = at::repeat_interleave(frontier.local, per_pair, 0, total);
  const at::Tensor keys =
      disjoint ? at::repeat_interleave(frontier.keys - transits, per_pair, 0, total) + neighbors
               : neighbors;
  edges.edge_ids = eid.defined() ? eid.index_select(0, edge_pos) : edge_pos;
  edges.row = relabel(nodes, keys, edges.batch, edges.count).first;
  return edges;
}

// The hops' edges (each batch-major) in the op's order: batch-major, hop by hop within a batch.
std::vector<at::Tensor> edges_by_batch(const std::vector<HopEdges>& hops, int64_t num_batches,
                                       const at::TensorOptions& options) {
  std::vector<int64_t> per_batch(num_batches, 0);
  for (const HopEdges& hop : hops) {
    for (int64_t b = 0; b < num_batches; ++b) per_batch[b] += hop.count[b];
  }
  std::vector<int64_t> write_at = exclusive_sum(per_batch);  // next free slot of each batch
  std::vector<at::Tensor> positions, rows, cols, ids;
  for (const HopEdges& hop : hops) {
    const std::vector<int64_t> hop_start = exclusive_sum(hop.count);
    const at::Tensor shift = host_long(write_at, options) - host_long(hop_start, options);
    positions.push_back(at::arange(hop.row.numel(), options) + shift.index_select(0, hop.batch));
    rows.push_back(hop.row);
    cols.push_back(hop.col);
    ids.push_back(hop.edge_ids);
    for (int64_t b = 0; b < num_batches; ++b) write_at[b] += hop.count[b];
  }
  const at::Tensor position = at::cat(positions);
  std::vector<at::Tensor> out;
  for (const auto* parts : {&rows, &cols, &ids}) {
    const at::Tensor values = at::cat(*parts);
    out.push_back(at::empty_like(values).index_copy_(0, position, values));
  }
  return out;
}

at::Tensor counts_tensor(const std::vector<std::vector<int64_t>>& rows, int64_t width,
                         const at::TensorOptions& options) {
  std::vector<int64_t> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return host_long(flat, options).view({static_cast<int64_t>(rows.size()), width});
}

HopsResult assemble(const WindowNodes& nodes, const std::vector<HopEdges>& hops,
                    const std::vector<std::vector<int64_t>>& node_counts, const at::Tensor& indptr,
                    int64_t num_edges, bool disjoint, const at::Tensor& seed_local,
                    const at::TensorOptions& options) {
  const int64_t num_batches = static_cast<int64_t>(node_counts.size());
  const int64_t num_hops = static_cast<int64_t>(hops.size());
  const int64_t num_nodes = indptr.numel() - 1;
  const at::Tensor node = node_of(nodes.keys, num_nodes, disjoint);
  const at::Tensor start = indptr.index_select(0, node), stop = indptr.index_select(0, node + 1);
  const at::Tensor in_degrees = stop - start;
  // The rows of the last hop's nodes were never read as transits, and without hops no count
  // kernel checked indptr's ends: both checked here, as the CPU does, unless indptr is known
  // to be valid.
  if (node.numel() > 0 && !offsets_known_valid(indptr, num_edges)) {
    const at::Tensor ends_valid = (indptr[0] == 0) & (indptr[num_nodes] == num_edges);
    const at::Tensor rows_valid = ((start >= 0) & (in_degrees >= 0) & (stop <= num_edges)).all();
    FASTGL_CHECK((ends_valid & rows_valid).item<bool>(), kHopsOp, kBadIndptrError);
  }
  const at::Tensor tree = disjoint ? at::floor_divide(nodes.keys, std::max<int64_t>(1, num_nodes))
                                   : at::empty({0}, options);
  std::vector<std::vector<int64_t>> edge_counts(num_batches);
  for (const HopEdges& hop : hops) {
    for (int64_t b = 0; b < num_batches; ++b) edge_counts[b].push_back(hop.count[b]);
  }
  std::vector<at::Tensor> edges =
      num_hops ? edges_by_batch(hops, num_batches, options)
               : std::vector<at::Tensor>{at::empty({0}, options), at::empty({0}, options),
                                         at::empty({0}, options)};
  return {node,     counts_tensor(node_counts, num_hops + 1, options), edges[0],   edges[1],
          edges[2], counts_tensor(edge_counts, num_hops, options),     seed_local, in_degrees,
          tree};
}

struct CudaSampleHops {
  static HopsResult run(const HopsInputs& in);
};

HopsResult CudaSampleHops::run(const HopsInputs& in) {
  const HopsConfig& cfg = in.cfg;
  const at::Tensor &indptr_c = in.indptr, &indices_c = in.indices, &weight_c = in.weight;
  const at::Tensor &eid_c = in.eid, &seeds_c = in.seeds, &seed_ptr = in.seed_ptr;
  const bool layerwise = cfg.layerwise, disjoint = cfg.disjoint;
  const auto options = seeds_c.options();
  const int64_t num_nodes = indptr_c.numel() - 1, num_batches = seed_ptr.numel() - 1;
  const std::vector<int64_t>& seed_offset = in.seed_offsets;

  std::vector<int64_t> batch_size(num_batches);
  int64_t largest = 0;
  for (int64_t b = 0; b < num_batches; ++b) {
    batch_size[b] = seed_offset[b + 1] - seed_offset[b];
    largest = std::max(largest, batch_size[b]);
  }
  const int64_t key_range = std::max<int64_t>(1, disjoint ? largest * num_nodes : num_nodes);
  FASTGL_CHECK(num_batches <= INT64_MAX / key_range, kHopsOp, num_batches,
               " batches of node keys below ", key_range,
               " overflow the device table's int64 keys; sample fewer batches per call");

  // The seeds are a "hop" of their own: relabeled into empty batches.
  WindowNodes nodes{at::empty({0}, options), at::empty({0}, options),
                    std::vector<int64_t>(num_batches, 0), key_range};
  const at::Tensor seed_batch = at::repeat_interleave(
      at::arange(num_batches, options), host_long(batch_size, options), 0, seeds_c.numel());
  const at::Tensor position_in_batch =
      at::arange(seeds_c.numel(), options) - seed_ptr.index_select(0, seed_batch);
  const at::Tensor seed_keys = disjoint ? position_in_batch * num_nodes + seeds_c : seeds_c;
  auto [seed_local, seed_count] = relabel(nodes, seed_keys, seed_batch, batch_size);

  std::vector<std::vector<int64_t>> node_counts(num_batches);
  for (int64_t b = 0; b < num_batches; ++b) node_counts[b] = {seed_count[b]};
  Frontier frontier{nodes.keys, nodes.local_ids(), nodes.batch, nodes.count};
  std::vector<HopEdges> hops;
  for (int64_t h = 0; h < static_cast<int64_t>(cfg.fanouts.size()); ++h) {
    const std::vector<int64_t> count_before = nodes.count;
    hops.push_back(
        sample_hop(indptr_c, indices_c, weight_c, eid_c, frontier, cfg.hop(h), disjoint, nodes));
    std::vector<int64_t> added(num_batches);
    for (int64_t b = 0; b < num_batches; ++b) {
      added[b] = nodes.count[b] - count_before[b];
      node_counts[b].push_back(added[b]);
    }
    const at::Tensor local = nodes.local_ids();
    if (layerwise) {
      frontier = Frontier{nodes.keys, local, nodes.batch, nodes.count};
    } else {
      const at::Tensor is_new =
          local >= host_long(count_before, options).index_select(0, nodes.batch);
      frontier = Frontier{nodes.keys.masked_select(is_new), local.masked_select(is_new),
                          nodes.batch.masked_select(is_new), added};
    }
  }
  return assemble(nodes, hops, node_counts, indptr_c, indices_c.numel(), disjoint, seed_local,
                  options);
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) { m.impl("sample_hops", &sample_hops_entry<CudaSampleHops>); }

}  // namespace fastgl::sampling
