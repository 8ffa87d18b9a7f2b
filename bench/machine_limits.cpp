#include "machine_limits.hpp"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <unistd.h>

namespace attngen::bench {

namespace {

using clock = std::chrono::steady_clock;
constexpr long fma_iterations = 100'000'000;
// Independent accumulators: enough to cover FMA latency x throughput on current x86 cores (4-5 cycles
// x 2 pipes), and no more than the vector registers hold beside the two operands. 16 chains of ymm
// on AVX2 (16 registers) spilled 3 chains to the stack every iteration: a Zen 3 read 109 GFLOP/s
// on 2 threads, below the 112 its module projections reached (12 chains: 198). Every chain must
// reach the result: when only one did, the compiler deleted the others and the "peak" came out 3x
// too high.
constexpr int fma_chains_zmm = 16;  // of 32 registers
constexpr int fma_chains_ymm = 12;  // of 16
constexpr int fma_chains_xmm = 12;  // of 16

__attribute__((target("avx512f"))) double fma_flops_avx512() {
  __m512 acc[fma_chains_zmm];
  for (int n = 0; n < fma_chains_zmm; ++n) acc[n] = _mm512_set1_ps(1.0f + n);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < fma_iterations; ++n)
    for (auto& a : acc) a = _mm512_fmadd_ps(a, x, y);
  __m512 sum = acc[0];
  for (int n = 1; n < fma_chains_zmm; ++n) sum = _mm512_add_ps(sum, acc[n]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return 2.0 * 16 * fma_chains_zmm * fma_iterations;
}

__attribute__((target("avx2,fma"))) double fma_flops_avx2() {
  __m256 acc[fma_chains_ymm];
  for (int n = 0; n < fma_chains_ymm; ++n) acc[n] = _mm256_set1_ps(1.0f + n);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < fma_iterations; ++n)
    for (auto& a : acc) a = _mm256_fmadd_ps(a, x, y);
  __m256 sum = acc[0];
  for (int n = 1; n < fma_chains_ymm; ++n) sum = _mm256_add_ps(sum, acc[n]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
  return 2.0 * 8 * fma_chains_ymm * fma_iterations;
}

double fma_flops_sse() {
  __m128 acc[fma_chains_xmm];
  for (int n = 0; n < fma_chains_xmm; ++n) acc[n] = _mm_set1_ps(1.0f + n);
  const __m128 x = _mm_set1_ps(0.999999f), y = _mm_set1_ps(1e-7f);
  for (long n = 0; n < fma_iterations / 4; ++n)
    for (auto& a : acc) a = _mm_add_ps(_mm_mul_ps(a, x), y);
  __m128 sum = acc[0];
  for (int n = 1; n < fma_chains_xmm; ++n) sum = _mm_add_ps(sum, acc[n]);
  volatile float sink = _mm_cvtss_f32(sum);
  (void)sink;
  return 2.0 * 4 * fma_chains_xmm * (fma_iterations / 4);
}

// Runs `work` on `threads` threads at once; returns total work / wall seconds.
template <typename Work>
double parallel_rate(int threads, Work work) {
  std::vector<double> amounts(threads);
  std::vector<std::thread> pool;
  const auto start = clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { amounts[t] = work(t); });
  for (auto& th : pool) th.join();
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  double total = 0;
  for (double a : amounts) total += a;
  return total / seconds;
}

}  // namespace

machine_limits measure_machine_limits(int threads) {
  machine_limits limits;
  __builtin_cpu_init();
  double (*fma_kernel)() = fma_flops_sse;
  limits.vector_isa = "sse";
  if (__builtin_cpu_supports("avx512f")) {
    fma_kernel = fma_flops_avx512;
    limits.vector_isa = "avx512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fma_kernel = fma_flops_avx2;
    limits.vector_isa = "avx2";
  }
  // Best of three: the figure is a ceiling, so the least disturbed run is the right one.
  for (int run = 0; run < 3; ++run)
    limits.peak_gflops = std::max(limits.peak_gflops, parallel_rate(threads, [&](int) { return fma_kernel(); }) / 1e9);

  limits.triad_gbps = measure_triad_gbps(threads);
  return limits;
}

double measure_triad_gbps(int threads) {
  const long last_level_cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const std::size_t n = std::max(std::size_t(32) << 20, std::size_t(std::max(last_level_cache, 0L)) / sizeof(float));
  std::vector<float> a(n, 0.0f), b(n, 1.0f), c(n, 2.0f);
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double bytes_per_second = parallel_rate(threads, [&](int t) {
      const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + 3.0f * c[i];
      return 3.0 * sizeof(float) * double(end - begin);
    });
    best = std::max(best, bytes_per_second / 1e9);
  }
  return best;
}

}  // namespace attngen::bench
