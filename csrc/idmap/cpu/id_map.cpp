// CPU id_map, cache-conscious. Keys are first partitioned by hash into shards small enough that
// a shard's table stays in cache (a stable partition: within a shard, keys keep input order).
// Threads then map whole shards with private tables: no atomics, and the first occurrence of a
// key is the first one its shard's scan meets, so the result equals the sequential definition
// (prefix, then ids in first-occurrence order) for any thread count. A prefix sum over "is first
// occurrence" finally numbers the new ids.
#include "idmap/id_map.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

namespace fastgl::idmap {
namespace {

constexpr int64_t kKeysPerShard = 1 << 14;  // table of 32K slots x 16 bytes: fits in L2
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
  struct Slot {  // key and position side by side: one cache line per probe
    int64_t key, first;
  };
  uint64_t mask_;
  std::vector<Slot> slots_;
};

// The keys of prefix and ids as one sequence: position p < P is prefix[p], else ids[p - P].
struct KeySequence {
  const int64_t* prefix;
  int64_t num_prefix;
  const int64_t* ids;
  int64_t num_ids;

  int64_t size() const { return num_prefix + num_ids; }
  int64_t at(int64_t p) const { return p < num_prefix ? prefix[p] : ids[p - num_prefix]; }
};

struct Partition {
  std::vector<int64_t> shard_start;  // shard s holds positions[shard_start[s] .. [s+1])
  std::vector<int64_t> positions;    // key positions grouped by shard, in input order within
};

// Top hash bits pick the shard; the tables use the low bits, so the two stay independent.
int64_t shard_of(uint64_t hash, int64_t num_shards) {
  return static_cast<int64_t>((hash >> 40) & static_cast<uint64_t>(num_shards - 1));
}

// Stable counting-sort partition: each input chunk counts its keys per shard, then scatters
// them behind the counts of the chunks before it.
Partition partition_by_shard(const KeySequence& keys, int64_t num_shards) {
  const int64_t n = keys.size();
  const int64_t num_chunks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / kGrain));
  const int64_t chunk = (n + num_chunks - 1) / num_chunks;
  std::vector<int64_t> offset(num_chunks * num_shards, 0);  // [chunk][shard]
  at::parallel_for(0, num_chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p) {
        ++offset[c * num_shards + shard_of(hash_id(keys.at(p)), num_shards)];
      }
    }
  });
  Partition part{std::vector<int64_t>(num_shards + 1, 0), std::vector<int64_t>(n)};
  int64_t running = 0;
  for (int64_t s = 0; s < num_shards; ++s) {
    part.shard_start[s] = running;
    for (int64_t c = 0; c < num_chunks; ++c) {
      const int64_t count = offset[c * num_shards + s];
      offset[c * num_shards + s] = running;
      running += count;
    }
  }
  part.shard_start[num_shards] = running;
  at::parallel_for(0, num_chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p) {
        part.positions[offset[c * num_shards + shard_of(hash_id(keys.at(p)), num_shards)]++] = p;
      }
    }
  });
  return part;
}

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

std::tuple<at::Tensor, at::Tensor> id_map_cpu(const at::Tensor& prefix, const at::Tensor& ids) {
  check_id_map_inputs(prefix, ids);
  const at::Tensor prefix64 = prefix.to(at::kLong).contiguous();
  const at::Tensor ids64 = ids.to(at::kLong).contiguous();
  const KeySequence keys{prefix64.data_ptr<int64_t>(), prefix64.numel(),
                         ids64.data_ptr<int64_t>(), ids64.numel()};
  const int64_t num_prefix = keys.num_prefix, num_ids = keys.num_ids;

  int64_t num_shards = 1;
  while (num_shards * kKeysPerShard < keys.size()) num_shards <<= 1;
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
