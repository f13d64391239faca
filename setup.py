"""Builds fastgl._C: CPU kernels always, CUDA kernels when FORCE_CUDA=1 or when the installed
torch has CUDA and a CUDA toolkit is found (FORCE_CUDA=0 turns them off). TORCH_CUDA_ARCH_LIST
picks the GPU architectures. OpenMP is used when the C++ compiler ($CXX, else c++) can compile
and link with -fopenmp.

The version is fastgl/_version.py's, read here without importing fastgl; importing this file
(tests do) defines the helpers below without building anything."""

import ast
import glob
import os
import shlex
import subprocess
import tempfile

from setuptools import find_packages, setup
from torch.utils import cpp_extension

DEFAULT_CUDA_ARCHS = "7.0;8.0;9.0+PTX"
ROOT = os.path.dirname(os.path.abspath(__file__))
VERSION_FILE = os.path.join(ROOT, "fastgl", "_version.py")

# Compiled and linked with -fopenmp to see whether the compiler supports OpenMP; #error makes a
# compiler that accepts the flag but does not enable OpenMP fail the probe too.
OPENMP_PROBE = r"""
#include <omp.h>
#ifndef _OPENMP
#error "-fopenmp did not enable OpenMP"
#endif
int main() {
  int threads = 0;
#pragma omp parallel reduction(+ : threads)
  threads += 1;
  return threads >= 1 && omp_get_thread_num() == 0 ? 0 : 1;
}
"""

# Some toolchains link libstdc++ statically into every shared library: seen on a GPU machine, a
# g++ wrapper that points -B at a gcc 13 tree whose library folder holds libstdc++.a alone.
# fastgl._C then carried its own copy of libstdc++ while torch loads the system's libstdc++.so
# (gcc 14's there); the module's streams were built by one copy and formatted by the other, and
# every error message that formats a number crashed. Naming the shared library among the
# extension's own link inputs, which come before the compiler's implicit libraries, resolves
# every libstdc++ symbol to libstdc++.so.6, so the static archive adds nothing (given a
# libstdc++.so.6 at least as new as the compiler, as the system's is there: the archive would
# supply what an older one lacks); where g++ links libstdc++.so anyway, this changes nothing.
SHARED_LIBSTDCXX_FLAG = "-l:libstdc++.so.6"


