#pragma once
// The checks of what the runtime reads to cut a call into sequences (attngen/runtime/detail/
// sequence_views.hpp), after the shapes are checked.

#include <string>

#include "attngen/runtime/detail/sequence_views.hpp"

namespace attngen::detail {

// `offsets` ((sequences + 1) int32, named `name`) start at 0, never decrease and end at most at
// `total`, which `total_text` names in messages ("total_q (12, the rows of q)").
status check_offsets(const char* name, const tensor_view& offsets, std::int64_t sequences, std::int64_t total,
                     const std::string& total_text);

// q_offsets non-decreasing from 0 up to at most total_q, each kv length from 0 to the keys the
// sequence can hold, and each page a sequence's keys lie in within the pool.
status check_sequence_tensors(const attention_desc& desc, const attention_args& args);

}  // namespace attngen::detail
