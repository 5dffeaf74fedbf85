#!/usr/bin/env bash
# Negative compile tests (make test): each tests/compile_fail/*.cpp compiles
# with CASE=0 and fails to compile with every other CASE it has, with the
# message fragment its "EXPECT:" line names.
# Usage: run.sh CXX FLAGS...
set -u
cxx=$1; shift
dir=$(dirname "$0")
fail=0; cases=0
for src in "$dir"/*.cpp; do
  name=$(basename "$src")
  if ! out=$("$cxx" "$@" -fsyntax-only -DCASE=0 "$src" 2>&1); then
    echo "compile_fail: $name: CASE=0 (the correct writes) does not compile:"; echo "$out" | head -20; fail=1; continue
  fi
  for n in $(grep -o '^#\(el\)\?if CASE == [0-9]*' "$src" | grep -o '[0-9]*$'); do
    [ "$n" = 0 ] && continue
    cases=$((cases+1))
    expect=$(awk -v n="$n" '$0 ~ "^#(el)?if CASE == "n"$" {f=1; next} f && /EXPECT:/ {sub(/.*EXPECT: */, ""); print; exit}' "$src")
    if out=$("$cxx" "$@" -fsyntax-only -DCASE="$n" "$src" 2>&1); then
      echo "compile_fail: $name CASE=$n compiles, but must not"; fail=1
    elif ! grep -qF -- "$expect" <<<"$out"; then
      echo "compile_fail: $name CASE=$n fails, but not with \"$expect\":"; echo "$out" | grep -m5 error; fail=1
    fi
  done
done
[ $fail -eq 0 ] && echo "compile_fail: $cases wrong method writes rejected at compile time"
exit $fail
