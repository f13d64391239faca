// CPU reference for induced_subgraphs (induced_subgraphs.h states the semantics): sets in
// parallel, each with its vertices marked in a bit array (membership) and kept in a small
// open-addressing table (position by id); every row and source is checked as it is read.
#include "sampling/induced_subgraphs.h"

#include "common/member_bits.h"
#include "common/multiversion.h"
#include "common/pooled_tensor.h"
#include "idmap/id_map.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fastgl::sampling {
namespace {

// One set's vertices by id: linear probing over a power-of-two table of at least twice as many
// slots, each id next to its position (one cache line per lookup), reused from set to set.
class PositionTable {
 public:
  void reset(int64_t num_keys) {
    const int64_t capacity = idmap::table_capacity(num_keys);
    entries_.assign(capacity, Entry{idmap::kEmptyKey, 0});
    mask_ = static_cast<uint64_t>(capacity - 1);
  }

  // `key` must not be there yet.
  void insert(int64_t key, int64_t position) {
    uint64_t at = idmap::hash_id(key) & mask_;
    while (entries_[at].key != idmap::kEmptyKey) at = (at + 1) & mask_;
    entries_[at] = Entry{key, position};
  }

  // The position of `key`, which must be there.
  int64_t find(int64_t key) const {
    uint64_t at = idmap::hash_id(key) & mask_;
    while (entries_[at].key != key) at = (at + 1) & mask_;
    return entries_[at].position;
  }

