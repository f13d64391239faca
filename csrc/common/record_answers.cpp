// The structure checks written in Python ask the record of checked_once.h through these internal
// ops, so they share it with the compiled ones: an array known valid (a sampler's block offsets
// and sources, csc_from_coo's output, or one an op already checked) costs them no pass and no
// synchronization, and one found valid here is remembered for the ops that follow.
//   fastgl::_valid_offsets  check_offsets' test as a yes/no answer (a Block's indptr)
//   fastgl::_ids_in_range   check_ids_in_range's test as a yes/no answer (a layer's edge_index)
#include "common/check.h"

#include <torch/library.h>

namespace fastgl {
namespace {

bool valid_offsets(const at::Tensor& offsets, int64_t num_edges) {
  check_offsets_tensor("_valid_offsets", "offsets", offsets);
  if (offsets_known_valid(offsets, num_edges)) return true;
  if (!offsets_error("offsets", offsets, num_edges).empty()) return false;
  remember_valid_offsets(offsets, num_edges);
  return true;
}

// Whether every id lies in [0, num_nodes). The caller raises its own message when not.
bool ids_in_range(const at::Tensor& ids, int64_t num_nodes) {
  check_index_vector("_ids_in_range", "ids", ids);
  if (ids.numel() == 0) return true;
  if (const std::optional<int64_t> known = known_max_id(ids); known && *known < num_nodes) {
    return true;
  }
  const auto [low, high] = min_max_ids(ids);
  if (low < 0 || high >= num_nodes) return false;
  remember_id_range(ids, high);
  return true;
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CompositeExplicitAutograd, m) {
  m.impl("_valid_offsets", &valid_offsets);
  m.impl("_ids_in_range", &ids_in_range);
}

}  // namespace fastgl
