// CUDA frontier_sample (frontier_sample.h states the semantics): many samplers at once, one per
// thread block of one warp (the paper's inter-subgraph parallelism), the warp sharing each
// sampler's work (its intra-subgraph parallelism, Zeng et al., §IV-C): 32 probes of the Dashboard
// at once, the writing of a walker's block, the compaction of a cleanup, the membership test of
// the first frontier's draws. Every rule comes from dashboard.h and neighbor_draw.h, as on the
// CPU, and a warp's 32 probes read the draws the CPU's probes one after the other would, so both
// backends return the same samples.
//
// A Dashboard grows during a sampler's run, up to a size known only by running it. Each thread
// block keeps its samplers' Dashboards in a slot of a size fixed for the launch; a sampler whose
// DB would outgrow it stops and is listed, and is run again, from its start (its draws are a
// function of its index alone), in a launch with slots as big as the largest DB asked for. Each
// launch costs one host synchronization, which also reads the first fault (a fault costs up to two
// more: to drop the samplers past it from a rerun, and to read the vertex at fault).
#include "common/cuda_utils.cuh"
#include "sampling/dashboard.h"
#include "sampling/frontier_sample.h"
#include "sampling/neighbor_draw.h"

#include <torch/library.h>

#include <algorithm>

namespace fastgl::sampling {
namespace {

using fastgl::cuda::keep_smallest;

constexpr int kWarpSize = 32;
constexpr unsigned kWholeWarp = 0xffffffffu;

// Thread blocks (samplers) resident at once per multiprocessor; the Dashboards' memory grows
// with it, and a launch gives them at most 1 / kDashboardMemoryShare of the device's memory
// (fewer blocks for bigger slots).
constexpr int64_t kSamplersPerMultiprocessor = 8;
constexpr int64_t kDashboardMemoryShare = 8;

__device__ int lane() { return static_cast<int>(threadIdx.x); }  // a block is one warp

__device__ int64_t warp_inclusive_sum(int64_t value) {
  for (int offset = 1; offset < kWarpSize; offset <<= 1) {
    const int64_t below = __shfl_up_sync(kWholeWarp, value, offset);
    if (lane() >= offset) value += below;
  }
  return value;
}

// Whether `pick` is among the `m` ids chosen so far: the warp compares 32 at a time. Each lane
// writes every draw itself (draw_uniform_without_replacement runs on all of them alike), so it
// reads its own writes.
struct WarpScanChosen {
  __device__ bool operator()(const int64_t* chosen, int64_t m, int64_t pick) const {
    bool found = false;
    for (int64_t i = lane(); i < m; i += kWarpSize) found |= chosen[i] == pick;
    return __any_sync(kWholeWarp, found);
  }
};

// One sampler's Dashboard, held by a warp: DB and IA in global memory (the block's slot, room for
// `slot_capacity` entries and as many records), the scalars in every lane alike. Each method is
// called by the whole warp.
class WarpDashboard {
 public:
  __device__ WarpDashboard(int64_t* db, DashboardBlock* blocks, int64_t slot_capacity,
                           int64_t capacity, int64_t entry_weight, double eta)
      : db_(db),
        blocks_(blocks),
        slot_capacity_(slot_capacity),
        capacity_(capacity),
        entry_weight_(entry_weight),
        eta_(eta) {}

  __device__ bool empty() const { return live_entries_ == 0; }

  // Appends a walker (the CPU's Dashboard::add). False, with *needed the DB size asked for, when
  // DB would outgrow the slot.
  __device__ bool add(int64_t vertex, int64_t weight, int64_t* needed) {
    if (weight == 0) return true;  // a walker nothing can pop
    const int64_t entries = dashboard_entries(weight, entry_weight_);
    if (fill_ + entries > capacity_ && !cleanup(entries, needed)) return false;
    for (int64_t e = lane(); e < entries; e += kWarpSize) db_[fill_ + e] = num_blocks_;
    if (lane() == 0) blocks_[num_blocks_] = DashboardBlock{vertex, fill_, entries, weight};
    ++num_blocks_;
    fill_ += entries;
    live_entries_ += entries;
    __syncwarp();
    return true;
  }

