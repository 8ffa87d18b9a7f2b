// The module's backward pass (codegen/module_backward.hpp) through the JIT against PyTorch's autograd
// through torch.nn.functional.multi_head_attention_forward (float64): for every module configuration
// of the registry with backward sizes, the gradients of query, key, value and every weight, with
// dropout in training drawn as the kernel draws it.

#include <catch2/catch.hpp>

#include "module/jit_module_backward.hpp"
#include "module/module_compare.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"

namespace attngen::testing {
namespace {

void check_gradients(const module_configuration& c) {
  std::vector<module_problem> problems;
  std::uint32_t seed = 11;
  for (const shape& s : c.backward) {
    module_problem p = make_random_module_problem(c.desc, s.batch, s.query_length, s.key_length, seed++);
    p.training = c.desc.has_dropout();
    add_output_gradient(p, seed++);
    problems.push_back(std::move(p));
  }
  const std::vector<module_gradients> expected = pytorch_gradients(problems);
  jit_module_backward kernel(c.desc);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const module_problem& p = problems[n];
    INFO(p.name());
    const module_kernel_gradients got = kernel.run(p);
    CHECK(got.size() == expected[n].size());
    for (const auto& [name, reference] : expected[n]) {
      INFO(name);
      REQUIRE(got.count(name) == 1);
      std::string where;
      const double error = scaled_error(got.at(name), reference, where);
      INFO(where);
      CHECK(error <= module_gradient_tolerance_for(p));
    }
  }
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations)
    if (!c.backward.empty())
      register_test_case(title(c) + ": every gradient matches PyTorch's autograd through the JIT at " +
                             sizes_text(c.backward),
                         "[module][backward]", [&c] { check_gradients(c); });
  return true;
}();

}  // namespace
}  // namespace attngen::testing
