// CPU match and overlap_counts on the sharded tables of id_map (idmap/cpu/sharded_table.h).
#include "match/match.h"
#include "idmap/cpu/sharded_table.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

namespace fastgl::match {
namespace {

using idmap::hash_id;
using idmap::IdTable;
using idmap::KeySequence;
using idmap::Partition;

constexpr int64_t kGrain = 1 << 14;

// One table per hash shard of prev, each mapping an id to its position in prev.
class PositionIndex {
 public:
  explicit PositionIndex(const at::Tensor& prev) {
    const KeySequence keys{prev.data_ptr<int64_t>(), prev.numel(), nullptr, 0};
    num_shards_ = idmap::num_shards_for(keys.size());
    const Partition part = idmap::partition_by_shard(keys, num_shards_);
    tables_.reserve(num_shards_);
    for (int64_t s = 0; s < num_shards_; ++s) {
      tables_.emplace_back(part.shard_start[s + 1] - part.shard_start[s]);
    }
    at::parallel_for(0, num_shards_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t s = begin; s < end; ++s) {
        for (int64_t i = part.shard_start[s]; i < part.shard_start[s + 1]; ++i) {
          const int64_t p = part.positions[i], key = keys.at(p);
          FASTGL_CHECK(key >= 0, "match", kNegativeIdError, " (", key, ")");
          FASTGL_CHECK(tables_[s].find_or_insert(key, hash_id(key), p) == p, "match",
                       kDuplicatePrevError, " (", key, ")");
        }
      }
    });
  }

  int64_t find(int64_t key) const {
    const uint64_t hash = hash_id(key);
    return tables_[idmap::shard_of(hash, num_shards_)].find(key, hash);
  }

 private:
  int64_t num_shards_;
  std::vector<IdTable> tables_;
};

struct CpuMatch {
  static at::Tensor match(const at::Tensor& prev, const at::Tensor& next);
  static at::Tensor overlap_counts(const at::Tensor& nodes64, const at::Tensor& offsets,
                                   int64_t num_sets);
};

at::Tensor CpuMatch::match(const at::Tensor& prev, const at::Tensor& next) {
  const PositionIndex index(prev);
  at::Tensor position = at::empty({next.numel()}, next.options());
  const int64_t* ids = next.data_ptr<int64_t>();
  int64_t* out = position.data_ptr<int64_t>();
  at::parallel_for(0, next.numel(), kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      FASTGL_CHECK(ids[j] >= 0, "match", kNegativeIdError, " (", ids[j], ")");
      out[j] = index.find(ids[j]);
    }
  });
  return position;
}

// masks[u] gets bit s for every set s holding unique node u; a bit already set is a repeat.
std::vector<uint64_t> membership_masks(const int64_t* local, const int64_t* offsets,
                                       int64_t num_sets, int64_t num_unique) {
  std::vector<uint64_t> masks(num_unique, 0);
  for (int64_t s = 0; s < num_sets; ++s) {
    const uint64_t bit = uint64_t{1} << s;
    at::parallel_for(offsets[s], offsets[s + 1], kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const uint64_t before = __atomic_fetch_or(&masks[local[p]], bit, __ATOMIC_RELAXED);
        FASTGL_CHECK(!(before & bit), "overlap_counts", kDuplicateInSetError, " (set ", s, ")");
      }
    });
  }
  return masks;
}

// Upper triangle of the pair counts: every node adds one to each pair (i <= j) of its sets.
at::Tensor count_pairs(const std::vector<uint64_t>& masks, int64_t num_sets) {
  const int64_t n = static_cast<int64_t>(masks.size());
  const int64_t num_chunks =
      std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / kGrain));
  std::vector<int64_t> partial(num_chunks * num_sets * num_sets, 0);
  at::parallel_for(0, num_chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* counts = partial.data() + c * num_sets * num_sets;
      for (int64_t u = n * c / num_chunks; u < n * (c + 1) / num_chunks; ++u) {
        for (uint64_t rest = masks[u]; rest; rest &= rest - 1) {
          const int64_t i = __builtin_ctzll(rest);
          for (uint64_t later = rest; later; later &= later - 1) {
            ++counts[i * num_sets + __builtin_ctzll(later)];
          }
        }
      }
    }
  });
  at::Tensor upper = at::zeros({num_sets, num_sets}, at::kLong);
  int64_t* out = upper.data_ptr<int64_t>();
  for (int64_t c = 0; c < num_chunks; ++c) {
    for (int64_t k = 0; k < num_sets * num_sets; ++k)
      out[k] += partial[c * num_sets * num_sets + k];
  }
  return upper;
}

at::Tensor CpuMatch::overlap_counts(const at::Tensor& nodes64, const at::Tensor& offsets,
                                    int64_t num_sets) {
  const auto [unique, local] =
      idmap::id_map_entry<idmap::CpuIdMap>(nodes64.new_empty({0}), nodes64);
  const std::vector<uint64_t> masks =
      membership_masks(local.data_ptr<int64_t>(), offsets.contiguous().data_ptr<int64_t>(),
                       num_sets, unique.numel());
  return count_pairs(masks, num_sets);
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("match", &match_entry<CpuMatch>);
  m.impl("overlap_counts", &overlap_counts_entry<CpuMatch>);
}

}  // namespace fastgl::match
