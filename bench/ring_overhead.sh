#!/usr/bin/env bash
# Context parallelism's cost on one machine (run by `scripts/bench --ring`): the same long causal
# sequence (example 06's kernel, MHA H8 D128, long_causal's shape) as one process using every core,
# then as one MPI rank per core with one thread each (the ring, balanced chunks), in the same run.
# Prints both, the ring's overhead (its time over the single process's, target <= 1.10) and, per
# ring step, how much of the transfer the computation hid.
# Usage: bench/ring_overhead.sh CONTEXT_PARALLEL [SEQUENCE_LENGTH [REPEATS]]
set -euo pipefail
program=$1
length=${2:-16384}
repeats=${3:-3}
cores=$(nproc)
# Open MPI refuses to start as root without these; containers often run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
single=$(HL_NUM_THREADS=$cores "$program" --single "$length" "$repeats")
ring=$(HL_NUM_THREADS=1 mpirun -np "$cores" --oversubscribe --bind-to core "$program" "$length" "$repeats")
echo "1 process x $cores threads: $single"
echo "$cores ranks x 1 thread:"
echo "$ring"
single_ms=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<<"$single")
ring_ms=$(sed -n 's/^ring:.*median_ms=\([0-9.]*\).*/\1/p' <<<"$ring")
awk -v s="$single_ms" -v r="$ring_ms" 'BEGIN {
  printf "ring overhead: %.3f of the single process'"'"'s time (target <= 1.10): %s\n", r / s, (r / s <= 1.10 ? "met" : "missed") }'
