// The tensor-core path's generated variants (attngen tensorcore) run by the tile code on the host model
// of the warp, against the float64 reference: each configuration of the registry with tensor-core
// calls (support/configurations.hpp), at those calls. The fragment layouts, ldmatrix addressing, the
// online softmax, GQA row slots, causal tile skipping, masks, padding and the modifiers' lowering are
// all exercised; only the instructions themselves are left to a GPU.
#include <catch2/catch.hpp>

#include "compiled_tensorcore_variants.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

const compiled_tensorcore_variant* find_variant(std::string_view configuration) {
  for (const compiled_tensorcore_variant& v : compiled_tensorcore_variants)
    if (v.configuration == configuration) return &v;
  return nullptr;
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.tensorcore.empty())
      register_test_case(title(c) + ": tensor-core tile code matches the reference", "[tensorcore]" + std::string(c.tags),
                         [&c] {
                           const compiled_tensorcore_variant* variant = find_variant(c.name);
                           if (variant == nullptr) FAIL("tests/CMakeLists.txt generates no tensor-core variant for " << c.name);
                           for (const shape& s : c.tensorcore) {
                             const attention_problem p =
                                 make_random_problem(c.desc, s.batch, s.query_length, s.key_length, 5);
                             const tensorcore_result result = variant->run(p);
                             const comparison check =
                                 compare_with_reference(p, reference_attention(p), result.output, result.lse);
                             INFO(p.name() << ": " << check.first_failure);
                             CHECK(check.ok);
                           }
                         });
  return true;
}();

}  // namespace

TEST_CASE("every tensor-core variant of the suite belongs to a configuration with tensor-core calls",
          "[tensorcore]") {
  for (const compiled_tensorcore_variant& v : compiled_tensorcore_variants) {
    INFO(v.configuration);
    const operator_configuration* c = operator_configuration_named(v.configuration);
    REQUIRE(c != nullptr);
    CHECK(!c->tensorcore.empty());
  }
}
