#include "llc_object.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "files.hpp"
#include "subprocess.hpp"

namespace attngen::codegen {

namespace {

// Halide's TargetOptions (CodeGen_Internal's get_target_options) as llc flags: fast floating point
// unless the module asks for per-instruction fast-math flags (strict_float in the pipeline).
std::vector<std::string> halide_target_option_flags(const std::string& ir) {
  if (ir.find("!\"halide_per_instruction_fast_math_flags\", i32 1}") != std::string::npos) return {"-fp-contract=off"};
  return {"-fp-contract=fast", "-enable-unsafe-fp-math", "-enable-no-infs-fp-math", "-enable-no-nans-fp-math"};
}

// The string value of module flag `name`, which Halide sets on every module it generates (halide_mcpu,
// halide_mattrs: the LLVM CPU and features it compiles the module's target for).
std::string module_flag(const std::string& ir, const std::string& name) {
  const std::string key = "!\"" + name + "\", !\"";
  const std::size_t at = ir.find(key);
  if (at == std::string::npos) throw std::logic_error("Halide's IR has no module flag " + name);
  const std::size_t begin = at + key.size();
  return ir.substr(begin, ir.find('"', begin) - begin);
}

// `ir` with its prefetches' locality raised from 0 (`prefetchnta`, Halide's runtime prefetch) to 3
// (`prefetcht0`). decode_paged f32 / bf16 / int8, ms on a 2-core Intel Xeon (AMX): nta 68.9 / 42.8 /
// 28.9, t0 42.1 / 24.8 / 19.0; on a 2-core AMD Zen 5 the two hints measured alike.
std::string with_prefetches_into_every_level(std::string ir) {
  const std::string call = "call void @llvm.prefetch.p0i8(", nontemporal = ", i32 0, i32 1)", temporal = ", i32 3, i32 1)";
  for (std::size_t at = ir.find(call); at != std::string::npos; at = ir.find(call, at + 1)) {
    const std::size_t hint = ir.find(nontemporal, at);
    if (hint != std::string::npos && hint < ir.find('\n', at)) ir.replace(hint, nontemporal.size(), temporal);
  }
  return ir;
}

}  // namespace

std::string llc_program() {
  if (const char* given = std::getenv("ATTNGEN_LLC"); given && *given) return given;
  return ATTNGEN_LLC_PATH;
}

void compile_with_llc(const Halide::Module& module, const std::string& object_path, const std::string& llvm_cpu) {
  const std::string llc = llc_program();
  if (llc.empty())
    throw std::runtime_error("compiling " + object_path + " needs LLVM 14's llc (Debian: llvm-14), "
                             "found neither at build time nor in $ATTNGEN_LLC");
  const std::string ir_path = object_path + ".ll";
  module.compile({{Halide::OutputFileType::llvm_assembly, ir_path}});
  const std::string ir = with_prefetches_into_every_level(read_file(ir_path));
  write_file(ir_path, ir);
  std::vector<std::string> argv = {llc, "-O3", "-relocation-model=pic", "-function-sections", "-filetype=obj"};
  if (llvm_cpu.empty()) {
    argv.push_back("-mcpu=" + module_flag(ir, "halide_mcpu"));
    if (const std::string features = module_flag(ir, "halide_mattrs"); !features.empty())
      argv.push_back("-mattr=" + features);
  } else {
    argv.push_back("-mcpu=" + llvm_cpu);
  }
  for (const std::string& flag : halide_target_option_flags(ir)) argv.push_back(flag);
  argv.insert(argv.end(), {ir_path, "-o", object_path});
  const int status = run_program(argv);
  std::filesystem::remove(ir_path);
  if (status != 0)
    throw std::runtime_error(llc + " failed (status " + std::to_string(status) + ") compiling " + object_path);
}

}  // namespace attngen::codegen
