#!/usr/bin/env bash
# Runs on a CUDA GPU machine, from the bundle scripts/gpu-check prepared (this file is its `run`):
# the CUDA suite and the tensor-core kernels' suite (where the bundle has it) side by side, then
# attngen-bench --device cuda alone beside PyTorch's scaled_dot_product_attention (math and flash
# backends), each under a time limit so that a hang cannot spend the machine's time; then the
# tensor-core kernels' machine code, where the machine has cuobjdump.
# Writes into RESULTS_DIR (default: results/ beside this file):
#   device.txt      nvidia-smi, the driver, PyTorch and its view of the GPU;
#   cuda_tests.txt  the suite's report; tensorcore_tests.txt  the tensor-core kernels' report;
#   gpu_bench.txt   the benchmark's table; gpu_bench.json  one JSON line per case;
#   gpu_bench_255_registers.txt  the Halide-compiled cases with HL_CUDA_JIT_MAX_REGISTERS=255;
#   sass.txt        per tensor-core kernel: its registers and spills, and its count of HMMA instructions;
#   summary.txt     each step's exit status.
# Exits 0 only when every step passed.
# Usage: run [RESULTS_DIR]
#   PYTHON (default python3) is the Python with torch; TESTS_LIMIT_S and BENCH_LIMIT_S (default 300
#   and 240) bound the two steps.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:-$here/results}
python=${PYTHON:-python3}
mkdir -p "$results"
# The binaries find the PyTorch scripts through these (tests/module, bench).
export ATTNGEN_SOURCE_DIR=$here ATTNGEN_PYTHON=$python

{
  cat "$here/MANIFEST"
  echo
  nvidia-smi || echo "nvidia-smi: not found"
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"device", torch.cuda.get_device_name() if torch.cuda.is_available() else "none visible")' 2>&1
} >"$results/device.txt" 2>&1

# Correctness runs side by side (timings come after, alone); each report goes to its file.
timeout "${TESTS_LIMIT_S:-300}" "$here/bin/cuda_tests" --durations yes >"$results/cuda_tests.txt" 2>&1 &
tests_pid=$!
tensorcore_status=0
if [[ -x $here/bin/tensorcore_cuda_tests ]]; then
  timeout "${TESTS_LIMIT_S:-300}" "$here/bin/tensorcore_cuda_tests" --durations yes >"$results/tensorcore_tests.txt" 2>&1 &
  wait $!
  tensorcore_status=$?
  tail -n 20 "$results/tensorcore_tests.txt"
fi
wait $tests_pid
tests_status=$?
tail -n 20 "$results/cuda_tests.txt"
timeout "${BENCH_LIMIT_S:-240}" "$here/bin/attngen-bench" --device cuda --json "$results/gpu_bench.json" 2>&1 |
  tee "$results/gpu_bench.txt"
bench_status=${PIPESTATUS[0]}
# Halide's CUDA runtime loads its PTX with at most 64 registers a thread unless HL_CUDA_JIT_MAX_REGISTERS
# says otherwise (Halide's own GPU apps set 256): the Halide-compiled cases again with the cap lifted.
HL_CUDA_JIT_MAX_REGISTERS=255 timeout "${BENCH_LIMIT_S:-240}" "$here/bin/attngen-bench" --device cuda --no-peers \
  --case prefill_gqa --case prefill_gqa_causal --case decode_gqa --case prefill_mha_causal --case mha_small \
  >"$results/gpu_bench_255_registers.txt" 2>&1
cat "$results/gpu_bench_255_registers.txt"

if command -v cuobjdump >/dev/null && compgen -G "$here/cubin/*.cubin" >/dev/null; then
  for cubin in "$here"/cubin/*.cubin; do
    echo "${cubin##*/}: $(cuobjdump -sass "$cubin" | grep -c HMMA) HMMA instructions"
    cuobjdump -res-usage "$cubin" | grep -E 'REG|STACK|LOCAL' | sed 's/^ */  /'
  done >"$results/sass.txt" 2>&1
  cat "$results/sass.txt"
fi

describe() {
  case "$1" in
    0) echo "passed" ;;
    77) echo "skipped (no CUDA device; see device.txt)" ;;
    124) echo "stopped at its time limit" ;;
    *) echo "failed (exit $1)" ;;
  esac
}
{
  echo "cuda_tests: $(describe "$tests_status")"
  [[ -x $here/bin/tensorcore_cuda_tests ]] && echo "tensorcore_cuda_tests: $(describe "$tensorcore_status")"
  echo "attngen-bench --device cuda: $(describe "$bench_status")"
} | tee "$results/summary.txt"
((tests_status == 0 && tensorcore_status == 0 && bench_status == 0))
