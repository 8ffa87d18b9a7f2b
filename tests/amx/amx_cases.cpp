#include "amx/amx_cases.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "attngen/amx/eligibility.hpp"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"

namespace attngen::testing {

namespace {

const compiled_tensorcore_variant* find_variant(const std::vector<compiled_tensorcore_variant>& runners,
                                                std::string_view configuration) {
  for (const compiled_tensorcore_variant& v : runners)
    if (v.configuration == configuration && v.run != nullptr) return &v;
  return nullptr;
}

}  // namespace

bool register_amx_cases(const std::vector<compiled_tensorcore_variant>& runners, const char* where, bool needs_amx) {
  for (const operator_configuration& c : operator_configurations)
    if (!c.tensorcore.empty() && amx::refusal(c.desc) == nullptr)
      register_test_case(title(c) + ": AMX tile code " + where + " matches the reference", "[amx]" + std::string(c.tags),
                         [&c, &runners, needs_amx] {
                           if (needs_amx && !attngen::detail::runs_amx_path(attngen::detail::this_cpu())) {
                             WARN("this CPU has no AMX-BF16 (or the OS does not grant it): nothing to run here");
                             return;
                           }
                           const compiled_tensorcore_variant* variant = find_variant(runners, c.name);
                           if (variant == nullptr)
                             FAIL("tests/CMakeLists.txt gives amx_tests no variant of " << c.name);
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
}

}  // namespace attngen::testing
