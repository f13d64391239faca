#!/usr/bin/env bash
# Everything a machine with a GPU should verify, in stages that fit a short lease:
#   build     build with CUDA (FORCE_CUDA=1) in place
#   tests     the CUDA tests, then the rest of the suite on the CUDA build, each test for at most
#             TEST_LIMIT seconds
#   sanitize  compute-sanitizer (SANITIZERS: memcheck racecheck synccheck) over every CUDA test
#             file, JOBS files at a time, each for at most SANITIZE_LIMIT seconds
#   bench     the benchmarks on the GPU (BENCH_PRESET: small or products; PEAK_BANDWIDTH_GBS for
#             the aggregation's roofline)
# STAGES picks them (default: all, in that order). Every step has a time limit (STEP_LIMIT
# seconds, or the step's own), so the run ends on its own. A failed build ends the run; any
# other failed step is reported and the run goes on, and the script exits 1 if any step failed.
# Logs and JSON go to $OUT (default ./gpu-check), packed into $OUT/gpu-check.tar.gz after every
# step and every sanitized file, so a run cut short still leaves its logs in one file.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} FORCE_CUDA=1 PYTHONUNBUFFERED=1
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
PY=${PYTHON:-python}
STAGES=${STAGES-build tests sanitize bench}
BENCH_PRESET=${BENCH_PRESET:-products}
STEP_LIMIT=${STEP_LIMIT:-300}
SANITIZE_LIMIT=${SANITIZE_LIMIT:-$STEP_LIMIT}
TEST_LIMIT=${TEST_LIMIT:-150}
SANITIZERS=${SANITIZERS:-memcheck racecheck synccheck}
JOBS=${JOBS:-8}
# HBM bandwidth of the aggregation's roofline: the H200's 4.8 TB/s, else the H100 SXM's 3.35.
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1)
[[ $gpu_name == *H200* ]] && default_peak=4800 || default_peak=3350
PEAK_BANDWIDTH_GBS=${PEAK_BANDWIDTH_GBS:-$default_peak}

# Packed beside, then moved: two stages running at once never leave a half-written archive. A
# log another stage is still writing makes tar warn and exit 1; the archive is still good.
pack() {
    local part="$OUT/.pack.$$.$RANDOM"
    tar --warning=no-file-changed -czf "$part" -C "$OUT" logs
    if (($? <= 1)); then mv "$part" "$OUT/gpu-check.tar.gz"; else rm -f "$part"; fi
}
failed=0

run() {  # run NAME LIMIT CMD...: log to $LOGS/NAME.log, report the exit status and the time
    local name=$1 limit=$2 start=$SECONDS
    echo "== $name"
    timeout --kill-after=10 "$limit" "${@:3}" > "$LOGS/$name.log" 2>&1
    local rc=$?
    echo "   exit $rc in $((SECONDS - start)) s (log: $LOGS/$name.log)"
    tail -n 4 "$LOGS/$name.log"
    pack
    ((rc == 0)) || failed=1
    return $rc
}

has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

sanitize_file() {  # sanitize_file TOOL FILE: one compute-sanitizer run over one test file
    local tool=$1 file=$2
    local log="$LOGS/sanitize-$tool-$(basename "$file" .py).log"
    timeout --kill-after=10 "$SANITIZE_LIMIT" compute-sanitizer --tool "$tool" --error-exitcode 1 \
        $PY -m pytest -q -p no:cacheprovider "$file" > "$log" 2>&1
    local rc=$?
    echo "$tool $(basename "$file"): exit $rc"
    pack
}
export -f sanitize_file pack
export LOGS PY SANITIZE_LIMIT OUT

