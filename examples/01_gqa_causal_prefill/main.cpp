// Runs the generated GQA causal prefill kernel, checks sampled rows against a float64 computation of
// the same attention, and prints the speed. Usage: gqa_causal_prefill [sequence_length] [batch]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "llama_prefill.hpp"

namespace {

using kernel = example::llama_prefill;
constexpr int H = kernel::description.num_heads;
constexpr int KVH = kernel::description.effective_kv_heads();
constexpr int D = kernel::description.qk_head_dim;

// One output row (b, i, h) in float64, straight from the definition of causal GQA attention.
std::vector<double> expected_row(const std::vector<float>& q, const std::vector<float>& k,
                                 const std::vector<float>& v, int L, int b, int i, int h) {
  const int g = h / (H / KVH);
  std::vector<double> scores(i + 1);
  double max_score = -INFINITY;
  for (int j = 0; j <= i; ++j) {
    double dot = 0;
    for (int x = 0; x < D; ++x)
      dot += double(q[((size_t(b) * L + i) * H + h) * D + x]) * k[((size_t(b) * L + j) * KVH + g) * D + x];
    scores[j] = dot / std::sqrt(double(D));
    max_score = std::max(max_score, scores[j]);
  }
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - max_score));
  std::vector<double> row(D, 0.0);
  for (int j = 0; j <= i; ++j)
    for (int x = 0; x < D; ++x) row[x] += scores[j] / sum * v[((size_t(b) * L + j) * KVH + g) * D + x];
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const int L = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int B = argc > 2 ? std::atoi(argv[2]) : 1;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(size_t(B) * L * H * D), k(size_t(B) * L * KVH * D), v(k.size()), out(q.size());
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = uniform(rng);

  attngen::attention_args args;
  args.q = attngen::make_tensor(q.data(), {B, L, H, D});
  args.k = attngen::make_tensor(k.data(), {B, L, KVH, D});
  args.v = attngen::make_tensor(v.data(), {B, L, KVH, D});
  args.output = attngen::make_tensor(out.data(), {B, L, H, D});

  if (attngen::status s = kernel::run(args); !s) {
    std::fprintf(stderr, "kernel failed: %s\n", s.message().c_str());
    return 1;
  }

  // Check 64 sampled rows, always including the first and last query.
  double max_error = 0;
  for (int n = 0; n < 64; ++n) {
    const int b = n % B, h = int(rng() % H);
    const int i = n == 0 ? 0 : n == 1 ? L - 1 : int(rng() % L);
    const auto row = expected_row(q, k, v, L, b, i, h);
    for (int x = 0; x < D; ++x)
      max_error = std::max(max_error, std::fabs(row[x] - out[((size_t(b) * L + i) * H + h) * D + x]));
  }
  const double tolerance = 1e-4;
  std::printf("checked 64 rows against float64: max abs error %.2e (tolerance %.0e)\n", max_error, tolerance);
  if (!(max_error <= tolerance)) {
    std::fprintf(stderr, "FAILED: error above tolerance\n");
    return 1;
  }

  std::vector<double> seconds;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (!kernel::run(args)) return 1;
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  // Causal attention does half the work of full attention: 2 matmuls of B*H*L*L*D FMAs, halved.
  const double flops = 4.0 * B * H * double(L) * L * D / 2;
  std::printf("%s: B=%d L=%d H=%d KVH=%d D=%d causal: median %.2f ms, %.1f GFLOP/s\n", "llama_prefill", B, L, H,
              KVH, D, seconds[2] * 1e3, flops / seconds[2] / 1e9);
  return 0;
}
