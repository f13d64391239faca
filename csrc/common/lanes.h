// Lanes: a group of `width` threads (a power of two, at most a warp) that share one task, such as
// one (sample, transit) pair's draws. Group code is written once against this interface and run
// by the CUDA kernels with WarpLanes (common/cuda_lanes.cuh) and by the host harnesses with
// HostLanes, over the same split of the task's indices (index j belongs to lane j % width).
// Every call is a barrier among the group's lanes, after its work:
//   each(n, f)   f(j) for every j < n: a phase whose results the next one reads
//   one(f)       f() on lane 0
//   sum(n, f)    f(0) + ... + f(n - 1) for 0/1 or small integer f, the same on every lane (an
//                integer sum: any order gives it exactly)
//   ballot(p)    the mask of the lanes l < width with p(l), the same on every lane
// A phase may read what earlier phases wrote but never what another lane writes in the same
// phase. HostLanes runs a phase's lanes last lane first, so a phase that reads a lower lane's
// result of the same phase sees it unwritten on the host too, and CI catches it; reading a
// higher lane's result, or a missing barrier, only the device can show.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

namespace fastgl {

constexpr int kWarpLanes = 32;

// The group width for tasks of at most `items` indices (-1: unbounded): the power of two that
// covers them, capped at a warp, so that a short task does not idle a warp's worth of lanes.
inline int lanes_for(int64_t items) {
  if (items < 0 || items >= kWarpLanes) return kWarpLanes;
  int width = 1;
  while (width < items) width *= 2;
  return width;
}

struct HostLanes {
  int width;

  template <typename F>
  void each(int64_t n, const F& f) const {
    for (int lane = width - 1; lane >= 0; --lane) {
      for (int64_t j = lane; j < n; j += width) f(j);
    }
  }

  template <typename F>
  void one(const F& f) const {
    f();
  }

  template <typename F>
  int64_t sum(int64_t n, const F& f) const {
    int64_t total = 0;
    for (int64_t j = 0; j < n; ++j) total += static_cast<int64_t>(f(j));
    return total;
  }

  template <typename Pred>
  uint32_t ballot(const Pred& pred) const {
    uint32_t mask = 0;
    for (int lane = width - 1; lane >= 0; --lane) mask |= pred(lane) ? 1u << lane : 0u;
    return mask;
  }
};

}  // namespace fastgl
