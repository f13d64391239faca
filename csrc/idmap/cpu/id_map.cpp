// CPU id_map. Keys are split into shards by hash; each thread owns whole shards and scans the
// input in order, inserting only its shard's keys into a private table. No atomics are needed,
// the first occurrence of every key is the one the scan meets first, and the result equals the
// sequential definition (prefix, then ids in first-occurrence order) for any thread count.
// A prefix sum over "is first occurrence" then numbers the new ids.
#include "idmap/id_map.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

namespace fastgl::idmap {
namespace {

// Fewer keys than this per shard are not worth a thread: every shard scans the whole input.
constexpr int64_t kMinKeysPerShard = 1 << 16;
constexpr int64_t kGrain = 1 << 14;

class IdTable {
 public:
  explicit IdTable(int64_t num_keys)
      : mask_(table_capacity(num_keys) - 1), slots_(mask_ + 1, Slot{kEmptyKey, 0}) {}

  // First position recorded for `key`, recording `position` when the key is new.
  int64_t find_or_insert(int64_t key, uint64_t hash, int64_t position) {
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return slot.first;
      if (slot.key == kEmptyKey) {
        slot = Slot{key, position};
        return position;
      }
    }
  }

 private:
  // Key and position side by side: one cache line per probe, which is what bounds speed.
  struct Slot {
    int64_t key, first;
  };
  uint64_t mask_;
  std::vector<Slot> slots_;
};

struct Shards {
  int64_t count;
  int64_t of(uint64_t hash) const { return static_cast<int64_t>((hash >> 40) % count); }
};

int64_t count_shard_keys(const int64_t* keys, int64_t n, Shards shards, int64_t shard) {
  int64_t mine = 0;
  for (int64_t i = 0; i < n; ++i) mine += shards.of(hash_id(keys[i])) == shard;
  return mine;
}

// Maps one shard's keys: prefix keys keep their positions, each id gets the first position of
// its key (P + j for ids[j]).
void map_shard(const int64_t* prefix, int64_t num_prefix, const int64_t* ids, int64_t num_ids,
               Shards shards, int64_t shard, int64_t* first_position) {
  IdTable table(count_shard_keys(prefix, num_prefix, shards, shard) +
                count_shard_keys(ids, num_ids, shards, shard));
  for (int64_t i = 0; i < num_prefix; ++i) {
    const uint64_t hash = hash_id(prefix[i]);
    if (shards.of(hash) != shard) continue;
    FASTGL_CHECK(prefix[i] >= 0, "id_map", kNegativeIdError, " (", prefix[i], ")");
    FASTGL_CHECK(table.find_or_insert(prefix[i], hash, i) == i, "id_map", kDuplicatePrefixError,
                 " (", prefix[i], ")");
  }
  for (int64_t j = 0; j < num_ids; ++j) {
    const uint64_t hash = hash_id(ids[j]);
    if (shards.of(hash) != shard) continue;
    FASTGL_CHECK(ids[j] >= 0, "id_map", kNegativeIdError, " (", ids[j], ")");
    first_position[j] = table.find_or_insert(ids[j], hash, num_prefix + j);
  }
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> id_map_cpu(const at::Tensor& prefix, const at::Tensor& ids) {
  check_id_map_inputs(prefix, ids);
  const at::Tensor prefix64 = prefix.to(at::kLong).contiguous();
  const at::Tensor ids64 = ids.to(at::kLong).contiguous();
  const int64_t num_prefix = prefix64.numel(), num_ids = ids64.numel();
  const int64_t* prefix_ptr = prefix64.data_ptr<int64_t>();
  const int64_t* ids_ptr = ids64.data_ptr<int64_t>();

  const Shards shards{std::max<int64_t>(
      1, std::min<int64_t>(at::get_num_threads(), (num_prefix + num_ids) / kMinKeysPerShard))};
  at::Tensor first_position = at::empty({num_ids}, ids64.options());
  int64_t* first = first_position.data_ptr<int64_t>();
  at::parallel_for(0, shards.count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t shard = begin; shard < end; ++shard) {
      map_shard(prefix_ptr, num_prefix, ids_ptr, num_ids, shards, shard, first);
    }
  });

  const at::Tensor is_first =
      first_position == at::arange(num_prefix, num_prefix + num_ids, ids64.options());
  // rank[j]: first occurrences among ids[0..j]; the first occurrence at j gets P + rank[j] - 1.
  const at::Tensor rank = at::cumsum(is_first, 0, at::kLong);
  const int64_t* rank_ptr = rank.data_ptr<int64_t>();
  at::Tensor local = at::empty({num_ids}, ids64.options());
  int64_t* local_ptr = local.data_ptr<int64_t>();
  at::parallel_for(0, num_ids, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const int64_t f = first[j];
      local_ptr[j] = f < num_prefix ? f : num_prefix + rank_ptr[f - num_prefix] - 1;
    }
  });
  return {at::cat({prefix64, ids64.masked_select(is_first)}), local};
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("id_map", &id_map_cpu); }

}  // namespace fastgl::idmap
