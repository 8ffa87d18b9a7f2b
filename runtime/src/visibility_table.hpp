#pragma once
// The run-time visibility table a host call's variant takes where its mask modifier reads captures
// (attngen::detail::visibility_entry).

#include <cstdint>
#include <vector>

#include "attngen/runtime/detail/kernel_bridge.hpp"
#include "call_context.hpp"
#include "gpu_call.hpp"

namespace attngen::detail {

// The batch rows, queries and keys a kernel call covers: the whole batch, or one sequence (`batch` 1
// from `first_batch`).
struct call_extents {
  std::int64_t batch = 0, first_batch = 0, queries = 0, keys = 0;
};

// The visibility table's slices `visibility` gives a host call, computed into `bytes` after the table
// on the finest tiles (an empty view where the variant takes none). Its batch dimension starts at
// `extents.first_batch` in the kernel's indexing.
status compute_visibility_table(const attention_desc& desc, const visibility_entry& visibility,
                                const attention_args& args, const tensor_view& scalars, const call_extents& extents,
                                call_context& context, gpu_call& host, std::vector<std::uint8_t>& bytes,
                                tensor_view& slices);

}  // namespace attngen::detail
