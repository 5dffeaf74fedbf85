#!/usr/bin/env bash
# Checks what the built libraries expose (run by `make test`):
#  - libnvlite.so exports only the driver API (cu*) and holds no simulator code;
#  - libnvlite_sim.so exports only its entry and the fault hook of nvlite.h;
#  - NVLITE_DEVICE=sim without libnvlite_sim.so beside or on the search path
#    gives CUDA_ERROR_NO_DEVICE from cuInit, never a crash.
# Usage: check_libs.sh LIBDIR PROBE   (PROBE: a program printing cuInit's result)
set -u
lib=$1/libnvlite.so.0
sim=$1/libnvlite_sim.so.0
probe=$(readlink -f "$2")
fail=0
bad() { echo "check_libs: $*"; fail=1; }

others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^cu' || true)
[ -z "$others" ] || bad "libnvlite.so exports more than cu*: $(echo $others | cut -c1-300)"
[ "$(nm -D --defined-only "$lib" | grep -c ' cu')" -gt 100 ] || bad "libnvlite.so exports too few cu* functions"
# With its symbol table (unstripped builds): no function of the simulator.
if nm "$lib" >/dev/null 2>&1 && nm -C "$lib" | grep -q 'nvl::kdrv::sim::'; then
  bad "libnvlite.so contains simulator code (nvl::kdrv::sim::)"
fi
exports=$(nm -D --defined-only "$sim" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exports" = "nvliteSimInjectFault nvliteSimKdrv " ] || bad "libnvlite_sim.so exports: ${exports:0:300}"

# A copy of libnvlite.so alone in a folder: the simulator cannot be found.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$(readlink -f "$lib")" "$tmp/libnvlite.so.0"
out=$(cd "$tmp" && env -u LD_PRELOAD LD_LIBRARY_PATH="$tmp" NVLITE_DEVICE=sim "$probe" 2>&1)
case "$out" in
  *"cuInit=100"*) ;;  # CUDA_ERROR_NO_DEVICE
  *) bad "without libnvlite_sim.so, NVLITE_DEVICE=sim gave: $out" ;;
esac
case "$out" in
  *"libnvlite_sim.so.0 cannot be loaded"*) ;;
  *) bad "without libnvlite_sim.so, no message saying why: $out" ;;
esac
# And with it beside the library, the simulated device.
cp "$(readlink -f "$sim")" "$tmp/libnvlite_sim.so.0"
out=$(cd "$tmp" && env -u LD_PRELOAD LD_LIBRARY_PATH="$tmp" NVLITE_DEVICE=sim "$probe" 2>&1)
case "$out" in
  *"cuInit=0"*) ;;
  *) bad "with libnvlite_sim.so beside libnvlite.so, NVLITE_DEVICE=sim gave: $out" ;;
esac

[ $fail -eq 0 ] && echo "check_libs: libnvlite.so exports only cu*, the simulator is in libnvlite_sim.so and loads on demand"
exit $fail
