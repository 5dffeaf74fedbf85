#!/bin/sh
# On the H200: whether the event race (tests/api/test_races) was lost
# doorbells, in one run. Built binaries from `make tests` are expected in
# $BUILD (default build); cmocka on LD_LIBRARY_PATH (/work/shared/DEVICE.md).
#
#   1. the default (doorbell through BAR1): the race and the stream-wait
#      ingredients pass, with no hang report;
#   2. NVLITE_DOORBELL=bar0-unflushed (the way before the fix), the hang
#      report ringing the stuck channel again: a lost doorbell shows as a hang
#      report followed by "reached N ... after its doorbell was rung again";
#      a wait stuck for another reason does not end there;
#   3. NVLITE_DOORBELL=bar0 (BAR0, GP_PUT read back through BAR1 first, as RM
#      rings): passes like 1 if the cause is the ordering of the two writes.
#
# Each step runs under `timeout ${STEP_SECONDS:-140}`; name steps as
# arguments to run some (all six take up to 14 minutes, more than one device
# call): tests/hw/doorbell_check.sh default-races default-waits bar0-unflushed-waits
# Writes everything to ${OUT:-.}/doorbell-*.log and prints a summary last.
BUILD=${BUILD:-build}
OUT=${OUT:-.}
races=$BUILD/tests/api/test_races
waits=$BUILD/tests/hw/test_hw_stream_waits
summary=""
steps=" $* "

run() { # name, VAR=value..., binary
    name=$1
    shift
    [ "$steps" = "  " ] || case "$steps" in *" $name "*) ;; *) return ;; esac
    log=$OUT/doorbell-$name.log
    start=$(date +%s)
    timeout ${STEP_SECONDS:-140} env "$@" >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    reports=$(grep -c "hang report: channel .* waited" "$log")
    rerung=$(grep -c "after its doorbell was rung again" "$log")
    summary="$summary
$name: exit $rc in ${took} s, $reports hang reports, $rerung ended by ringing again"
}

run default-races NVLITE_HANG_REPORT=10 TS_WATCHDOG_SECONDS=120 "$races"
run default-waits NVLITE_HANG_REPORT=10 "$waits"
run bar0-unflushed-waits NVLITE_DOORBELL=bar0-unflushed NVLITE_HANG_REPORT=3 NVLITE_HANG_REPORT_RING=1 "$waits"
run bar0-unflushed-races NVLITE_DOORBELL=bar0-unflushed NVLITE_HANG_REPORT=3 NVLITE_HANG_REPORT_RING=1 TS_WATCHDOG_SECONDS=120 "$races"
run bar0-races NVLITE_DOORBELL=bar0 NVLITE_HANG_REPORT=10 TS_WATCHDOG_SECONDS=120 "$races"
run bar0-waits NVLITE_DOORBELL=bar0 NVLITE_HANG_REPORT=10 "$waits"

grep -h "own work in" "$OUT"/doorbell-*waits.log 2>/dev/null
echo "doorbell check:$summary"
