// fastgl::_valid_offsets, internal: check_offsets' test as a yes/no answer, for the structure
// checks written in Python (a Block's indptr), so they share the record of checked_once.h: an
// array known valid (a sampler's block offsets, or one an op already checked) costs them no
// pass and no synchronization, and one found valid here is remembered for the ops that follow.
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

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CompositeExplicitAutograd, m) {
  m.impl("_valid_offsets", &valid_offsets);
}

}  // namespace fastgl
