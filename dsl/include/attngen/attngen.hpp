#pragma once
/// The attngen description language: everything needed to describe attention kernels.

#include "attngen/attention.hpp"
#include "attngen/builtins.hpp"
#include "attngen/dtype.hpp"
#include "attngen/module.hpp"
#include "attngen/module_text_format.hpp"
#include "attngen/modifiers.hpp"
#include "attngen/module_validation.hpp"
#include "attngen/text_format.hpp"
#include "attngen/validation.hpp"
