// attngen: the command-line generator, like protoc or flatc. The CMake function attngen_add_kernel
// runs it at build time; `attngen help` says how to use it by hand.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "attngen/codegen/compile.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/tensorcore_source.hpp"
#include "attngen/mlir/emit_mlir.hpp"
#include "attngen/tensorcore/launch_shape.hpp"
#include "parallel_build.hpp"
#include "spec.hpp"

namespace {

constexpr const char* usage = R"(attngen: generates fused attention kernels ahead of time, for C++ apps.

usage:
  attngen generate (--spec FILE | --describe TEXT)... [--name NAME] --output-dir DIR
                   [--target T]... [--only-this-cpu] [--namespace NS] [--jobs N] [--stats]
                   [--emit WHAT]...
  attngen mlir (--spec FILE | --describe TEXT)... [--name NAME] --output-dir DIR [--bf16-as-bits]
  attngen tensorcore (--spec FILE | --describe TEXT)... [--name NAME] --output-dir DIR
  attngen targets
  attngen runtime --target T --output FILE.a
  attngen help

generate
  Compiles each kernel described into DIR (created if missing): NAME_halide_cpu.a, the CPU code of
  every kernel variant (general, short_keys, single_query, short_queries; the wrapper picks one per
  call from the shapes; self-attention modules need no single_query) and of a module's parts its
  variants share (projection, the linear layer of all four projections; out_projection for f16 and
  bf16; weights), with a C header per function, NAME_halide_PART.h; a library per GPU API
  (NAME_halide_cuda.a, NAME_halide_opencl.a); the C++ wrapper NAME.hpp/NAME.cpp that validates a
  call's tensors and runs it, and NAME.h, the same kernel for C and FFI callers (attngen/c_api.h).
  --spec FILE       a text description: `key = value` lines, `#` comments. Several kernels go in
                    `[name]` sections; a file without sections holds one kernel, named by --name.
  --describe TEXT   a description on the command line, settings separated by `;` (needs --name):
                    --describe "heads = 32; kv_heads = 8; head_dim = 128; causal = top_left"
  --name NAME       the kernel's C++ name, for a source without sections
  --target T        a Halide target; repeat for several. CPU targets, most capable first, make one
                    library that runs the first the CPU supports. GPU targets (at most one with
                    `cuda`, one with `opencl`) add code that calls with tensors on that device run.
                    Default: the portable set x86-64-linux-avx512_skylake-fma-f16c,
                    x86-64-linux-avx2-fma-f16c, x86-64-linux. `host` is refused. Appending
                    `-disable_llvm_loop_opt` builds about 20% faster with smaller code; prefill
                    runs about as fast, short sequences and decoding 4-36% slower.
  --only-this-cpu   of the CPU targets, only the first this machine's CPU runs (an error when it
                    runs none): for builds that run only where they are built, such as a benchmark
  --namespace NS    C++ namespace of the wrapper struct
  --jobs N          parts generated at once, in child processes (default: the CPU's threads)
  --stats           a table of generation time (the processor time of the part's process, so
                    other builds running do not inflate it) and object size per kernel, target
                    and part
  --emit WHAT       inspection outputs, also into DIR: stmt_html (Halide's lowered statement, per
                    CPU target), assembly (per CPU target), gpu_source (PTX for cuda, OpenCL C
                    for opencl); for the general variant; mlir (the MLIR export, as `attngen
                    mlir` writes it). Repeat for several.
  Progress, and each kernel's wall time and, per target, processor time and object size, go to
  stderr.

  Description keys (the DSL's knobs; see attngen/text_format.hpp and module_text_format.hpp):
    heads, kv_heads, head_dim, v_head_dim, causal (none|top_left|bottom_right),
    additive_mask (none|lq_lk|h_lq_lk|b_h_lq_lk|b_1_lq_lk),
    key_padding (none|true_means_ignore|true_means_keep), scale (number|default),
    lse (true|false), dtype (f32|f16|bf16), queries (dense|ragged),
    kv_layout (dense|lengths|paged), page_size (a power of two, 1 to 256, with paged),
    kv_dtype (f32|f16|bf16|i8), sinks (true|false), tensor (`doc i32 batch key_length`),
    scalar (name), score_mod and mask_mod (prefix calls: `and(le(kv, q), ge(kv, sub(q, 64)))`).
    A module (nn.MultiheadAttention) starts with `kind = module`: embed_dim, heads, kv_heads,
    kdim, vdim, bias, add_bias_kv, add_zero_attn, batch_first, self_attention, dropout,
    need_weights, causal, key_padding_mask, attn_mask, attn_mask_shape, dtype.
  Errors name the source, the line and the column.

mlir
  Writes each operator kernel described as NAME.mlir into DIR, without generating it: one MLIR 14
  module (builtin func of linalg.generic, arith, math and tensor ops, dynamic batch and lengths)
  computing exactly the described attention, for MLIR-based compilers. Lower it with
    mlir-opt-14 NAME.mlir {pipeline}
  then mlir-translate-14 --mlir-to-llvmir; call _mlir_ciface_NAME (see attngen/mlir/emit_mlir.hpp).
  --bf16-as-bits    bf16 tensors as i16 bits with integer conversions, for backends without bf16
                    (LLVM 14 on x86); otherwise they are `bf16`.

tensorcore
  Writes, for each operator kernel described, its tensor-core forward pass (FlashAttention-2's tile
  code over mma.sync, sm_80 and later) into DIR: NAME_tensorcore.hpp, the description's variant (its
  causality, masks and modifiers, for nvcc and for host compilers), and NAME_tensorcore.cu, the
  kernel NAME_tensorcore_forward for nvcc. bf16 and f16 descriptions (and f32 ones with
  f32_tensor_cores) whose head_dim and v_head_dim are multiples of 16 up to {largest_head_dim}; any
  other kernel is refused, saying why.

targets
  Lists the portable CPU targets (marking those this CPU runs) and GPU target examples.

runtime
  Writes the Halide runtime that all kernels of an app share (the CMake package provides it).

example
  attngen generate --spec kernels.attngen --output-dir gen --stats --emit stmt_html
)";

