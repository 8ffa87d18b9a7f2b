// The module's backward pass (codegen/module_backward.hpp) through the JIT against PyTorch's autograd
// through torch.nn.functional.multi_head_attention_forward (float64): for every module configuration
// of the registry with backward sizes, the gradients of query, key, value and every weight, with
// dropout in training drawn as the kernel draws it.

#include <catch2/catch.hpp>

#include "module/jit_module_backward.hpp"
#include "module/module_backward_check.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"

namespace attngen::testing {
namespace {

void check_gradients(const module_configuration& c) {
  const std::vector<module_problem> problems =
      make_module_backward_problems(c.desc, {c.backward.begin(), c.backward.end()}, 11);
  const std::vector<module_gradients> expected = pytorch_gradients(problems);
  jit_module_backward kernel(c.desc);
  for (std::size_t n = 0; n < problems.size(); ++n) check_module_gradients(problems[n], kernel.run(problems[n]), expected[n]);
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
