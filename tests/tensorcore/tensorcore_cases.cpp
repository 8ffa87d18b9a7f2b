#include "tensorcore/tensorcore_cases.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/sequence_batch.hpp"

namespace attngen::testing {

namespace {

const compiled_tensorcore_variant* find_variant(const std::vector<compiled_tensorcore_variant>& runners,
                                                std::string_view configuration) {
  for (const compiled_tensorcore_variant& v : runners)
    if (v.configuration == configuration) return &v;
  return nullptr;
}

std::vector<int> values_of(const short_list<int, 10>& list) { return {list.begin(), list.end()}; }

// The configuration's batches in its KV-cache layouts, each sequence against its own problem, their
// keys split across `key_splits` blocks.
void check_batches(const operator_configuration& c, const compiled_tensorcore_variant& variant, int key_splits) {
  for (const sequence_lengths& lengths : c.tensorcore_batches) {
    const std::vector<int> queries = values_of(lengths.queries), keys = values_of(lengths.keys);
    sequence_batch batch = make_sequence_batch(c.desc, queries, keys, 23);
    variant.run_batch(batch, key_splits);
    const comparison check = compare_sequences_with_reference(batch, computed_by::tensor_cores);
    INFO(lengths_text(queries, keys) << ": max error " << check.max_output_error << " " << check.first_failure);
    CHECK(check.ok);
  }
}

}  // namespace

bool register_tensorcore_cases(const std::vector<compiled_tensorcore_variant>& runners, const char* where) {
  for (const operator_configuration& c : operator_configurations) {
    // Splits of 3 leave some blocks of short sequences no keys; 7 take one tile each of 300 keys.
    for (const int key_splits : {1, 3, 7}) {
      if (c.tensorcore_batches.empty()) continue;
      const std::string split_text =
          key_splits == 1 ? "" : " with its keys split across " + std::to_string(key_splits) + " blocks and merged";
      register_test_case(title(c) + ": tensor-core tile code " + where + " matches the reference on its batches" +
                             split_text,
                         "[tensorcore][kv_cache]" + std::string(c.tags), [&c, &runners, key_splits] {
                           const compiled_tensorcore_variant* variant = find_variant(runners, c.name);
                           if (variant == nullptr)
                             FAIL("tests/CMakeLists.txt generates no tensor-core variant for " << c.name);
                           check_batches(c, *variant, key_splits);
                         });
    }
    if (!c.tensorcore.empty())
      register_test_case(title(c) + ": tensor-core tile code " + where + " matches the reference",
                         "[tensorcore]" + std::string(c.tags), [&c, &runners] {
                           const compiled_tensorcore_variant* variant = find_variant(runners, c.name);
                           if (variant == nullptr)
                             FAIL("tests/CMakeLists.txt generates no tensor-core variant for " << c.name);
                           for (const shape& s : c.tensorcore) {
                             const attention_problem p =
                                 make_random_problem(c.desc, s.batch, s.query_length, s.key_length, 5);
                             const tensorcore_result result = variant->run(p);
                             const comparison check = compare_with_reference(
                                 p, reference_attention(p), result.output, result.lse, 0, computed_by::tensor_cores);
                             INFO(p.name() << ": " << check.first_failure);
                             CHECK(check.ok);
                           }
                         });
  }
  return true;
}

}  // namespace attngen::testing
