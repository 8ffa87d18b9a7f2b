#include "argument_checks.hpp"

#include <cstdint>
#include <string>

namespace attngen::detail {

namespace {

// A run-time extent (B, Lq, Lk) as the first argument with it gives it, and that argument's name.
struct run_time_extent {
  std::int64_t value = 0;
  const char* from = nullptr;
};

// The contract's text for messages: "(B, Lq, H, D)"; a captured tensor's fixed extent by its value.
std::string dims_text(const checked_argument& argument) {
  std::string text = "(";
  for (int d = 0; d < argument.rank; ++d) {
    const argument_dim& dim = argument.dims[d];
    text += (d ? ", " : "") + (dim.extent > 0 && dim.symbol == "n" ? std::to_string(dim.extent) : std::string(dim.symbol));
  }
  return text + ")";
}

// Sets each run-time extent from the first argument that has it as a dimension of its own (B from
// the key tensor when the first to mention it, the ragged queries' (B + 1) offsets, only derives it).
void set_run_time_extents(const std::vector<checked_argument>& arguments,
                          run_time_extent (&extents)[run_time_extent_count]) {
  for (const checked_argument& argument : arguments) {
    if (!argument.taken) continue;
    for (int d = 0; d < argument.rank; ++d) {
      const argument_dim& dim = argument.dims[d];
      if (!dim.is_run_time_extent()) continue;
      run_time_extent& extent = extents[int(dim.source)];
      if (extent.from == nullptr)
        extent = {argument.view.rank == argument.rank ? argument.view.shape[d] : 0, argument.name};
    }
  }
}

// The dimensions `argument` must have: extents from the description, or from the argument that
// sets the run-time extent.
std::vector<expected_dim> expected_dims(const checked_argument& argument,
                                        const run_time_extent (&extents)[run_time_extent_count]) {
  std::vector<expected_dim> dims;
  for (int d = 0; d < argument.rank; ++d) {
    const argument_dim& dim = argument.dims[d];
    if (dim.source == extent_source::description) {
      dims.push_back({dim.label.data(), dim.extent, "", dim.is_count});
      continue;
    }
    const run_time_extent& extent = extents[int(dim.source)];
    const bool sets_it = extent.from == argument.name && dim.is_run_time_extent();
    dims.push_back({dim.label.data(), dim.scale * extent.value + dim.offset, sets_it || !extent.from ? "" : extent.from,
                    dim.is_count});
  }
  return dims;
}

}  // namespace

status check_arguments(const std::vector<checked_argument>& arguments) {
  std::vector<tensor_presence> all;
  all.reserve(arguments.size());
  for (const checked_argument& a : arguments) all.push_back({a.name, a.view, a.taken, a.feature});
  for (const tensor_presence& p : all)
    if (status s = check_presence(p); !s) return s;
  // What the runtime reads to split a call into sequences is in host memory; the rest on one device.
  std::vector<tensor_presence> on_call_device;
  for (std::size_t n = 0; n < arguments.size(); ++n) {
    if (!arguments[n].host_only) {
      on_call_device.push_back(all[n]);
    } else if (!arguments[n].view.empty()) {
      if (status s = check_on_host(arguments[n].name, arguments[n].view,
                                   "the runtime reads it to split the call into sequences, so it is a host tensor "
                                   "even when the call runs on a GPU");
          !s)
        return s;
    }
  }
  if (status s = check_same_device(on_call_device.data(), int(on_call_device.size())); !s) return s;

  run_time_extent extents[run_time_extent_count];
  set_run_time_extents(arguments, extents);
  for (const checked_argument& a : arguments) {
    if (!a.taken) continue;
    if (status s = check_layout(a.name, a.view, a.type, dims_text(a).c_str(), expected_dims(a, extents), a.large); !s) return s;
    if (a.is_output) {
      if (status s = check_writable(a.name, a.view); !s) return s;
      if (status s = check_distinct_elements(a.name, a.view); !s) return s;
    }
  }

  // Kernels read inputs while writing outputs: in-place calls would read what they already wrote.
  for (std::size_t out = 0; out < arguments.size(); ++out) {
    if (!arguments[out].is_output) continue;
    for (std::size_t other = 0; other < out; ++other)
      if (overlap(arguments[out].view, arguments[other].view))
        return fail(error_code::wrong_shape, arguments[out].name,
                    std::string("overlaps ") + arguments[other].name + " in memory" +
                        (arguments[other].is_output ? "" : "; kernels do not run in place"));
  }
  return {};
}

}  // namespace attngen::detail