// attngen_add_kernel's default (ATTNGEN_DEFAULT_TARGETS in cmake/AttngenAddKernel.cmake).
const std::vector<std::string> default_targets = [] {
  std::vector<std::string> targets;
  std::istringstream names(ATTNGEN_DEFAULT_TARGETS);
  for (std::string name; names >> name;) targets.push_back(name);
  return targets;
}();

struct options {
  std::string command, name, output_dir, output, cpp_namespace;
  std::vector<std::pair<std::string, std::string>> sources;  // (flag, value)
  std::vector<std::string> targets, emits;
  int jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  bool stats = false, bfloat16_as_bits = false, only_this_cpu = false;
};

options parse(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("no command given");
  options o;
  o.command = argv[1];
  for (int n = 2; n < argc; ++n) {
    const std::string flag = argv[n];
    if (flag == "--help" || flag == "-h") throw std::invalid_argument("");
    // Flags without a value.
    const std::pair<const char*, bool*> switches[] = {
        {"--stats", &o.stats}, {"--bf16-as-bits", &o.bfloat16_as_bits}, {"--only-this-cpu", &o.only_this_cpu}};
    const auto given = std::find_if(std::begin(switches), std::end(switches),
                                    [&flag](const auto& s) { return flag == s.first; });
    if (given != std::end(switches)) {
      *given->second = true;
      continue;
    }
    if (n + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++n];
    if (flag == "--spec" || flag == "--describe") o.sources.emplace_back(flag, value);
    else if (flag == "--name") o.name = value;
    else if (flag == "--target") o.targets.push_back(value);
    else if (flag == "--output-dir") o.output_dir = value;
    else if (flag == "--output") o.output = value;
    else if (flag == "--namespace") o.cpp_namespace = value;
    else if (flag == "--emit") o.emits.push_back(value);
    else if (flag == "--jobs") o.jobs = std::stoi(value);
    else throw std::invalid_argument("unknown option " + flag);
  }
  return o;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument(what);
}

attngen::codegen::inspection inspection_named(const std::string& name) {
  if (name == "stmt_html") return attngen::codegen::inspection::stmt_html;
  if (name == "assembly") return attngen::codegen::inspection::assembly;
  if (name == "gpu_source") return attngen::codegen::inspection::gpu_source;
  throw std::invalid_argument("--emit takes stmt_html, assembly, gpu_source or mlir, not " + name);
}

