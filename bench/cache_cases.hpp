#pragma once
/// The cases whose sequences differ in length (a KV cache, ragged queries): their tensors, laid out
/// as a serving engine holds them, their timing, their figures and the targets for them.

#include <cmath>
#include <string>
#include <utility>

#include "cases.hpp"
#include "machine_limits.hpp"

namespace attngen::bench {

/// Median seconds of `c`'s call (-1 when a call fails), and of the same sequences through
/// `c.compared_with`'s kernel in the same process (NAN without one).
std::pair<double, double> time_cache_case(const bench_case& c, int threads);

/// What was timed: the case, its comparison, and PyTorch on the padded batch (NAN where not timed).
struct cache_times {
  double seconds = NAN, compared_seconds = NAN, pytorch_padded_seconds = NAN;
  /// Tokens per second of the same case over an f32 cache in this run, which other caches are
  /// compared to.
  double f32_tokens_per_second = NAN;
};

/// A cache case's figures against the machine's limits measured in the same run.
struct cache_figures {
  double seconds = NAN;
  double gflops = NAN, ratio_to_peak = NAN;  ///< FLOPs of the visible (query, key) pairs
  double gbps = NAN, ratio_to_triad = NAN;   ///< bytes of bench_case::bytes()
  double triad_gbps = NAN;                    ///< the triad the ratio is to
  double tokens_per_second = NAN;            ///< queries answered per second (decoding: sequences)
  double tokens_per_second_over_f32 = NAN;
  double compared_seconds = NAN;
  double paged_over_dense_time = NAN;      ///< compared with a dense cache of the same kv lengths
  double ragged_over_separate_time = NAN;  ///< compared with one dense call per sequence
  double pytorch_padded_seconds = NAN, speedup_vs_pytorch_padded = NAN;
};

cache_figures figures_of(const bench_case& c, const cache_times& times, const machine_limits& limits);

/// The KV element type as the issue names it: f32, f16, bf16, int8.
std::string kv_dtype_name(const bench_case& c);

/// The case's name with its KV element type where the description gives one: "decode_paged int8".
std::string cache_case_label(const bench_case& c);

/// The targets for `c`, each with its figure and whether it is met, as one line.
struct target_report {
  std::string line;
  int targets = 0;
  bool met = true;  ///< every target was measured and met
};
target_report targets_of(const bench_case& c, const cache_figures& f);

}  // namespace attngen::bench
