// Build facts for `fastgl info`, exposed through a tiny Python module so importing fastgl._C
// also loads the ops.
#include <Python.h>

namespace {

#ifdef FASTGL_WITH_CUDA
constexpr bool kWithCuda = true;
#else
constexpr bool kWithCuda = false;
#endif

#ifndef FASTGL_CUDA_ARCHS
#define FASTGL_CUDA_ARCHS ""
#endif

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", "fastgl compiled ops", -1, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__C() {
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  PyModule_AddObject(module, "with_cuda", PyBool_FromLong(kWithCuda));
  PyModule_AddStringConstant(module, "cuda_archs", FASTGL_CUDA_ARCHS);
  return module;
}
