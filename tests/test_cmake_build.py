"""CMakeLists.txt builds the ops as a plain shared library that torch.ops.load_library loads."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter: fastgl._C already registers the same op names in this one.
CALL_THROUGH_LIBRARY = """
import sys, torch
torch.ops.load_library(sys.argv[1])
unique, local = torch.ops.fastgl.id_map(torch.tensor([5, 3]), torch.tensor([3, 7, 7, 5]))
assert unique.tolist() == [5, 3, 7], unique
assert local.tolist() == [1, 2, 2, 0], local
indptr, indices, perm = torch.ops.fastgl.csc_from_coo(torch.tensor([0, 1]), torch.tensor([1, 0]), 2)
assert indptr.tolist() == [0, 1, 2] and indices.tolist() == [1, 0], (indptr, indices)
print("ok")
"""


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_library_loads_and_runs_ops(tmp_path):
    build = tmp_path / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(build),
            *generator,
            f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
        ],
        capture_output=True,
        text=True,
    )
    if configure.returncode != 0 and torch.version.cuda is not None:
        # A CUDA build of torch makes find_package(Torch) look up a CUDA toolkit matching its
        # CUDA version (cudart, nvToolsExt), even for fastgl's CPU-only library.
        pytest.skip(
            f"cmake cannot configure against torch {torch.__version__} (a CUDA "
            f"{torch.version.cuda} build) without a matching CUDA toolkit: "
            f"{configure.stderr.strip()[-300:]}"
        )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    compiled = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout[-4000:] + compiled.stderr[-4000:]
    library = build / "libfastgl_ops.so"
    assert library.exists()
    result = subprocess.run(
        [sys.executable, "-c", CALL_THROUGH_LIBRARY, str(library)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