// The kernels of every --spec and --describe, each named.
std::vector<attngen::tool::named_description> described_kernels(const options& o) {
  require(!o.sources.empty(), o.command + " needs --spec FILE or --describe TEXT");
  std::vector<attngen::tool::named_description> kernels;
  for (const auto& [flag, value] : o.sources) {
    const bool inline_text = flag == "--describe";
    auto found = attngen::tool::parse_spec(inline_text ? value : read_file(value), inline_text ? flag : value);
    kernels.insert(kernels.end(), found.begin(), found.end());
  }
  int unnamed = 0;
  for (auto& k : kernels)
    if (k.name.empty()) {
      ++unnamed;
      k.name = o.name;
    }
  require(unnamed <= 1, "several kernels without a name: put them in `[name]` sections");
  require(unnamed == 0 || !o.name.empty(), "a description without a `[name]` section needs --name");
  return kernels;
}

void create_output_directory(const std::string& directory) {
  std::error_code created;
  std::filesystem::create_directories(directory, created);
  require(!created, "cannot create the output directory " + directory + ": " + created.message());
}

// NAME.mlir for each operator kernel; a module (nn.MultiheadAttention) has no MLIR export.
void write_mlir(const std::vector<attngen::tool::named_description>& kernels, const std::string& directory,
                bool bfloat16_as_bits) {
  attngen::mlir_export::mlir_options options;
  options.bfloat16_as_bits = bfloat16_as_bits;
  for (const auto& k : kernels) {
    const auto* op = std::get_if<attngen::attention_desc>(&k.desc);
    require(op != nullptr, "the MLIR export covers attention operators; " + k.name + " is a module");
    const std::string path = (std::filesystem::path(directory) / (k.name + ".mlir")).string();
    std::ofstream(path) << attngen::mlir_export::emit_mlir(*op, k.name, options);
    std::fprintf(stderr, "attngen:   wrote %s\n", path.c_str());
  }
}

int export_mlir(const options& o) {
  require(!o.output_dir.empty(), "mlir needs --output-dir");
  const auto kernels = described_kernels(o);
  create_output_directory(o.output_dir);
  write_mlir(kernels, o.output_dir, o.bfloat16_as_bits);
  return 0;
}

// NAME_tensorcore.hpp and NAME_tensorcore.cu for each operator kernel the tensor-core path takes.
int write_tensorcore(const options& o) {
  require(!o.output_dir.empty(), "tensorcore needs --output-dir");
  const auto kernels = described_kernels(o);
  create_output_directory(o.output_dir);
  for (const auto& k : kernels) {
    const auto* op = std::get_if<attngen::attention_desc>(&k.desc);
    require(op != nullptr, "the tensor-core path covers attention operators; " + k.name + " is a module");
    const std::string refusal = attngen::codegen::tensorcore_refusal(*op);
    require(refusal.empty(), k.name + ": the tensor-core path does not take it: " + refusal);
    const std::filesystem::path directory(o.output_dir);
    std::ofstream(directory / (k.name + "_tensorcore.hpp")) << attngen::codegen::tensorcore_variant_header(*op, k.name);
    std::ofstream(directory / (k.name + "_tensorcore.cu")) << attngen::codegen::tensorcore_kernel_source(*op, k.name);
    std::fprintf(stderr, "attngen:   wrote %s_tensorcore.hpp and %s_tensorcore.cu\n", k.name.c_str(), k.name.c_str());
  }
  return 0;
}

// Per target: the kernel's processor time (its parts' sum) and object bytes, after its wall time.
void report_kernel(const std::string& name, const std::vector<attngen::codegen::build_cost>& costs, double wall) {
  std::map<std::string, std::pair<double, std::uint64_t>> per_target;
  std::vector<std::string> order;
  for (const auto& c : costs) {
    if (!per_target.count(c.target)) order.push_back(c.target);
    per_target[c.target].first += c.seconds;
    per_target[c.target].second += c.object_bytes;
  }
  std::fprintf(stderr, "attngen: %s generated in %.2f s\n", name.c_str(), wall);
  for (const auto& target : order)
    std::fprintf(stderr, "attngen:   %-45s %6.2f s CPU %7.1f KB\n", target.c_str(), per_target[target].first,
                 per_target[target].second / 1024.0);
}

