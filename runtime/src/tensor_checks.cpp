#include "tensor_checks.hpp"

#include <algorithm>
#include <limits>

#include "attngen/text_format.hpp"

namespace attngen::detail {

namespace {

std::string describe(const expected_dim& dim) {
  const std::string extent = std::to_string(dim.extent);
  return dim.is_count ? extent + " " + dim.label : std::string(dim.label) + " " + extent;
}

// "(a, b, c)" for a view's extents or strides.
std::string tuple_text(const std::int64_t* values, int rank) {
  std::string s = "(";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(values[d]);
  return s + ")";
}

std::string shape_text(const tensor_view& t) { return tuple_text(t.shape, t.rank); }

// Byte range [first, last] a view can touch (empty views touch nothing).
struct byte_range {
  std::uintptr_t first = 0, last = 0;
  bool empty = true;
};

byte_range bytes_of(const tensor_view& t) {
  byte_range r;
  if (t.data == nullptr || has_no_elements(t)) return r;
  std::int64_t last_offset = 0;
  for (int d = 0; d < t.rank; ++d) last_offset += (t.shape[d] - 1) * t.strides[d];
  r.first = reinterpret_cast<std::uintptr_t>(t.data);
  r.last = r.first + std::uintptr_t(last_offset + 1) * size_of(t.type) - 1;
  r.empty = false;
  return r;
}

}  // namespace

status fail(error_code code, const char* name, const std::string& what) {
  return status(code, std::string(name) + ": " + what);
}

bool has_no_elements(const tensor_view& t) {
  for (int d = 0; d < std::min(t.rank, int(tensor_view::max_rank)); ++d)
    if (t.shape[d] == 0) return true;
  return false;
}

status check_presence(const tensor_presence& p) {
  if (p.view.rank < 0 || p.view.rank > tensor_view::max_rank)
    return fail(error_code::wrong_rank, p.name,
                "rank " + std::to_string(p.view.rank) + " is outside 0 to " + std::to_string(tensor_view::max_rank));
  if (!p.required && !p.view.empty())
    return fail(error_code::unexpected_tensor, p.name,
                std::string("this kernel's description has no ") + p.feature + ", but a tensor was given");
  // A tensor with no elements is never read or written, so it may have no data (as PyTorch's empty
  // tensors may not).
  if (p.required && p.view.data == nullptr && !has_no_elements(p.view))
    return fail(error_code::null_pointer, p.name, "data pointer is null");
  return {};
}

status check_layout(const char* name, const tensor_view& t, dtype type, const char* dims_text,
                    const std::vector<expected_dim>& dims, bool large) {
  if (t.type != type)
    return fail(error_code::wrong_dtype, name,
                "expected element type " + std::string(name_of(type)) + ", got " + std::string(name_of(t.type)));
  if (t.rank != int(dims.size()))
    return fail(error_code::wrong_rank, name,
                "expected rank " + std::to_string(dims.size()) + " " + dims_text + ", got rank " +
                    std::to_string(t.rank));
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0)
      return fail(error_code::wrong_shape, name, "extent of dimension " + std::to_string(d) + " is negative (" +
                                                     std::to_string(t.shape[d]) + ")");
    if (t.shape[d] != dims[d].extent) {
      std::string from = *dims[d].from ? std::string(" (from ") + dims[d].from + ")" : "";
      return fail(error_code::wrong_shape, name,
                  "expected " + describe(dims[d]) + from + ", got " + std::to_string(t.shape[d]) +
                      "; shape is " + shape_text(t));
    }
  }
  // A tensor with no elements is never accessed: its strides and pointer do not matter.
  if (has_no_elements(t)) return {};
  // Kernels load whole elements, and Halide assumes element-aligned buffers. (An OpenCL tensor's
  // data is a cl_mem handle, not an address.)
  if (t.device != device_kind::opencl && reinterpret_cast<std::uintptr_t>(t.data) % size_of(t.type) != 0)
    return fail(error_code::misaligned_pointer, name,
                "data pointer is not aligned to its " + std::to_string(size_of(t.type)) + "-byte elements");
  if (t.rank > 0 && t.strides[t.rank - 1] != 1 && t.shape[t.rank - 1] > 1)
    return fail(error_code::wrong_stride, name,
                "innermost dimension must be contiguous (stride 1), got stride " +
                    std::to_string(t.strides[t.rank - 1]));
  constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
  std::int64_t last_offset = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.strides[d] <= 0 && t.shape[d] > 1)
      return fail(error_code::wrong_stride, name,
                  "stride of dimension " + std::to_string(d) + " must be positive, got " + std::to_string(t.strides[d]));
    // A dimension of extent 1 is never stepped along: its stride is not used (kernels get 1).
    if (t.shape[d] > int32_max || (t.shape[d] > 1 && t.strides[d] > int32_max))
      return fail(error_code::too_large, name, "dimension " + std::to_string(d) + " does not fit 32-bit indexing");
    if (t.shape[d] > 0) last_offset += (t.shape[d] - 1) * t.strides[d];
    if (last_offset > int32_max && !large)
      return fail(error_code::too_large, name, "spans more than 2^31 elements; the kernel indexes with 32 bits");
  }
  return {};
}

