#!/usr/bin/env bash
# feedline's device check: everything a GPU proves, in one command of under 8 minutes.
#
# On a machine with a device (through the device tool: `run` with carry=["gpu-wheels"] and the
# command `bash benchmarks/gpu_check.sh`), from the repository root:
#   1. installs what that machine lacks from the carried wheel folder (benchmarks/gpu_wheels.sh
#      builds it here; no package registry is needed there) into a venv that sees the system's
#      CuPy, PyTorch and NumPy, and installs feedline from the working tree (editable);
#   2. builds the CUDA library for the device's architecture only (`feedline build-kernels`)
#      and checks that every launcher the header declares is exported (nm -D);
#   3. runs `FEEDLINE_REQUIRE_GPU=1 pytest -m gpu` on the test files that hold gpu-marked tests
#      (JUnit file: $OUT/junit-gpu.xml);
#   4. runs benchmarks/gpu.py (table: $OUT/benchmark.txt).
# Every step's log is written under $OUT; the summary ends the output. The exit status is the
# first failing step's (0 when all passed).
#
# --rehearse: the same steps on a machine without a device, so the device run adds only the
# device: the CUDA library is built for FEEDLINE_CUDA_ARCHS (default 90), the host-emulation
# tests of the GPU kernels (tests/operators/gpu, `not gpu`) stand in for the device's results,
# `-m gpu` collects and skips the device tests (nothing may fail), and the benchmark must skip
# with its "needs a CUDA device" message.
#
# Environment: OUT (default ./gpu-check-out), WHEELS (default ./gpu-wheels), PYTHON (default
# python3), CHECK_VENV (default /tmp/feedline-gpu-check-venv), FEEDLINE_CACHE_DIR (default
# $OUT/cache), BUILD_TIMEOUT (seconds, default 300), BUDGET (seconds for all the steps, default
# 470: each step's limit is cut to what is left of it). REHEARSAL_WHEELS (rehearsal only): a folder
# of wheels of what the device machine already has (NumPy, Pillow, pluggy, pytest, hypothesis,
# tqdm), installed first where the rehearsing Python lacks them.
set -uo pipefail

cd "$(dirname "$0")/.."
REHEARSAL_WHEELS="${REHEARSAL_WHEELS:-}"
rehearse=0
[ "${1:-}" = "--rehearse" ] && rehearse=1
OUT="${OUT:-$PWD/gpu-check-out}"
WHEELS="${WHEELS:-$PWD/gpu-wheels}"
PYTHON="${PYTHON:-python3}"
CHECK_VENV="${CHECK_VENV:-/tmp/feedline-gpu-check-venv}"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
status=0
started=$SECONDS
BUDGET="${BUDGET:-470}"

note() { echo "$*" | tee -a "$summary"; }

# step NAME TIMEOUT COMMAND...: runs COMMAND with a time limit, its output into $OUT/NAME.log.
step() {
    local name="$1" limit="$2"
    shift 2
    local left=$((BUDGET - (SECONDS - started)))
    if [ "$left" -lt "$limit" ]; then limit=$left; fi
    if [ "$limit" -le 0 ]; then
        note "$name: not run, the ${BUDGET} s budget is spent"
        [ "$status" -eq 0 ] && status=124
        return 124
    fi
    local begin=$SECONDS
    echo "== $name"
    timeout "$limit" bash -c '"$@"' step "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    tail -n 25 "$OUT/$name.log"
    note "$name: exit $rc in $((SECONDS - begin)) s"
    if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
    return "$rc"
}