def read_version(path: str = VERSION_FILE) -> str:
    """The string assigned to ``__version__`` in fastgl/_version.py, the one version number:
    parsed, not imported (importing fastgl needs the extension this script builds)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "__version__"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise RuntimeError(f"{path} does not assign a string to __version__")


VERSION = read_version()


def package_list() -> list:
    """The packages installed: fastgl and its subpackages, plus the drop-ins, which live in the
    top-level integrations/ folder and install as fastgl.integrations. benchmarks/ is not
    installed: the benchmarks run from the checkout (`python -m benchmarks.<name>`)."""
    return find_packages(where=ROOT, include=["fastgl", "fastgl.*"]) + [
        "fastgl.integrations" + sub for sub in ["", ".dgl", ".pyg"]
    ]


def want_cuda() -> bool:
    """FORCE_CUDA=1: build the CUDA kernels; FORCE_CUDA=0: don't (e.g. a CUDA torch whose CUDA
    version differs from the local toolkit's); unset: build them when torch has CUDA and a CUDA
    toolkit is found."""
    forced = os.environ.get("FORCE_CUDA")
    if forced in ("0", "1"):
        return forced == "1"
    import torch

    return torch.version.cuda is not None and cpp_extension.CUDA_HOME is not None


def compiler_builds(flags: list, source: str, compiler: str = None) -> bool:
    """Whether `compiler` (default: the one torch's cpp_extension compiles with, $CXX or c++)
    builds the C++ `source` with `flags`. The probe is built in a temporary directory, removed
    afterwards; a compiler that is missing, fails or hangs counts as no."""
    command = shlex.split(compiler or cpp_extension.get_cxx_compiler())
    if not command:
        return False
    with tempfile.TemporaryDirectory(prefix="fastgl-build-probe-") as tmp:
        path = os.path.join(tmp, "probe.cpp")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            result = subprocess.run(
                command + flags + [path, "-o", os.path.join(tmp, "probe")],
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return result.returncode == 0


def openmp_supported(compiler: str = None) -> bool:
    """Whether `compiler` compiles and links a small OpenMP program with -fopenmp."""
    return compiler_builds(["-fopenmp"], OPENMP_PROBE, compiler)


def shared_libstdcxx_found(compiler: str = None) -> bool:
    """Whether `compiler` links a shared library against libstdc++.so.6 by SHARED_LIBSTDCXX_FLAG
    (not where the C++ library has another name, as libc++ on macOS)."""
    return compiler_builds(
        ["-shared", "-fPIC", SHARED_LIBSTDCXX_FLAG], "int fastgl_probe() { return 0; }", compiler
    )


def openmp_note(with_openmp: bool, compiler: str) -> str:
    """The build line's OpenMP entry; off, it says what that costs with the installed torch."""
    if with_openmp:
        return f"on ({compiler})"
    import torch

    if "parallel backend: OpenMP" in torch.__config__.parallel_info():
        # ATen's OpenMP backend runs at::parallel_for through a `#pragma omp parallel` in its
        # headers, compiled into fastgl's own objects: without -fopenmp it runs serially there.
        return (
            f"off ({compiler} cannot build with -fopenmp; torch's parallel backend is "
            f"OpenMP, so the CPU kernels run on one thread)"
        )
    return f"off ({compiler} cannot build with -fopenmp)"


def sources(pattern: str) -> list:
    return sorted(glob.glob(os.path.join("csrc", "**", pattern), recursive=True))


def make_extension():
    with_cuda = want_cuda()
    with_openmp = openmp_supported()
    openmp_flags = ["-fopenmp"] if with_openmp else []
    libstdcxx_flags = [SHARED_LIBSTDCXX_FLAG] if shared_libstdcxx_found() else []
    cxx_flags = ["-O3"] + openmp_flags
    define_macros = []
    srcs = sources("*.cpp")
    extension = cpp_extension.CppExtension
    extra = {"cxx": cxx_flags}
    archs = ""
    if with_cuda:
        # torch's builder reads the same variable; setting it here makes the default explicit.
        archs = os.environ.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCHS)
        srcs += sources("*.cu")
        extension = cpp_extension.CUDAExtension
        define_macros.append(("FASTGL_WITH_CUDA", None))
        extra["nvcc"] = ["-O3", "--expt-relaxed-constexpr"]
    define_macros.append(("FASTGL_CUDA_ARCHS", f'"{archs}"'))
    print(
        f"fastgl build: version {VERSION}, backends: cpu{', cuda' if with_cuda else ''}, "
        f"CUDA archs: {archs or 'none'}, CUDA_HOME: {cpp_extension.CUDA_HOME}, "
        f"OpenMP: {openmp_note(with_openmp, cpp_extension.get_cxx_compiler())}, "
        f"{len(srcs)} source files"
    )
    return extension(
        "fastgl._C",
        srcs,
        include_dirs=[os.path.join(ROOT, "csrc")],
        define_macros=define_macros,
        extra_compile_args=extra,
        extra_link_args=openmp_flags + libstdcxx_flags,
    )


# pip and setuptools run this file as __main__; importing it (tests/test_packaging.py) builds
# nothing.
if __name__ == "__main__":
    setup(
        name="fastgl",
        version=VERSION,
        description="Fast sampling-based GNN training: compiled sampling, ID mapping and "
        "aggregation ops",
        packages=package_list(),
        package_dir={"fastgl.integrations": "integrations"},
        python_requires=">=3.9",
        install_requires=["torch>=2.2", "numpy", "tqdm"],
        # scipy: the Planetoid reader unpickles scipy matrices; matplotlib: `fastgl train`'s
        # figure; pymetis: ClusterGCN's partition.
        extras_require={
            "data": ["scipy"],
            "report": ["matplotlib"],
            "cluster": ["pymetis>=2025.2"],
        },
        ext_modules=[make_extension()],
        # FASTGL_BUILD_BASE keeps a second environment's build (e.g. the DGL one, on another
        # torch) from overwriting the objects of the first.
        options={"build": {"build_base": os.environ.get("FASTGL_BUILD_BASE", "build")}},
        cmdclass={"build_ext": cpp_extension.BuildExtension.with_options(use_ninja=True)},
        entry_points={"console_scripts": ["fastgl = fastgl.cli:main"]},
    )
