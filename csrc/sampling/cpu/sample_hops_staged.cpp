// The host harness of the device sampling engine (hop_engine.h), for tests: the CUDA backend's
// stages, index ranges and stage order run on CPU threads, with real atomics on the node table,
// and the CUDA library scan replaced by a sequential one. Its samples must equal the CPU
// kernel's (tests/test_hop_engine.py), so the GPU's first run of the engine finds tuning
// problems, not logic bugs (DESIGN.md §7). Registered as the test-only op
// fastgl::_sample_hops_staged, which takes sample_hops' arguments and the engine's memory
// budget (0: every hop waits for its exact size, the path fanout -1 takes; negative: the
// device's default share of memory). The same harness is
// the CPU backend of fastgl::_hetero_sample_hops (hetero_hops.h), whose reference is the
// heterogeneous sampler's composition of sample_ranges and id_map.
#include "sampling/hetero_hops.h"

#include <ATen/Parallel.h>
#include <torch/library.h>

namespace fastgl::sampling {
namespace {

// Indices per task: small, so that even the tests' small levels run on several threads at once.
constexpr int64_t kHarnessGrain = 4;

struct HostExec {
  at::TensorOptions options() const { return at::TensorOptions().dtype(at::kLong); }

  template <typename Stage>
  void for_each(int64_t n, const Stage& stage) const {
    at::parallel_for(0, n, kHarnessGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) stage(i);
    });
  }

  // Each task's lanes run one after another (HostLanes), tasks in parallel.
  template <typename Stage>
  void for_each_group(int64_t n, int width, const Stage& stage) const {
    const HostLanes lanes{width};
    for_each(n, [&](int64_t task) { stage(task, lanes); });
  }

  template <typename Stage>
  void single(const Stage& stage) const {
    stage(0);
  }

  void exclusive_scan(const int64_t* in, int64_t* out, int64_t n) const {
    out[0] = 0;
    for (int64_t i = 0; i < n; ++i) out[i + 1] = out[i] + in[i];
  }

  at::Tensor upload(const at::Tensor& host) const { return host; }
  at::Tensor read(const at::Tensor& t) const { return t.contiguous(); }
};

// Without a budget, the harness takes the device's rule over the host's memory.
struct HostSampleHops {
  static HopsResult run_engine(const HopsInputs& in, int64_t budget_bytes) {
    HostExec exec;
    return hops::run_hop_engine(in, exec, hops::engine_budget(budget_bytes, in.indptr.device()));
  }
};

HopsResult sample_hops_staged(const at::Tensor& indptr, const at::Tensor& indices,
                              const c10::optional<at::Tensor>& weight,
                              const c10::optional<at::Tensor>& eid, const at::Tensor& seeds,
                              const at::Tensor& seed_ptr, at::IntArrayRef fanouts, bool replace,
                              bool layerwise, bool disjoint, int64_t seed, int64_t budget_bytes) {
  const HopsInputs inputs = prepare_sample_hops(indptr, indices, weight, eid, seeds, seed_ptr,
                                                fanouts, replace, layerwise, disjoint, seed);
  return HostSampleHops::run_engine(inputs, budget_bytes);
}

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CPU, m) {
  m.impl("_sample_hops_staged", &sample_hops_staged);
  m.impl("_hetero_sample_hops", &hetero_sample_hops_entry<HostSampleHops>);
}

}  // namespace fastgl::sampling
