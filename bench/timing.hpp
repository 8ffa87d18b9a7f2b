#pragma once
/// Median wall time of a call: one warm-up, then at least 3 calls and about a second in all.

#include <algorithm>
#include <chrono>
#include <vector>

namespace attngen::bench {

template <typename Call>
double median_seconds(Call call) {
  using clock = std::chrono::steady_clock;
  call(0);
  std::vector<double> seconds;
  double total = 0;
  for (int n = 1; n <= 100 && (seconds.size() < 3 || total < 1.0); ++n) {
    const auto start = clock::now();
    call(n);
    seconds.push_back(std::chrono::duration<double>(clock::now() - start).count());
    total += seconds.back();
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace attngen::bench
