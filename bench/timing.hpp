#pragma once
/// Median wall time of a call: one warm-up, then at least 3 calls and about a second in all, however
/// short the call (bench/peer_common.py times the Python peers the same way).

#include <algorithm>
#include <chrono>
#include <vector>

namespace attngen::bench {

// Enough calls for a second of the shortest case. At 100, mha_small's median came from 5 ms of calls,
// and the peers' from as little: oneDNN's read 9.8-38.8 GFLOP/s in 6 processes, over a second 12.1-13.5 in 5.
constexpr int most_timed_calls = 100000;

template <typename Call>
double median_seconds(Call call) {
  using clock = std::chrono::steady_clock;
  call(0);
  std::vector<double> seconds;
  double total = 0;
  for (int n = 1; n <= most_timed_calls && (seconds.size() < 3 || total < 1.0); ++n) {
    const auto start = clock::now();
    call(n);
    seconds.push_back(std::chrono::duration<double>(clock::now() - start).count());
    total += seconds.back();
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace attngen::bench
