// Every op schema of fastgl, in one place. Kernels register per dispatch key next to their code
// (csrc/<domain>/cpu, csrc/<domain>/cuda); fake kernels for torch.compile live in fastgl/ops.
#include <torch/library.h>

TORCH_LIBRARY(fastgl, m) {
  m.def("csc_from_coo(Tensor src, Tensor dst, int num_nodes) -> (Tensor, Tensor, Tensor)");
  m.def(
      "sample_neighbors(Tensor indptr, Tensor indices, Tensor? weight, Tensor transits, "
      "int fanout, bool replace, int seed) -> (Tensor, Tensor, Tensor)");
  m.def("id_map(Tensor prefix, Tensor ids) -> (Tensor, Tensor)");
}
