#pragma once
// The AMX part of an operator's kernel: NAME_amx.cpp, compiled by the app's compiler into the kernel's
// library, which defines the kernel's attngen::detail::amx_kernel record (in the wrapper's namespace):
// the forward pass on AMX tiles (attngen/amx/flash_forward.hpp) for the description, or none, with
// the reason.

#include <string>

#include "attngen/attention.hpp"

namespace attngen::codegen {

/// Writes NAME_amx.cpp into `directory`, with a kernel where `why_none` is empty and the AMX path
/// takes `desc` (attngen::amx::refusal), else with an empty record saying why.
void write_amx_part(const std::string& name, const std::string& cpp_namespace, const attention_desc& desc,
                    const std::string& directory, std::string why_none);

}  // namespace attngen::codegen
