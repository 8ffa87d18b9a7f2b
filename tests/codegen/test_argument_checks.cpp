// Which of Halide's checks the code that the runtime calls keeps (codegen/argument_checks.hpp): the
// checks the runtime's validation makes go; those of bounds and allocations stay; the JIT keeps all.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/argument_checks.hpp"
#include "codegen/lowered_kernel.hpp"

using namespace attngen;
using namespace attngen::codegen;

namespace {

const std::set<std::string> checks_made_by_runtime = {
    "halide_error_buffer_argument_is_null", "halide_error_bad_type",
    "halide_error_bad_dimensions",          "halide_error_buffer_extents_negative",
    "halide_error_buffer_extents_too_large", "halide_error_constraint_violated",
    "halide_error_host_is_null",            "halide_error_device_dirty_with_no_device_support"};

// The Halide runtime functions that the lowered checks of a kernel report through.
std::set<std::string> reported_errors(const attention_desc& desc, bool called_by_runtime) {
  const Halide::Module module = testing::lowered_kernel(desc, kernel_variant::general, [&](Halide::Pipeline& pipeline) {
    if (called_by_runtime) leave_argument_checks_to_runtime(pipeline);
  });
  struct check_collector : Halide::Internal::IRVisitor {
    std::set<std::string> reports;
    using IRVisitor::visit;
    void visit(const Halide::Internal::AssertStmt* check) override {
      if (const auto* report = check->message.as<Halide::Internal::Call>()) reports.insert(report->name);
      IRVisitor::visit(check);
    }
  } collector;
  testing::visit_code(module, collector);
  return collector.reports;
}

const attention_desc gqa_with_every_input =
    attention().heads(8).kv_heads(2).head_dim(32).causal(top_left).additive_mask(mask_shape::b_h_lq_lk)
        .key_padding_mask(true_means_ignore).return_lse();

}  // namespace

TEST_CASE("argument checks: kernels the runtime calls (GQA 8/2 D32, mask, padding, LSE) drop the checks it makes",
          "[argument_checks]") {
  const std::set<std::string> reports = reported_errors(gqa_with_every_input, true);
  for (const std::string& check : checks_made_by_runtime) {
    INFO(check);
    CHECK(reports.count(check) == 0);
  }
}

TEST_CASE("argument checks: kernels the runtime calls (GQA 8/2 D32, mask, padding, LSE) keep bounds and allocation checks",
          "[argument_checks]") {
  const std::set<std::string> reports = reported_errors(gqa_with_every_input, true);
  CHECK(reports.count("halide_error_access_out_of_bounds") == 1);
  CHECK(reports.count("halide_error_buffer_allocation_too_large") == 1);
}

TEST_CASE("argument checks: JIT kernels (GQA 8/2 D32, mask, padding, LSE) keep every check", "[argument_checks]") {
  const std::set<std::string> reports = reported_errors(gqa_with_every_input, false);
  for (const std::string& check : {"halide_error_buffer_argument_is_null", "halide_error_bad_type",
                                   "halide_error_bad_dimensions", "halide_error_buffer_extents_too_large",
                                   "halide_error_constraint_violated", "halide_error_access_out_of_bounds"}) {
    INFO(check);
    CHECK(reports.count(check) == 1);
  }
}
