// The CPU sum aggregation (spmm, es_spmm with reduce="sum"): out[r] = sum_k weight[k] * x[col_k].
//
// Feature-dimension partitioning, after Zeng et al. ("Accurate, Efficient and Scalable Graph
// Embedding", §V-B, Algorithm 6): the columns of x are split into slabs sized so that the slab
// of x that a task's random row reads hit stays in cache, and a task propagates one slab over a
// range of rows; the ranges split the rows' work (edges plus rows) evenly between the threads.
// A slab is a whole number of cache lines (a narrower one would still fetch whole lines) and at
// most kMaxSlabBytes, whose accumulator stays in vector registers (or L1). Half-row slabs of a
// strided x use only half the cache sets: measured, d = 256 in two 128-wide passes ran 1.3-1.4x
// slower than in one 256-wide pass.
//
// The row kernel accumulates a slab in registers/L1 and writes it once; the x rows of the next
// edges are prefetched, since with random columns every edge's row is a likely cache miss. It is
// compiled for AVX-512, AVX2 and the baseline ISA and picked at load time (function
// multiversioning), so the extension vectorizes wide where the CPU can and still runs on any
// x86-64 (no -march=native).
#pragma once

#include "common/multiversion.h"

#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace fastgl::aggregate {

constexpr int64_t kCacheLineBytes = 64;
constexpr int64_t kMaxSlabBytes = 1024;  // the accumulator of one slab stays in registers/L1
constexpr int64_t kPrefetchEdges = 8;    // rows of x requested this many edges ahead
constexpr int64_t kTasksPerThread = 4;   // row ranges of equal work per thread

// The cache Algorithm 6 sizes slabs by. The paper takes the private cache; measured here, slabs
// of an L2's size were 10-60% slower than whole rows (sources of one edge at a time are then read
// as several scattered lines), while the shared last-level cache, which the threads' random
// reads actually hit, keeps the model's point: split only what would not fit there.
inline int64_t slab_cache_bytes() {
  static const int64_t bytes = [] {
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    for (const int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
      const long size = sysconf(level);
      if (size > 0) return static_cast<int64_t>(size);
    }
#endif
    return int64_t{32} << 20;
  }();
  return bytes;
}

// Columns per slab for x of `rows` x `dim` elements of `element_bytes`: Q_f = bytes(x) / S_cache
// slabs (the paper's max with p is not needed: rows are split between threads too), each a
// whole number of cache lines and at most kMaxSlabBytes wide.
inline int64_t slab_columns(int64_t rows, int64_t dim, int64_t element_bytes) {
  const int64_t cache = slab_cache_bytes();
  const int64_t slabs = std::max<int64_t>(1, (rows * dim * element_bytes + cache - 1) / cache);
  const int64_t line = kCacheLineBytes / element_bytes;
  const int64_t width = ((dim + slabs - 1) / slabs + line - 1) / line * line;
  return std::min(width, std::max(line, kMaxSlabBytes / element_bytes));
}

template <typename scalar_t, typename index_t, typename Selector>
struct SumRowsArgs {
  const int64_t* row_start;
  const index_t* column;
  const scalar_t* weight;  // null: all ones
  const scalar_t* x;
  scalar_t* out;
  int64_t dim;
  Selector selector;
};