install() {
    set -e
    rm -rf "$CHECK_VENV"
    local user=()
    if ! "$PYTHON" -m venv --system-site-packages "$CHECK_VENV"; then
        echo "no venv module: installing into the user site of $PYTHON instead"
        rm -rf "$CHECK_VENV"
        mkdir -p "$CHECK_VENV/bin"
        ln -s "$(command -v "$PYTHON")" "$CHECK_VENV/bin/python"
        user=(--user --break-system-packages)
    fi
    local pip=("$CHECK_VENV/bin/python" -m pip install --no-index --no-deps --quiet "${user[@]}")
    if [ "$rehearse" -eq 1 ] && [ -n "${REHEARSAL_WHEELS:-}" ]; then
        "${pip[@]}" "$REHEARSAL_WHEELS"/*.whl
    fi
    "${pip[@]}" "$WHEELS"/*.whl
    "${pip[@]}" --no-build-isolation -e .
    "$CHECK_VENV/bin/python" -c "import cffi, msgspec, simdjson, simplejpeg, pycocotools, numpy"
    "$CHECK_VENV/bin/python" -m pip list 2>/dev/null | grep -iE \
        "^(feedline|cupy|torch|numpy|cffi|nvidia-nvimgcodec|pytest|hypothesis) "
}

device_arch() {
    if command -v nvidia-smi > /dev/null && [ "$rehearse" -eq 0 ]; then
        nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .'
    else
        echo "${FEEDLINE_CUDA_ARCHS:-90}"
    fi
}

build() {
    set -e
    local library
    library=$("$CHECK_VENV/bin/python" -c "import sys; from feedline.cli import main; sys.exit(main())" \
        build-kernels | tail -n 1)
    echo "CUDA library: $library"
    [ -f "$library" ]
    local missing=0
    for launcher in $(grep -oE '^int (flg_[a-z_]+)\(' \
            src/feedline/operators/gpu/kernels/feedline_gpu.h | sed -E 's/^int |\(//g'); do
        if nm -D --defined-only "$library" | grep -qE " T $launcher\$"; then
            echo "exported: $launcher"
        else
            echo "NOT exported: $launcher"
            missing=1
        fi
    done
    cp "$library" "$OUT/feedline_gpu.so"
    return "$missing"
}

benchmark() {
    if [ "$rehearse" -eq 1 ]; then
        "$CHECK_VENV/bin/python" benchmarks/gpu.py | tee "$OUT/benchmark.txt"
        grep -q "skipped: it needs a CUDA device" "$OUT/benchmark.txt"
    else
        "$CHECK_VENV/bin/python" benchmarks/gpu.py --require-gpu | tee "$OUT/benchmark.txt"
        return "${PIPESTATUS[0]}"
    fi
}

export OUT WHEELS PYTHON CHECK_VENV rehearse REHEARSAL_WHEELS
export -f install build benchmark

if [ "$rehearse" -eq 1 ]; then
    note "gpu_check: REHEARSAL without a device (host emulation stands in for the GPU)"
else
    note "gpu_check: device run"
    nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv \
        | tee -a "$summary"
fi

export FEEDLINE_CUDA_ARCHS
FEEDLINE_CUDA_ARCHS=$(device_arch)
export FEEDLINE_CACHE_DIR="${FEEDLINE_CACHE_DIR:-$OUT/cache}"
note "architecture: sm_$FEEDLINE_CUDA_ARCHS"

if step install 120 install && step build "${BUILD_TIMEOUT:-300}" build; then
    # the test files that hold gpu-marked tests (collecting the whole suite costs time and
    # fails on extras the device machine lacks)
    mapfile -t gpu_tests < <(grep -rlE "mark\.gpu" tests --include='test_*.py' | sort)
    note "gpu test files: ${gpu_tests[*]}"
    if [ "$rehearse" -eq 1 ]; then
        # test_build.py is left out: it compiles with nvcc once more (the build step above has
        # built and checked the library)
        step pytest 240 "$CHECK_VENV/bin/python" -m pytest -q -p no:cacheprovider -m "not gpu" \
            --ignore=tests/operators/gpu/test_build.py --junitxml="$OUT/junit-emulation.xml" \
            tests/operators/gpu
        step pytest-gpu-skips 120 "$CHECK_VENV/bin/python" -m pytest -q -p no:cacheprovider \
            -m gpu -rs --junitxml="$OUT/junit-gpu.xml" "${gpu_tests[@]}"
    else
        step pytest 240 env FEEDLINE_REQUIRE_GPU=1 "$CHECK_VENV/bin/python" -m pytest -q \
            -p no:cacheprovider -m gpu --junitxml="$OUT/junit-gpu.xml" "${gpu_tests[@]}"
    fi
    step benchmark 150 benchmark
fi
note "total: $((SECONDS - started)) s, exit status $status"
exit "$status"
