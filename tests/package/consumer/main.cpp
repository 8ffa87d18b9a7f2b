// Runs the consumer's kernel on random inputs and checks every output against float64 attention
// computed here from the definition, and the same call made from C through the C API against it.
// Prints the kernel's record (description, targets, version).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "sliding_gqa.hpp"

extern "C" int run_sliding_gqa_from_c(float* q, float* k, float* v, float* output, std::int64_t batch,
                                      std::int64_t length);

namespace {
constexpr int B = 2, L = 37, H = 4, KVH = 2, D = 32, window = 8;

std::size_t at(int b, int l, int heads, int h, int x) { return ((std::size_t(b) * L + l) * heads + h) * D + x; }
}  // namespace

int main() {
  std::puts(attngen::kernel_record<sliding_gqa>().c_str());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(std::size_t(B) * L * H * D), k(std::size_t(B) * L * KVH * D), v(k.size()), out(q.size());
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = uniform(rng);
  attngen::attention_args args;
  args.q = attngen::make_tensor(q.data(), {B, L, H, D});
  args.k = attngen::make_tensor(k.data(), {B, L, KVH, D});
  args.v = attngen::make_tensor(v.data(), {B, L, KVH, D});
  args.output = attngen::make_tensor(out.data(), {B, L, H, D});
  if (const attngen::status s = sliding_gqa::run(args); !s) {
    std::fprintf(stderr, "kernel failed: %s\n", s.message().c_str());
    return 1;
  }
  double worst = 0;
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < L; ++i)
      for (int h = 0; h < H; ++h) {
        const int g = h / (H / KVH);
        std::vector<double> weights;
        double largest = -INFINITY, sum = 0;
        for (int j = std::max(0, i - window); j <= i; ++j) {
          double dot = 0;
          for (int x = 0; x < D; ++x) dot += double(q[at(b, i, H, h, x)]) * k[at(b, j, KVH, g, x)];
          weights.push_back(dot / std::sqrt(double(D)));
          largest = std::max(largest, weights.back());
        }
        for (double& w : weights) sum += (w = std::exp(w - largest));
        for (int x = 0; x < D; ++x) {
          double expected = 0;
          for (int j = std::max(0, i - window), n = 0; j <= i; ++j, ++n) expected += weights[n] / sum * v[at(b, j, KVH, g, x)];
          worst = std::max(worst, std::fabs(expected - out[at(b, i, H, h, x)]));
        }
      }
  std::printf("max abs error against float64: %.2e\n", worst);
  std::vector<float> out_from_c(out.size());
  if (run_sliding_gqa_from_c(q.data(), k.data(), v.data(), out_from_c.data(), B, L) != 0) return 1;
  const bool same_from_c = out_from_c == out;
  std::printf("C API call gives the same output: %s\n", same_from_c ? "yes" : "no");
  return worst <= 1e-5 && same_from_c ? 0 : 1;
}
