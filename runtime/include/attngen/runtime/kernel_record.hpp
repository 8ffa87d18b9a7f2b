#pragma once
/// What a generated kernel records about itself, as readable text: every generated `<kernel>.hpp`
/// holds its name, the description it was generated from, the attngen version and the targets.

#include <string>

namespace attngen {

/// The record of `Kernel` (a generated kernel struct), e.g. to log which kernel an app runs:
///
///     attngen 0.1.0 kernel llama_prefill
///     targets: x86-64-linux-avx512_skylake-fma-f16c x86-64-linux-avx2-fma-f16c x86-64-linux
///     gpu targets: (none)
///     description:
///       heads = 32
///       ...
template <typename Kernel>
std::string kernel_record() {
  std::string record = std::string("attngen ") + Kernel::attngen_version + " kernel " + Kernel::name +
                       "\ntargets: " + Kernel::targets + "\ngpu targets: " +
                       (*Kernel::gpu_targets ? Kernel::gpu_targets : "(none)") + "\ndescription:\n";
  for (const char* line = Kernel::description_text; *line;) {
    record += "  ";
    while (*line && *line != '\n') record += *line++;
    if (*line) record += *line++;
  }
  return record;
}

}  // namespace attngen
