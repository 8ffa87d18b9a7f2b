#pragma once
/// The machine's limits, measured by the benchmark itself in the same run as the cases, so ratios
/// hold on a shared, noisy machine.

namespace attngen::bench {

struct machine_limits {
  double peak_gflops = 0;  ///< fp32 FMA throughput, widest vectors the CPU has, on `threads` threads
  double triad_gbps = 0;   ///< a[i] = b[i] + s*c[i] over arrays far larger than the caches
  const char* vector_isa = "";
};

machine_limits measure_machine_limits(int threads);

/// The best of three triads on `threads` threads over arrays each at least the L3's size (and 128
/// MiB), so that they stream from DRAM even where the L3 holds hundreds of MiB.
double measure_triad_gbps(int threads);

}  // namespace attngen::bench
