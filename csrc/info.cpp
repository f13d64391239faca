// Build facts for `fastgl info` and the controls of the CPU block pool, exposed through a tiny
// Python module so importing fastgl._C also loads the ops.
#include "common/block_pool.h"
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

PyObject* cached_bytes(PyObject*, PyObject*) {
  return PyLong_FromLongLong(fastgl::pool_free_bytes());
}

PyObject* empty_cache(PyObject*, PyObject*) {
  return PyLong_FromLongLong(fastgl::pool_release_free_blocks());
}

PyMethodDef methods[] = {
    {"cached_bytes", cached_bytes, METH_NOARGS,
     "Bytes of free CPU buffers kept by fastgl for reuse."},
    {"empty_cache", empty_cache, METH_NOARGS,
     "Frees the CPU buffers kept for reuse; returns how many bytes that freed."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", "fastgl compiled ops", -1, methods};

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
