#!/usr/bin/env bash
# Runs rayon's own test suite, unmodified, with rayon-core replaced by this
# repository's rayon-core (weft underneath), plus the public-API tests of
# rayon-core itself and the rayon paths of a few crates that use rayon.
#
#   scripts/rayon-on-weft.sh [--real] [--only rayon|rayon-core|crates] [--keep]
#
# (CRATE=name with --only crates runs one of the crates alone.)
#
# --real runs the same suites against the real rayon-core from crates.io,
# without the patch: the baseline the weft run is compared with.
# Everything happens in a scratch folder outside the repository (SCRATCH,
# default a new folder under /tmp); the packages come from crates.io
# through cargo itself (a throwaway project that depends on them), so they
# are exactly the published ones, and nothing from them enters the
# repository. It prints one line per suite, passed/failed/ignored, and
# exits non-zero if any suite failed.
set -euo pipefail

RAYON_VERSION=1.12.0      # the newest rayon 1.x; it asks for rayon-core ^1.13.0
RAYON_CORE_VERSION=1.13.0 # whose tests/ run against the shim
# The crates whose rayon paths run: name, version requirement, features.
CRATES=(
  "indexmap 2 rayon"
  "hashbrown 0.15 rayon"
  "dashmap 6 rayon"
  "jwalk 0.8 "
  "tokio-rayon 2 "
  "petgraph 0.6 rayon"
)
# (jwalk and tokio-rayon need no feature: rayon is one of their plain
# dependencies. jwalk walks directories on rayon pools of its own and on
# the global one, and its deadlock test nests walks in a busy pool;
# tokio-rayon hands work to `rayon::spawn` and `ThreadPool::spawn` and
# awaits it from tokio; petgraph's feature gives `par_nodes` and a
# parallel page rank.)
# (blake3's rayon feature would fit too, but its published package cannot
# build its tests: they use a path dependency left out of the package.)

mode=weft
only=all
keep=no
while [ $# -gt 0 ]; do
  case "$1" in
    --real) mode=real ;;
    --only) only="$2"; shift ;;
    --keep) keep=yes ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-$(mktemp -d /tmp/rayon-on-weft.XXXXXX)}
mkdir -p "$scratch"
case "$scratch" in
  "$repo"/*) echo "SCRATCH must be outside the repository" >&2; exit 2 ;;
esac
# One target folder for every suite: the dependencies build once.
export CARGO_TARGET_DIR="$scratch/target-$mode"
summary="$scratch/summary-$mode.txt"
: > "$summary"
echo "scratch: $scratch (mode: $mode)"

# The patch that moves a package's rayon onto weft; nothing in real mode.
patch_section() {
  if [ "$mode" = weft ]; then
    printf '\n[patch.crates-io]\nrayon-core = { path = "%s/rayon-core" }\n' "$repo"
  fi
}

# Copies the published source of crate $1 at requirement $2 to $3, by
# resolving it in a throwaway project and reading where cargo unpacked it.
fetch_crate() {
  local name=$1 req=$2 dest=$3 probe="$scratch/probe-$1"
  rm -rf "$probe" "$dest"
  mkdir -p "$probe/src"
  printf '[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "%s"\n[workspace]\n' \
    "$name" "$req" > "$probe/Cargo.toml"
  : > "$probe/src/lib.rs"
  local manifest
  manifest=$(cd "$probe" && cargo metadata --format-version 1 2>/dev/null |
    python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if p["name"]==sys.argv[1]][0])' "$name")
  cp -r "$(dirname "$manifest")" "$dest"
  chmod -R u+w "$dest"
  # A package from crates.io is not a workspace member of anything here.
  printf '\n[workspace]\n' >> "$dest/Cargo.toml"
  patch_section >> "$dest/Cargo.toml"
  rm -f "$dest/Cargo.lock"
  # A pinned toolchain (dashmap pins one) would need installing; the
  # suites run on the toolchain this repository builds with.
  rm -f "$dest/rust-toolchain" "$dest/rust-toolchain.toml"
}

failed=0
# Runs `cargo test` with the given arguments in $1, logs to $2.log, and
# adds the suite's totals to the summary.
run_suite() {
  local dir=$1 label=$2; shift 2
  local log="$scratch/$label-$mode.log" start end status=0
  start=$(date +%s)
  (cd "$dir" && cargo test "$@" -- --color never) > "$log" 2>&1 || status=$?
  end=$(date +%s)
  local totals
  totals=$({ grep -E '^test result:' "$log" || true; } | awk '
    { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) g += $i } }
    END { printf "%d passed, %d failed, %d ignored", p, f, g }')
  if [ "$status" -ne 0 ]; then
    failed=1
    totals="$totals (cargo exit $status)"
  fi
  printf '%-28s %s in %ss; log %s\n' "$label" "$totals" "$((end - start))" "$log" | tee -a "$summary"
  if [ "$mode" = weft ]; then
    # The check that the patch took: the suite's rayon-core is the shim.
    (cd "$dir" && cargo tree -i rayon-core "$@" --depth 0 2>&1 | head -1 | sed 's/^/  rayon-core in the graph: /' | tee -a "$summary")
  fi
  if [ "$status" -ne 0 ]; then
    grep -E '^test .* FAILED$|^    [a-z_:]+$|^failures:|panicked at' "$log" | head -40 || true
  fi
}

if [ "$mode" = weft ]; then
  # Fail early, with the package's own error, if the shim does not build.
  (cd "$repo/rayon-core" && cargo build --quiet)
fi

if [ "$only" = all ] || [ "$only" = rayon ]; then
  fetch_crate rayon "=$RAYON_VERSION" "$scratch/rayon"
  run_suite "$scratch/rayon" "rayon-$RAYON_VERSION"
fi

if [ "$only" = all ] || [ "$only" = rayon-core ]; then
  # rayon-core's own tests/ use only its public API: they run as the tests
  # of a scratch package that depends on rayon-core (the shim, patched in).
  fetch_crate rayon-core "=$RAYON_CORE_VERSION" "$scratch/rayon-core-src"
  suite="$scratch/rayon-core-tests"
  rm -rf "$suite"
  mkdir -p "$suite/src"
  cp -r "$scratch/rayon-core-src/tests" "$suite/tests"
  : > "$suite/src/lib.rs"
  {
    printf '[package]\nname = "rayon-core-tests"\nversion = "0.0.0"\nedition = "2021"\n'
    printf '[dependencies]\nrayon-core = "=%s"\n' "$RAYON_CORE_VERSION"
    # The dev-dependencies real rayon-core's tests use.
    printf '[dev-dependencies]\ncrossbeam-utils = "0.8"\nscoped-tls = "1.0"\nlibc = "0.2"\n'
    printf '[workspace]\n'
    patch_section
  } > "$suite/Cargo.toml"
  run_suite "$suite" "rayon-core-$RAYON_CORE_VERSION-tests"
fi

if [ "$only" = all ] || [ "$only" = crates ]; then
  for entry in "${CRATES[@]}"; do
    read -r name req features <<< "$entry"
    # CRATE=name runs that crate alone.
    if [ -n "${CRATE:-}" ] && [ "$CRATE" != "$name" ]; then continue; fi
    fetch_crate "$name" "$req" "$scratch/$name"
    run_suite "$scratch/$name" "$name-$(grep -m1 '^version' "$scratch/$name/Cargo.toml" | cut -d'"' -f2)" --features "$features"
  done
fi

echo "summary: $summary"
if [ "$keep" = no ] && [ "$failed" -eq 0 ] && [ -z "${SCRATCH:-}" ]; then
  rm -rf "$scratch"
fi
exit "$failed"
