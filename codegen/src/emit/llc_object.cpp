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

}  // namespace

std::string llc_program() {
  if (const char* given = std::getenv("ATTNGEN_LLC"); given && *given) return given;
  return ATTNGEN_LLC_PATH;
}

void compile_with_llc(const Halide::Module& module, const std::string& object_path) {
  const std::string llc = llc_program();
  if (llc.empty())
    throw std::runtime_error("the AVX512-BF16 target (avx512_sapphirerapids) needs LLVM 14's llc (Debian: llvm-14), "
                             "found neither at build time nor in $ATTNGEN_LLC");
  const std::string ir_path = object_path + ".ll";
  module.compile({{Halide::OutputFileType::llvm_assembly, ir_path}});
  const std::string ir = read_file(ir_path);
  std::vector<std::string> argv = {llc, "-O3", std::string("-mcpu=") + bf16_tier_llvm_cpu, "-relocation-model=pic",
                                   "-function-sections", "-filetype=obj"};
  for (const std::string& flag : halide_target_option_flags(ir)) argv.push_back(flag);
  argv.insert(argv.end(), {ir_path, "-o", object_path});
  const int status = run_program(argv);
  std::filesystem::remove(ir_path);
  if (status != 0)
    throw std::runtime_error(llc + " failed (status " + std::to_string(status) + ") compiling " + object_path);
}

}  // namespace attngen::codegen