  // Pops a walker into *vertex (the CPU's Dashboard::pop), *draw past the draws it read. The
  // lanes probe draws *draw, *draw + 1, ..., *draw + 31 at once, each as a probe and as the
  // keep-or-not draw of a probe on the lane before; reading the outcomes in order, as the CPU's
  // probes one at a time would, finds the same walker after the same draws. False as add.
  __device__ bool pop(RandomStream& rng, uint64_t* draw, int64_t* vertex, int64_t* needed) {
    if (needs_compaction(fill_, live_entries_, eta_) && !cleanup(0, needed)) return false;
    while (true) {
      const uint64_t mine = *draw + static_cast<uint64_t>(lane());
      const int64_t at = rng.below(mine, fill_);
      const int64_t name = db_[at];
      const DashboardBlock block = blocks_[name];
      const bool live = block.vertex != kPoppedWalker;
      const int64_t share = live ? probe_share(block, at, entry_weight_) : 0;
      const unsigned full = __ballot_sync(kWholeWarp, live && share == entry_weight_);
      const unsigned partial = __ballot_sync(kWholeWarp, live && share < entry_weight_);
      // Lane i's draw as the keep-or-not draw of a probe by lane i - 1 on a partial entry.
      const int64_t share_before = __shfl_up_sync(kWholeWarp, share, 1);
      const unsigned keeps_before =
          __ballot_sync(kWholeWarp, rng.below(mine, entry_weight_) < share_before);
      const int64_t last_share = __shfl_sync(kWholeWarp, share, kWarpSize - 1);
      int probe = 0, winner = -1, used = 0;
      while (probe < kWarpSize) {
        if ((full >> probe) & 1u) {
          winner = probe;
          used = probe + 1;
          break;
        }
        if (!((partial >> probe) & 1u)) {
          ++probe;
          continue;
        }
        // The next draw keeps the walker or not: the next lane's, or past the warp's.
        const bool keeps = probe + 1 < kWarpSize
                               ? ((keeps_before >> (probe + 1)) & 1u) != 0
                               : rng.below(*draw + kWarpSize, entry_weight_) < last_share;
        if (keeps) {
          winner = probe;
          used = probe + 2;
          break;
        }
        probe += 2;
      }
      if (winner < 0) {
        *draw += static_cast<uint64_t>(probe);
        continue;
      }
      *draw += static_cast<uint64_t>(used);
      if (lane() == winner) blocks_[name].vertex = kPoppedWalker;
      *vertex = __shfl_sync(kWholeWarp, block.vertex, winner);
      live_entries_ -= __shfl_sync(kWholeWarp, block.entries, winner);
      __syncwarp();
      return true;
    }
  }

 private:
  // The CPU's Dashboard::cleanup, 32 blocks at a time: each live block's new place is the sum of
  // the live entries before it. A block's new record and entries lie at or before its old ones,
  // and the warp reads its 32 records before writing any, so no write reaches a record not yet
  // read; DB itself is only written.
  __device__ bool cleanup(int64_t room, int64_t* needed) {
    int64_t kept = 0, fill = 0;
    for (int64_t first = 0; first < num_blocks_; first += kWarpSize) {
      const int64_t i = first + lane();
      const DashboardBlock block =
          i < num_blocks_ ? blocks_[i] : DashboardBlock{kPoppedWalker, 0, 0, 0};
      const bool live = block.vertex != kPoppedWalker;
      const unsigned live_lanes = __ballot_sync(kWholeWarp, live);
      const int64_t through = warp_inclusive_sum(live ? block.entries : 0);
      __syncwarp();
      if (live) {
        const int64_t start = fill + through - block.entries;
        const int64_t name = kept + __popc(live_lanes & ((1u << lane()) - 1u));
        blocks_[name] = DashboardBlock{block.vertex, start, block.entries, block.weight};
        for (int64_t e = 0; e < block.entries; ++e) db_[start + e] = name;
      }
      kept += __popc(live_lanes);
      fill += __shfl_sync(kWholeWarp, through, kWarpSize - 1);
      __syncwarp();
    }
    num_blocks_ = kept;
    fill_ = fill;
    const int64_t capacity = grown_capacity(capacity_, fill_, room, eta_);
    if (capacity > slot_capacity_) {
      *needed = capacity;
      return false;
    }
    capacity_ = capacity;
    return true;
  }

  int64_t* db_;
  DashboardBlock* blocks_;
  int64_t slot_capacity_, capacity_, entry_weight_;
  double eta_;
  int64_t fill_ = 0, live_entries_ = 0, num_blocks_ = 0;
};

// The call (frontier_sample.h's view) and where its samplers report faults.
template <typename index_t>
struct DeviceFrontierRun {
  FrontierView<index_t> view;
  int64_t* bad_nodes;    // [S]: the vertex at fault of each faulty sampler
  int64_t* first_fault;  // the smallest encoded fault
};

// A launch's thread blocks' Dashboards: block b's DB at db + b * capacity, its IA at blocks + b *
// capacity.
struct DashboardSlots {
  int64_t* db;
  DashboardBlock* blocks;
  int64_t capacity;
};

// Where a launch lists the samplers whose DB outgrew their slot (state[kOverflowed] of them) and
// the largest DB they asked for (state[kLargestAsked]); state[kFirstFault] is the run's fault.
enum LaunchState : int64_t { kFirstFault = 0, kOverflowed = 1, kLargestAsked = 2, kStateSize = 3 };

enum class SamplerEnd { kDone, kFault, kOverflow };

template <typename index_t>
class WarpSampler {
 public:
  __device__ WarpSampler(const DeviceFrontierRun<index_t>& run, int64_t s)
      : run_(run.view),
        bad_nodes_(run.bad_nodes),
        first_fault_(run.first_fault),
        s_(s),
        rng_(run.view.key, static_cast<uint64_t>(s)) {}

