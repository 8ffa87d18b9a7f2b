#pragma once
/// Halide targets attngen builds for, named explicitly: Halide 14's `host` enables AVX512-FP16 on Zen 5,
/// which that CPU lacks, so attngen never uses it.

#include <string>

#include "Halide.h"

namespace attngen::codegen {

/// Parses a Halide target string; throws std::invalid_argument naming the string when it is not one,
/// or when it is `host` (not portable, and wrong on some CPUs).
Halide::Target parse_target(const std::string& name);

/// The best explicitly named x86-64 target this machine's CPU runs, for JIT tests: AVX-512 (Skylake
/// set), else AVX2+FMA, else baseline x86-64; with f16c where present.
Halide::Target running_cpu_target();

/// Whether this machine's CPU has every x86 feature `target` uses.
bool cpu_runs(const Halide::Target& target);

}  // namespace attngen::codegen