 private:
  struct Entry {
    int64_t key, position;
  };
  std::vector<Entry> entries_;
  uint64_t mask_ = 0;
};

// How many of `sources` have their bit set in `words`; *out_of_range becomes nonzero should one
// not be below `num_ids` (its bit is not read). Without a branch, so that it vectorizes into
// gathers of the bit words: most of a set's in-edges are only counted here.
template <typename index_t>
FASTGL_MULTIVERSION int64_t count_members(const index_t* sources, int64_t degree,
                                          const uint64_t* words, uint64_t num_ids,
                                          int64_t* out_of_range) {
  int64_t count = 0, bad = 0;
  for (int64_t k = 0; k < degree; ++k) {
    const uint64_t id = static_cast<uint64_t>(static_cast<int64_t>(sources[k]));  // < 0: huge
    const uint64_t valid = id < num_ids;
    const uint64_t read = valid ? id : 0;
    count += static_cast<int64_t>((words[read >> 6] >> (read & 63)) & valid);
    bad += static_cast<int64_t>(1 - valid);
  }
  *out_of_range = bad;
  return count;
}

// Counts set s's edges, checking what it reads: its vertices distinct, their rows and sources
// in range. `members` is empty before and after (an error drops it with the op).
template <typename index_t>
int64_t count_set(const int64_t* indptr, const index_t* indices, int64_t num_nodes,
                  int64_t num_edges, const int64_t* set, int64_t size, int64_t set_index,
                  MemberBits& members) {
  for (int64_t i = 0; i < size; ++i) {
    FASTGL_CHECK(!members.has(set[i]), kInducedOp, "node ", set[i], " appears twice in set ",
                 set_index, " (a set's nodes must be distinct)");
    members.set(set[i]);
  }
  int64_t count = 0;
  const uint64_t num_ids = static_cast<uint64_t>(num_nodes);
  for (int64_t i = 0; i < size; ++i) {
    const Adjacency in = in_edges_of(kInducedOp, indptr, set[i], num_edges);
    const index_t* sources = indices + in.start;
    int64_t out_of_range = 0;
    count += count_members(sources, in.degree, members.words(), num_ids, &out_of_range);
    if (out_of_range != 0) {
      for (int64_t k = 0; k < in.degree; ++k) {
        check_source_id(kInducedOp, static_cast<int64_t>(sources[k]), num_nodes);
      }
    }
  }
  for (int64_t i = 0; i < size; ++i) members.clear(set[i]);
  return count;
}

// Writes set s's edges (counted and checked by count_set) from `out` on.
template <typename index_t>
void write_set(const int64_t* indptr, const index_t* indices, const int64_t* eid,
               const int64_t* set, int64_t size, PositionTable& table, MemberBits& members,
               int64_t* row, int64_t* col, int64_t* edge) {
  table.reset(size);
  for (int64_t i = 0; i < size; ++i) {
    table.insert(set[i], i);
    members.set(set[i]);
  }
  // A row is filtered a chunk at a time into `kept` without a branch (each slot is written, and
  // the next one overwrites it unless it is kept): the test is unpredictable where a few in-edges
  // of each hub are kept, and the branch doubled the pass's time.
  constexpr int64_t kChunk = 256;
  int64_t kept[kChunk];
  int64_t out = 0;
  for (int64_t i = 0; i < size; ++i) {
    const int64_t row_end = indptr[set[i] + 1];
    for (int64_t chunk = indptr[set[i]]; chunk < row_end; chunk += kChunk) {
      const int64_t chunk_end = std::min(chunk + kChunk, row_end);
      int64_t num_kept = 0;
      for (int64_t k = chunk; k < chunk_end; ++k) {
        kept[num_kept] = k;
        num_kept += members.has(static_cast<int64_t>(indices[k]));
      }
      for (int64_t j = 0; j < num_kept; ++j) {
        const int64_t k = kept[j];
        row[out] = table.find(static_cast<int64_t>(indices[k]));
        col[out] = i;
        edge[out++] = eid == nullptr ? k : eid[k];
      }
    }
  }
  for (int64_t i = 0; i < size; ++i) members.clear(set[i]);
}

// Two passes over the sets' in-edges, each set's bits and table on its thread: count (and
// check), then write straight into the outputs, which are allocated once the counts are known.
InducedResult induced_subgraphs_cpu(const at::Tensor& indptr, const at::Tensor& indices,
                                    const c10::optional<at::Tensor>& eid, const at::Tensor& nodes,
                                    const at::Tensor& ptr) {
  check_induced_subgraphs_inputs(indptr, indices, eid, nodes, ptr);
  const at::Tensor eid_c = contiguous_or_undefined(eid);
  const int64_t* edge_ids = eid_c.defined() ? eid_c.data_ptr<int64_t>() : nullptr;
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor nodes_c = nodes.contiguous(), ptr_c = ptr.contiguous();
  const int64_t num_sets = ptr.numel() - 1, num_nodes = indptr.numel() - 1;
  const int64_t *set_ptr = ptr_c.data_ptr<int64_t>(), *set_nodes = nodes_c.data_ptr<int64_t>();
  const int64_t* offsets_in = indptr_c.data_ptr<int64_t>();
  at::Tensor edge_ptr = at::empty({num_sets + 1}, indptr.options());
  int64_t* edge_offsets = edge_ptr.data_ptr<int64_t>();
  at::Tensor row, col, edge;
  AT_DISPATCH_INDEX_TYPES(indices_c.scalar_type(), kInducedOp, [&] {
    const index_t* sources = indices_c.data_ptr<index_t>();
    edge_offsets[0] = 0;
    at::parallel_for(0, num_sets, 1, [&](int64_t begin, int64_t end) {
      // Most in-edges come from outside the set: a bit rejects them without a probe of a table.
      MemberBits members(num_nodes);
      for (int64_t s = begin; s < end; ++s) {
        edge_offsets[s + 1] =
            count_set(offsets_in, sources, num_nodes, indices.numel(), set_nodes + set_ptr[s],
                      set_ptr[s + 1] - set_ptr[s], s, members);
      }
    });
    for (int64_t s = 0; s < num_sets; ++s) edge_offsets[s + 1] += edge_offsets[s];
    // 8 B per kept edge each: hundreds of MB a call on a products-scale graph, whose fresh pages
    // the kernel zeroed as they faulted in (a third of the call's time, and more as huge pages
    // ran short): from the block pool, a call takes the pages of the last call's freed outputs.
    // One block for the three: at products scale each would take a 512 MiB size class, and the
    // pool keeps at most 1 GiB of free blocks.
    const int64_t total = edge_offsets[num_sets];
    const at::Tensor columns = pooled_empty_for_write(3 * total, indptr.options()).view({3, total});
    row = columns[0];
    col = columns[1];
    edge = columns[2];
    at::parallel_for(0, num_sets, 1, [&](int64_t begin, int64_t end) {
      PositionTable table;
      MemberBits members(num_nodes);
      for (int64_t s = begin; s < end; ++s) {
        const int64_t first = edge_offsets[s];
        write_set(offsets_in, sources, edge_ids, set_nodes + set_ptr[s],
                  set_ptr[s + 1] - set_ptr[s], table, members, row.data_ptr<int64_t>() + first,
                  col.data_ptr<int64_t>() + first, edge.data_ptr<int64_t>() + first);
      }
    });
  });
  return {row, col, edge, edge_ptr};
}

}  // namespace
}  // namespace fastgl::sampling

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("induced_subgraphs", &fastgl::sampling::induced_subgraphs_cpu);
}
