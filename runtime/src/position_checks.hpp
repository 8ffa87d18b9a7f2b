#pragma once
// The checks of a call's global positions (attention_desc::with_global_positions), after the shapes
// are checked: the slices lie within the whole sequence, and the captured tensors that span it
// have its lengths.

#include "attngen/runtime/attention_call.hpp"

namespace attngen::detail {

// Starts at least 0, start + the call's length within the total, and every captured tensor's
// query_total or key_total extent equal to the total positions gives.
status check_global_positions(const attention_desc& desc, const attention_args& args);

}  // namespace attngen::detail
