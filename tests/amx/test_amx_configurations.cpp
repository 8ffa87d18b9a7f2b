// The AMX path's tile code (attngen/amx/flash_forward.hpp) run with the tests' generated variants
// against the float64 reference: on emulated tiles, so the packing of q, K and V into tiles, the
// transposed scores, the online softmax a row per lane, causal block skipping, masks, padding, sinks
// and the modifiers are checked on any CPU; and on this CPU's AMX tiles where it has them. Each
// problem runs in tasks of one row group and of the most, alike to the bit.
#include <catch2/catch.hpp>

#include "amx/amx_cases.hpp"
#include "attngen/amx/eligibility.hpp"
#include "compiled_amx_variants.hpp"
#include "support/configurations.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {
const bool registered = register_amx_cases(compiled_amx_variants, "on emulated tiles", false) &&
                        register_amx_cases(compiled_amx_hardware_variants, "on this CPU's AMX tiles", true);
}  // namespace

TEST_CASE("every configuration with tensor-core calls that the AMX path takes has an AMX runner", "[amx]") {
  int taken = 0;
  for (const compiled_tensorcore_variant& v : compiled_amx_variants) {
    INFO(v.configuration);
    const operator_configuration* c = operator_configuration_named(v.configuration);
    REQUIRE(c != nullptr);
    CHECK((v.run != nullptr) == (amx::refusal(c->desc) == nullptr));
    taken += v.run != nullptr;
  }
  CHECK(taken >= 5);
}
