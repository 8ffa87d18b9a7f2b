// The module's argument schema (attngen/module_arguments.hpp) is the one list its pipelines and its
// generated wrapper read: for every module description kind, each part's generated function takes
// the part's arguments in the schema's order, and the wrapper passes as many buffers and types its
// call by the schema.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "Halide.h"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/wrapper.hpp"
#include "attngen/module_validation.hpp"
#include "tests/codegen/typed_call_text.hpp"
#include "tests/support/module_description_kinds.hpp"

using namespace attngen;

namespace {

// Every part a module is generated as: the whole (GPU code) and its CPU parts.
std::vector<module_part> generated_parts(const mha_desc& desc) {
  std::vector<module_part> parts = {module_part::whole};
  for (const module_part part : cpu_module_parts(desc)) parts.push_back(part);
  return parts;
}

// The names the part's pipeline gives its parameters, by the schema: its inputs, then the dropout
// scalars where it takes them.
std::vector<std::string> schema_parameters(const mha_desc& desc, module_part part) {
  std::vector<std::string> names;
  for (const module_argument& argument : part_arguments(desc, part))
    if (!argument.is_output()) names.emplace_back(parameter_name(argument));
  if (takes_dropout_scalars(desc, part)) names.insert(names.end(), {"training", "seed"});
  return names;
}

// The typed call's parameters by the schema: each tensor, the weights as one, the dropout scalars.
std::vector<std::string> schema_typed_parameters(const mha_desc& desc) {
  std::vector<std::string> names;
  for (const module_argument& argument : kernel_arguments(desc)) {
    if (!is_weight(argument)) names.emplace_back(argument.name);
    if (argument.slot == module_slot::q_weight) names.emplace_back("weights");
  }
  if (desc.has_dropout()) names.insert(names.end(), {"training", "seed"});
  return names;
}

}  // namespace

TEST_CASE("module schema: every module kind is a valid description", "[codegen][schema][module]") {
  for (const auto& kind : testing::module_description_kinds()) {
    INFO(kind.name);
    CHECK(first_problem(kind.desc).empty());
  }
}

TEST_CASE("module schema: every part of every module kind takes the schema's inputs and writes its outputs",
          "[codegen][schema][module]") {
  const Halide::Target target("x86-64-linux-avx2-fma-f16c-user_context-no_runtime-no_bounds_query");
  for (const auto& kind : testing::module_description_kinds()) {
    const codegen::blocking tiles =
        codegen::cpu_variant_blocking(kind.desc.attention_operator(), target, kernel_variant::general);
    for (const module_part part : generated_parts(kind.desc)) {
      INFO(kind.name << ", part " << codegen::name_of(part));
      const codegen::module_algorithm m = codegen::define_module(kind.desc, tiles, false, part);
      std::vector<std::string> parameters;
      for (const Halide::Argument& argument : m.arguments()) parameters.push_back(argument.name);
      CHECK(parameters == schema_parameters(kind.desc, part));
      int output_buffers = 0;
      for (const Halide::Func& output : m.outputs()) output_buffers += int(output.output_buffers().size());
      const module_argument_table arguments = part_arguments(kind.desc, part);
      CHECK(output_buffers == arguments.size() - arguments.first_output());
    }
  }
}

TEST_CASE("module schema: every module kind's wrapper passes each part the schema's buffers and types its call by it",
          "[codegen][schema][module]") {
  for (const auto& kind : testing::module_description_kinds()) {
    const codegen::wrapper_sources wrapper =
        codegen::emit_module_wrapper("kernel", "", kind.desc, 16, {"x86-64-linux"}, {"opencl"}, {"x86-64-linux-opencl"});
    for (const module_part part : generated_parts(kind.desc)) {
      INFO(kind.name << ", part " << codegen::name_of(part));
      const std::string function = part == module_part::whole      ? "opencl"
                                   : part == module_part::attention ? "general"
                                                                    : codegen::name_of(part);
      const auto start = wrapper.source.find("return kernel_halide_" + function + "(");
      REQUIRE(start != std::string::npos);
      const std::string call = wrapper.source.substr(start, wrapper.source.find(';', start) - start);
      CHECK(std::count(call.begin(), call.end(), '[') == part_arguments(kind.desc, part).size());
      CHECK((call.find("training, seed") != std::string::npos) == takes_dropout_scalars(kind.desc, part));
    }
    INFO(kind.name);
    CHECK(testing::typed_parameters(wrapper.header) == schema_typed_parameters(kind.desc));
  }
}
