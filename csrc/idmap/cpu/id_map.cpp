// CPU reference for id_map: one pass over prefix, one over ids, in order, so first-occurrence
// order falls out of the loop itself.
#include "idmap/id_map.h"

#include <torch/library.h>

#include <vector>

namespace fastgl::idmap {
namespace {

class IdTable {
 public:
  explicit IdTable(int64_t num_keys)
      : mask_(table_capacity(num_keys) - 1), slots_(mask_ + 1, Slot{kEmptyKey, 0}) {}

  // Local id of `key`, inserting it with `next_local` when absent.
  int64_t find_or_insert(int64_t key, int64_t next_local, bool* inserted) {
    for (uint64_t i = hash_id(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) {
        *inserted = false;
        return slot.local;
      }
      if (slot.key == kEmptyKey) {
        slot = Slot{key, next_local};
        *inserted = true;
        return next_local;
      }
    }
  }

 private:
  // Key and value side by side: a lookup touches one cache line, which is what bounds speed.
  struct Slot {
    int64_t key, local;
  };
  uint64_t mask_;
  std::vector<Slot> slots_;
};

}  // namespace

std::tuple<at::Tensor, at::Tensor> id_map_cpu(const at::Tensor& prefix, const at::Tensor& ids) {
  check_id_map_inputs(prefix, ids);
  const at::Tensor prefix64 = prefix.to(at::kLong).contiguous();
  const at::Tensor ids64 = ids.to(at::kLong).contiguous();
  const int64_t num_prefix = prefix64.numel(), num_ids = ids64.numel();
  const int64_t* prefix_ptr = prefix64.data_ptr<int64_t>();
  const int64_t* ids_ptr = ids64.data_ptr<int64_t>();

  IdTable table(num_prefix + num_ids);
  bool inserted = false;
  for (int64_t i = 0; i < num_prefix; ++i) {
    FASTGL_CHECK(prefix_ptr[i] >= 0, "id_map", kNegativeIdError, " (", prefix_ptr[i], ")");
    table.find_or_insert(prefix_ptr[i], i, &inserted);
    FASTGL_CHECK(inserted, "id_map", kDuplicatePrefixError, " (", prefix_ptr[i], ")");
  }

  at::Tensor local = at::empty({num_ids}, ids64.options());
  std::vector<int64_t> new_ids;
  int64_t* local_ptr = local.data_ptr<int64_t>();
  for (int64_t i = 0; i < num_ids; ++i) {
    FASTGL_CHECK(ids_ptr[i] >= 0, "id_map", kNegativeIdError, " (", ids_ptr[i], ")");
    local_ptr[i] = table.find_or_insert(ids_ptr[i], num_prefix + new_ids.size(), &inserted);
    if (inserted) new_ids.push_back(ids_ptr[i]);
  }
  at::Tensor unique = at::empty({num_prefix + static_cast<int64_t>(new_ids.size())},
                                ids64.options());
  unique.narrow(0, 0, num_prefix).copy_(prefix64);
  std::copy(new_ids.begin(), new_ids.end(), unique.data_ptr<int64_t>() + num_prefix);
  return {unique, local};
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("id_map", &id_map_cpu); }

}  // namespace fastgl::idmap
