#include <vector>

#include "argument_checks.hpp"
#include "attention_views.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "position_checks.hpp"

namespace attngen {

using namespace detail;

status validate(const attention_desc& desc, const attention_args& args) {
  // Every slot of the call but the scalars (passed by value), in the schema's order, outputs last.
  const attention_argument_table table = argument_table(desc);
  std::vector<checked_argument> arguments;
  arguments.reserve(table.size());
  for (const kernel_argument& argument : table)
    if (const tensor_view* view = given_view(args, argument)) arguments.push_back(checked(argument, *view));
  if (status s = check_arguments(arguments); !s) return s;
  return check_global_positions(desc, args);
}

}  // namespace attngen
