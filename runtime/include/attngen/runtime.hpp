#pragma once
/// The attngen runtime: tensor views, argument validation, errors, kernel records, KV-cache appends,
/// merging partial results.
/// Apps include the generated `<kernel>.hpp`, which includes this.

#include "attngen/attention.hpp"
#include "attngen/runtime/attention_backward_call.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/kernel_record.hpp"
#include "attngen/runtime/kv_cache.hpp"
#include "attngen/runtime/merge.hpp"
#include "attngen/runtime/module_call.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"
