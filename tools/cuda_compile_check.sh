#!/usr/bin/env bash
# Compile every csrc/**/*.cu with nvcc against the CUDA build's torch headers, without a GPU.
# The CPU torch wheel ships incomplete CUDA headers, so the CUDA wheel of the same torch version
# is downloaded once (--no-deps) and only its torch/include is kept, in a cache outside the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TORCH_VERSION:?}" "${CUDA_HEADERS_CACHE:?}"
NVCC=${NVCC:-nvcc}
if ! command -v "$NVCC" >/dev/null; then
    echo "cuda-compile-check: nvcc not found; cannot check the CUDA sources" >&2
    exit 1
fi

if [ ! -f "$CUDA_HEADERS_CACHE/.complete" ]; then
    echo "cuda-compile-check: fetching torch==$TORCH_VERSION CUDA headers into $CUDA_HEADERS_CACHE"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # The machine's pip config points at a local CPU wheel; ask the public index for the CUDA one.
    env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null .venv/bin/python -m pip download \
        --quiet --no-deps --only-binary=:all: --python-version 3.11 \
        -d "$tmp" "torch==$TORCH_VERSION"
    wheel=$(ls "$tmp"/torch-*.whl)
    mkdir -p "$CUDA_HEADERS_CACHE"
    .venv/bin/python - "$wheel" "$CUDA_HEADERS_CACHE" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as zf:
    zf.extractall(dest, [n for n in zf.namelist() if n.startswith("torch/include/")])
PY
    touch "$CUDA_HEADERS_CACHE/.complete"
fi

inc="$CUDA_HEADERS_CACHE/torch/include"
pyinc=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['include'])")
out=$(mktemp -d)
status=0
mapfile -t sources < <(find csrc -name '*.cu' | sort)
compile_one() {
    "$NVCC" -c -std=c++17 --expt-relaxed-constexpr -gencode arch=compute_90,code=sm_90 \
        -diag-suppress 3306 -Xcompiler -Wno-c++20-extensions \
        -DFASTGL_WITH_CUDA -I csrc -I "$inc" -I "$inc/torch/csrc/api/include" -I "$pyinc" \
        "$1" -o "$out/$(echo "$1" | tr / _).o"
}
for src in "${sources[@]}"; do
    if compile_one "$src"; then echo "cuda-compile-check: ok   $src"
    else echo "cuda-compile-check: FAIL $src"; status=1; fi
done
rm -rf "$out"
[ "$status" -eq 0 ] && echo "cuda-compile-check: ${#sources[@]} CUDA files compile"
exit "$status"
