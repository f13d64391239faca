// gather_rows: out[out_index[i]] = x[index[i]] for every i, whole rows (the first dimension),
// any dtype. A missing index means 0, 1, 2, ... on that side. It is the feature loader's one
// copy primitive: the parallel CPU gather into a pinned staging buffer, the device-side move of
// reused rows (Match), the scatter of loaded rows into a batch buffer, and — with x in pinned
// host memory and out on the GPU — the zero-copy (UVA) gather, in which the GPU reads the rows
// straight from host memory.
#pragma once

#include "common/check.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <c10/util/Optional.h>
#include <c10/util/accumulate.h>

#include <cstdint>

namespace fastgl::features {

struct RowCopy {
  int64_t num_rows;   // rows copied
  int64_t row_bytes;  // bytes per row
};

// The int64 row ids of an optional index (nullptr: rows 0, 1, ...); `holder` keeps them alive.
inline const int64_t* row_ids(const c10::optional<at::Tensor>& index, at::Tensor& holder) {
  if (!index) return nullptr;
  holder = index->to(at::kLong).contiguous();
  return holder.data_ptr<int64_t>();
}

inline void check_row_index(const char* name, const c10::optional<at::Tensor>& index,
                            const at::Tensor& out, int64_t bound) {
  if (!index.has_value()) return;
  check_index_vector("gather_rows", name, *index);
  check_same_device("gather_rows", name, *index, "out", out);
  if (index->numel() == 0) return;
  const auto [low, high] = min_max_ids(*index);
  FASTGL_CHECK(low >= 0 && high < bound, "gather_rows", name, " holds row ", low < 0 ? low : high,
               ", out of range for ", bound, " rows");
}

inline void check_no_overlap(const at::Tensor& out, const at::Tensor& other, const char* name) {
  const at::MemOverlapStatus overlap = at::get_overlap_status(out, other);
  FASTGL_CHECK(overlap != at::MemOverlapStatus::Full && overlap != at::MemOverlapStatus::Partial,
               "gather_rows", "out shares memory with ", name, "; pass a separate out tensor");
}

// Checks everything but where x and out live (the backends differ there, and check it after
// this) and sizes the copy.
inline RowCopy check_gather_rows_inputs(const at::Tensor& x, const c10::optional<at::Tensor>& index,
                                        const at::Tensor& out,
                                        const c10::optional<at::Tensor>& out_index) {
  constexpr const char* op = "gather_rows";
  check_defined(op, "x", x);
  check_defined(op, "out", out);
  FASTGL_CHECK(x.dim() >= 1, op, "x must have at least one dimension, got a scalar");
  FASTGL_CHECK(out.dim() >= 1, op, "out must have at least one dimension, got a scalar");
  FASTGL_CHECK(x.sizes().slice(1) == out.sizes().slice(1), op,
               "out must have the row shape of x, got ", out.sizes(), " for x of shape ",
               x.sizes());
  FASTGL_CHECK(x.scalar_type() == out.scalar_type(), op, "out must have the dtype of x (",
               x.scalar_type(), "), got ", out.scalar_type());
  // Rows copied in parallel from a tensor into itself could read rows already overwritten.
  // Likewise row ids that the copy could overwrite before reading them.
  check_no_overlap(out, x, "x");
  if (index) check_no_overlap(out, *index, "index");
  if (out_index) check_no_overlap(out, *out_index, "out_index");
  FASTGL_CHECK(x.is_contiguous() && out.is_contiguous(), op,
               "x and out must be contiguous (rows are copied as whole blocks of bytes)");
  int64_t num_rows = index ? index->numel() : out_index ? out_index->numel() : x.size(0);
  FASTGL_CHECK(!(index && out_index) || index->numel() == out_index->numel(), op,
               "index and out_index must have the same length, got ", index ? index->numel() : 0,
               " and ", out_index ? out_index->numel() : 0);
  FASTGL_CHECK(index || num_rows <= x.size(0), op, "without index, x must have at least ", num_rows,
               " rows, got ", x.size(0));
  FASTGL_CHECK(out_index || num_rows <= out.size(0), op, "out must have at least ", num_rows,
               " rows, got ", out.size(0));
  check_row_index("index", index, out, x.size(0));
  check_row_index("out_index", out_index, out, out.size(0));
  const int64_t row_elements = c10::multiply_integers(x.sizes().slice(1));
  return {num_rows, row_elements * static_cast<int64_t>(x.element_size())};
}

// The op's entry point, shared by the backends: check, let `Backend::check_placement(x, out,
// copy)` check where x and out live, mark `out` written, skip an empty copy, make the row ids
// int64 on the output's device, then `Backend::run(x, src_rows, out, dst_rows, copy)` copies the
// rows (src_rows/dst_rows null: rows 0, 1, ...).
template <typename Backend>
void gather_rows_entry(const at::Tensor& x, const c10::optional<at::Tensor>& index,
                       const at::Tensor& out, const c10::optional<at::Tensor>& out_index) {
  const RowCopy copy = check_gather_rows_inputs(x, index, out, out_index);
  Backend::check_placement(x, out, copy);
  note_in_place_write(out);
  if (copy.num_rows == 0 || copy.row_bytes == 0) return;
  const c10::DeviceGuard device_guard(out.device());
  at::Tensor index_holder, out_index_holder;
  const int64_t* src_rows = row_ids(index, index_holder);
  const int64_t* dst_rows = row_ids(out_index, out_index_holder);
  Backend::run(x, src_rows, out, dst_rows, copy);
}

}  // namespace fastgl::features
