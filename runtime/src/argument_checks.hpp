#pragma once
// Validation of a call's arguments against its schema (attngen/arguments.hpp,
// attngen/module_arguments.hpp), the same for the operator and the module: presence, one device,
// layouts with the run-time extents their first argument gives, writable distinct outputs, and no
// output overlapping another argument.

#include <vector>

#include "attngen/arguments.hpp"
#include "tensor_checks.hpp"

namespace attngen::detail {

// One argument of a call as validation sees it: its schema entry, without the slot, and the view
// given for it.
struct checked_argument {
  const char* name;
  const tensor_view& view;
  bool taken;
  const char* feature;
  dtype type;
  int rank;
  const argument_dim* dims;
  bool is_output;
  bool host_only;
  bool large;
};

template <typename Slot>
checked_argument checked(const argument<Slot>& a, const tensor_view& view) {
  return {a.name.data(), view, a.taken, a.feature.data(), a.type, a.rank, a.dims, a.is_output(), a.host_only, a.large};
}

// Checks `arguments` (every slot of a call, in the schema's order, outputs last); the first problem
// found is returned.
status check_arguments(const std::vector<checked_argument>& arguments);

}  // namespace attngen::detail
