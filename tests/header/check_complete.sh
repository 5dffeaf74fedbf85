#!/bin/sh
# For every enum that include/nvlite/cuda.h declares, check that NVIDIA's
# enum with the same tag has exactly the same enumerators in the same order
# (values are compared by check_header).  Catches an enumerator NVIDIA has
# and we forgot, which the values.def comparison cannot see.
#
# Usage: tests/header/check_complete.sh [path/to/nvidia/include]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvinc=${1:-/usr/local/cuda/include}
CC=${CC:-gcc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Print "tag enumerator" for every enumerator of every tagged enum.
enumerators() {
    "$CC" -E -P -x c "$1" | tr '\n' ' ' | awk '
    {
        s = $0
        while (match(s, /enum[ \t]+[A-Za-z_][A-Za-z_0-9]*[ \t]*\{[^}]*\}/)) {
            body = substr(s, RSTART, RLENGTH)
            s = substr(s, RSTART + RLENGTH)
            tag = body
            sub(/^enum[ \t]+/, "", tag)
            sub(/[ \t]*\{.*$/, "", tag)
            sub(/^[^{]*\{/, "", body)
            sub(/\}$/, "", body)
            n = split(body, items, ",")
            for (i = 1; i <= n; i++) {
                it = items[i]
                gsub(/^[ \t]+/, "", it)
                if (match(it, /^[A-Za-z_][A-Za-z_0-9]*/))
                    print tag, substr(it, RSTART, RLENGTH)
            }
        }
    }'
}

enumerators "$root/include/nvlite/cuda.h" > "$tmp/ours"
enumerators "$nvinc/cuda.h" > "$tmp/nvidia"

status=0
ntags=0
for tag in $(awk '!seen[$1]++ { print $1 }' "$tmp/ours"); do
    ntags=$((ntags + 1))
    awk -v t="$tag" '$1 == t { print $2 }' "$tmp/ours" > "$tmp/a"
    awk -v t="$tag" '$1 == t { print $2 }' "$tmp/nvidia" > "$tmp/b"
    if [ ! -s "$tmp/b" ]; then
        echo "check_complete: enum $tag is not in NVIDIA's cuda.h" >&2
        status=1
    elif ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "check_complete: enum $tag differs (--- nvlite, +++ nvidia):" >&2
        diff -u "$tmp/a" "$tmp/b" | sed -n '3,$p' >&2 || true
        status=1
    fi
done
[ $status -eq 0 ] && echo "check_complete: $ntags enums match NVIDIA's enumerator lists"
exit $status
