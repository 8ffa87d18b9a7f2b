#pragma once
/// Where a module call's time goes on the host: the runtime adds each part's wall time to a record
/// the calling thread installs (attngen-bench reports the projections' share with it). Nothing is
/// measured while no record is installed.

namespace attngen::detail {

/// Seconds spent in a module's parts, summed over the calls made while the record was installed.
struct module_part_times {
  double projections = 0;  ///< the input projections and the output projection
  double attention = 0;
  double weights = 0;      ///< the attention weights (need_weights)
};

/// Makes this thread's module calls add their parts' times to `record` (nullptr: stop).
void record_module_part_times(module_part_times* record);

}  // namespace attngen::detail
