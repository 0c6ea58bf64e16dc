#!/usr/bin/env bash
# The comparison suite on a lent many-core machine (the device tool's `run`),
# as one prepared command. The core issue sets its fan-out and fork-join goals
# for T workers at once, which a 2-core development VM can only show with
# many more workers than cores; this runs the same suite where the cores are.
#
# The lent machine reaches no network, so it cannot build. Build here, carry
# the binary, run (the paths are relative to the repository root):
#
#   cargo build --release -p weft-bench
#   cargo build --release --manifest-path weft-bench/rayon-on-weft/Cargo.toml --target-dir target
#   mkdir -p device-bin && cp target/release/weft-bench target/release/weft-bench-rayon-on-weft device-bin/
#   strip device-bin/*
#   run  command: bash scripts/device-suite.sh device-bin/weft-bench
#        carry: ["device-bin"]   timeout_s: 560
#
# The second binary (rayon's code on weft through rayon-core/) is optional:
# where it sits beside the first, a third stage runs the par and join
# families at the machine's core count of workers (fewer workers run on
# the development VMs) with rayon and rayon on weft (bench/rayon-on-weft/),
# the binary
# named to weft-bench by WEFT_BENCH_RAYON_ON_WEFT, since the lent machine
# has no cargo to build it.
#
# Writes under $OUT (the tool brings back a few files only): machine.txt,
# suite.log, and device-bench.tgz with weft-bench's reports: the quick suite at
# 2, 8 and the machine's core count of workers, then fork-join and fan-out at
# 8, 16, 24 and 64, then (with the second binary) the rayon-on-weft stage.
# Unpack it under docs/device/ and commit it with the date and the machine
# it ran on. The first two stages took 410 s at 3 repetitions on 16 cores.
#
#   scripts/device-suite.sh BINARY [REPS] [weft-bench flags...]
#   OUT=/tmp/try scripts/device-suite.sh target/release/weft-bench 1 --smoke   # a dry run here
set -uo pipefail
bin="${1:?usage: device-suite.sh BINARY [REPS] [weft-bench flags...]}"
reps="${2:-3}"
shift $(($# >= 2 ? 2 : 1))
out="${OUT:?OUT must name the folder for the results (the device tool sets it)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cores="$(nproc)"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpus: $cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
    echo "kernel: $(uname -sr)"
    echo "reps: $reps"
} > "$out/machine.txt"

status=0
"$bin" --out "$work/bench" --reps "$reps" --workers "2,8,$cores" "$@" \
    >> "$out/suite.log" 2>&1 || status=$?
# Packed after each stage, so that a run stopped at the tool's time limit
# still brings back the stages it finished.
tar czf "$out/device-bench.tgz" -C "$work" bench
"$bin" --out "$work/bench/scaling" --only marl/fork-join --only wake/fan-out \
    --workers 8,16,24,64 --peers rayon,tokio,threadpool,std --reps "$reps" "$@" \
    >> "$out/suite.log" 2>&1 || status=$?
tar czf "$out/device-bench.tgz" -C "$work" bench
on_weft="$(dirname "$bin")/weft-bench-rayon-on-weft"
if [ -f "$on_weft" ]; then
    WEFT_BENCH_RAYON_ON_WEFT="$on_weft" "$bin" --out "$work/bench/rayon-on-weft" \
        --only par --only join --workers "$cores" --peers rayon,rayon-on-weft \
        --reps "$reps" "$@" >> "$out/suite.log" 2>&1 || status=$?
    tar czf "$out/device-bench.tgz" -C "$work" bench
fi
echo "weft-bench exit status: $status" >> "$out/machine.txt"
exit "$status"