// Rows [row_begin, row_end) of the slab of columns [c0, c0 + width). A fixed kWidth (0: the
// runtime `width`) keeps the accumulator in vector registers.
template <int64_t kWidth, typename scalar_t, typename index_t, typename Selector>
FASTGL_MULTIVERSION void sum_slab_rows(const SumRowsArgs<scalar_t, index_t, Selector>& a,
                                       int64_t row_begin, int64_t row_end, int64_t c0,
                                       int64_t runtime_width) {
  using acc_t = at::opmath_type<scalar_t>;
  const int64_t width = kWidth ? kWidth : runtime_width;
  acc_t acc[kWidth ? kWidth : kMaxSlabBytes / sizeof(scalar_t)];
  const scalar_t* x = a.x + c0;
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t f = 0; f < width; ++f) acc[f] = acc_t(0);
    const int64_t start = a.row_start[r], degree = a.row_start[r + 1] - start;
    const int64_t count = a.selector.count(degree);
    for (int64_t slot = 0; slot < count; ++slot) {
      if (slot + kPrefetchEdges < count) {
        const int64_t ahead = start + a.selector.edge(slot + kPrefetchEdges, degree);
        __builtin_prefetch(x + static_cast<int64_t>(a.column[ahead]) * a.dim);
      }
      const int64_t k = start + a.selector.edge(slot, degree);
      const acc_t w = a.weight ? static_cast<acc_t>(a.weight[k]) : acc_t(1);
      const scalar_t* x_row = x + static_cast<int64_t>(a.column[k]) * a.dim;
      for (int64_t f = 0; f < width; ++f) acc[f] += w * static_cast<acc_t>(x_row[f]);
    }
    scalar_t* out_row = a.out + r * a.dim + c0;
    for (int64_t f = 0; f < width; ++f) out_row[f] = static_cast<scalar_t>(acc[f]);
  }
}

// sum_slab_rows with the slab's width fixed at compile time where it is a common one.
template <typename scalar_t, typename index_t, typename Selector>
void sum_slab(const SumRowsArgs<scalar_t, index_t, Selector>& a, int64_t row_begin, int64_t row_end,
              int64_t c0, int64_t width) {
  switch (width) {
    case 16:
      return sum_slab_rows<16>(a, row_begin, row_end, c0, width);
    case 32:
      return sum_slab_rows<32>(a, row_begin, row_end, c0, width);
    case 64:
      return sum_slab_rows<64>(a, row_begin, row_end, c0, width);
    case 128:
      return sum_slab_rows<128>(a, row_begin, row_end, c0, width);
    case 256:
      return sum_slab_rows<256>(a, row_begin, row_end, c0, width);
    default:
      return sum_slab_rows<0>(a, row_begin, row_end, c0, width);
  }
}

// Row boundaries splitting [0, num_rows) into `parts` ranges of about equal work (edges plus
// rows): degrees are skewed, and equal row counts would leave threads idle.
inline std::vector<int64_t> balanced_row_bounds(const int64_t* row_start, int64_t num_rows,
                                                int64_t parts) {
  const int64_t total = row_start[num_rows] - row_start[0] + num_rows;
  std::vector<int64_t> bounds(parts + 1, num_rows);
  bounds[0] = 0;
  for (int64_t i = 1; i < parts; ++i) {
    const int64_t target = total * i / parts;
    int64_t lo = bounds[i - 1], hi = num_rows;  // first row whose work prefix reaches target
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (row_start[mid] - row_start[0] + mid < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    bounds[i] = lo;
  }
  return bounds;
}

template <typename scalar_t, typename index_t, typename Selector>
void sum_rows(const SumRowsArgs<scalar_t, index_t, Selector>& a, int64_t num_rows,
              int64_t num_x_rows) {
  if (num_rows == 0 || a.dim == 0) return;
  const int64_t width = slab_columns(num_x_rows, a.dim, sizeof(scalar_t));
  const int64_t num_slabs = (a.dim + width - 1) / width;
  const int64_t row_blocks = std::min(num_rows, at::get_num_threads() * kTasksPerThread);
  const std::vector<int64_t> bounds = balanced_row_bounds(a.row_start, num_rows, row_blocks);
  // Slab-major tasks: the threads' contiguous shares each stay on few slabs.
  at::parallel_for(0, num_slabs * row_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t slab = task / row_blocks, block = task % row_blocks;
      const int64_t c0 = slab * width;
      sum_slab(a, bounds[block], bounds[block + 1], c0, std::min(width, a.dim - c0));
    }
  });
}

}  // namespace fastgl::aggregate
