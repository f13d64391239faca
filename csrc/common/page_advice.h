// Page-level advice for large fresh CPU tensors: bulk population of outputs, huge pages for
// arrays read at random and for large outputs.
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

// A fresh output an op is about to write in full, its pages made resident first
// (prefault_for_write): the op entries allocate their outputs through it on every device, and it
// costs nothing off the CPU.
inline at::Tensor empty_for_write(at::IntArrayRef sizes, const at::TensorOptions& options) {
  at::Tensor out = at::empty(sizes, options);
  prefault_for_write(out);
  return out;
}

// Asks for transparent huge pages (2 MB) behind a large contiguous CPU tensor that has not been
// written yet: the CSC arrays csc_from_coo builds, which the samplers read at random (every random
// read of a 1 GB array with 4 KB pages also misses the TLB; with 2 MB pages far fewer do:
// products-scale sampling 15-20 % faster), and outputs written once in full, which 2 MB pages
// fault in 512 times less often (induced_subgraphs: 8-15 % faster). Only the 2 MB-aligned interior
// of tensors of 32 MB or more is advised. Advice only: where transparent huge pages are off, or
// none are free, the memory keeps 4 KB pages; memory already written keeps its pages. No-op off
// Linux and on other devices.
void advise_huge_pages(const at::Tensor& t);

// empty_for_write for a large output written once in full, asking for 2 MB pages first
// (advise_huge_pages): a 512th of the page faults.
inline at::Tensor empty_huge_for_write(at::IntArrayRef sizes, const at::TensorOptions& options) {
  at::Tensor out = at::empty(sizes, options);
  advise_huge_pages(out);
  prefault_for_write(out);
  return out;
}

}  // namespace fastgl
