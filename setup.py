"""Builds fastgl._C: CPU kernels always, CUDA kernels when FORCE_CUDA=1 or when the installed
torch has CUDA and a CUDA toolkit is found (FORCE_CUDA=0 turns them off). TORCH_CUDA_ARCH_LIST
picks the GPU architectures."""

import glob
import os

from setuptools import find_packages, setup
from torch.utils import cpp_extension

VERSION = "0.1.0"
DEFAULT_CUDA_ARCHS = "7.0;8.0;9.0+PTX"
ROOT = os.path.dirname(os.path.abspath(__file__))


def want_cuda() -> bool:
    """FORCE_CUDA=1: build the CUDA kernels; FORCE_CUDA=0: don't (e.g. a CUDA torch whose CUDA
    version differs from the local toolkit's); unset: build them when torch has CUDA and a CUDA
    toolkit is found."""
    forced = os.environ.get("FORCE_CUDA")
    if forced in ("0", "1"):
        return forced == "1"
    import torch

    return torch.version.cuda is not None and cpp_extension.CUDA_HOME is not None


def sources(pattern: str) -> list:
    return sorted(glob.glob(os.path.join("csrc", "**", pattern), recursive=True))


def make_extension():
    with_cuda = want_cuda()
    cxx_flags = ["-O3", "-fopenmp"]
    define_macros = [("FASTGL_VERSION", f'"{VERSION}"')]
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
        f"{len(srcs)} source files"
    )
    return extension(
        "fastgl._C",
        srcs,
        include_dirs=[os.path.join(ROOT, "csrc")],
        define_macros=define_macros,
        extra_compile_args=extra,
        extra_link_args=["-fopenmp"],
    )


setup(
    name="fastgl",
    version=VERSION,
    description="Fast sampling-based GNN training: compiled sampling, ID mapping and aggregation ops",
    # The drop-ins live in the top-level integrations/ folder and install as fastgl.integrations.
    packages=find_packages(include=["fastgl", "fastgl.*", "benchmarks"]) + [
        "fastgl.integrations" + sub
        for sub in ["", ".dgl", ".pyg"]],
    package_dir={"fastgl.integrations": "integrations"},
    python_requires=">=3.9",
    install_requires=["torch>=2.2", "numpy", "tqdm"],
    # scipy: the Planetoid reader unpickles scipy matrices; matplotlib: `fastgl train`'s figure.
    extras_require={"data": ["scipy"], "report": ["matplotlib"]},
    ext_modules=[make_extension()],
    # FASTGL_BUILD_BASE keeps a second environment's build (e.g. the DGL one, on another torch)
    # from overwriting the objects of the first.
    options={"build": {"build_base": os.environ.get("FASTGL_BUILD_BASE", "build")}},
    cmdclass={"build_ext": cpp_extension.BuildExtension.with_options(use_ninja=True)},
    entry_points={"console_scripts": ["fastgl = fastgl.cli:main"]},
)