void print_stats(const std::vector<std::pair<std::string, std::vector<attngen::codegen::build_cost>>>& kernels) {
  std::printf("%-24s %-45s %-14s %9s %10s\n", "kernel", "target", "part", "CPU s", "object KB");
  for (const auto& [name, costs] : kernels)
    for (const auto& c : costs)
      std::printf("%-24s %-45s %-14s %9.2f %10.1f\n", name.c_str(), c.target.c_str(), c.part.c_str(), c.seconds,
                  c.object_bytes / 1024.0);
}

int generate(const options& o) {
  require(!o.output_dir.empty(), "generate needs --output-dir");
  const auto kernels = described_kernels(o);
  std::vector<Halide::Target> targets;
  for (const auto& t : o.targets.empty() ? default_targets : o.targets)
    targets.push_back(attngen::codegen::parse_target(t));
  std::vector<attngen::codegen::inspection> inspections;
  bool with_mlir = false;
  for (const auto& e : o.emits) {
    if (e == "mlir") with_mlir = true;
    else inspections.push_back(inspection_named(e));
  }
  create_output_directory(o.output_dir);
  if (with_mlir) write_mlir(kernels, o.output_dir, o.bfloat16_as_bits);

  std::vector<std::pair<std::string, std::vector<attngen::codegen::build_cost>>> all_costs;
  for (std::size_t n = 0; n < kernels.size(); ++n) {
    attngen::codegen::kernel_request request;
    request.name = kernels[n].name;
    request.desc = kernels[n].desc;
    request.cpp_namespace = o.cpp_namespace;
    request.output_directory = o.output_dir;
    request.targets = targets;
    request.only_this_cpu = o.only_this_cpu;
    request.inspections = inspections;
    std::fprintf(stderr, "attngen: [%zu/%zu] generating %s for %zu target(s)\n", n + 1, kernels.size(),
                 request.name.c_str(), targets.size());
    const auto start = std::chrono::steady_clock::now();
    const auto costs = attngen::tool::build_kernel(request, o.jobs);
    report_kernel(request.name, costs,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (const auto& path : attngen::codegen::inspection_paths(request))
      std::fprintf(stderr, "attngen:   wrote %s\n", path.c_str());
    all_costs.emplace_back(request.name, costs);
  }
  if (o.stats) print_stats(all_costs);
  return 0;
}

int list_targets() {
  std::printf("CPU targets (the default fat library holds them all; * = this CPU runs it):\n");
  for (const auto& name : default_targets)
    std::printf("  %c %s\n", attngen::codegen::cpu_runs(Halide::Target(name)) ? '*' : ' ', name.c_str());
  std::printf("best for this CPU: %s\n", attngen::codegen::running_cpu_target().to_string().c_str());
  std::printf("GPU targets (add to a CPU target list):\n"
              "    x86-64-linux-cuda-cuda_capability_80   PTX for Ampere and every later NVIDIA GPU, Hopper\n"
              "                                           included (Halide 14 has no cuda_capability_90)\n"
              "    x86-64-linux-opencl                    OpenCL C, compiled by the driver at the first call\n"
              "Any Halide target string is accepted but `host`.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse(argc, argv);
    if (o.command == "generate") return generate(o);
    if (o.command == "mlir") return export_mlir(o);
    if (o.command == "tensorcore") return write_tensorcore(o);
    if (o.command == "runtime") {
      require(o.targets.size() == 1, "runtime needs exactly one --target");
      require(!o.output.empty(), "runtime needs --output");
      attngen::codegen::compile_runtime(attngen::codegen::parse_target(o.targets[0]), o.output);
      return 0;
    }
    if (o.command == "targets") return list_targets();
    if (o.command == "--help" || o.command == "-h" || o.command == "help") {
      // The lowering passes and the tensor cores' largest head dim come from the code that uses them,
      // so the help cannot drift from them.
      std::string text = usage;
      auto fill = [&text](std::string_view placeholder, std::string_view value) {
        text.replace(text.find(placeholder), placeholder.size(), value);
      };
      fill("{pipeline}", attngen::mlir_export::mlir_lowering_pipeline());
      fill("{largest_head_dim}", std::to_string(attngen::tensorcore::largest_head_dim));
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    throw std::invalid_argument("unknown command " + o.command);
  } catch (const std::invalid_argument& e) {
    if (*e.what()) std::fprintf(stderr, "attngen: %s\n", e.what());
    std::fputs("run `attngen help` for usage\n", stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attngen: error: %s\n", e.what());
    return 1;
  }
}
