// CPU tensors whose memory comes from the block pool (block_pool.h): an op's large outputs,
// recycled from call to call instead of faulted in, and zeroed by the kernel, afresh each time.
#pragma once

#include "common/block_pool.h"
#include "common/page_advice.h"

#include <ATen/ATen.h>

#include <memory>
#include <utility>

namespace fastgl {

// A pooled buffer handed to a tensor without a copy: the tensor owns it from then on, and its
// memory goes back to the pool when the tensor is freed.
inline at::Tensor into_tensor(PooledVector<int64_t>&& buffer, const at::TensorOptions& options) {
  if (buffer.empty()) return at::empty({0}, options);
  auto owner = std::make_unique<PooledVector<int64_t>>(std::move(buffer));
  PooledVector<int64_t>* const data = owner.get();
  at::Tensor tensor = at::from_blob(
      data->data(), {static_cast<int64_t>(data->size())}, [data](void*) { delete data; }, options);
  owner.release();  // the tensor's deleter frees it now
  return tensor;
}

// empty_huge_for_write's int64 output of `size` entries, from the pool: once the last call's
// outputs are freed, the next call's take their pages, already resident (the advice then costs a
// system call, the prefault a check). Pages that are new come in as empty_huge_for_write's do.
inline at::Tensor pooled_empty_for_write(int64_t size, const at::TensorOptions& options) {
  PooledVector<int64_t> buffer;
  buffer.resize(static_cast<size_t>(size));
  at::Tensor out = into_tensor(std::move(buffer), options);
  advise_huge_pages(out);
  prefault_for_write(out);
  return out;
}

}  // namespace fastgl
