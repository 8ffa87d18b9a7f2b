// Dropout on the attention weights in training calls: reproducible from the seed, decided by the
// documented hash (so independent of schedule and threads), keeping a fraction 1 - p, and applied
// to the same weights that multiply V.

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>

#include "module/jit_module.hpp"
#include "support/tolerance.hpp"

namespace attngen::testing {
namespace {

constexpr auto with_dropout = multihead_attention()
                                  .embed_dim(32)
                                  .heads(4)
                                  .kv_heads(2)
                                  .batch_first(true)
                                  .dropout(0.25f)
                                  .need_weights(weights_output::per_head);

module_problem training_problem(const mha_desc& desc, int batch, int length, std::uint64_t seed) {
  module_problem p = make_random_module_problem(desc, batch, length, length, 7);
  p.training = true;
  p.seed = seed;
  return p;
}

std::size_t weight_index(const module_problem& p, int b, int h, int i, int column) {
  const int columns = p.key_length + p.desc.extra_keys();
  return ((std::size_t(b) * p.desc.num_heads + h) * p.query_length + i) * columns + column;
}

}  // namespace

TEST_CASE("dropout with the same seed gives bitwise the same output and weights, and another seed differs, p 0.25") {
  jit_module kernel(with_dropout);
  const module_result first = kernel.run(training_problem(with_dropout, 2, 19, 1234));
  const module_result again = kernel.run(training_problem(with_dropout, 2, 19, 1234));
  const module_result other = kernel.run(training_problem(with_dropout, 2, 19, 1235));
  CHECK(first.output == again.output);
  CHECK(first.weights == again.weights);
  CHECK(first.weights != other.weights);
}

TEST_CASE("dropout drops exactly the weights whose documented hash is below the threshold, in every variant") {
  const module_problem trained = training_problem(with_dropout, 2, 19, 99);
  module_problem inference = trained;
  inference.training = false;
  const std::uint32_t threshold = dropout_threshold(with_dropout.dropout_p);
  for (int v = 0; v < kernel_variant_count; ++v) {
    INFO("variant " << name_of(kernel_variant(v)));
    jit_module kernel(with_dropout, kernel_variant(v));
    const module_result dropped = kernel.run(trained);
    const module_result kept_all = kernel.run(inference);
    int mismatches = 0;
    for (int b = 0; b < trained.batch; ++b)
      for (int h = 0; h < with_dropout.num_heads; ++h)
        for (int i = 0; i < trained.query_length; ++i)
          for (int column = 0; column < trained.key_length; ++column) {
            const std::size_t n = weight_index(trained, b, h, i, column);
            const bool kept = dropout_bits(trained.seed, b, h, i, column, with_dropout.num_heads) >= threshold;
            const float expected = kept ? kept_all.weights[n] / (1.0f - with_dropout.dropout_p) : 0.0f;
            if (std::fabs(dropped.weights[n] - expected) > 1e-6f * std::max(1.0f, std::fabs(expected))) ++mismatches;
          }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("dropout keeps a fraction 1 - p of the weights, within 5 standard deviations, p 0.1 and 0.5") {
  for (float p : {0.1f, 0.5f}) {
    const auto desc = with_dropout.dropout(p);
    jit_module kernel(desc);
    const module_problem problem = training_problem(desc, 2, 64, 2024);
    const module_result r = kernel.run(problem);
    const double total = double(r.weights.size());
    const double kept = double(std::count_if(r.weights.begin(), r.weights.end(), [](float w) { return w != 0.0f; }));
    const double sigma = std::sqrt(total * p * (1.0 - p));
    INFO("p " << p << ": kept " << kept << " of " << total);
    CHECK(std::fabs(kept - total * (1.0 - p)) <= 5.0 * sigma);
  }
}

TEST_CASE("dropout's output is its returned weights times the projected values, then projected, float64") {
  const module_problem p = training_problem(with_dropout, 2, 13, 5);
  jit_module kernel(with_dropout);
  const module_result r = kernel.run(p);
  const int E = with_dropout.embed, hd = with_dropout.head_dim(), KVE = with_dropout.kv_embed();
  const int group = with_dropout.num_heads / with_dropout.effective_kv_heads();
  const int L = p.query_length, S = p.key_length;
  const auto& value = p.inputs.at("value").values;
  const auto& v_weight = p.inputs.at("v_weight").values;
  const auto& v_bias = p.inputs.at("v_bias").values;
  const auto& out_weight = p.inputs.at("out_weight").values;
  const auto& out_bias = p.inputs.at("out_bias").values;
  std::vector<double> reference;
  for (int b = 0; b < p.batch; ++b) {
    std::vector<double> projected(std::size_t(S) * KVE);
    for (int s = 0; s < S; ++s)
      for (int n = 0; n < KVE; ++n) {
        double sum = v_bias[n];
        for (int c = 0; c < E; ++c) sum += double(value[(std::size_t(b) * S + s) * E + c]) * v_weight[std::size_t(n) * E + c];
        projected[std::size_t(s) * KVE + n] = sum;
      }
    for (int i = 0; i < L; ++i) {
      std::vector<double> attended(E, 0.0);
      for (int h = 0; h < with_dropout.num_heads; ++h)
        for (int s = 0; s < S; ++s)
          for (int e = 0; e < hd; ++e)
            attended[std::size_t(h) * hd + e] +=
                double(r.weights[weight_index(p, b, h, i, s)]) * projected[std::size_t(s) * KVE + (h / group) * hd + e];
      for (int n = 0; n < E; ++n) {
        double sum = out_bias[n];
        for (int c = 0; c < E; ++c) sum += attended[c] * out_weight[std::size_t(n) * E + c];
        reference.push_back(sum);
      }
    }
  }
  double largest = 1.0, worst = 0.0;
  for (std::size_t n = 0; n < reference.size(); ++n) {
    largest = std::max(largest, std::fabs(reference[n]));
    worst = std::max(worst, std::fabs(reference[n] - r.output[n]));
  }
  CHECK(worst / largest <= module_tolerance(dtype::f32, E, hd, S, E));
}

}  // namespace attngen::testing
