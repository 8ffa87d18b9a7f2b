#!/usr/bin/env bash
# Measures attngen's build-time cost (run by `scripts/bench --build-cost`): generates the kernels of
# build_cost.attngen for the default CPU targets, ROUNDS times, one part at a time (--jobs 1), and
# prints per kernel and target the fastest and the slowest round's processor time (the sum of its
# parts') and the object size, against the limits of 3 s and 300 KB per kernel and target. Rounds
# show the machine's noise; a kernel keeps the limits only if its slowest round does.
# Usage: bench/build_cost.sh ATTNGEN [ROUNDS [--spec FILE] [GENERATOR OPTIONS...]], e.g. --target T
# to measure other targets than the default set, --spec for other kernels than build_cost.attngen's.
set -euo pipefail
attngen=$1
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")" && pwd)
spec=$here/build_cost.attngen
if [[ "${1:-}" == --spec ]]; then
  spec=$2
  shift 2
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for ((round = 1; round <= rounds; round++)); do
  echo "build cost: round $round of $rounds" >&2
  if ! "$attngen" generate --spec "$spec" --output-dir "$scratch/generated" --jobs 1 --stats "$@" \
    >"$scratch/table" 2>"$scratch/progress"; then
    cat "$scratch/progress" >&2
    exit 1
  fi
  awk -v round="$round" 'NR > 1 { print round, $0 }' "$scratch/table" >>"$scratch/parts"
done
awk -v rounds="$rounds" '
  # Lines: round kernel target part CPU-seconds KB.
  {
    key = $2 " " $3
    if (!(key in seen)) { seen[key] = 1; order[++keys] = key }
    seconds[$1, key] += $5
    kb[$1, key] += $6
  }
  END {
    printf "%-30s %-38s %15s %10s\n", "kernel", "target", "CPU seconds", "object KB"
    over = 0
    for (n = 1; n <= keys; ++n) {
      key = order[n]
      split(key, part, " ")
      fastest = 1e9; slowest = 0; largest = 0
      for (r = 1; r <= rounds; ++r) {
        if (seconds[r, key] < fastest) fastest = seconds[r, key]
        if (seconds[r, key] > slowest) slowest = seconds[r, key]
        if (kb[r, key] > largest) largest = kb[r, key]
      }
      flag = (slowest > 3 || largest > 300) ? "  over the limit" : ""
      if (flag != "") ++over
      printf "%-30s %-38s %6.2f - %6.2f %10.1f%s\n", part[1], part[2], fastest, slowest, largest, flag
    }
    printf "\n%d of %d kernel-target pairs over 3 s or 300 KB in their slowest of %d rounds\n", over, keys, rounds
  }' "$scratch/parts"
