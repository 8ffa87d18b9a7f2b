// The tensor-core path's generated variants (attngen tensorcore) run by the tile code on the host model
// of the warp, against the float64 reference: the fragment layouts, ldmatrix addressing, the online
// softmax, GQA row slots, causal tile skipping, masks, padding and the modifiers' lowering, without a
// GPU; and again with the parameters the runtime builds for a call on CUDA device tensors, batches in
// KV-cache layouts (ragged queries, kv lengths, paged caches) included.
// tensorcore_cuda_tests runs the same cases on a CUDA device.
#include <catch2/catch.hpp>

#include "compiled_tensorcore_variants.hpp"
#include "support/configurations.hpp"
#include "tensorcore/tensorcore_cases.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {
const bool registered = register_tensorcore_cases(compiled_tensorcore_variants(), "on the host model") &&
                        register_tensorcore_cases(compiled_tensorcore_launches(), "launched by the runtime");
}  // namespace

TEST_CASE("every tensor-core variant of the suite belongs to a configuration with tensor-core calls",
          "[tensorcore]") {
  for (const compiled_tensorcore_variant& v : compiled_tensorcore_variants()) {
    INFO(v.configuration);
    const operator_configuration* c = operator_configuration_named(v.configuration);
    REQUIRE(c != nullptr);
    CHECK((!c->tensorcore.empty() || !c->tensorcore_batches.empty()));
  }
}
