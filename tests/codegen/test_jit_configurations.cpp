// Every configuration of the registry with a JIT matrix (support/configurations.hpp) matches the
// float64 reference in every kernel variant at awkward sizes, Lq != Lk included. Kernels are compiled
// through Halide's JIT from the same algorithm and CPU schedule as AOT builds; modifiers are checked
// against the reference's own interpreter of their graphs, not through Halide.
#include "codegen/matrix.hpp"
#include "support/configuration_tests.hpp"

namespace attngen::testing {
namespace {

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    for (const length_matrix& m : c.jit)
      register_test_case(title(c) + ": every kernel variant matches the float64 reference at " + sizes_text(m),
                         "[jit]" + std::string(c.tags) + (m.target.empty() ? "" : "[targets]"),
                         [&c, &m] { check_against_reference(c.desc, m); });
  return true;
}();

}  // namespace
}  // namespace attngen::testing