if has_stage build; then
    run build "$STEP_LIMIT" $PY -m pip install --no-build-isolation --no-deps --use-pep517 -v -e . || exit 1
    run info 60 $PY -m fastgl info || exit 1
    # Which C++ toolchain built the module, and whether it carries its own libstdc++ (see
    # SHARED_LIBSTDCXX_FLAG in setup.py): facts to read before blaming a kernel for a crash.
    run toolchain 60 bash -c 'echo "CC=${CC-} CXX=${CXX-}"
        for c in "${CXX:-c++}" "${CC:-cc}" nvcc; do command -v "$c"; "$c" --version | head -n 1; done
        cxx=$(command -v "${CXX:-c++}")
        head -c 2 "$cxx" | grep -q "#!" && { echo "$cxx is a script:"; head -c 2000 "$cxx"; echo; }
        for so in fastgl/_C*.so; do
            readelf -d "$so" | grep -E "NEEDED|FLAGS"
            insert=_ZNSo9_M_insertIlEERSoT_  # std::ostream::_M_insert<long>, from libstdc++
            echo "libstdc++ linked in (the module defines $insert): $(nm -D --defined-only "$so" | grep -c $insert)"
        done'
    # An error message that formats a number: it crashed the process where the module's own
    # libstdc++ and the loaded one were mixed.
    run error-message 60 $PY -c 'import torch, fastgl
try:
    torch.ops.fastgl.overlap_counts(torch.tensor([1, -2]), torch.tensor([0, 2]))
except RuntimeError as error:
    print("raised:", str(error).splitlines()[0])'
fi

if has_stage tests; then
    # pytest-xdist, where installed, spreads the tests over the machine's cores (one thread each:
    # JOBS workers of nproc threads each ran the CPU references several times slower), and a
    # test that crashes its worker is reported as failed instead of ending the run. -v names
    # every test as it ends, so a log cut off at the step limit still names its failures.
    # A test running past TEST_LIMIT seconds fails with its stack (pytest-timeout, where
    # installed), well before the step's limit ends the run without naming it.
    pytest_args=(-v -rfE -p no:cacheprovider)
    single_thread=()
    if $PY -c "import xdist" 2> /dev/null; then
        pytest_args+=(-n "$JOBS")
        single_thread=(env OMP_NUM_THREADS=1)
    fi
    $PY -c "import pytest_timeout" 2> /dev/null && pytest_args+=(--timeout="$TEST_LIMIT")
    pytest_cmd=(${single_thread[@]+"${single_thread[@]}"} $PY -m pytest "${pytest_args[@]}")
    run cuda-tests "$STEP_LIMIT" "${pytest_cmd[@]}" tests/cuda
    # ClusterGCN's tests need pymetis, which `make setup` installs; without it they fail.
    run all-tests "$STEP_LIMIT" "${pytest_cmd[@]}" tests --ignore=tests/cuda
fi

if has_stage sanitize; then
    echo "== sanitize"
    for tool in $SANITIZERS; do
        for file in tests/cuda/test_*.py; do echo "$tool $file"; done
    done | xargs -P "$JOBS" -L 1 bash -c 'sanitize_file "$0" "$1"' | tee "$LOGS/sanitize.log"
    grep -h "ERROR SUMMARY" "$LOGS"/sanitize-*.log | sort | uniq -c
    grep -q ": exit [^0]" "$LOGS/sanitize.log" && failed=1
    pack
fi

if has_stage bench; then
    preset=$BENCH_PRESET
    run bench-syncs "$STEP_LIMIT" $PY -m benchmarks.syncs --device cuda --out "$LOGS/syncs-cuda.json"
    run bench-sampling "$STEP_LIMIT" $PY -m benchmarks.sampling --device cuda --preset "$preset" \
        --out "$LOGS/sampling-cuda-$preset.json"
    run bench-id-map "$STEP_LIMIT" $PY -m benchmarks.id_map --device cuda --preset "$preset" \
        --out "$LOGS/id_map-cuda-$preset.json"
    run bench-aggregate "$STEP_LIMIT" $PY -m benchmarks.aggregate --device cuda --preset "$preset" \
        --whole-preset "$preset" --peak-bandwidth-gbs "$PEAK_BANDWIDTH_GBS" \
        --out "$LOGS/aggregate-cuda-$preset.json"
    run bench-es-spmm "$STEP_LIMIT" $PY -m benchmarks.es_spmm --device cuda \
        --out "$LOGS/es_spmm-cuda.json"
    # No DGL on a GPU machine: this measures the PyG drop-in's sampler on the GPU against the CPU.
    run bench-dgl-sampler "$STEP_LIMIT" $PY -m benchmarks.dgl_sampler --device cuda \
        --out "$LOGS/dgl_sampler-cuda.json"
    run bench-pipeline "$STEP_LIMIT" $PY -m benchmarks.pipeline --device cuda \
        --out "$LOGS/pipeline-cuda-$preset.json"
fi
pack
exit $failed
