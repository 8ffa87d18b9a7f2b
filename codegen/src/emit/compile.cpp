#include "attngen/codegen/compile.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/argument_checks.hpp"
#include "attngen/codegen/backward.hpp"
#include "attngen/codegen/module_backward.hpp"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/schedule_module.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/schedule_gpu.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/visibility_table.hpp"
#include "attngen/codegen/wrapper.hpp"
#include "files.hpp"
#include "llc_object.hpp"
#include "../amx/amx_part.hpp"
#include "../tensorcore/tensorcore_part.hpp"
#include "attngen/module_validation.hpp"
#include "attngen/validation.hpp"

namespace attngen::codegen {

namespace {

// LLVM's SLP vectorizer turns a register tile's row addresses into vector arithmetic in every step
// of its product (vpaddq, vpextrq: ports its FMAs need). Held to clear gains on a 2-core Xeon: module
// projections 0.37-0.45 -> 0.43-0.56 of peak; module_self_weights' weights part (its scores' 8 rows)
// 0.85-0.88 -> 0.63-0.72 ms. Halide reads HL_LLVM_ARGS when it first initializes LLVM, so this takes
// effect in a process that has compiled nothing yet: the generator's per part.
void hold_back_slp_vectorizer() {
  const char* given = std::getenv("HL_LLVM_ARGS");
  std::string args = given ? given : "";
  if (args.find("slp-threshold") != std::string::npos) return;
  setenv("HL_LLVM_ARGS", (args.empty() ? "" : args + " ").append("-slp-threshold=50").c_str(), 1);
}

// Kernels take the caller's context (so errors reach the right call) and share one runtime library.
// The runtime validates every tensor before a call and never passes Halide's bounds-query buffers, so
// that code is left out (4% of the object code).
Halide::Target kernel_target(Halide::Target t) {
  return t.with_feature(Halide::Target::UserContext)
      .with_feature(Halide::Target::NoRuntime)
      .with_feature(Halide::Target::NoBoundsQuery);
}

// A request checked and its targets sorted into CPU and GPU ones.
struct resolved_request {
  const mha_desc* module = nullptr;
  attention_desc op;
  std::vector<Halide::Target> targets, gpu_targets;  // with kernel_target's features
  std::vector<std::string> target_names, gpu_target_names, gpu_apis;
};

resolved_request resolve(const kernel_request& request) {
  const std::string_view problem = std::visit([](const auto& d) { return first_problem(d); }, request.desc);
  if (!problem.empty()) throw std::runtime_error("invalid description: " + std::string(problem));
  if (request.targets.empty()) throw std::runtime_error("no target given");
  resolved_request r;
  r.module = std::get_if<mha_desc>(&request.desc);
  r.op = r.module ? r.module->attention_operator() : std::get<attention_desc>(request.desc);
  for (const auto& t : request.targets) {
    if (is_gpu_target(t)) {
      const std::string api = gpu_api_name(t);
      for (const auto& seen : r.gpu_apis)
        if (seen == api) throw std::runtime_error("two " + api + " targets given; a kernel takes one per GPU API");
      if (api == "opencl" && r.op.element_type == dtype::f16 && !t.has_feature(Halide::Target::CLHalf))
        throw std::runtime_error("f16 kernels for OpenCL need devices with cl_khr_fp16: add the cl_half feature, e.g. " +
                                 t.to_string() + "-cl_half");
      r.gpu_apis.push_back(api);
      r.gpu_targets.push_back(target_for(kernel_target(t), r.op));
      r.gpu_target_names.push_back(t.to_string());
    } else if (has_bf16_dot_products(t) && !takes_bf16_dot_products(r.op, t)) {
      // Without bf16 dot products the AVX512-BF16 tier would compile the AVX-512 code again.
      continue;
    } else if (request.only_this_cpu && (!r.targets.empty() || !cpu_runs(t))) {
      continue;
    } else {
      r.targets.push_back(target_for(kernel_target(t), r.op));
      r.target_names.push_back(t.to_string());
    }
  }
  if (r.targets.empty())
    throw std::runtime_error(request.only_this_cpu
                                 ? "this CPU runs none of the CPU targets given"
                                 : "no CPU target given: every kernel needs one, for calls with tensors on the host");
  return r;
}

// A scheduled pipeline's code, for the runtime to call (which validates the arguments first).
Halide::Module runtime_called_module(const std::vector<Halide::Func>& outputs,
                                     const std::vector<Halide::Argument>& arguments, const std::string& function,
                                     const Halide::Target& target) {
  Halide::Pipeline pipeline(outputs);
  leave_argument_checks_to_runtime(pipeline);
  return pipeline.compile_to_module(arguments, function, target);
}

// One of a kernel's CPU parts: a variant (for a module, of its attention), a module's part that
// every variant shares, or an operator's run-time visibility table.
struct cpu_part {
  kernel_variant variant = kernel_variant::general;
  module_part shared = module_part::attention;  ///< module_part::attention: not a module's shared part
  bool visibility_table = false;
  bool backward = false;  ///< an operator's backward pass
  bool two_passes = false;  ///< a backward pass (an operator's or a module's) in two passes
  bool is_variant() const { return shared == module_part::attention && !visibility_table && !backward; }
  std::string name() const {
    if (two_passes) return backward_two_passes_part_name;
    if (backward) return backward_part_name;
    return visibility_table ? visibility_part_name : is_variant() ? name_of(variant) : name_of(shared);
  }
};

// The variants (a module's, those it has), then a module's shared parts or an operator's visibility
// table and backward pass.
std::vector<cpu_part> cpu_parts(const resolved_request& r) {
  std::vector<cpu_part> parts;
  for (int v = 0; v < kernel_variant_count; ++v)
    if (!r.module || module_has_variant(kernel_variant(v), r.module->self_attn)) parts.push_back({kernel_variant(v)});
  if (r.module)
    for (const module_part part : cpu_module_parts(*r.module))
      if (part != module_part::attention) parts.push_back({kernel_variant::general, part});
  if (r.module && r.module->backward)
    for (const bool two_passes : {false, true})
      parts.push_back({.shared = module_part::backward, .two_passes = two_passes});
  if (!r.module && needs_visibility_table(r.op)) parts.push_back({kernel_variant::general, module_part::attention, true});
  if (!r.module && r.op.backward)
    for (const bool two_passes : {false, true})
      parts.push_back({.backward = true, .two_passes = two_passes});
  return parts;
}

// One part's code for one CPU target. Each target gets its own schedule (vector widths differ).
Halide::Module cpu_module(const resolved_request& r, const cpu_part& part, const std::string& function,
                          const Halide::Target& target) {
  if (r.module && part.shared == module_part::backward) {
    module_backward_algorithm m = define_module_backward(
        *r.module, cpu_module_variant_blocking(*r.module, target, kernel_variant::general),
        cpu_backward_blocking(!part.two_passes));
    schedule_module_backward_cpu(m, target);
    return runtime_called_module(m.outputs(), m.arguments(), function, target);
  }
  if (r.module) {
    const blocking tiles = cpu_module_variant_blocking(*r.module, target, part.variant);
    module_algorithm m = define_module(*r.module, tiles, /*bfloat16_as_bits=*/false, part.shared);
    schedule_module_cpu(m, target);
    return runtime_called_module(m.outputs(), m.arguments(), function, target);
  }
  if (part.backward) {
    backward_algorithm b = define_attention_backward(r.op, cpu_backward_blocking(!part.two_passes));
    schedule_backward_cpu(b, target);
    return runtime_called_module(b.outputs(), b.arguments(), function, target);
  }
  if (part.visibility_table) {
    visibility_table_algorithm t = define_visibility_table(r.op, cpu_blocking(r.op, target).lanes);
    schedule_visibility_table_cpu(t);
    return runtime_called_module({t.stages.table}, t.arguments(), function, target);
  }
  attention_algorithm a = define_attention(r.op, cpu_kernel_variant_blocking(r.op, target, r.targets, part.variant));
  schedule_cpu(a);
  return runtime_called_module(a.outputs(), a.arguments(), function, target);
}

// Whether a part's code for `target` prefetches (blocking::prefetch_keys_ahead): llc then compiles it,
// where found (llc_object.hpp), else Halide with its non-temporal prefetches.
bool prefetches(const resolved_request& r, const cpu_part& part, const Halide::Target& target) {
  return !r.module && part.is_variant() && cpu_variant_blocking(r.op, target, part.variant).prefetch_keys_ahead > 0;
}

// The code for GPU target n: one kernel for every shape; with `backward`, an operator's backward pass
// (its own module: Halide keeps one device program per module, so the two cannot share one).
Halide::Module gpu_module(const resolved_request& r, std::size_t n, const std::string& kernel_name, bool backward) {
  if (backward && r.module) {
    module_backward_algorithm m = define_module_backward(*r.module, gpu_blocking(r.op), gpu_backward_blocking(r.op),
                                                         /*bfloat16_as_bits=*/true);
    schedule_module_backward_gpu(m);
    return runtime_called_module(m.outputs(), m.arguments(),
                                 halide_function_name(kernel_name, gpu_backward_part_name(r.gpu_apis[n])),
                                 r.gpu_targets[n]);
  }
  if (backward) {
    backward_algorithm b = define_attention_backward(r.op, gpu_backward_blocking(r.op), /*bfloat16_as_bits=*/true);
    schedule_backward_gpu(b);
    return runtime_called_module(b.outputs(), b.arguments(),
                                 halide_function_name(kernel_name, gpu_backward_part_name(r.gpu_apis[n])),
                                 r.gpu_targets[n]);
  }
  const std::string function = halide_function_name(kernel_name, r.gpu_apis[n]);
  if (r.module) {
    module_algorithm m = define_module(*r.module, gpu_blocking(r.op), /*bfloat16_as_bits=*/true);
    schedule_module_gpu(m);
    return runtime_called_module(m.outputs(), m.arguments(), function, r.gpu_targets[n]);
  }
  attention_algorithm a = define_attention(r.op, gpu_blocking(r.op), /*bfloat16_as_bits=*/true);
  schedule_gpu(a);
  return runtime_called_module(a.outputs(), a.arguments(), function, r.gpu_targets[n]);
}

struct archive_member {
  std::string name;
  std::string bytes;
};

// The members of a Unix archive (the common format, GNU long names included).
std::vector<archive_member> archive_members(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic(8, '\0');
  if (!in.read(magic.data(), 8) || magic != "!<arch>\n") throw std::runtime_error(path + " is not an archive");
  std::vector<archive_member> members;
  std::string long_names;
  char header[60];
  while (in.read(header, 60)) {
    const std::uint64_t size = std::stoull(std::string(header + 48, 10));
    std::string name = std::string(header, 16);
    name.erase(name.find_last_not_of(' ') + 1);
    std::string body(size, '\0');
    in.read(body.data(), std::streamsize(size));
    if (size % 2) in.ignore(1);
    if (name == "//") {
      long_names = body;
    } else if (name != "/" && !name.empty()) {
      if (name[0] == '/' && name.size() > 1) {
        const std::size_t at = std::stoul(name.substr(1));
        name = long_names.substr(at, long_names.find('\n', at) - at);
      }
      if (!name.empty() && name.back() == '/') name.pop_back();
      members.push_back({name, std::move(body)});
    }
  }
  return members;
}

// Rewrites the library at `path` with the members whose names end in a key of `replacements` replaced
// by that object file's bytes (every key must match one member).
void replace_archive_members(const std::string& path, const std::map<std::string, std::string>& replacements,
                             const Halide::Target& target) {
  const std::filesystem::path objects = path + ".objects";
  std::filesystem::remove_all(objects);
  std::filesystem::create_directories(objects);
  std::vector<std::string> object_files;
  std::size_t replaced = 0;
  for (const archive_member& member : archive_members(path)) {
    object_files.push_back((objects / member.name).string());
    std::string bytes = member.bytes;
    for (const auto& [suffix, object] : replacements)
      if (member.name.size() >= suffix.size() && member.name.compare(member.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        bytes = read_file(object);
        ++replaced;
      }
    write_file(object_files.back(), bytes);
  }
  if (replaced != replacements.size()) throw std::logic_error("a replaced object is not in " + path);
  std::filesystem::remove(path);
  Halide::create_static_library(object_files, target, path);
  std::filesystem::remove_all(objects);
}

// Object bytes of `target` in a multi-target library (its members name the target), or all of a
// library that holds one target.
std::uint64_t object_bytes_for(const std::vector<archive_member>& members, const Halide::Target& target,
                               bool single_target_library) {
  std::uint64_t bytes = 0;
  for (const auto& member : members)
    if (single_target_library || member.name.find("-" + target.to_string() + ".o") != std::string::npos)
      bytes += member.bytes.size();
  return bytes;
}

// The kernel's library of CPU code, written by finish_kernel.
std::string cpu_library_path(const kernel_request& request) {
  return request.output_directory + "/" + request.name + "_halide_cpu.a";
}

// The library a CPU part writes before finish_kernel merges it into <name>_halide_cpu.a.
std::string part_library_path(const kernel_request& request, const std::string& function) {
  return request.output_directory + "/" + function + ".a";
}

// One library of every CPU part's objects, so that apps link one CPU library per kernel whatever
// its parts; the parts' libraries are removed.
void merge_cpu_libraries(const kernel_request& request, const resolved_request& r) {
  const std::filesystem::path objects = request.output_directory + "/" + request.name + "_halide_cpu.objects";
  std::filesystem::remove_all(objects);
  std::filesystem::create_directories(objects);
  std::vector<std::string> object_files, part_libraries;
  for (const cpu_part& part : cpu_parts(r)) {
    part_libraries.push_back(part_library_path(request, halide_function_name(request.name, part.name())));
    for (const archive_member& member : archive_members(part_libraries.back())) {
      object_files.push_back((objects / member.name).string());
      write_file(object_files.back(), member.bytes);
    }
  }
  Halide::create_static_library(object_files, r.targets.front(), cpu_library_path(request));
  std::filesystem::remove_all(objects);
  for (const std::string& library : part_libraries) std::filesystem::remove(library);
}

// A part's cost is the processor time of its process (lowering and LLVM run on one thread): what
// generating it takes, not how long it waited for a core while other builds ran.
double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

bool wants(const kernel_request& request, inspection what) {
  return std::find(request.inspections.begin(), request.inspections.end(), what) != request.inspections.end();
}

// Where an inspection output goes: per CPU target for the statement and the assembly, per GPU API for
// the device code (`index` counts the CPU or the GPU targets).
std::string inspection_path(const kernel_request& request, const resolved_request& r, inspection what,
                            std::size_t index) {
  const std::string base = request.output_directory + "/" + request.name;
  switch (what) {
    case inspection::stmt_html: return base + "_general-" + r.target_names[index] + ".stmt.html";
    case inspection::assembly: return base + "_general-" + r.target_names[index] + ".s";
    case inspection::gpu_source: return base + "_" + r.gpu_apis[index] + (r.gpu_apis[index] == "cuda" ? ".ptx" : ".cl");
  }
  return {};
}

// The statement and the assembly of the general variant's module for CPU target `index`.
void write_cpu_inspections(const kernel_request& request, const resolved_request& r, const Halide::Module& m,
                           std::size_t index) {
  std::map<Halide::OutputFileType, std::string> outputs;
  if (wants(request, inspection::stmt_html))
    outputs[Halide::OutputFileType::stmt_html] = inspection_path(request, r, inspection::stmt_html, index);
  if (wants(request, inspection::assembly))
    outputs[Halide::OutputFileType::assembly] = inspection_path(request, r, inspection::assembly, index);
  if (!outputs.empty()) m.compile(outputs);
}

// The device code Halide embeds in GPU target `index`'s module: PTX text or OpenCL C.
void write_gpu_source(const kernel_request& request, const resolved_request& r, const Halide::Module& m,
                      std::size_t index) {
  std::string code;
  for (const Halide::Buffer<>& buffer : m.buffers())
    if (buffer.name().find("gpu_source_kernels") != std::string::npos)
      code.assign(reinterpret_cast<const char*>(buffer.data()), buffer.size_in_bytes());
  if (code.empty()) throw std::runtime_error("no device code found for " + r.gpu_target_names[index]);
  code.erase(code.find_last_not_of('\0') + 1);
  write_file(inspection_path(request, r, inspection::gpu_source, index), code);
}

}  // namespace

std::vector<std::string> inspection_paths(const kernel_request& request) {
  const resolved_request r = resolve(request);
  std::vector<std::string> paths;
  for (const inspection what : request.inspections) {
    const std::size_t count = what == inspection::gpu_source ? r.gpu_apis.size() : r.targets.size();
    for (std::size_t n = 0; n < count; ++n) paths.push_back(inspection_path(request, r, what, n));
  }
  return paths;
}

int kernel_part_count(const kernel_request& request) {
  const resolved_request r = resolve(request);
  return int(cpu_parts(r).size() + r.gpu_apis.size());
}

std::vector<build_cost> compile_kernel_part(const kernel_request& request, int part) {
  const resolved_request r = resolve(request);
  const std::vector<cpu_part> parts = cpu_parts(r);
  std::vector<build_cost> costs;
  if (part >= int(parts.size())) {
    const std::size_t n = std::size_t(part) - parts.size();
    const std::string function = halide_function_name(request.name, r.gpu_apis.at(n));
    const std::string prefix = request.output_directory + "/" + function;
    const double start = cpu_seconds();
    const Halide::Module m = gpu_module(r, n, request.name, false);
    // One library per API: the forward's object, and the backward's where the operator has one.
    std::vector<std::string> objects{prefix + ".o"};
    m.compile({{Halide::OutputFileType::object, objects.back()}, {Halide::OutputFileType::c_header, prefix + ".h"}});
    if (r.module ? r.module->backward : r.op.backward) {
      const std::string backward_prefix =
          request.output_directory + "/" + halide_function_name(request.name, gpu_backward_part_name(r.gpu_apis[n]));
      objects.push_back(backward_prefix + ".o");
      gpu_module(r, n, request.name, true)
          .compile({{Halide::OutputFileType::object, objects.back()},
                    {Halide::OutputFileType::c_header, backward_prefix + ".h"}});
    }
    Halide::create_static_library(objects, r.gpu_targets[n], prefix + ".a");
    for (const std::string& object : objects) std::filesystem::remove(object);
    costs.push_back({r.gpu_target_names[n], r.gpu_apis[n], cpu_seconds() - start,
                     object_bytes_for(archive_members(prefix + ".a"), r.gpu_targets[n], true)});
    if (wants(request, inspection::gpu_source)) write_gpu_source(request, r, m, n);
    // CUDA code comes with the tensor-core forward pass, where the path takes the description.
    if (r.gpu_apis[n] == "cuda") {
      const tensorcore_part_result tensorcore =
          write_tensorcore_part(request.name, request.cpp_namespace, r.op, request.output_directory,
                                r.module ? "a module's GPU code is one Halide pipeline" : "");
      if (tensorcore.fatbin_bytes > 0)
        costs.push_back({r.gpu_target_names[n], "tensorcore", tensorcore.seconds, tensorcore.fatbin_bytes});
    }
    return costs;
  }
  // One function holding every CPU target, with run-time dispatch. Halide builds the targets one
  // after the other, so each target's time runs from its start to the next one's.
  const cpu_part& cpu = parts.at(std::size_t(part));
  if (cpu.shared == module_part::projection || cpu.shared == module_part::out_projection ||
      cpu.shared == module_part::weights)
    hold_back_slp_vectorizer();
  const std::string function = halide_function_name(request.name, cpu.name());
  const bool inspected = cpu.is_variant() && cpu.variant == kernel_variant::general;
  // Halide calls module_for once per target, in the order given.
  std::vector<double> starts;
  // Objects llc compiled (llc_object.hpp) by the end of their library member's name.
  std::map<std::string, std::string> llc_objects;
  auto module_for = [&](const std::string& fn_name, const Halide::Target& target) {
    starts.push_back(cpu_seconds());
    Halide::Module m = cpu_module(r, cpu, fn_name, target);
    if (inspected) write_cpu_inspections(request, r, m, starts.size() - 1);
    if (has_bf16_dot_products(target) || (prefetches(r, cpu, target) && !llc_program().empty())) {
      const std::string object = request.output_directory + "/" + fn_name + ".llc.o";
      compile_with_llc(m, object, has_bf16_dot_products(target) ? bf16_tier_llvm_cpu : "");
      // A library of one target holds one object, not named after it.
      llc_objects[r.targets.size() == 1 ? ".o" : "-" + target.to_string() + ".o"] = object;
    }
    return m;
  };
  const std::string library = part_library_path(request, function);
  Halide::compile_multitarget(function,
                              {{Halide::OutputFileType::static_library, library},
                               {Halide::OutputFileType::c_header, request.output_directory + "/" + function + ".h"}},
                              r.targets, {}, module_for);
  if (!llc_objects.empty()) {
    replace_archive_members(library, llc_objects, r.targets.front());
    for (const auto& [suffix, object] : llc_objects) std::filesystem::remove(object);
  }
  const double end = cpu_seconds();
  const auto members = archive_members(library);
  for (std::size_t t = 0; t < r.targets.size() && t < starts.size(); ++t) {
    const double finished = t + 1 < starts.size() ? starts[t + 1] : end;
    costs.push_back({r.target_names[t], cpu.name(), finished - starts[t],
                     object_bytes_for(members, r.targets[t], r.targets.size() == 1)});
  }
  return costs;
}

void finish_kernel(const kernel_request& request) {
  const resolved_request r = resolve(request);
  merge_cpu_libraries(request, r);
  // The variant rule's single_query threshold, taken from the most capable target (the others' lanes
  // divide its lanes, so their thresholds are as low or lower).
  const int single_query_threshold = codegen::single_query_threshold(r.op, r.targets.front());
  // A self-attention module without single_query relies on short_keys serving what it would take.
  if (r.module && r.module->self_attn && single_query_threshold + 1 + r.module->extra_keys() > short_keys_max_length)
    throw std::logic_error("a single_query threshold of " + std::to_string(single_query_threshold) +
                           " queries: self-attention modules would need single_query");
  std::vector<std::vector<visibility_grid>> variant_tiles;
  if (!r.module && needs_visibility_table(r.op)) variant_tiles = cpu_variant_tiles(r.op, r.targets);
  const wrapper_sources wrapper =
      r.module ? emit_module_wrapper(request.name, request.cpp_namespace, *r.module, single_query_threshold,
                                     r.target_names, r.gpu_apis, r.gpu_target_names)
               : emit_wrapper(request.name, request.cpp_namespace, r.op, single_query_threshold, variant_tiles,
                              r.target_names, r.gpu_apis, r.gpu_target_names);
  write_file(request.output_directory + "/" + request.name + ".hpp", wrapper.header);
  write_file(request.output_directory + "/" + request.name + ".cpp", wrapper.source);
  write_file(request.output_directory + "/" + request.name + ".h", wrapper.c_header);
  // AMX CPUs take the AVX512-BF16 tier, so a library without it has no AMX kernel either.
  const bool bf16_tier = std::any_of(r.targets.begin(), r.targets.end(), has_bf16_dot_products);
  write_amx_part(request.name, request.cpp_namespace, r.op, request.output_directory,
                 r.module   ? "a module's attention runs its Halide code"
                 : bf16_tier ? ""
                             : "the targets hold no AVX512-BF16 tier (avx512_sapphirerapids), which AMX CPUs take");
}

std::vector<build_cost> compile_kernel(const kernel_request& request) {
  std::vector<build_cost> costs;
  for (int part = 0, parts = kernel_part_count(request); part < parts; ++part) {
    const auto part_costs = compile_kernel_part(request, part);
    costs.insert(costs.end(), part_costs.begin(), part_costs.end());
  }
  finish_kernel(request);
  return costs;
}

std::string halide_function_name(const std::string& kernel_name, const std::string& part) {
  return kernel_name + "_halide_" + part;
}

std::string gpu_backward_part_name(const std::string& api) { return api + "_" + backward_part_name; }

void compile_runtime(const Halide::Target& target, const std::string& library_path) {
  Halide::compile_standalone_runtime({{Halide::OutputFileType::static_library, library_path}}, target);
}

}  // namespace attngen::codegen