  // Sampler s from its start: its first frontier, then its moves (the CPU's start_sampler and a
  // SamplerBatch's stages, in the same order of draws and checks).
  __device__ SamplerEnd run(WarpDashboard& dashboard, int64_t* needed) {
    int64_t* first = run_.frontier + s_ * run_.frontier_size;
    draw_uniform_without_replacement(rng_, run_.num_nodes, run_.frontier_size, first,
                                     WarpScanChosen{});
    uint64_t draw = static_cast<uint64_t>(run_.frontier_size);
    for (int64_t i = 0; i < run_.frontier_size; ++i) {
      const int64_t weight = weight_of(first[i]);
      if (weight < 0) return fault(kBadFrontierRow, first[i]);
      if (!dashboard.add(first[i], weight, needed)) return SamplerEnd::kOverflow;
    }
    for (int64_t k = 0; k < run_.moves; ++k) {
      if (dashboard.empty()) {
        for (int64_t j = k + lane(); j < run_.moves; j += kWarpSize) {
          popped(j) = -1;
          added(j) = -1;
        }
        return SamplerEnd::kDone;
      }
      int64_t u = -1;
      if (!dashboard.pop(rng_, &draw, &u, needed)) return SamplerEnd::kOverflow;
      const int64_t start = run_.indptr[u];
      const int64_t degree = run_.indptr[u + 1] - start;  // checked when u joined
      const int64_t v = static_cast<int64_t>(run_.indices[start + rng_.below(draw++, degree)]);
      if (v < 0 || v >= run_.num_nodes) return fault(kBadFrontierNeighbor, u);
      const int64_t weight = weight_of(v);
      if (weight < 0) return fault(kBadFrontierRow, v);
      if (!dashboard.add(v, weight, needed)) return SamplerEnd::kOverflow;
      if (lane() == 0) {
        popped(k) = u;
        added(k) = v;
      }
    }
    return SamplerEnd::kDone;
  }

 private:
  __device__ int64_t weight_of(int64_t vertex) const {
    return frontier_weight(run_.indptr, vertex, run_.num_edges, run_.max_entries);
  }
  __device__ int64_t& popped(int64_t k) const { return run_.popped[s_ * run_.moves + k]; }
  __device__ int64_t& added(int64_t k) const { return run_.added[s_ * run_.moves + k]; }

  __device__ SamplerEnd fault(int64_t code, int64_t node) const {
    if (lane() == 0) {
      bad_nodes_[s_] = node;
      keep_smallest(first_fault_, s_ * kNumFrontierFaults + code);
    }
    return SamplerEnd::kFault;
  }

  const FrontierView<index_t> run_;  // a copy: a kernel parameter's address is a local copy anyway
  int64_t* bad_nodes_;
  int64_t* first_fault_;
  int64_t s_;
  RandomStream rng_;
};

// Runs samplers `samplers[i]` (null: sampler i) for i < num_samplers, thread block b the i = b
// (mod gridDim.x), in its slot; lists in `overflowed` those whose DB outgrew it.
template <typename index_t>
__global__ void __launch_bounds__(kWarpSize)
    frontier_sample_kernel(DeviceFrontierRun<index_t> run, const int64_t* samplers,
                           int64_t num_samplers, DashboardSlots slots, int64_t* overflowed,
                           int64_t* state) {
  const FrontierView<index_t>& view = run.view;
  if (blockIdx.x == 0 && lane() == 0 &&
      !valid_offset_ends(view.indptr, view.num_nodes, view.num_edges)) {
    keep_smallest(run.first_fault, kBadFrontierOffsetEnds);
  }
  int64_t* db = slots.db + static_cast<int64_t>(blockIdx.x) * slots.capacity;
  DashboardBlock* blocks = slots.blocks + static_cast<int64_t>(blockIdx.x) * slots.capacity;
  for (int64_t i = blockIdx.x; i < num_samplers; i += gridDim.x) {
    const int64_t s = samplers != nullptr ? samplers[i] : i;
    WarpDashboard dashboard(db, blocks, slots.capacity, view.initial_capacity, view.entry_weight,
                            view.eta);
    int64_t needed = 0;
    if (WarpSampler<index_t>(run, s).run(dashboard, &needed) == SamplerEnd::kOverflow &&
        lane() == 0) {
      const auto at = atomicAdd(reinterpret_cast<unsigned long long*>(state + kOverflowed), 1ull);
      overflowed[at] = s;
      atomicMax(reinterpret_cast<long long*>(state + kLargestAsked),
                static_cast<long long>(needed));
    }
    __syncwarp();
  }
}

int64_t multiprocessors(const at::Device& device) {
  int count = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device.index()));
  return count;
}

