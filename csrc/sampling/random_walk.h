// random_walk: first-order (DeepWalk), second-order (node2vec) and restart / personalized-PageRank
// walks over a graph's out-edges, given as CSR: `indptr` over sources, `indices` the targets,
// ascending within each row (node2vec's neighbor test binary-searches them), optional `weight`
// and `eid` (each slot's edge id, non-negative).
//
// Walk w starts at nodes[w, 0] = starts[w]; step t writes nodes[w, t+1] and edges[w, t], the id
// of the edge it took: eid[slot], or the CSR slot itself without eid.
// Before each move, with restart_prob > 0, the walk restarts with that probability: it ends (-1
// from there on) or, with `ppr`, teleports to its start (edge -1). A node without drawable
// out-edges ends the walk, or with `ppr` teleports it, unless it is the start itself. Moves draw
// exactly as sample_ranges does with one range (the row), fanout 1, replace=True: step t's key is
// hop_key(seed, 2t), walk w's stream w. Second-order moves (the first move, the first after a
// teleport and a move from a row of one edge are first-order) weigh candidate x, given the previous
// node u, by 1/p if x == u, 1 if u
// -> x is an edge, 1/q otherwise (times its weight when weighted). KnightKing's rejection sampling
// (Yang et al., SOSP '19) draws a candidate first-order in trial k (stream pair_stream(k, w)) and
// accepts it when the stream's next draw (open01(1), from the candidate's Philox block; open01(2)
// when weighted, the candidate taking draws 0 and 1) times max(1/p, 1, 1/q) is below its bias
// (searching the previous node's row only when that level lies between 1 and 1/q); after kMaxTrials
// rejections one exact draw over the enumerated biases. The restart decision of step t
// is draw 0 of stream w under key hop_key(seed, 2t + 1), taken modulo 2^53: the walk restarts
// when it is below restart_prob * 2^53 (probability ceil(restart_prob * 2^53) / 2^53).
//
// Every step is a pure function of the walk's own path so far, so walking whole walks in parallel
// ("sample") and stepping all walks together grouped by current node ("transit", NextDoor's
// transit parallelism, Jangda et al., EuroSys '21, §3, §5.2) give the same walks on CPU and CUDA.
#pragma once

#include "common/check.h"
#include "common/page_advice.h"
#include "sampling/sample_hops.h"
#include "sampling/sample_neighbors.h"
#include "sampling/walk_step.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

