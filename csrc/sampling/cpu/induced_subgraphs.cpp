// CPU reference for induced_subgraphs (induced_subgraphs.h states the semantics): sets in
// parallel, each with its vertices marked in a bit array (membership) and kept in a small
// open-addressing table (position by id); every row and source is checked as it is read.
#include "sampling/induced_subgraphs.h"

#include "common/page_advice.h"
#include "idmap/id_map.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

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

// The same set as a bit per graph vertex: most in-edges come from outside the set, and a bit
// (the whole array a few hundred KiB for millions of vertices, cache-resident) rejects those
// without a probe of the table.
class MemberBits {
 public:
  explicit MemberBits(int64_t num_nodes) : words_((num_nodes + 63) / 64, 0) {}
  void set(int64_t id) { words_[id >> 6] |= uint64_t{1} << (id & 63); }
  void clear(int64_t id) { words_[id >> 6] &= ~(uint64_t{1} << (id & 63)); }
  bool has(int64_t id) const { return (words_[id >> 6] >> (id & 63)) & 1; }

 private:
  std::vector<uint64_t> words_;
};

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
  for (int64_t i = 0; i < size; ++i) {
    const Adjacency in = in_edges_of(kInducedOp, indptr, set[i], num_edges);
    for (int64_t k = in.start; k < in.start + in.degree; ++k) {
      const int64_t source = static_cast<int64_t>(indices[k]);
      check_source_id(kInducedOp, source, num_nodes);
      count += members.has(source);
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
  int64_t out = 0;
  for (int64_t i = 0; i < size; ++i) {
    for (int64_t k = indptr[set[i]]; k < indptr[set[i] + 1]; ++k) {
      const int64_t source = static_cast<int64_t>(indices[k]);
      if (!members.has(source)) continue;
      row[out] = table.find(source);
      col[out] = i;
      edge[out++] = eid == nullptr ? k : eid[k];
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
      MemberBits members(num_nodes);
      for (int64_t s = begin; s < end; ++s) {
        edge_offsets[s + 1] =
            count_set(offsets_in, sources, num_nodes, indices.numel(), set_nodes + set_ptr[s],
                      set_ptr[s + 1] - set_ptr[s], s, members);
      }
    });
    for (int64_t s = 0; s < num_sets; ++s) edge_offsets[s + 1] += edge_offsets[s];
    row = empty_for_write({edge_offsets[num_sets]}, indptr.options());
    col = empty_for_write({edge_offsets[num_sets]}, indptr.options());
    edge = empty_for_write({edge_offsets[num_sets]}, indptr.options());
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
