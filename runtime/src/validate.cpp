#include <cstdint>
#include <string>
#include <vector>

#include "attention_views.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "tensor_checks.hpp"

namespace attngen {

using namespace detail;

namespace {

// A run-time extent (B, Lq, Lk) as the first argument with it gives it, and that argument's name.
struct run_time_extent {
  std::int64_t value = 0;
  const char* from = nullptr;
};

// The contract's text for messages: "(B, Lq, H, D)"; a captured tensor's fixed extent by its value.
std::string dims_text(const kernel_argument& argument) {
  std::string text = "(";
  for (int d = 0; d < argument.rank; ++d) {
    const argument_dim& dim = argument.dims[d];
    text += (d ? ", " : "") + (dim.extent > 0 && dim.symbol == "n" ? std::to_string(dim.extent) : std::string(dim.symbol));
  }
  return text + ")";
}

}  // namespace

status validate(const attention_desc& desc, const attention_args& args) {
  // Every slot of the call but the scalars (passed by value), in the schema's order, outputs last.
  const attention_argument_table table = argument_table(desc);
  std::vector<const kernel_argument*> slots;
  std::vector<tensor_presence> all;
  slots.reserve(table.size());
  all.reserve(table.size());
  for (const kernel_argument& argument : table)
    if (const tensor_view* view = given_view(args, argument)) {
      slots.push_back(&argument);
      all.push_back({argument.name.data(), *view, argument.taken, argument.feature.data()});
    }
  for (const auto& p : all)
    if (status s = check_presence(p); !s) return s;
  if (status s = check_same_device(all.data(), int(all.size())); !s) return s;

  // The first argument with a run-time extent gives it (q gives B and Lq, k gives Lk); its own
  // extents are checked against themselves.
  run_time_extent extents[3];
  for (std::size_t n = 0; n < slots.size(); ++n) {
    const kernel_argument& argument = *slots[n];
    if (!argument.taken) continue;
    const tensor_view& view = all[n].view;
    std::vector<expected_dim> dims;
    for (int d = 0; d < argument.rank; ++d) {
      const argument_dim& dim = argument.dims[d];
      if (dim.source == extent_source::description) {
        dims.push_back({dim.label.data(), dim.extent, "", dim.is_count});
        continue;
      }
      run_time_extent& extent = extents[int(dim.source)];
      if (extent.from == nullptr) {
        extent = {view.rank == argument.rank ? view.shape[d] : 0, all[n].name};
        dims.push_back({dim.label.data(), extent.value});
      } else {
        dims.push_back({dim.label.data(), extent.value, extent.from});
      }
    }
    if (status s = check_layout(all[n].name, view, argument.type, dims_text(argument).c_str(), dims); !s) return s;
    if (argument.is_output()) {
      if (status s = check_writable(all[n].name, view); !s) return s;
      if (status s = check_distinct_elements(all[n].name, view); !s) return s;
    }
  }

  // Kernels read inputs while writing outputs: in-place calls would read what they already wrote.
  for (std::size_t out = 0; out < slots.size(); ++out) {
    if (!slots[out]->is_output()) continue;
    for (std::size_t other = 0; other < out; ++other)
      if (overlap(all[out].view, all[other].view))
        return slots[other]->is_output()
                   ? fail(error_code::wrong_shape, all[out].name, std::string("overlaps ") + all[other].name + " in memory")
                   : fail(error_code::wrong_shape, all[out].name,
                          std::string("overlaps ") + all[other].name + " in memory; kernels do not run in place");
  }
  return {};
}

}  // namespace attngen
