#include "position_checks.hpp"

#include <cstdint>
#include <string>

#include "attention_views.hpp"
#include "attngen/runtime/detail/sequence_views.hpp"
#include "tensor_checks.hpp"

namespace attngen::detail {

namespace {

// "query_start (positions[0]) = 5"
std::string entry_text(const char* what, global_position entry, std::int64_t value) {
  return std::string(what) + " (positions[" + std::to_string(int(entry)) + "]) = " + std::to_string(value);
}

// A slice of `length` from `start` within `total`: the call's queries or keys.
status check_slice(const tensor_view& positions, const char* start_name, global_position start_entry,
                   const char* total_name, global_position total_entry, std::int64_t length, const char* length_name) {
  const std::int64_t start = sequence_cut::element(positions, int(start_entry));
  const std::int64_t total = sequence_cut::element(positions, int(total_entry));
  if (start < 0) return fail(error_code::wrong_shape, "positions", entry_text(start_name, start_entry, start) + " is negative");
  if (start + length > total)
    return fail(error_code::wrong_shape, "positions",
                entry_text(start_name, start_entry, start) + " plus the call's " + length_name + " (" +
                    std::to_string(length) + ") exceeds " + entry_text(total_name, total_entry, total));
  return {};
}

}  // namespace

status check_global_positions(const attention_desc& desc, const attention_args& args) {
  if (!desc.global_positions) return {};
  const tensor_view& positions = args.positions;
  if (status s = check_slice(positions, "query_start", global_position::query_start, "query_total",
                             global_position::query_total, args.q.shape[1], "Lq");
      !s)
    return s;
  if (status s = check_slice(positions, "key_start", global_position::key_start, "key_total",
                             global_position::key_total, args.k.shape[1], "Lk");
      !s)
    return s;
  for (const kernel_argument& argument : kernel_arguments(desc)) {
    if (argument.slot != argument_slot::capture) continue;
    const tensor_view& view = *given_view(args, argument);
    for (int d = 0; d < argument.rank; ++d) {
      const extent_source source = argument.dims[d].source;
      if (source != extent_source::query_total && source != extent_source::key_total) continue;
      const bool queries = source == extent_source::query_total;
      const global_position entry = queries ? global_position::query_total : global_position::key_total;
      const std::int64_t total = sequence_cut::element(positions, int(entry));
      if (view.shape[d] != total)
        return fail(error_code::wrong_shape, argument.name.data(),
                    "spans the whole sequence: expected " + std::string(argument.dims[d].label) + " " +
                        std::to_string(total) + " (positions[" + std::to_string(int(entry)) + "]), got " +
                        std::to_string(view.shape[d]));
    }
  }
  return {};
}

}  // namespace attngen::detail
