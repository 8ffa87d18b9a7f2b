// The argument schema (attngen/arguments.hpp) is the one list the pipeline and the generated
// wrapper read: for every description kind, the generated function's parameters, the wrapper's
// buffers and its typed call's parameters are the schema's arguments, in its order.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "Halide.h"
#include "attngen/arguments.hpp"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/backward.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/wrapper.hpp"
#include "tests/codegen/typed_call_text.hpp"
#include "tests/support/description_kinds.hpp"

using namespace attngen;

namespace {

// The schema's names as the pipeline names its parameters and the typed call its parameters.
std::vector<std::string> schema_names(const attention_desc& desc, bool as_pipeline, bool with_outputs) {
  std::vector<std::string> names;
  for (const kernel_argument& argument : kernel_arguments(desc)) {
    if (argument.is_output() && !with_outputs) continue;
    if (argument.slot == argument_slot::scalars && !as_pipeline) {
      for (int s = 0; s < desc.captures.scalar_count; ++s) names.emplace_back(desc.captures.scalars[s].view());
      continue;
    }
    const std::string prefix = as_pipeline && argument.slot == argument_slot::capture ? "capture_" : "";
    names.push_back(prefix + std::string(argument.name));
  }
  return names;
}

// The backward schema's names as the backward pipeline names its parameters (captures prefixed)
// or the typed backward call its parameters (the captured scalars by name), inputs or all.
std::vector<std::string> backward_schema_names(const attention_desc& desc, bool as_pipeline, bool with_outputs) {
  std::vector<std::string> names;
  for (const backward_argument& argument : backward_arguments(desc)) {
    if (argument.is_output() && !with_outputs) continue;
    if (argument.slot == backward_slot::scalars && !as_pipeline) {
      for (int s = 0; s < desc.captures.scalar_count; ++s) names.emplace_back(desc.captures.scalars[s].view());
      continue;
    }
    if (argument.slot == backward_slot::d_capture) {
      names.push_back("d_" + std::string(desc.captures.tensors[argument.index].name.view()));
      continue;
    }
    const std::string prefix = as_pipeline && argument.slot == backward_slot::capture ? "capture_" : "";
    names.push_back(prefix + std::string(argument.name));
  }
  return names;
}

// Each description kind with a backward pass (and the log-sum-exp it reads) and sinks.
attention_desc with_backward(const attention_desc& desc) { return desc.attention_sinks().return_lse().with_backward(); }

}  // namespace

TEST_CASE("schema: every description kind's backward pipeline takes the backward schema's inputs and writes its "
          "gradients",
          "[codegen][schema][backward]") {
  for (const auto& kind : testing::description_kinds()) {
    INFO(kind.name);
    const attention_desc desc = with_backward(kind.desc);
    codegen::backward_algorithm b = codegen::define_attention_backward(desc, codegen::backward_blocking{});
    std::vector<std::string> inputs;
    for (const Halide::Argument& argument : b.arguments()) inputs.push_back(argument.name);
    CHECK(inputs == backward_schema_names(desc, true, false));
    std::vector<std::string> outputs;
    // (Halide makes a Func's name unique in the process with a `$n` suffix.)
    for (const Halide::Func& output : b.outputs()) outputs.push_back(output.name().substr(0, output.name().find('$')));
    std::vector<std::string> expected_outputs = backward_schema_names(desc, true, true);
    expected_outputs.erase(expected_outputs.begin(), expected_outputs.end() - std::ptrdiff_t(outputs.size()));
    CHECK(outputs == expected_outputs);
    CHECK(int(outputs.size()) == backward_arguments(desc).size() - backward_arguments(desc).first_output());
  }
}

TEST_CASE("schema: every description kind's wrapper types its backward call by the backward schema",
          "[codegen][schema][backward]") {
  for (const auto& kind : testing::description_kinds()) {
    INFO(kind.name);
    const attention_desc desc = with_backward(kind.desc);
    const bool takes_table = codegen::needs_visibility_table(desc);
    const std::vector<std::vector<codegen::visibility_grid>> tiles(
        takes_table ? kernel_variant_count : 0, std::vector<codegen::visibility_grid>{{16, 64}});
    const codegen::wrapper_sources wrapper = codegen::emit_wrapper("kernel", "", desc, 16, tiles, {"x86-64-linux"}, {});
    const auto start = wrapper.source.find("return kernel_halide_backward(");
    REQUIRE(start != std::string::npos);
    const std::string call = wrapper.source.substr(start, wrapper.source.find(';', start) - start);
    CHECK(int(std::count(call.begin(), call.end(), '[')) == backward_arguments(desc).size());
    CHECK(testing::typed_parameters(wrapper.header, "backward") == backward_schema_names(desc, false, true));
  }
}

TEST_CASE("schema: every description kind's pipeline takes the schema's inputs and writes its outputs",
          "[codegen][schema]") {
  const Halide::Target target("x86-64-linux-avx2-fma-f16c-user_context-no_runtime-no_bounds_query");
  for (const auto& kind : testing::description_kinds()) {
    INFO(kind.name);
    const codegen::blocking tiles = codegen::cpu_variant_blocking(kind.desc, target, kernel_variant::general);
    codegen::attention_algorithm a = codegen::define_attention(kind.desc, tiles);
    std::vector<std::string> inputs;
    for (const Halide::Argument& argument : a.arguments()) inputs.push_back(argument.name);
    std::vector<std::string> expected = schema_names(kind.desc, true, false);
    if (a.visibility_table.defined()) expected.push_back("visibility_table");
    CHECK(inputs == expected);
    int output_buffers = 0;
    for (const Halide::Func& output : a.outputs()) output_buffers += int(output.output_buffers().size());
    const auto arguments = kernel_arguments(kind.desc);
    CHECK(output_buffers == arguments.size() - arguments.first_output());
  }
}

TEST_CASE("schema: every description kind's wrapper passes the schema's buffers and types its call by it",
          "[codegen][schema]") {
  for (const auto& kind : testing::description_kinds()) {
    INFO(kind.name);
    const bool takes_table = codegen::needs_visibility_table(kind.desc);
    const std::vector<std::vector<codegen::visibility_grid>> tiles(
        takes_table ? kernel_variant_count : 0, std::vector<codegen::visibility_grid>{{16, 64}});
    const codegen::wrapper_sources wrapper =
        codegen::emit_wrapper("kernel", "", kind.desc, 16, tiles, {"x86-64-linux"}, {"opencl"});
    // The GPU function takes every argument, the CPU variants the visibility table too.
    const auto count_buffers = [&](const std::string& function) {
      const auto start = wrapper.source.find("return kernel_halide_" + function + "(");
      REQUIRE(start != std::string::npos);
      const std::string call = wrapper.source.substr(start, wrapper.source.find(';', start) - start);
      return int(std::count(call.begin(), call.end(), '['));
    };
    const int arguments = kernel_arguments(kind.desc).size();
    CHECK(count_buffers("opencl") == arguments);
    CHECK(count_buffers("general") == arguments + int(takes_table));
    CHECK(testing::typed_parameters(wrapper.header) == schema_names(kind.desc, false, true));
  }
}
