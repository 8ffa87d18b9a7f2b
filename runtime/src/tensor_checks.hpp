#pragma once
// Checks of one tensor view against a shape contract, shared by the operator's and the module's
// argument validation, so both report problems in the same words.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen::detail {

// One dimension of a tensor's contract: what it is called in messages, and the extent it must have
// (`from` says where that extent comes from; empty when it comes from the description). Counts read
// "8 kv heads"; sizes read "head_dim 128".
struct expected_dim {
  const char* label;
  std::int64_t extent;
  const char* from = "";
  bool is_count = false;
};

status fail(error_code code, const char* name, const std::string& what);

// Presence: a tensor the description takes must be given; one it does not take must not be.
status check_presence(const char* name, const tensor_view& t, bool required, const char* feature);

// Element type, rank, extents, strides and 32-bit reach of `t`; `dims_text` names the dimensions.
status check_layout(const char* name, const tensor_view& t, dtype type, const char* dims_text,
                    const std::vector<expected_dim>& dims);

// True when the byte ranges the two views can touch intersect.
bool overlap(const tensor_view& a, const tensor_view& b);

}  // namespace attngen::detail
