#!/usr/bin/env bash
# Issue 13's checks on a GPU machine, each under a timeout, each program once
# with NVIDIA's libcuda and once with nvlite as its only driver (nvlite-run):
#   build/tests/cudart/*_static, *_shared   nvcc-built runtime-API programs
#                                           (their RPATH makes nvlite their
#                                           driver: run once, on nvlite)
#   build/dropin/cublas_sgemm               cuBLAS float32 GEMMs, static cudart
#   tests/dropin/cupy_check.py              CuPy: elementwise, reductions, matmul
#   tests/dropin/torch_check.py             PyTorch: ones*2, copies, matmul, sum
# A program that fails on nvlite is run again with NVLITE_TRACE=1; the driver
# functions nvlite did not provide and the calls that returned an error are
# listed from that trace. Logs go to $OUT (or ./cudart-checks); the summary,
# one line per program and driver, comes last.
#
#   tests/dropin/cudart_checks.sh            from the repository root, after
#                                            make tests dropin-checks (built here)
# Needs: cmocka's runtime on LD_LIBRARY_PATH for the tests/cudart programs
# (DEVICE.md: .deps/), python3 with CuPy and PyTorch for the Python checks
# (a check whose module is missing says so and counts as skipped).
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
OUT=${OUT:-$REPO/cudart-checks}
mkdir -p "$OUT"
RUN="$REPO/build/bin/nvlite-run"
LIMIT=${CUDART_CHECK_TIMEOUT:-120}
[ -d "$REPO/.deps" ] && export LD_LIBRARY_PATH="$REPO/.deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary=()

# The libcuda run: every folder that maps libcuda.so.1 to nvlite is dropped
# from LD_LIBRARY_PATH, NVIDIA's folder appended where it exists.
libcuda_env() {
    local keep=() d
    IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
    for d in "${dirs[@]}"; do
        [ -n "$d" ] || continue
        if [ -e "$d/libcuda.so.1" ] && readlink -f "$d/libcuda.so.1" | grep -q libnvlite; then continue; fi
        keep+=("$d")
    done
    [ -d /usr/local/nvidia/lib64 ] && keep+=(/usr/local/nvidia/lib64)
    (IFS=:; echo "${keep[*]}")
}

one() {  # DRIVER NAME CMD...
    local driver=$1 name=$2 log rc
    shift 2
    log="$OUT/$name.$driver.log"
    if [ "$driver" = libcuda ]; then
        timeout "$LIMIT" env -u NVLITE_DEVICE LD_LIBRARY_PATH="$(libcuda_env)" "$@" >"$log" 2>&1
    else
        timeout "$LIMIT" env -u NVLITE_DEVICE "$RUN" "$@" >"$log" 2>&1
    fi
    rc=$?
    local verdict=PASS
    if [ $rc -eq 124 ]; then verdict="TIMEOUT (${LIMIT}s)"
    elif grep -q 'No module named' "$log"; then verdict="SKIP (module missing)"
    elif [ $rc -ne 0 ]; then verdict="FAIL (exit $rc)"; fi
    echo "===== $name [$driver]: $verdict"
    tail -n 25 "$log"
    if [ "$driver" = nvlite ] && [ "$verdict" != PASS ] && [ "${verdict#SKIP}" = "$verdict" ]; then
        local trace="$OUT/$name.nvlite.trace"
        timeout "$LIMIT" env -u NVLITE_DEVICE NVLITE_TRACE=1 "$RUN" "$@" >"$trace" 2>&1
        echo "----- $name [nvlite] under NVLITE_TRACE=1: not provided / errors (counts)"
        grep -E 'not provided|nvlite does not|= CUDA_ERROR' "$trace" | grep -v 'NOT_READY' |
            sed -E 's/0x[0-9a-f]+/X/g; s/\([0-9.]+ us\)//' | sort | uniq -c | sort -rn | head -n 25
        gzip -f "$trace"
    fi
    summary+=("$(printf '%-28s %-8s %s' "$name" "$driver" "$verdict")")
}

for t in "$REPO"/build/tests/cudart/*_static "$REPO"/build/tests/cudart/*_shared; do
    [ -x "$t" ] || continue
    one nvlite "cudart-$(basename "$t")" "$t"
done
for driver in libcuda nvlite; do
    if [ -x "$REPO/build/dropin/cublas_sgemm" ]; then one $driver cublas_sgemm "$REPO/build/dropin/cublas_sgemm"
    else summary+=("cublas_sgemm: not built (make dropin-checks)"); fi
    one $driver cupy_check python3 "$REPO/tests/dropin/cupy_check.py"
    one $driver torch_check python3 "$REPO/tests/dropin/torch_check.py"
done
echo "===== cudart_checks summary"
printf '%s\n' "${summary[@]}"
