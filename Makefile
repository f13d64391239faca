# The README's commands. Everything the project needs is installed here, into .venv.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH_VERSION ?= 2.13.0
# Extracted CUDA headers of the matching torch wheel, kept outside the repository.
CUDA_HEADERS_CACHE ?= $(HOME)/.cache/fastgl/torch-$(TORCH_VERSION)-cuda-include

.PHONY: setup build demo test test-python cuda-compile-check bench info clean

$(VENV)/.installed: Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "torch==$(TORCH_VERSION)"
	$(PIP) install --quiet "torch_geometric==2.8.1" numpy scipy tqdm ninja "setuptools>=70" wheel \
		pytest hypothesis
	touch $@

setup: $(VENV)/.installed

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

test: build cuda-compile-check test-python

bench: build
	$(PY) -m benchmarks.sampling

info: build
	$(VENV)/bin/fastgl info

clean:
	rm -rf build fastgl/_C*.so *.egg-info
