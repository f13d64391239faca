// CPU reference for induced_subgraphs (induced_subgraphs.h states the semantics): sets in
// parallel, each with its vertices in a small open-addressing table (position by id), then one
// pass over their in-edges; every row and source is checked as it is read.
#include "sampling/induced_subgraphs.h"

#include "idmap/id_map.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstdint>
#include <vector>

namespace fastgl::sampling {
namespace {

// One set's vertices by id: linear probing over a power-of-two table of at least twice as many
// slots, reused (cleared, not freed) from set to set on a thread.
class PositionTable {
 public:
  void reset(int64_t num_keys) {
    const int64_t capacity = idmap::table_capacity(num_keys);
    keys_.assign(capacity, idmap::kEmptyKey);
    positions_.resize(capacity);
    mask_ = static_cast<uint64_t>(capacity - 1);
  }

  // False when `key` is there already.
  bool insert(int64_t key, int64_t position) {
    for (uint64_t at = idmap::hash_id(key) & mask_;; at = (at + 1) & mask_) {
      if (keys_[at] == key) return false;
      if (keys_[at] == idmap::kEmptyKey) {
        keys_[at] = key;
        positions_[at] = position;
        return true;
      }
    }
  }

  // The position of `key`, or -1.
  int64_t find(int64_t key) const {
    for (uint64_t at = idmap::hash_id(key) & mask_;; at = (at + 1) & mask_) {
      if (keys_[at] == key) return positions_[at];
      if (keys_[at] == idmap::kEmptyKey) return -1;
    }
  }

 private:
  std::vector<int64_t> keys_, positions_;
  uint64_t mask_ = 0;
};

struct SetEdges {
  std::vector<int64_t> row, col, slot;
};

template <typename index_t>
void induce_set(const int64_t* indptr, const index_t* indices, int64_t num_nodes, int64_t num_edges,
                const int64_t* set, int64_t size, int64_t set_index, PositionTable& table,
                SetEdges& out) {
  table.reset(size);
  for (int64_t i = 0; i < size; ++i) {
    FASTGL_CHECK(table.insert(set[i], i), kInducedOp, "node ", set[i], " appears twice in set ",
                 set_index, " (a set's nodes must be distinct)");
  }
  for (int64_t i = 0; i < size; ++i) {
    const Adjacency in = in_edges_of(kInducedOp, indptr, set[i], num_edges);
    for (int64_t k = in.start; k < in.start + in.degree; ++k) {
      const int64_t source = static_cast<int64_t>(indices[k]);
      check_source_id(kInducedOp, source, num_nodes);
      const int64_t position = table.find(source);
      if (position < 0) continue;
      out.row.push_back(position);
      out.col.push_back(i);
      out.slot.push_back(k);
    }
  }
}

// The sets' edges laid end to end, with their offsets.
InducedResult concatenate(const std::vector<SetEdges>& sets, const at::TensorOptions& options) {
  const int64_t num_sets = static_cast<int64_t>(sets.size());
  at::Tensor edge_ptr = at::empty({num_sets + 1}, options);
  int64_t* offsets = edge_ptr.data_ptr<int64_t>();
  offsets[0] = 0;
  for (int64_t s = 0; s < num_sets; ++s) {
    offsets[s + 1] = offsets[s] + static_cast<int64_t>(sets[s].row.size());
  }
  at::Tensor row = at::empty({offsets[num_sets]}, options);
  at::Tensor col = at::empty_like(row), slot = at::empty_like(row);
  at::parallel_for(0, num_sets, 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      std::copy(sets[s].row.begin(), sets[s].row.end(), row.data_ptr<int64_t>() + offsets[s]);
      std::copy(sets[s].col.begin(), sets[s].col.end(), col.data_ptr<int64_t>() + offsets[s]);
      std::copy(sets[s].slot.begin(), sets[s].slot.end(), slot.data_ptr<int64_t>() + offsets[s]);
    }
  });
  return {row, col, slot, edge_ptr};
}

InducedResult induced_subgraphs_cpu(const at::Tensor& indptr, const at::Tensor& indices,
                                    const at::Tensor& nodes, const at::Tensor& ptr) {
  check_induced_subgraphs_inputs(indptr, indices, nodes, ptr);
  const at::Tensor indptr_c = indptr.contiguous(), indices_c = indices.contiguous();
  const at::Tensor nodes_c = nodes.contiguous(), ptr_c = ptr.contiguous();
  const int64_t num_sets = ptr.numel() - 1, num_nodes = indptr.numel() - 1;
  const int64_t* set_ptr = ptr_c.data_ptr<int64_t>();
  std::vector<SetEdges> sets(num_sets);
  AT_DISPATCH_INDEX_TYPES(indices_c.scalar_type(), kInducedOp, [&] {
    at::parallel_for(0, num_sets, 1, [&](int64_t begin, int64_t end) {
      PositionTable table;
      for (int64_t s = begin; s < end; ++s) {
        induce_set(indptr_c.data_ptr<int64_t>(), indices_c.data_ptr<index_t>(), num_nodes,
                   indices.numel(), nodes_c.data_ptr<int64_t>() + set_ptr[s],
                   set_ptr[s + 1] - set_ptr[s], s, table, sets[s]);
      }
    });
  });
  return concatenate(sets, indptr.options());
}

}  // namespace
}  // namespace fastgl::sampling

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("induced_subgraphs", &fastgl::sampling::induced_subgraphs_cpu);
}
