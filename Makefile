# The README's commands. Everything the project needs is installed here, into .venv.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH_VERSION ?= 2.13.0
# The linters are pinned: a new release's rules must not turn a clean checkout red.
RUFF_VERSION := 0.17.6
CLANG_FORMAT_VERSION := 23.1.5
CXX_SOURCES = $(shell find csrc -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh')
# Extracted CUDA headers of the matching torch wheel, kept outside the repository.
CUDA_HEADERS_CACHE ?= $(HOME)/.cache/fastgl/torch-$(TORCH_VERSION)-cuda-include

# DGL's last wheels (2.1.0 for Python 3.11) load only with torch 2.2.x: the DGL drop-in is tested
# in an environment of its own, with fastgl built there against that torch (CPU kernels only:
# that torch's CUDA differs from the local toolkit's). It is installed, not editable, so the
# main environment's in-place extension is left alone; its build objects go to build/dgl.
DGL_VENV := .venv-dgl
DGL_PY := $(DGL_VENV)/bin/python
DGL_TORCH_VERSION := 2.2.1

.PHONY: setup build demo lint format test test-python test-dgl setup-dgl build-dgl cuda-compile-check bench \
	bench-dgl info clean

$(VENV)/.installed: Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "torch==$(TORCH_VERSION)"
	$(PIP) install --quiet "torch_geometric==2.8.1" numpy scipy tqdm matplotlib "pymetis>=2025.2" ninja \
		"setuptools>=70" wheel pytest hypothesis "ruff==$(RUFF_VERSION)" "clang-format==$(CLANG_FORMAT_VERSION)"
	touch $@

setup: $(VENV)/.installed

$(DGL_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(DGL_VENV)
	$(DGL_PY) -m pip install --quiet --upgrade pip
	$(DGL_PY) -m pip install --quiet "torch==$(DGL_TORCH_VERSION)" dgl==2.1.0 "numpy<2" \
		"setuptools<70" torchdata==0.7.1 pandas pydantic pyyaml psutil tqdm requests scipy \
		"pymetis>=2025.2" ninja wheel pytest hypothesis
	touch $@

setup-dgl: $(DGL_VENV)/.installed

# The staged package tree (build/dgl/lib.*) is removed first, so that a module deleted from the
# checkout is not installed again from an earlier build; the compiled objects are kept.
build-dgl: setup-dgl
	rm -rf build/dgl/lib.*
	FASTGL_BUILD_BASE=build/dgl FORCE_CUDA=0 $(DGL_PY) -m pip install --quiet \
		--no-build-isolation --no-deps .

build: setup
	$(PIP) install --quiet --no-build-isolation -e .

demo: build
	$(VENV)/bin/fastgl train

cuda-compile-check: setup
	TORCH_VERSION=$(TORCH_VERSION) CUDA_HEADERS_CACHE=$(CUDA_HEADERS_CACHE) \
		bash tools/cuda_compile_check.sh

# `ci` makes hypothesis draw the same examples every run, so a red CI is reproducible.
test-python: build
	FASTGL_HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q tests

# The console script, not `python -m pytest`: the source tree must not shadow the installed
# fastgl (whose extension is built against the DGL environment's torch).
# The docs' DGL example runs here too: DGL installs only in this environment.
test-dgl: build-dgl
	FASTGL_HYPOTHESIS_PROFILE=ci DGLBACKEND=pytorch $(DGL_VENV)/bin/pytest -q tests/with_dgl
	FASTGL_REQUIRE_MARKED_EXAMPLES=1 DGLBACKEND=pytorch $(DGL_VENV)/bin/pytest -q tests/test_readme.py -k marked

# Style is checked, not fixed, by `make test`; `make format` rewrites the tree to pass.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES)

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
	$(VENV)/bin/clang-format -i $(CXX_SOURCES)

test: lint build cuda-compile-check test-python test-dgl

# Run from build/dgl with the installed copy (see test-dgl), the benchmarks linked in from the
# checkout (they are not installed); results go to the checkout. DGL_BENCH names the benchmark
# (`make bench-dgl DGL_BENCH=walks`), BENCH_ARGS passes it arguments.
DGL_BENCH ?= dgl_sampler
bench-dgl: build-dgl
	ln -sfn $(CURDIR)/benchmarks build/dgl/benchmarks
	cd build/dgl && FASTGL_REPO=$(CURDIR) $(abspath $(DGL_PY)) -m benchmarks.$(DGL_BENCH) $(BENCH_ARGS)

bench: build
	$(PY) -m benchmarks.sampling

info: build
	$(VENV)/bin/fastgl info

clean:
	rm -rf build fastgl/_C*.so *.egg-info
