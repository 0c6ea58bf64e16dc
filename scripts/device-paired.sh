#!/usr/bin/env bash
# Paired children on a lent many-core machine (the device tool's `run`):
# builds of weft-bench (a change, the code before it, other tries) side by
# side with the peers, on the cases a change to waking touches, in one
# prepared command. The lent machine cannot build: build each here, strip
# it and carry it, as for scripts/device-suite.sh:
#
#   run  command: bash scripts/device-paired.sh all 21 device-bin/new device-bin/old
#        carry: ["device-bin"]   timeout_s: 400
#
#   scripts/device-paired.sh SET ROUNDS BUILD...
#     SET: all (every case below) or wakes (fan-out and fork-join only)
#   OUT=/tmp/try scripts/device-paired.sh wakes 3 target/release/weft-bench /tmp/old   # a dry run here
#
# Writes $OUT/machine.txt and $OUT/paired.md (every case's table; the first
# build's weft is the column the others are divided by).
set -uo pipefail
set_="${1:?usage: device-paired.sh SET ROUNDS BUILD...}"
rounds="${2:?usage: device-paired.sh SET ROUNDS BUILD...}"
shift 2
builds=("$@")
[ "${#builds[@]}" -ge 1 ] || { echo "device-paired.sh: no build given" >&2; exit 2; }
out="${OUT:?OUT must name the folder for the results (the device tool sets it)}"
cores="$(nproc)"
long=$(((rounds + 1) / 2))
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpus: $cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
    echo "kernel: $(uname -sr)"
    # Where the kernel places woken threads depends on the cores' layout.
    lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node|L2|L3)' || true
    echo "set: $set_; builds: ${builds[*]}"
    echo "rounds: $rounds (short cases), $long (long ones)"
} > "$out/machine.txt"

status=0
# case_ ROUNDS SCENARIO VARIANT WORKERS PEER...
case_() {
    local n="$1" scenario="$2" variant="$3" workers="$4"
    shift 4
    local columns=()
    for build in "${builds[@]}"; do columns+=(--column "$build:weft"); done
    for peer in "$@"; do columns+=(--column "$peer"); done
    "${builds[0]}" paired --scenario "$scenario" --variant "$variant" --workers "$workers" \
        --rounds "$n" --timeout 60 "${columns[@]}" 2>&1 | grep -v '^round ' >> "$out/paired.md" || status=$?
    echo >> "$out/paired.md"
}
for w in 2 8 "$cores"; do case_ "$rounds" wake/fan-out "" "$w" rayon std; done
for w in 8 "$cores"; do case_ "$long" marl/fork-join cpu "$w" rayon std; done
case_ "$long" async/fan-out "" "$cores" tokio
if [ "$set_" = all ]; then
    case_ "$long" wake/fan-out "" 64 rayon std
    case_ "$long" async/fan-out "" 8 tokio
    case_ "$long" wake/latency "" "$cores" rayon
    case_ "$long" join/fib "" "$cores" chili
    case_ "$long" join/tree-sum shuffled "$cores" chili
    case_ "$long" par/sum-squares 100k "$cores" rayon
fi
echo "exit status: $status" >> "$out/machine.txt"
exit "$status"
