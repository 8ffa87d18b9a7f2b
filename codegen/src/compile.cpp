#include "attngen/codegen/compile.hpp"

#include <fstream>
#include <stdexcept>

#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/wrapper.hpp"
#include "attngen/validation.hpp"

namespace attngen::codegen {

namespace {

// Kernels take the caller's context (so errors reach the right call) and share one runtime library.
Halide::Target kernel_target(Halide::Target t) {
  return t.with_feature(Halide::Target::UserContext).with_feature(Halide::Target::NoRuntime);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void compile_kernel(const kernel_request& request) {
  if (const auto problem = first_problem(request.desc); !problem.empty())
    throw std::runtime_error("invalid description: " + std::string(problem));
  if (request.targets.empty()) throw std::runtime_error("no target given");

  std::vector<Halide::Target> targets;
  std::vector<std::string> target_names;
  for (const auto& t : request.targets) {
    targets.push_back(kernel_target(t));
    target_names.push_back(t.to_string());
  }
  // One static library per variant; each target gets its own schedule (vector widths differ), so
  // modules are built per target.
  for (int v = 0; v < kernel_variant_count; ++v) {
    const auto variant = static_cast<kernel_variant>(v);
    const std::string function = halide_function_name(request.name, variant);
    const std::string prefix = request.output_directory + "/" + function;
    auto module_for = [&](const std::string& fn_name, const Halide::Target& target) {
      attention_algorithm a = define_attention(request.desc, cpu_variant_blocking(request.desc, target, variant));
      schedule_cpu(a);
      std::vector<Halide::Argument> arguments = a.arguments();
      return Halide::Pipeline(a.outputs()).compile_to_module(arguments, fn_name, target);
    };
    Halide::compile_multitarget(function,
                                {{Halide::OutputFileType::static_library, prefix + ".a"},
                                 {Halide::OutputFileType::c_header, prefix + ".h"}},
                                targets, {}, module_for);
  }

  // The variant rule needs the short_queries tiling's queries per tile, taken from the most capable
  // target (the others' lanes divide its lanes, so their tiles hold as many or fewer queries).
  const int short_queries_per_tile =
      cpu_variant_blocking(request.desc, targets.front(), kernel_variant::short_queries).queries_per_tile;
  const wrapper_sources wrapper =
      emit_wrapper(request.name, request.cpp_namespace, request.desc, short_queries_per_tile, target_names);
  write_file(request.output_directory + "/" + request.name + ".hpp", wrapper.header);
  write_file(request.output_directory + "/" + request.name + ".cpp", wrapper.source);
}

std::string halide_function_name(const std::string& kernel_name, kernel_variant variant) {
  return kernel_name + "_halide_" + name_of(variant);
}

void compile_runtime(const Halide::Target& target, const std::string& library_path) {
  Halide::compile_standalone_runtime({{Halide::OutputFileType::static_library, library_path}}, target);
}

}  // namespace attngen::codegen