namespace fastgl::sampling {

using WalkResult = std::tuple<at::Tensor, at::Tensor>;  // nodes [S, L+1], edges [S, L]

constexpr const char* kWalkOp = "random_walk";

enum class WalkSchedule { kSample, kTransit };

constexpr int64_t kNoWalkFault = INT64_MAX;  // what Backend::run returns when every walk is fine

// Shapes, dtypes, devices and the scalar arguments; the starts and rows are checked as the walks
// read them, so that a CUDA call need not wait for a check before it walks.
inline void check_random_walk_inputs(const at::Tensor& indptr, const at::Tensor& indices,
                                     const c10::optional<at::Tensor>& weight,
                                     const c10::optional<at::Tensor>& eid, const at::Tensor& starts,
                                     int64_t length, double p, double q, double restart_prob,
                                     const std::string& schedule) {
  constexpr const char* op = kWalkOp;
  check_csc_inputs(op, indptr, indices, weight);
  check_edge_ids(op, eid, indices, indptr);
  check_index_vector(op, "starts", starts);
  check_same_device(op, "starts", starts, "indptr", indptr);
  // 2 * length + 1 numbers the last step's restart key; 2^62 steps exceed any memory anyway.
  FASTGL_CHECK(0 <= length && length <= (int64_t{1} << 62), op,
               "length must be >= 0 (and at most 2^62), got ", length);
  // The biases are 1/p and 1/q: both must be finite too (p = 1e-310 is not).
  FASTGL_CHECK(std::isfinite(p) && p > 0 && std::isfinite(1 / p), op,
               "p must be finite and > 0 (with 1/p finite), got ", p);
  FASTGL_CHECK(std::isfinite(q) && q > 0 && std::isfinite(1 / q), op,
               "q must be finite and > 0 (with 1/q finite), got ", q);
  FASTGL_CHECK(0 <= restart_prob && restart_prob <= 1, op, "restart_prob must lie in [0, 1], got ",
               restart_prob);
  FASTGL_CHECK(schedule == "auto" || schedule == "sample" || schedule == "transit", op,
               "schedule must be 'auto', 'sample' or 'transit', got '", schedule, "'");
  FASTGL_CHECK(starts.numel() < (int64_t{1} << kBatchStreamShift), op, starts.numel(),
               " walks in one call, more than the 2^40 the random streams number");
  if (starts.numel() > 0) {
    check_output_fits(op, "the walks", length + 1, 2 * starts.numel() * sizeof(int64_t),
                      starts.device());
  }
}

// Raises the error of an encoded fault. A bad start is named as every op names ids out of range
// (the extreme one). Otherwise the faulty walk stopped where it failed: its last node is the one
// whose row failed, the one before it the previous node whose row node2vec searched.
[[noreturn]] inline void raise_walk_fault(int64_t encoded, const at::Tensor& starts,
                                          const at::Tensor& nodes, int64_t num_nodes) {
  constexpr const char* op = kWalkOp;
  if (encoded == kBadStartsFault) {
    check_ids_in_range(op, "starts", starts, num_nodes);
    TORCH_INTERNAL_ASSERT(false, op, ": a start was reported out of range, but none is");
  }
  const int64_t walk = encoded / kNumWalkFaults, fault = encoded % kNumWalkFaults;
  constexpr const char* bad_indptr =
      "indptr is not a valid CSR offset array (it must start at 0, never decrease and end at "
      "len(indices)); walk a fastgl.CSCGraph, whose out_csr() is checked";
  FASTGL_CHECK(fault != kBadOffsetEnds, op, bad_indptr);
  const at::Tensor path = nodes[walk].cpu();
  const int64_t* visited = path.data_ptr<int64_t>();
  int64_t last = 0;
  while (last + 1 < path.numel() && visited[last + 1] >= 0) ++last;
  const int64_t node = visited[last], previous = last > 0 ? visited[last - 1] : -1;
  FASTGL_CHECK(fault != kBadWalkRow, op, bad_indptr, " (node ", node, ", walk ", walk, ")");
  FASTGL_CHECK(fault != kBadWalkWeights, op,
               "weight must be finite and non-negative, with a finite sum over each node's "
               "out-edges (node ",
               node, ", walk ", walk, ")");
  FASTGL_CHECK(fault != kBadWalkTarget, op, "indices of node ", node,
               " hold an id out of range for a graph of ", num_nodes, " nodes (walk ", walk, ")");
  FASTGL_CHECK(fault != kNegativeEdgeId, op, "eid must be non-negative, but an edge walk ", walk,
               " took has a negative id");
  FASTGL_CHECK(false, op, "indices must ascend within each row (node2vec binary-searches them), ",
               "but the row of node ", previous, " does not (walk ", walk, ")");
}

// The op's entry point, shared by the backends: check, allocate the walks, write their starts and
// return early when there is nothing to walk; otherwise `Backend::run(view, nodes, schedule)`
// checks the starts (WalkView::drop_bad_start), walks, and returns the smallest encoded fault,
// or kNoWalkFault.
template <typename Backend>
WalkResult random_walk_entry(const at::Tensor& indptr, const at::Tensor& indices,
                             const c10::optional<at::Tensor>& weight,
                             const c10::optional<at::Tensor>& eid, const at::Tensor& starts,
                             int64_t length, double p, double q, double restart_prob, bool ppr,
                             c10::string_view schedule, int64_t seed) {
  const std::string schedule_name = as_string(schedule);
  check_random_walk_inputs(indptr, indices, weight, eid, starts, length, p, q, restart_prob,
                           schedule_name);
  const c10::DeviceGuard device_guard(indptr.device());
  const int64_t num_walks = starts.numel();
  const auto options = starts.options().dtype(at::kLong);
  at::Tensor nodes = empty_for_write({num_walks, length + 1}, options);
  at::Tensor edges = empty_for_write({num_walks, length}, options);
  if (num_walks == 0) return {nodes, edges};
  if (length == 0) {  // no step reads a start: check them here
    check_ids_in_range(kWalkOp, "starts", starts, indptr.numel() - 1);
    return {nodes.copy_(starts.view({num_walks, 1})), edges};
  }
  nodes.select(1, 0).copy_(starts);

  const WalkSchedule walk_schedule = schedule_name == "sample" ? WalkSchedule::kSample
                                     : schedule_name == "transit"
                                         ? WalkSchedule::kTransit
                                         : Backend::auto_schedule(num_walks, indptr.numel() - 1);
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor weight_c = contiguous_or_undefined(weight), eid_c = contiguous_or_undefined(eid);
  const double inv_p = 1 / p, inv_q = 1 / q;
  const int64_t first_fault =
      dispatch_csc_types(indices_c, weight_c, [&](auto index_tag, auto weight_ptr) {
        using index_t = decltype(index_tag);
        using weight_t = std::remove_const_t<std::remove_pointer_t<decltype(weight_ptr)>>;
        const WalkView<index_t, weight_t> view{
            indptr_c.data_ptr<int64_t>(),
            indices_c.data_ptr<index_t>(),
            weight_ptr,
            eid_c.defined() ? eid_c.data_ptr<int64_t>() : nullptr,
            indptr.numel() - 1,
            indices.numel(),
            length,
            inv_p,
            inv_q,
            std::max({inv_p, 1.0, inv_q}),
            p != 1 || q != 1,
            restart_prob,
            ppr,
            static_cast<uint64_t>(seed),
            nodes.data_ptr<int64_t>(),
            edges.data_ptr<int64_t>()};
        return Backend::run(view, nodes, walk_schedule);
      });
  if (first_fault != kNoWalkFault) raise_walk_fault(first_fault, starts, nodes, indptr.numel() - 1);
  return {nodes, edges};
}

}  // namespace fastgl::sampling
