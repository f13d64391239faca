// Every op schema of fastgl, in one place. Kernels register per dispatch key next to their code
// (csrc/<domain>/cpu, csrc/<domain>/cuda); fake kernels for torch.compile live in fastgl/ops.
#include <torch/library.h>

TORCH_LIBRARY(fastgl, m) {
  // The fake kernels live in this Python module (torch 2.2/2.3 require the link for a C++ op
  // with a Python fake kernel; set_python_module is its later name, this one still works).
  m.impl_abstract_pystub("fastgl.ops._ops");
  m.def("csc_from_coo(Tensor src, Tensor dst, int num_nodes) -> (Tensor, Tensor, Tensor)");
  m.def(
      "sample_neighbors(Tensor indptr, Tensor indices, Tensor? weight, Tensor transits, "
      "int fanout, bool replace, int seed) -> (Tensor, Tensor, Tensor)");
  m.def(
      "sample_ranges(Tensor starts, Tensor ends, Tensor? weight, Tensor fanouts, bool replace, "
      "int seed) -> (Tensor, Tensor)");
  m.def(
      "sample_hops(Tensor indptr, Tensor indices, Tensor? weight, Tensor? eid, Tensor seeds, "
      "Tensor seed_ptr, int[] fanouts, bool replace, bool layerwise, bool disjoint, int seed) -> "
      "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
  // Test-only: sample_hops' device engine run on the host (csrc/sampling/cpu/sample_hops_staged).
  m.def(
      "_sample_hops_staged(Tensor indptr, Tensor indices, Tensor? weight, Tensor? eid, "
      "Tensor seeds, Tensor seed_ptr, int[] fanouts, bool replace, bool layerwise, bool disjoint, "
      "int seed, int budget_bytes) -> "
      "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
  // Internal: heterogeneous sampling's hops on the device engine (csrc/sampling/hetero_hops.h).
  m.def(
      "_hetero_sample_hops(Tensor indptr, Tensor indices, Tensor? weight, Tensor? eid, "
      "Tensor seeds, int[] seed_counts, int[] type_start, int[] src_type, int[] dst_type, "
      "int[] row_base, int[] fanouts, int num_hops, bool replace, bool layerwise, bool disjoint, "
      "int seed, int budget_bytes=-1, Tensor? slot_time=None, Tensor? tree_time=None, "
      "int[] timed=[], bool latest=False) -> "
      "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
  m.def(
      "random_walk(Tensor indptr, Tensor indices, Tensor? weight, Tensor? eid, Tensor starts, "
      "int length, "
      "float p, float q, float restart_prob, bool ppr, str schedule, int seed) -> "
      "(Tensor, Tensor)");
  m.def(
      "frontier_sample(Tensor indptr, Tensor indices, int num_subgraphs, int frontier_size, "
      "int budget, float eta, int max_entries, str pop, int seed, int entry_weight=0) -> "
      "(Tensor, Tensor, Tensor)");
  m.def(
      "induced_subgraphs(Tensor indptr, Tensor indices, Tensor? eid, Tensor nodes, Tensor ptr) -> "
      "(Tensor, Tensor, Tensor, Tensor)");
  m.def("id_map(Tensor prefix, Tensor ids) -> (Tensor, Tensor)");
  m.def("spmm(Tensor indptr, Tensor indices, Tensor? weight, Tensor x) -> Tensor");
  m.def("spmm_max(Tensor indptr, Tensor indices, Tensor? weight, Tensor x) -> (Tensor, Tensor)");
  m.def(
      "es_spmm(Tensor indptr, Tensor indices, Tensor? weight, Tensor x, int width, str strategy, "
      "str reduce) -> Tensor");
  m.def(
      "spmm_max_backward_x(Tensor t_indptr, Tensor t_rows, Tensor t_slots, Tensor? weight, "
      "Tensor arg, Tensor grad) -> Tensor");
  m.def(
      "spmm_max_backward_weight(Tensor indptr, Tensor indices, Tensor x, Tensor arg, "
      "Tensor grad) -> Tensor");
  m.def("sddmm(Tensor indptr, Tensor indices, Tensor a, Tensor b) -> Tensor");
  m.def("edge_softmax(Tensor indptr, Tensor scores) -> Tensor");
  m.def("edge_softmax_backward(Tensor indptr, Tensor out, Tensor grad) -> Tensor");
  m.def("match(Tensor prev_nodes, Tensor next_nodes) -> Tensor");
  m.def("overlap_counts(Tensor nodes, Tensor offsets) -> Tensor");
  m.def("gather_rows(Tensor x, Tensor? index, Tensor(a!) out, Tensor? out_index) -> ()");
  // Internal: whether an offset array is valid, or every id in range, answered from the
  // checked-once record when it can be (csrc/common/record_answers.cpp), for the structure
  // checks written in Python.
  m.def("_valid_offsets(Tensor offsets, int num_edges) -> bool");
  m.def("_ids_in_range(Tensor ids, int num_nodes) -> bool");
  // Internal: NextDoor's transit grouping and tiers, exposed for tests (see transit_schedule.h).
  m.def(
      "_transit_schedule(Tensor transits, int min_block_pairs, int chunk_size) -> "
      "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
}
