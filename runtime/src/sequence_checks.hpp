#pragma once
// The checks of what the runtime reads to cut a call into sequences (attngen/runtime/detail/
// sequence_views.hpp), after the shapes are checked.

#include "attngen/runtime/detail/sequence_views.hpp"

namespace attngen::detail {

// q_offsets non-decreasing from 0 up to at most total_q, each kv length from 0 to the keys the
// sequence can hold, and each page a sequence's keys lie in within the pool.
status check_sequence_tensors(const attention_desc& desc, const attention_args& args);

}  // namespace attngen::detail
