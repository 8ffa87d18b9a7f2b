#pragma once
/// Validation of module descriptions, at compile time and at run time, from the rules of its knob
/// table (module_knobs.hpp), as validation.hpp does for the operator.
///
/// Compile time:  `attngen::validated<my_module>()` stops compilation with
///                "static assertion failed: attngen: <message>" for the first broken rule.
/// Run time:      `attngen::first_problem(desc)` returns the same message, or an empty view when valid.

#include <string_view>

#include "attngen/module.hpp"
#include "attngen/module_knobs.hpp"
#include "attngen/validation.hpp"

namespace attngen {

/// Every rule of a module description, in the order they are checked: its knobs' (module_knobs.hpp).
#define ATTNGEN_MODULE_RULES(RULE) ATTNGEN_MODULE_KNOBS(ATTNGEN_NO_KNOB, RULE)

/// first_problem(const mha_desc&), is_valid(const mha_desc&), validated<mha_desc D>() (see
/// ATTNGEN_VALIDATION_FUNCTIONS in validation.hpp).
ATTNGEN_VALIDATION_FUNCTIONS(mha_desc, ATTNGEN_MODULE_RULES)

}  // namespace attngen
