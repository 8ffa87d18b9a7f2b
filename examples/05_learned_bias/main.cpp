// Learns a relative-position bias table by plain gradient descent: a target output is made with a
// known table, then a table starting at zero is fitted so that the kernel's output matches it, with
// the gradient of the loss 0.5 |output - target|^2 from the generated backward pass. Prints the loss
// falling and the recovered table's error; exits non-zero if the table is not recovered.
//
// What the output can tell: causal queries see keys at distances -8..0 only (entries 0..8; the
// others get no gradient), and a softmax ignores a constant added to all of a row's scores, so each
// head's entries are recovered up to a constant: they are compared after subtracting each head's mean.
// Usage: learned_bias_sgd [steps] [sequence length]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels.hpp"       // the description, for the table's shape
#include "learned_bias.hpp"  // generated: run and backward

namespace {

using kernel = example::learned_bias;
constexpr int H = kernel::description.num_heads;
constexpr int KVH = kernel::description.effective_kv_heads();
constexpr int D = kernel::description.qk_head_dim;
constexpr int W = 2 * example::max_distance + 1;

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  const int L = argc > 2 ? std::atoi(argv[2]) : 64;
  const int B = 2;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(size_t(B) * L * H * D), k(size_t(B) * L * KVH * D), v(k.size());
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = uniform(rng);
  // The table to recover: each head prefers its own distance behind the query (entry 8 is distance 0).
  std::vector<float> true_table(H * W, 0.0f), table(H * W, 0.0f), d_table(H * W);
  constexpr int visible = example::max_distance + 1;
  for (int h = 0; h < H; ++h)
    for (int w = 0; w < visible; ++w)
      true_table[h * W + w] = 2.0f * std::exp(-0.5f * float((w - 8 + 2 * h) * (w - 8 + 2 * h)));

  std::vector<float> target(q.size()), output(q.size()), lse(size_t(B) * H * L), d_output(q.size());
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  auto forward = [&](std::vector<float>& table_values, std::vector<float>& out) {
    const attngen::status s = kernel::run(
        attngen::make_tensor(q.data(), {B, L, H, D}), attngen::make_tensor(k.data(), {B, L, KVH, D}),
        attngen::make_tensor(v.data(), {B, L, KVH, D}), attngen::make_tensor(table_values.data(), {H, W}),
        attngen::make_tensor(out.data(), {B, L, H, D}), attngen::make_tensor(lse.data(), {B, H, L}));
    if (!s) std::fprintf(stderr, "forward: %s\n", s.message().c_str());
    return s.ok();
  };
  if (!forward(true_table, target)) return 1;

  const float learning_rate = 0.02f;  // the gradient sums over every score of every row
  double first_loss = 0, loss = 0;
  for (int step = 0; step <= steps; ++step) {
    if (!forward(table, output)) return 1;
    loss = 0;
    for (size_t n = 0; n < output.size(); ++n) {
      d_output[n] = output[n] - target[n];
      loss += 0.5 * double(d_output[n]) * d_output[n];
    }
    if (step == 0) first_loss = loss;
    if (step % (steps / 6 > 0 ? steps / 6 : 1) == 0) std::printf("step %4d  loss %.3e\n", step, loss);
    if (step == steps) break;
    const attngen::status s = kernel::backward(
        attngen::make_tensor(q.data(), {B, L, H, D}), attngen::make_tensor(k.data(), {B, L, KVH, D}),
        attngen::make_tensor(v.data(), {B, L, KVH, D}), attngen::make_tensor(table.data(), {H, W}),
        attngen::make_tensor(output.data(), {B, L, H, D}), attngen::make_tensor(lse.data(), {B, H, L}),
        attngen::make_tensor(d_output.data(), {B, L, H, D}), attngen::make_tensor(dq.data(), {B, L, H, D}),
        attngen::make_tensor(dk.data(), {B, L, KVH, D}), attngen::make_tensor(dv.data(), {B, L, KVH, D}),
        attngen::make_tensor(d_table.data(), {H, W}));
    if (!s) {
      std::fprintf(stderr, "backward: %s\n", s.message().c_str());
      return 1;
    }
    for (int n = 0; n < H * W; ++n) table[n] -= learning_rate * d_table[n];
  }
  double error = 0;
  for (int h = 0; h < H; ++h) {
    double learned_mean = 0, true_mean = 0;
    for (int w = 0; w < visible; ++w) {
      learned_mean += table[h * W + w] / visible;
      true_mean += true_table[h * W + w] / visible;
    }
    for (int w = 0; w < visible; ++w)
      error = std::max(error, std::fabs((table[h * W + w] - learned_mean) - (true_table[h * W + w] - true_mean)));
  }
  std::printf("loss %.3e -> %.3e; largest error of the visible entries, up to each head's constant: %.4f "
              "(values up to 2)\n",
              first_loss, loss, error);
  const bool learned = loss < 1e-3 * first_loss && error < 0.1;
  std::printf("%s\n", learned ? "OK: the bias table is recovered" : "FAILED: the table was not recovered");
  return learned ? 0 : 1;
}
