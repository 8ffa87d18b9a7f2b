#include "attngen/codegen/targets.hpp"

#include <cpuid.h>

#include <stdexcept>
#include <utility>

#include "attngen/runtime/detail/cpu_dispatch.hpp"

namespace attngen::codegen {

namespace {

// From CPUID leaf 1 (clang's __builtin_cpu_supports does not know "f16c").
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

}  // namespace

Halide::Target parse_target(const std::string& name) {
  if (name == "host" || name.rfind("host-", 0) == 0)
    throw std::invalid_argument("target `" + name +
                                "`: `host` is not accepted; name the target, e.g. x86-64-linux-avx512_skylake-fma-f16c");
  if (!Halide::Target::validate_target_string(name))
    throw std::invalid_argument("`" + name + "` is not a Halide target string");
  return Halide::Target(name);
}

Halide::Target running_cpu_target() {
  __builtin_cpu_init();
  std::string name = "x86-64-linux";
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    name += "-avx512_skylake-fma";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    name += "-avx2-fma";
  else if (__builtin_cpu_supports("sse4.1"))
    name += "-sse41";
  if (__builtin_cpu_supports("avx")) name += "-f16c";  // every AVX-era x86-64 CPU since 2012 has F16C
  return Halide::Target(name);
}

bool cpu_runs(const Halide::Target& target) {
  if (target.arch != Halide::Target::X86 || target.bits != 64 || target.os != Halide::Target::Linux) return false;
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512cd");
  const std::pair<Halide::Target::Feature, bool> features[] = {
      {Halide::Target::AVX512_Skylake, avx512},
      {Halide::Target::AVX512_SapphireRapids, detail::runs_bf16_tier(detail::this_cpu())},
      {Halide::Target::AVX2, __builtin_cpu_supports("avx2")},
      {Halide::Target::FMA, __builtin_cpu_supports("fma")}, {Halide::Target::F16C, cpu_has_f16c()},
      {Halide::Target::AVX, __builtin_cpu_supports("avx")}, {Halide::Target::SSE41, __builtin_cpu_supports("sse4.1")}};
  for (const auto& [feature, present] : features)
    if (target.has_feature(feature) && !present) return false;
  return true;
}

bool has_bf16_dot_products(const Halide::Target& target) {
  return target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

bool takes_bf16_dot_products(const attention_desc& desc, const Halide::Target& target) {
  return has_bf16_dot_products(target) && desc.element_type == dtype::bf16 && desc.effective_kv_element() == dtype::bf16 &&
         !desc.has_kv_scales() && desc.qk_head_dim % 2 == 0;
}

Halide::Target target_for(Halide::Target target, const attention_desc& desc) {
  if (desc.is_paged()) target = target.with_feature(Halide::Target::LargeBuffers);
  // Halide 14 defines its vdpbf16ps helper in the runtime module it links only with `avx512`.
  if (has_bf16_dot_products(target)) target = target.with_feature(Halide::Target::AVX512);
  return target;
}

}  // namespace attngen::codegen
