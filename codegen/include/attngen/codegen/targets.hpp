#pragma once
/// Halide targets attngen builds for, named explicitly: Halide 14's `host` enables AVX512-FP16 on Zen 5,
/// which that CPU lacks, so attngen never uses it.

#include <string>

#include "Halide.h"
#include "attngen/attention.hpp"

namespace attngen::codegen {

/// Parses a Halide target string; throws std::invalid_argument naming the string when it is not one,
/// or when it is `host` (not portable, and wrong on some CPUs).
Halide::Target parse_target(const std::string& name);

/// The best explicitly named x86-64 target this machine's CPU runs, for JIT tests: AVX-512 (Skylake
/// set), else AVX2+FMA, else baseline x86-64; with f16c where present.
Halide::Target running_cpu_target();

/// `target` with what `desc`'s kernels need of it: 64-bit addressing for a paged cache's pools, which
/// a serving engine sizes past 2^31 elements; Halide's `avx512` where bf16 dot products are used.
Halide::Target target_for(Halide::Target target, const attention_desc& desc);

/// Whether `target` is the AVX512-BF16 tier: Halide's `avx512_sapphirerapids` feature, whose kernels
/// attngen compiles for LLVM's `cooperlake` CPU (the AVX-512 Skylake set with VNNI and BF16, which
/// AMD Zen 4 and later have too) and runs only where CPUID reports AVX512-BF16 (see
/// attngen/runtime/detail/cpu_dispatch.hpp). Not AVX512-FP16, which Halide's `sapphirerapids` CPU
/// would let LLVM use.
bool has_bf16_dot_products(const Halide::Target& target);

/// Whether `desc`'s kernels on `target` compute q.k and weight x V as bf16 dot products: bf16 queries,
/// keys and values (not int8-scaled), an even head_dim, on the AVX512-BF16 tier.
bool takes_bf16_dot_products(const attention_desc& desc, const Halide::Target& target);

/// Whether this machine's CPU runs `target`'s code: an x86-64 Linux target all of whose x86 features
/// the CPU has.
bool cpu_runs(const Halide::Target& target);

}  // namespace attngen::codegen
