#!/usr/bin/env bash
# Runs test binaries one after another; prints each one's verdict and a
# summary. Fails if any binary fails (or none was given). A binary still
# running after TEST_TIMEOUT seconds (default 600) is stopped and fails.
set -u
if [ $# -eq 0 ]; then echo "run_tests: no test binaries"; exit 1; fi
pass=0; fail=0; failed=()
for t in "$@"; do
  name=${t#*/tests/}
  start=$(date +%s%N)
  timeout -k 10 "${TEST_TIMEOUT:-600}" "$t"
  rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); verdict=PASS
  else
    fail=$((fail+1)); verdict=FAIL
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="FAIL (timed out after ${TEST_TIMEOUT:-600}s)"; fi
    failed+=("$name")
  fi
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  printf '== %-40s %s (%d.%03ds)\n' "$name" "$verdict" $((ms / 1000)) $((ms % 1000))
done
echo "== summary: $pass passed, $fail failed${NVLITE_DEVICE:+ (NVLITE_DEVICE=$NVLITE_DEVICE)}"
for f in "${failed[@]}"; do echo "== FAILED: $f"; done
[ "$fail" -eq 0 ]
