// Build facts for `fastgl info`, exposed through a tiny Python module so importing fastgl._C
// also loads the ops.
#include "common/multiversion.h"

#include <Python.h>

namespace {

#ifdef FASTGL_WITH_CUDA
constexpr bool kWithCuda = true;
#else
constexpr bool kWithCuda = false;
#endif

// The instruction sets the CPU kernels are compiled for, the best one picked at load time.
#ifdef FASTGL_MULTIVERSION_ISAS
const char* const kCpuIsas[] = {FASTGL_MULTIVERSION_ISAS};
#else
const char* const kCpuIsas[] = {"default"};
#endif

#if defined(__clang__)
constexpr const char* kCompiler = "clang";
#elif defined(__GNUC__)
constexpr const char* kCompiler = "gcc";
#else
constexpr const char* kCompiler = "other";
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
  PyModule_AddStringConstant(module, "compiler", kCompiler);
  PyObject* isas = PyTuple_New(sizeof(kCpuIsas) / sizeof(kCpuIsas[0]));
  for (size_t i = 0; i < sizeof(kCpuIsas) / sizeof(kCpuIsas[0]); ++i) {
    PyTuple_SET_ITEM(isas, i, PyUnicode_FromString(kCpuIsas[i]));
  }
  PyModule_AddObject(module, "cpu_isas", isas);
  return module;
}