// Runs the samplers listed (all when `samplers` is undefined) with Dashboard slots of
// `slot_capacity` entries; returns the launch's state, read back (a synchronization).
template <typename index_t>
at::Tensor launch_samplers(const DeviceFrontierRun<index_t>& run, const at::Tensor& samplers,
                           int64_t num_samplers, int64_t slot_capacity, const at::Tensor& state,
                           at::Tensor* overflowed) {
  const auto options = state.options();
  // Walkers crowding a hub of an uncapped skewed graph can ask for eta * m times its entries.
  check_output_fits(kFrontierOp, "a sampler's Dashboard (cap max_entries, or lower eta)",
                    slot_capacity, kDashboardEntryBytes, state.device());
  const int64_t slot_bytes = slot_capacity * kDashboardEntryBytes;
  const int64_t slots_that_fit =
      device_memory_bytes(state.device()) / kDashboardMemoryShare / slot_bytes;
  const int64_t grid = std::max<int64_t>(
      1, std::min({num_samplers, multiprocessors(state.device()) * kSamplersPerMultiprocessor,
                   slots_that_fit}));
  at::Tensor db = at::empty({grid * slot_capacity}, options);
  static_assert(sizeof(DashboardBlock) % sizeof(int64_t) == 0);
  constexpr int64_t kWordsPerBlock = sizeof(DashboardBlock) / sizeof(int64_t);
  at::Tensor blocks = at::empty({grid * slot_capacity * kWordsPerBlock}, options);
  *overflowed = at::empty({num_samplers}, options);
  state.narrow(0, kOverflowed, 2).zero_();
  frontier_sample_kernel<index_t><<<grid, kWarpSize, 0, fastgl::cuda::current_stream()>>>(
      run, samplers.defined() ? samplers.data_ptr<int64_t>() : nullptr, num_samplers,
      DashboardSlots{db.data_ptr<int64_t>(),
                     reinterpret_cast<DashboardBlock*>(blocks.data_ptr<int64_t>()), slot_capacity},
      overflowed->data_ptr<int64_t>(), state.data_ptr<int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return state.cpu();
}

struct CudaFrontierSample {
  template <typename index_t>
  static FrontierFaultReport run(const FrontierView<index_t>& view, FrontierPop pop) {
    FASTGL_CHECK(pop == FrontierPop::kDashboard, kFrontierOp,
                 "pop 'scan' (the O(frontier_size)-per-pop baseline) runs on the CPU only");
    const auto options =
        at::TensorOptions().dtype(at::kLong).device(at::kCUDA, c10::cuda::current_device());
    at::Tensor state = at::zeros({kStateSize}, options);
    state.narrow(0, kFirstFault, 1).fill_(kNoFrontierFaultFound);
    at::Tensor bad_nodes = at::full({view.num_subgraphs}, -1, options);
    const DeviceFrontierRun<index_t> run{view, bad_nodes.data_ptr<int64_t>(),
                                         state.data_ptr<int64_t>() + kFirstFault};
    // A DB doubles at its first growth: slots of that size hold most samplers to their end.
    int64_t slot_capacity = 2 * view.initial_capacity, num_samplers = view.num_subgraphs;
    at::Tensor samplers, overflowed;
    while (true) {
      const at::Tensor read =
          launch_samplers(run, samplers, num_samplers, slot_capacity, state, &overflowed);
      const int64_t* host = read.data_ptr<int64_t>();
      const int64_t fault = host[kFirstFault];
      num_samplers = host[kOverflowed];
      samplers = overflowed.narrow(0, 0, num_samplers);
      if (num_samplers > 0 && fault != kNoFrontierFaultFound) {
        // Only a sampler before the first fault found can fault first: the others need not run
        // again.
        if (fault == kBadFrontierOffsetEnds) return {fault, -1};
        samplers = samplers.masked_select(samplers < fault / kNumFrontierFaults);
        num_samplers = samplers.numel();
        // The largest DB asked for may be a dropped sampler's: the others' slots only double.
        slot_capacity = 2 * slot_capacity;
      } else {
        slot_capacity = std::max(host[kLargestAsked], 2 * slot_capacity);
      }
      if (num_samplers == 0) {
        if (fault == kNoFrontierFaultFound || fault == kBadFrontierOffsetEnds) return {fault, -1};
        return {fault, bad_nodes[fault / kNumFrontierFaults].item<int64_t>()};
      }
    }
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(fastgl, CUDA, m) {
  m.impl("frontier_sample", &frontier_sample_entry<CudaFrontierSample>);
}

}  // namespace fastgl::sampling
