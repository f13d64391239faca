// CPU id_map on sharded tables (sharded_table.h): the first occurrence of a key is the first one
// its shard's scan meets, so the result equals the sequential definition (prefix, then ids in
// first-occurrence order) for any thread count. A prefix sum over "is first occurrence" finally
// numbers the new ids.
#include "idmap/cpu/sharded_table.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::idmap {
namespace {

// Maps one shard: prefix keys keep their positions, ids[j] gets its key's first position.
void map_shard(const KeySequence& keys, const int64_t* positions, int64_t count,
               int64_t* first_position) {
  IdTable table(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t p = positions[i], key = keys.at(p);
    FASTGL_CHECK(key >= 0, "id_map", kNegativeIdError, " (", key, ")");
    const int64_t first = table.find_or_insert(key, hash_id(key), p);
    if (p < keys.num_prefix) {
      FASTGL_CHECK(first == p, "id_map", kDuplicatePrefixError, " (", key, ")");
    } else {
      first_position[p - keys.num_prefix] = first;
    }
  }
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> CpuIdMap::run(const at::Tensor& prefix64,
                                                 const at::Tensor& ids64) {
  const KeySequence keys{prefix64.data_ptr<int64_t>(), prefix64.numel(), ids64.data_ptr<int64_t>(),
                         ids64.numel()};
  const int64_t num_prefix = keys.num_prefix, num_ids = keys.num_ids;

  const int64_t num_shards = num_shards_for(keys.size());
  const Partition part = partition_by_shard(keys, num_shards);
  at::Tensor first_position = at::empty({num_ids}, ids64.options());
  int64_t* first = first_position.data_ptr<int64_t>();
  at::parallel_for(0, num_shards, 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      map_shard(keys, part.positions.data() + part.shard_start[s],
                part.shard_start[s + 1] - part.shard_start[s], first);
    }
  });

  const at::Tensor is_first =
      first_position == at::arange(num_prefix, num_prefix + num_ids, ids64.options());
  // rank[j]: first occurrences among ids[0..j]; the first occurrence at j gets P + rank[j] - 1.
  const at::Tensor rank = at::cumsum(is_first, 0, at::kLong);
  const int64_t* rank_ptr = rank.data_ptr<int64_t>();
  at::Tensor local = at::empty({num_ids}, ids64.options());
  int64_t* local_ptr = local.data_ptr<int64_t>();
  at::parallel_for(0, num_ids, kShardGrain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const int64_t f = first[j];
      local_ptr[j] = f < num_prefix ? f : num_prefix + rank_ptr[f - num_prefix] - 1;
    }
  });
  return {ids64.masked_select(is_first), local};
}

TORCH_LIBRARY_IMPL(fastgl, CPU, m) { m.impl("id_map", &id_map_entry<CpuIdMap>); }

}  // namespace fastgl::idmap
