#include "codegen/matrix.hpp"

#include <catch2/catch.hpp>

#include "codegen/jit_runner.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

namespace attngen::testing {

void check_against_reference(const attention_desc& desc, const std::vector<int>& lengths,
                             const std::vector<int>& batches) {
  jit_kernel kernel(desc);
  std::uint32_t seed = 1;
  for (int batch : batches)
    for (int query_length : lengths)
      for (int key_length : lengths) {
        const auto problem = make_random_problem(desc, batch, query_length, key_length, seed++);
        const auto result = kernel.run(problem);
        const auto c = compare_with_reference(problem, reference_attention(problem), result.output, result.lse);
        INFO(problem.name() << ": max error " << c.max_output_error << " (tolerance " << c.output_tolerance
                            << ") " << c.first_failure);
        CHECK(c.ok);
      }
}

}  // namespace attngen::testing