status check_on_host(const char* name, const tensor_view& t, const char* why) {
  if (t.device == device_kind::host) return {};
  return fail(error_code::wrong_device, name, std::string("is on ") + name_of(t.device) + "; " + why);
}

status check_float_element(const char* name, const tensor_view& t) {
  if (t.type == dtype::f32 || t.type == dtype::f16 || t.type == dtype::bf16) return {};
  return fail(error_code::wrong_dtype, name, "expected element type f32, f16 or bf16, got " + std::string(name_of(t.type)));
}

status check_writable(const char* name, const tensor_view& t) {
  if (!t.read_only) return {};
  return fail(error_code::read_only_output, name,
              "is a view of const memory (made from a const pointer), but the kernel writes it");
}

status check_distinct_elements(const char* name, const tensor_view& t) {
  if (has_no_elements(t)) return {};
  int order[tensor_view::max_rank];
  int stepped = 0;
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] > 1) order[stepped++] = d;
  std::sort(order, order + stepped, [&t](int a, int b) { return t.strides[a] < t.strides[b]; });
  std::int64_t inner_reach = 0;  // the largest offset the inner dimensions reach
  for (int n = 0; n < stepped; ++n) {
    const int d = order[n];
    if (t.strides[d] <= inner_reach)
      return fail(error_code::wrong_stride, name,
                  "strides " + tuple_text(t.strides, t.rank) + " with shape " + shape_text(t) +
                      " give two elements one address; an output needs its own place for each element");
    inner_reach += (t.shape[d] - 1) * t.strides[d];
  }
  return {};
}

const char* name_of(device_kind device) {
  switch (device) {
    case device_kind::host: return "host";
    case device_kind::cuda: return "cuda";
    case device_kind::opencl: return "opencl";
  }
  return "?";
}

status check_same_device(const tensor_presence* tensors, int count) {
  const tensor_presence* first = nullptr;
  for (int n = 0; n < count; ++n) {
    const tensor_presence& t = tensors[n];
    if (t.view.empty()) continue;
    if (first == nullptr) first = &t;
    else if (t.view.device != first->view.device)
      return fail(error_code::wrong_device, t.name,
                  std::string("is on ") + name_of(t.view.device) + " but " + first->name + " is on " +
                      name_of(first->view.device) + "; one call's tensors must all be on one device");
  }
  return {};
}

bool overlap(const tensor_view& a, const tensor_view& b) {
  if (a.device == device_kind::opencl || b.device == device_kind::opencl)
    return a.device == b.device && a.data != nullptr && a.data == b.data && !has_no_elements(a) && !has_no_elements(b);
  const byte_range x = bytes_of(a), y = bytes_of(b);
  return !x.empty && !y.empty && x.first <= y.last && y.first <= x.last;
}

}  // namespace attngen::detail
