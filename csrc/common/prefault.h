// Bulk page population for large fresh CPU outputs.
//
// glibc serves every allocation of 32 MB or more (and, until its threshold adapts, many smaller
// ones) with a fresh anonymous mapping, so the kernel that first writes such an output also takes
// one page fault per 4 KB page, in the middle of its gathers. Populating the pages first, one
// madvise(MADV_POPULATE_WRITE) per thread over its share, is measurably cheaper
// (`python -m benchmarks.aggregate`, whole graphs at d >= 128).
#pragma once

#include <ATen/ATen.h>

namespace fastgl {

// Makes the pages of a contiguous CPU tensor that is about to be written in full resident, when
// that is worth it: the tensor is large and its first page is not resident yet (a fresh
// mapping). Callers that write only part of a tensor pass that part. No-op on other devices, on
// small tensors, on memory already in use, and where the kernel lacks MADV_POPULATE_WRITE
// (Linux < 5.14): the writes then fault the pages in as before.
void prefault_for_write(const at::Tensor& t);

}  // namespace fastgl
