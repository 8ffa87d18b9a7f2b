#include <string>
#include <vector>

#include "argument_checks.hpp"
#include "attngen/runtime/module_call.hpp"
#include "module_views.hpp"

namespace attngen {

using namespace detail;

namespace {

bool same_view(const tensor_view& a, const tensor_view& b) {
  if (a.data != b.data || a.type != b.type || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

// Checks each argument of `table` as `args` gives it. A self-attention kernel reads key and value
// from the query: they may be omitted, or be the query's own view (as in PyTorch's `module(x, x,
// x)`), and are then ignored.
template <typename Args>
status check_module_arguments(const mha_desc& desc, const module_argument_table& table, const Args& args) {
  std::vector<checked_argument> arguments;
  arguments.reserve(table.size());
  for (const module_argument& argument : table) {
    const tensor_view& view = *given_view(args, argument);
    const bool read_from_query = argument.slot == module_slot::key || argument.slot == module_slot::value;
    if (desc.self_attn && read_from_query) {
      if (!view.empty() && !same_view(view, args.query))
        return fail(error_code::unexpected_tensor, argument.name.data(),
                    "this kernel is self-attention (it reads the query); pass no tensor or the query's own view");
      continue;
    }
    arguments.push_back(checked(argument, view));
  }
  return check_arguments(arguments);
}

}  // namespace

status validate(const mha_desc& desc, const mha_args& args) {
  return check_module_arguments(desc, argument_table(desc), args);
}

status validate(const mha_desc& desc, const mha_backward_args& args) {
  if (!desc.backward)
    return status(error_code::unexpected_tensor,
                  "d_output: the kernel's description has no backward pass: add .with_backward()");
  return check_module_arguments(desc, module_backward_argument_table(desc), args);
}

}  // namespace attngen
