#pragma once
// Running the external tools the generator hands code to (LLVM 14's llc, nvcc).

#include <string>
#include <vector>

namespace attngen::codegen {

// Runs `argv` (argv[0] a path) and returns its exit status, or -1 if it could not run.
int run_program(const std::vector<std::string>& argv);

}  // namespace attngen::codegen
