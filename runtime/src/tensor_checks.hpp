#pragma once
// Checks of one tensor view against a shape contract, shared by the operator's and the module's
// argument validation, so both report problems in the same words.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen::detail {

// One dimension of a tensor's contract: what it is called in messages, and the extent it must have
// (`from` says where that extent comes from; empty when it comes from the description). Counts read
// "8 kv heads"; sizes read "head_dim 128".
struct expected_dim {
  const char* label;
  std::int64_t extent;
  const char* from = "";
  bool is_count = false;
};

status fail(error_code code, const char* name, const std::string& what);

// One argument of a call: its name in messages, whether the description takes it, and the feature
// that would take it (named when a tensor is given that the description does not take).
struct tensor_presence {
  const char* name;
  const tensor_view& view;
  bool required;
  const char* feature;
};

// Presence: a tensor the description takes must be given; one it does not take must not be.
status check_presence(const tensor_presence& p);

// Every given tensor on one device: the first given one's.
status check_same_device(const tensor_presence* tensors, int count);

// The name used for a device in messages: "host", "cuda", "opencl".
const char* name_of(device_kind device);

// True when some extent of `t` is 0: nothing is read or written through it.
bool has_no_elements(const tensor_view& t);

// Element type, rank, extents, strides and 32-bit reach of `t`; `dims_text` names the dimensions.
// `large`: the tensor may span more than 2^31 elements (kernels address it with 64 bits).
status check_layout(const char* name, const tensor_view& t, dtype type, const char* dims_text,
                    const std::vector<expected_dim>& dims, bool large = false);

// A tensor the runtime itself reads or writes must be in host memory; `why` ends the message
// ("is on cuda; <why>").
status check_on_host(const char* name, const tensor_view& t, const char* why);

// A tensor the runtime converts element by element: f32, f16 or bf16.
status check_float_element(const char* name, const tensor_view& t);

// An output must be writable: a view made from a const pointer is refused.
status check_writable(const char* name, const tensor_view& t);

// For an output already through check_layout: refuses strides that give two elements one address
// (which element would the kernel's threads leave there?). Dimensions ordered by stride must each
// step past everything the inner ones span: sufficient, and what every real layout satisfies.
status check_distinct_elements(const char* name, const tensor_view& t);

// True when the byte ranges the two views can touch intersect. OpenCL buffers are opaque handles:
// two views of them overlap when they are views of the same buffer.
bool overlap(const tensor_view& a, const tensor_view& b);

}  // namespace attngen::detail
