// The module kernel against PyTorch's nn.MultiheadAttention (float64) through the same codegen as AOT
// builds (Halide's JIT): every module configuration of the registry with JIT calls
// (support/configurations.hpp), option by option and in combination, at awkward sizes.

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>

#include "module/jit_module.hpp"
#include "module/module_compare.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"
#include "support/tolerance.hpp"

namespace attngen::testing {
namespace {

// All `problems` share one description.
void check_against_pytorch(const std::vector<module_problem>& problems, kernel_variant variant) {
  const auto references = pytorch_references(problems);
  jit_module kernel(problems.front().desc, variant);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const module_problem& p = problems[n];
    const mha_desc& d = p.desc;
    INFO(p.name() << ", variant " << name_of(variant));
    const module_result result = kernel.run(p);
    const double tolerance = module_tolerance_for(p);
    std::string where;
    const double output_error = scaled_error(result.output, references[n].output, where);
    INFO("output " << where);
    CHECK(output_error <= tolerance);
    if (d.weights != weights_output::none) {
      const double weights_error = scaled_error(result.weights, references[n].weights, where);
      INFO("weights " << where);
      CHECK(weights_error <= tolerance);
    }
  }
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations)
    if (!c.jit.empty())
      register_test_case(title(c) + ": the module matches PyTorch through the JIT at " + sizes_text(c.jit) +
                             (c.jit_every_variant ? " in every kernel variant" : ""),
                         "[module][jit]", [&c] {
                           std::vector<module_problem> problems;
                           std::uint32_t seed = 1;
                           for (const shape& s : c.jit)
                             problems.push_back(
                                 make_random_module_problem(c.desc, s.batch, s.query_length, s.key_length, seed++));
                           const int variants = c.jit_every_variant ? kernel_variant_count : 1;
                           for (int v = 0; v < variants; ++v) check_against_pytorch(problems, kernel_variant(v));
                         });
  return true;
}();

}  // namespace

TEST_CASE("module query with every key masked outputs the output bias, where PyTorch 1.13 gives NaN") {
  const auto desc = detail::module_base.batch_first(true).key_padding_mask(mask_kind::boolean).need_weights(weights_output::per_head);
  module_problem p = make_random_module_problem(desc, 2, 3, 5, 11);
  auto& padding = p.inputs.at("key_padding").values;
  std::fill(padding.begin() + 5, padding.end(), 1.0f);  // batch 1: every key is padding
  const module_reference reference = pytorch_references({p}).front();
  jit_module kernel(desc);
  const module_result r = kernel.run(p);
  const auto& out_bias = p.inputs.at("out_bias").values;
  const int E = desc.embed;
  for (int i = 0; i < p.query_length; ++i)
    for (int c = 0; c < E; ++c) {
      const std::size_t n = (std::size_t(1) * p.query_length + i) * E + c;
      CHECK(std::isnan(reference.output[n]));
      CHECK(r.output[n] == out_bias[c]);
    }
  for (std::size_t n = std::size_t(desc.num_heads) * p.query_length * p.key_length; n < r.weights.size(); ++n) {
    CHECK(std::isnan(reference.weights[n]));
    CHECK(r.weights[n] == 0.0f);
  }
}

}  // namespace attngen::testing
