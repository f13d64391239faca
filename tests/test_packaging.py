"""Packaging: one version number (fastgl/_version.py, which setup.py parses without importing
fastgl), benchmarks/ not installed (they run from the checkout), setup.py's OpenMP probe and how
the module's calls into libstdc++ are bound.
setup.py is imported, not run: its setup(...) call runs only as __main__, so nothing is built."""

import importlib.metadata
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import fastgl

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def setup_py():
    spec = importlib.util.spec_from_file_location("fastgl_setup_script", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def installed_distribution():
    """fastgl's installed metadata (site-packages), not a stray fastgl.egg-info in the checkout,
    which importlib.metadata also finds when the checkout is on sys.path."""
    path = [p for p in sys.path if p and Path(p).resolve() != ROOT]
    found = list(importlib.metadata.distributions(name="fastgl", path=path))
    if not found:
        pytest.skip("fastgl is not installed as a distribution (only built in place)")
    return found[0]


def test_version_is_read_from_version_file(setup_py):
    assert setup_py.VERSION == setup_py.read_version(str(ROOT / "fastgl" / "_version.py"))
    assert fastgl.__version__ == setup_py.VERSION
    # Written once: setup.py has no literal copy of it.
    assert f'"{setup_py.VERSION}"' not in (ROOT / "setup.py").read_text()


def test_read_version_parses_without_importing(setup_py, tmp_path):
    version_file = tmp_path / "_version.py"
    version_file.write_text('import no_such_module\n__version__ = "9.8.7rc1"\n')
    assert setup_py.read_version(str(version_file)) == "9.8.7rc1"
    version_file.write_text("version = '1.0'\n")
    with pytest.raises(RuntimeError, match="__version__"):
        setup_py.read_version(str(version_file))


def test_installed_metadata_has_the_same_version(setup_py):
    assert installed_distribution().version == setup_py.VERSION, (
        "the installed fastgl's metadata is stale: reinstall it (make build)"
    )
    # What importlib.metadata answers here, where a fastgl.egg-info left in the checkout by an
    # old build would come first.
    assert importlib.metadata.version("fastgl") == setup_py.VERSION, (
        "stale fastgl metadata on sys.path: remove the checkout's fastgl.egg-info (make clean)"
    )


def test_benchmarks_are_not_a_package(setup_py, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # found relative to setup.py, not to the working directory
    packages = setup_py.package_list()
    assert not [p for p in packages if p == "benchmarks" or p.startswith("benchmarks.")]
    assert all(p == "fastgl" or p.startswith("fastgl.") for p in packages), packages
    assert {
        "fastgl",
        "fastgl.ops",
        "fastgl.integrations",
        "fastgl.integrations.dgl",
        "fastgl.integrations.pyg",
    } <= set(packages)


def test_installed_distribution_has_no_benchmarks(setup_py):
    dist = installed_distribution()
    top_level = (dist.read_text("top_level.txt") or "").split()
    assert "benchmarks" not in top_level, (
        f"top_level.txt lists {top_level}: reinstall fastgl (make build)"
    )


def test_openmp_probe_returns_a_bool_and_leaves_no_files(setup_py, monkeypatch, tmp_path):
    work, scratch = tmp_path / "cwd", tmp_path / "tmp"
    work.mkdir()
    scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    repo_before = sorted(os.listdir(ROOT))
    supported = setup_py.openmp_supported()
    assert isinstance(supported, bool)
    assert list(work.iterdir()) == [] and list(scratch.iterdir()) == []
    assert sorted(os.listdir(ROOT)) == repo_before


def test_openmp_probe_uses_cxx_and_fails_closed(setup_py, monkeypatch):
    # $CXX names the compiler, as for torch's cpp_extension; one that fails or is missing: off.
    monkeypatch.setenv("CXX", "false")
    assert setup_py.openmp_supported() is False
    monkeypatch.setenv("CXX", "fastgl-no-such-compiler")
    assert setup_py.openmp_supported() is False
    assert setup_py.openmp_supported("false") is False


@pytest.mark.parametrize("with_openmp", [True, False])
def test_fopenmp_only_when_the_probe_succeeds(setup_py, monkeypatch, capsys, with_openmp):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FORCE_CUDA", "0")
    monkeypatch.setattr(setup_py, "openmp_supported", lambda compiler=None: with_openmp)
    ext = setup_py.make_extension()
    flags = ext.extra_compile_args["cxx"] + ext.extra_link_args
    assert ("-fopenmp" in flags) is with_openmp
    assert "FASTGL_VERSION" not in dict(ext.define_macros)
    line = capsys.readouterr().out
    assert f"fastgl build: version {setup_py.VERSION}," in line
    assert ("OpenMP: on" if with_openmp else "OpenMP: off") in line


@pytest.mark.parametrize("found", [True, False])
def test_shared_libstdcxx_only_where_the_linker_finds_it(setup_py, monkeypatch, found):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FORCE_CUDA", "0")
    monkeypatch.setattr(setup_py, "shared_libstdcxx_found", lambda compiler=None: found)
    ext = setup_py.make_extension()
    assert (setup_py.SHARED_LIBSTDCXX_FLAG in ext.extra_link_args) is found


FORMATS_A_NUMBER = """
#include <sstream>
#include <string>
extern "C" int fastgl_format(long v) { std::ostringstream s; s << v; return (int)s.str().size(); }
"""
# std::ostream::_M_insert<long>, the libstdc++ function that formats a long.
INSERT_LONG = "_ZNSo9_M_insertIlEERSoT_"


def test_a_static_libstdcxx_toolchain_still_links_the_shared_one(setup_py, monkeypatch, tmp_path):
    """A compiler that links libstdc++ statically (-static-libstdc++ added by a wrapper): with
    the extension's link flags (after the objects, as setuptools puts them), the library needs
    libstdc++.so.6 and carries no copy of libstdc++'s functions. With a copy of its own, the
    module crashed where that copy and the loaded libstdc++.so differ."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FORCE_CUDA", "0")
    compiler = shlex.split(setup_py.cpp_extension.get_cxx_compiler())
    if not all(shutil.which(tool) for tool in ("readelf", "nm", compiler[0])):
        pytest.skip("needs readelf, nm and the C++ compiler")
    if not setup_py.shared_libstdcxx_found():
        pytest.skip(f"the linker does not find {setup_py.SHARED_LIBSTDCXX_FLAG}")
    source = tmp_path / "probe.cpp"
    source.write_text(FORMATS_A_NUMBER)

    def link(link_flags):
        """(needs libstdc++.so.6, defines _M_insert<long>) of the library linked so."""
        library = tmp_path / "probe.so"
        command = compiler + ["-shared", "-fPIC", "-O2", "-static-libstdc++"]
        command += ["-Wl,-Bsymbolic-functions", str(source), *link_flags, "-o", str(library)]
        if subprocess.run(command, capture_output=True).returncode != 0:
            pytest.skip("the compiler cannot link libstdc++ statically into a shared library")
        dynamic = subprocess.run(["readelf", "-dW", str(library)], capture_output=True, text=True)
        symbols = subprocess.run(
            ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True
        )
        return "[libstdc++.so.6]" in dynamic.stdout, INSERT_LONG in symbols.stdout

    # The probe is sensitive: without the flag, libstdc++ is linked into the library.
    assert link([]) == (False, True)
    assert link(setup_py.make_extension().extra_link_args) == (True, False)
