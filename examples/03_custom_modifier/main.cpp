// Runs the generated event-attention kernel (a user-written score and mask modifier), checks sampled
// rows against a float64 computation of the same definition, and prints the speed.
// Usage: custom_modifier [events] [batch]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "event_attention.hpp"  // generated: the kernel
#include "kernels.hpp"          // the description, for its horizon

namespace {

using kernel = example::event_attention;
constexpr int H = kernel::description.num_heads;
constexpr int KVH = kernel::description.effective_kv_heads();
constexpr int D = kernel::description.qk_head_dim;

// One output row (b, i, h) in float64, straight from the definition in kernels.hpp.
std::vector<double> expected_row(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                 const std::vector<float>& time, double decay, int L, int b, int i, int h) {
  const int g = h / (H / KVH);
  std::vector<double> scores(L, -INFINITY);
  double max_score = -INFINITY;
  for (int j = 0; j < L; ++j) {
    const double elapsed = double(time[size_t(b) * L + i]) - double(time[size_t(b) * L + j]);
    if (elapsed < 0 || elapsed > example::horizon) continue;
    double dot = 0;
    for (int x = 0; x < D; ++x)
      dot += double(q[((size_t(b) * L + i) * H + h) * D + x]) * k[((size_t(b) * L + j) * KVH + g) * D + x];
    scores[j] = dot / std::sqrt(double(D)) - decay * elapsed;
    max_score = std::max(max_score, scores[j]);
  }
  std::vector<double> row(D, 0.0);
  if (max_score == -INFINITY) return row;  // no visible event: 0, as documented
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - max_score));
  for (int j = 0; j < L; ++j)
    for (int x = 0; x < D; ++x) row[x] += scores[j] / sum * v[((size_t(b) * L + j) * KVH + g) * D + x];
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const int L = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int B = argc > 2 ? std::atoi(argv[2]) : 2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::exponential_distribution<float> gap(1.0f);
  std::vector<float> q(size_t(B) * L * H * D), k(size_t(B) * L * KVH * D), v(k.size()), out(q.size());
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = uniform(rng);
  // Irregular, increasing timestamps: on average one event per unit of time.
  std::vector<float> time(size_t(B) * L);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < L; ++i) time[size_t(b) * L + i] = (i == 0 ? 0.0f : time[size_t(b) * L + i - 1]) + gap(rng);
  const float decay = 0.05f;

  attngen::attention_args args;
  args.q = attngen::make_tensor(q.data(), {B, L, H, D});
  args.k = attngen::make_tensor(k.data(), {B, L, KVH, D});
  args.v = attngen::make_tensor(v.data(), {B, L, KVH, D});
  args.output = attngen::make_tensor(out.data(), {B, L, H, D});
  args.captures[0] = attngen::make_tensor(time.data(), {B, L});
  args.scalars[0] = decay;

  if (attngen::status s = kernel::run(args); !s) {
    std::fprintf(stderr, "kernel failed: %s\n", s.message().c_str());
    return 1;
  }

  double max_error = 0;
  for (int n = 0; n < 64; ++n) {
    const int b = n % B, h = int(rng() % H);
    const int i = n == 0 ? 0 : n == 1 ? L - 1 : int(rng() % L);
    const auto row = expected_row(q, k, v, time, decay, L, b, i, h);
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
  std::printf("event_attention: B=%d L=%d H=%d KVH=%d D=%d, horizon %.0f: median %.2f ms\n", B, L, H, KVH, D,
              double(example::horizon), seconds[2] * 1e3);
  return 0;
}
