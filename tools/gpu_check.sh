#!/usr/bin/env bash
# Everything a machine with a GPU should verify, in one run (about 10-15 minutes on one H100):
# build with CUDA, the CUDA tests, compute-sanitizer over them, and the sampling, aggregation and
# ES-SpMM benchmarks, the drop-in sampler benchmark and the training pipeline benchmark.
# Logs and JSON results go to $OUT (default ./gpu-check); commit the JSON under benchmarks/results.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} FORCE_CUDA=1
PY=${PYTHON:-python}

run() {  # run NAME CMD...: log to $OUT/NAME.log, report the exit status
    echo "== $1"
    "${@:2}" > "$OUT/$1.log" 2>&1
    local rc=$?
    echo "   exit $rc (log: $OUT/$1.log)"
    tail -n 5 "$OUT/$1.log"
    return $rc
}

run build $PY -m pip install --no-build-isolation -v -e . || exit 1
run info $PY -m fastgl info
run cuda-tests $PY -m pytest -m cuda -q tests/cuda
run sanitizer compute-sanitizer --tool memcheck --error-exitcode 1 \
    $PY -m pytest -m cuda -q -x tests/cuda
run all-tests $PY -m pytest -q tests
run bench-small $PY -m benchmarks.sampling --device cuda --preset small \
    --out "$OUT/sampling-cuda-small.json"
run bench-products $PY -m benchmarks.sampling --device cuda --preset products \
    --out "$OUT/sampling-cuda-products.json"
run bench-aggregate $PY -m benchmarks.aggregate --device cuda --preset products \
    --whole-preset products --out "$OUT/aggregate-cuda-products.json"
run bench-es-spmm $PY -m benchmarks.es_spmm --device cuda --out "$OUT/es_spmm-cuda.json"
# No DGL on a GPU machine: this measures the PyG drop-in's sampler on the GPU against the CPU.
run bench-dgl-sampler $PY -m benchmarks.dgl_sampler --device cuda \
    --out "$OUT/dgl_sampler-cuda.json"
# The training pipeline (Match, Reorder) on products-scale R-MAT, then with UVA and a 2 GiB cache.
run bench-pipeline $PY -m benchmarks.pipeline --device cuda \
    --out "$OUT/pipeline-cuda-products.json"
run bench-pipeline-uva $PY -m benchmarks.pipeline --device cuda --transfer uva --cache 2GiB \
    --out "$OUT/pipeline-cuda-products-uva-cache.json"
