#include "attngen/codegen/compile.hpp"

#include <fstream>
#include <stdexcept>

#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/schedule_module.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/schedule_gpu.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/wrapper.hpp"
#include "attngen/module_validation.hpp"
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
  const std::string_view problem = std::visit([](const auto& d) { return first_problem(d); }, request.desc);
  if (!problem.empty()) throw std::runtime_error("invalid description: " + std::string(problem));
  if (request.targets.empty()) throw std::runtime_error("no target given");

  const auto* module = std::get_if<mha_desc>(&request.desc);
  const attention_desc op = module ? module->attention_operator() : std::get<attention_desc>(request.desc);
  std::vector<Halide::Target> targets, gpu_targets;
  std::vector<std::string> target_names, gpu_target_names, gpu_apis;
  for (const auto& t : request.targets) {
    if (is_gpu_target(t)) {
      const std::string api = gpu_api_name(t);
      for (const auto& seen : gpu_apis)
        if (seen == api) throw std::runtime_error("two " + api + " targets given; a kernel takes one per GPU API");
      if (api == "opencl" && op.element_type == dtype::f16 && !t.has_feature(Halide::Target::CLHalf))
        throw std::runtime_error("f16 kernels for OpenCL need devices with cl_khr_fp16: add the cl_half feature, e.g. " +
                                 t.to_string() + "-cl_half");
      gpu_apis.push_back(api);
      gpu_targets.push_back(kernel_target(t));
      gpu_target_names.push_back(t.to_string());
    } else {
      targets.push_back(kernel_target(t));
      target_names.push_back(t.to_string());
    }
  }
  if (targets.empty())
    throw std::runtime_error("no CPU target given: every kernel needs one, for calls with tensors on the host");
  // One static library per variant; each target gets its own schedule (vector widths differ), so
  // modules are built per target.
  for (int v = 0; v < kernel_variant_count; ++v) {
    const auto variant = static_cast<kernel_variant>(v);
    const std::string function = halide_function_name(request.name, variant);
    const std::string prefix = request.output_directory + "/" + function;
    auto module_for = [&](const std::string& fn_name, const Halide::Target& target) {
      const blocking tiles = cpu_variant_blocking(op, target, variant);
      if (module) {
        module_algorithm m = define_module(*module, tiles);
        schedule_module_cpu(m, target);
        return Halide::Pipeline(m.outputs()).compile_to_module(m.arguments(), fn_name, target);
      }
      attention_algorithm a = define_attention(op, tiles);
      schedule_cpu(a);
      return Halide::Pipeline(a.outputs()).compile_to_module(a.arguments(), fn_name, target);
    };
    Halide::compile_multitarget(function,
                                {{Halide::OutputFileType::static_library, prefix + ".a"},
                                 {Halide::OutputFileType::c_header, prefix + ".h"}},
                                targets, {}, module_for);
  }

  // One library per GPU API, holding one kernel for every shape.
  for (std::size_t n = 0; n < gpu_targets.size(); ++n) {
    const std::string function = halide_gpu_function_name(request.name, gpu_apis[n]);
    const std::string path = request.output_directory + "/" + function;
    if (module) {
      module_algorithm m = define_module(*module, gpu_blocking(op), /*bfloat16_as_bits=*/true);
      schedule_module_gpu(m);
      Halide::Pipeline(m.outputs()).compile_to_static_library(path, m.arguments(), function, gpu_targets[n]);
    } else {
      attention_algorithm a = define_attention(op, gpu_blocking(op), /*bfloat16_as_bits=*/true);
      schedule_gpu(a);
      Halide::Pipeline(a.outputs()).compile_to_static_library(path, a.arguments(), function, gpu_targets[n]);
    }
  }

  // The variant rule needs the short_queries tiling's queries per tile, taken from the most capable
  // target (the others' lanes divide its lanes, so their tiles hold as many or fewer queries).
  const int short_queries_per_tile =
      cpu_variant_blocking(op, targets.front(), kernel_variant::short_queries).queries_per_tile;
  const wrapper_sources wrapper =
      module ? emit_module_wrapper(request.name, request.cpp_namespace, *module, short_queries_per_tile, target_names,
                                   gpu_apis, gpu_target_names)
             : emit_wrapper(request.name, request.cpp_namespace, op, short_queries_per_tile, target_names, gpu_apis,
                            gpu_target_names);
  write_file(request.output_directory + "/" + request.name + ".hpp", wrapper.header);
  write_file(request.output_directory + "/" + request.name + ".cpp", wrapper.source);
}

std::string halide_function_name(const std::string& kernel_name, kernel_variant variant) {
  return kernel_name + "_halide_" + name_of(variant);
}

std::string halide_gpu_function_name(const std::string& kernel_name, const std::string& api) {
  return kernel_name + "_halide_" + api;
}

void compile_runtime(const Halide::Target& target, const std::string& library_path) {
  Halide::compile_standalone_runtime({{Halide::OutputFileType::static_library, library_path}}, target);
}

}  // namespace attngen::codegen
