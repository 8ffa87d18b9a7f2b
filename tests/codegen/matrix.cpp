#include "codegen/matrix.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "codegen/jit_runner.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

namespace attngen::testing {

void check_against_reference(const attention_desc& desc, const length_matrix& matrix) {
  const std::string target(matrix.target), finer_target(matrix.finer_target);
  std::vector<std::unique_ptr<jit_kernel>> variants;
  for (int v = 0; v < kernel_variant_count; ++v)
    variants.push_back(
        std::make_unique<jit_kernel>(desc, kernel_variant(v), target, finer_target, matrix.bf16_dot_products));
  std::uint32_t seed = 1;
  for (int batch : matrix.batches)
    for (int query_length : matrix.lengths)
      for (int key_length : matrix.lengths) {
        const auto problem = make_random_problem(desc, batch, query_length, key_length, seed++);
        const auto expected = reference_attention(problem);
        for (int v = 0; v < kernel_variant_count; ++v) {
          const auto result = variants[v]->run(problem);
          const auto c = compare_with_reference(problem, expected, result.output, result.lse);
          INFO(problem.name() << " target=" << (target.empty() ? "best" : target)
                              << " variant=" << name_of(kernel_variant(v)) << ": max error " << c.max_output_error
                              << " (tolerance " << c.output_tolerance << ") " << c.first_failure);
          CHECK(c.ok);
        }
      }
}

}  // namespace attngen::testing
