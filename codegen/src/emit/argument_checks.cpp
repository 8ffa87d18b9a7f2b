#include "attngen/codegen/argument_checks.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace attngen::codegen {

namespace {

using namespace Halide::Internal;

// The Halide runtime functions that report a bad buffer argument, each a check the runtime's
// validation makes before the call (runtime/src/tensor_checks.cpp, validate.cpp).
constexpr std::array<std::string_view, 8> checks_made_by_runtime = {
    "halide_error_buffer_argument_is_null",  // every argument is a buffer the runtime builds
    "halide_error_bad_type",                 // built from the description's element type
    "halide_error_bad_dimensions",           // and its rank
    "halide_error_buffer_extents_negative",  // shapes are validated against the description
    "halide_error_buffer_extents_too_large", // at most 2^31 elements spanned
    "halide_error_constraint_violated",      // innermost stride 1; extents the description fixes
    "halide_error_host_is_null",             // a null pointer only for a tensor with no elements
    "halide_error_device_dirty_with_no_device_support",  // device tensors are copied or run on device
};

bool made_by_runtime(const AssertStmt* check) {
  const Call* report = check->message.as<Call>();
  return report && std::find(checks_made_by_runtime.begin(), checks_made_by_runtime.end(), report->name) !=
                       checks_made_by_runtime.end();
}

// Runs after Halide's last lowering pass, so the checks still served bounds inference and the
// simplifier; only their code goes.
class drop_checks_made_by_runtime : public IRMutator {
  using IRMutator::visit;
  Stmt visit(const AssertStmt* check) override { return made_by_runtime(check) ? Evaluate::make(0) : check; }
};

}  // namespace

void leave_argument_checks_to_runtime(Halide::Pipeline& pipeline) {
  pipeline.add_custom_lowering_pass(new drop_checks_made_by_runtime);
}

}  // namespace attngen::codegen
