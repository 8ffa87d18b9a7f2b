// Every configuration of the registry with JIT batches (support/configurations.hpp): descriptions
// whose sequences differ in length (ragged queries, kv lengths, paged caches) match the float64
// reference on each sequence's own problem in every kernel variant, the kernel called once per
// sequence on the views the runtime cuts. Int8 caches are also held to the quantisation bound
// against the values before quantisation.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "codegen/jit_runner.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/sequence_batch.hpp"

namespace attngen::testing {
namespace {

std::vector<int> values_of(const short_list<int, 10>& list) { return {list.begin(), list.end()}; }

void check_sequences(const attention_desc& desc, const sequence_lengths& lengths) {
  const std::vector<int> queries = values_of(lengths.queries), keys = values_of(lengths.keys);
  for (int v = 0; v < kernel_variant_count; ++v) {
    jit_kernel kernel(desc, kernel_variant(v));
    sequence_batch batch = make_sequence_batch(desc, queries, keys, 17u + v);
    kernel.run(batch);
    const comparison c = compare_sequences_with_reference(batch);
    INFO(lengths_text(queries, keys) << " variant=" << name_of(kernel_variant(v)) << ": max error "
                                     << c.max_output_error << " " << c.first_failure);
    CHECK(c.ok);
    if (desc.effective_kv_element() == dtype::i8) {
      const comparison q = compare_sequences_with_unquantised(batch);
      INFO("against the values before quantisation: max error " << q.max_output_error << " " << q.first_failure);
      CHECK(q.ok);
    }
  }
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    for (const sequence_lengths& lengths : c.jit_batches)
      register_test_case(title(c) + ": every kernel variant matches the float64 reference per sequence at " +
                             lengths_text(values_of(lengths.queries), values_of(lengths.keys)),
                         "[jit]" + std::string(c.tags), [&c, &lengths] { check_sequences(c.desc, lengths); });
  return true;
}();

}  // namespace
}  // namespace attngen::testing
