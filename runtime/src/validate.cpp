#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attngen/runtime/attention_call.hpp"
#include "attngen/text_format.hpp"

namespace attngen {

namespace {

// One dimension of a tensor's contract: what it is called in messages, and the extent it must have
// (`from` says where that extent comes from; empty when it comes from the description). Counts read
// "8 kv heads"; sizes read "head_dim 128".
struct expected_dim {
  const char* label;
  std::int64_t extent;
  const char* from = "";
  bool is_count = false;
};

std::string describe(const expected_dim& dim) {
  const std::string extent = std::to_string(dim.extent);
  return dim.is_count ? extent + " " + dim.label : std::string(dim.label) + " " + extent;
}

std::string shape_text(const tensor_view& t) {
  std::string s = "(";
  for (int d = 0; d < t.rank; ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + ")";
}

status fail(error_code code, const char* name, const std::string& what) {
  return status(code, std::string(name) + ": " + what);
}

// Presence: a tensor the description takes must be given; one it does not take must not be.
status check_presence(const char* name, const tensor_view& t, bool required, const char* feature) {
  if (!required && !t.empty())
    return fail(error_code::unexpected_tensor, name,
                std::string("this kernel's description has no ") + feature + ", but a tensor was given");
  if (required && t.data == nullptr) return fail(error_code::null_pointer, name, "data pointer is null");
  return {};
}

status check_layout(const char* name, const tensor_view& t, dtype type, const char* dims_text,
                    const std::vector<expected_dim>& dims) {
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
    if (t.shape[d] > int32_max || t.strides[d] > int32_max)
      return fail(error_code::too_large, name, "dimension " + std::to_string(d) + " does not fit 32-bit indexing");
    if (t.shape[d] > 0) last_offset += (t.shape[d] - 1) * t.strides[d];
  }
  if (last_offset > int32_max)
    return fail(error_code::too_large, name, "spans more than 2^31 elements; the kernel indexes with 32 bits");
  return {};
}

// Byte range [first, last] a view can touch (empty views touch nothing).
struct byte_range {
  std::uintptr_t first = 0, last = 0;
  bool empty = true;
};

byte_range bytes_of(const tensor_view& t) {
  byte_range r;
  if (t.data == nullptr) return r;
  std::int64_t last_offset = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return r;
    last_offset += (t.shape[d] - 1) * t.strides[d];
  }
  r.first = reinterpret_cast<std::uintptr_t>(t.data);
  r.last = r.first + std::uintptr_t(last_offset + 1) * size_of(t.type) - 1;
  r.empty = false;
  return r;
}

bool overlap(const tensor_view& a, const tensor_view& b) {
  const byte_range x = bytes_of(a), y = bytes_of(b);
  return !x.empty && !y.empty && x.first <= y.last && y.first <= x.last;
}

}  // namespace

status validate(const attention_desc& desc, const attention_args& args) {
  const std::int64_t H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim,
                     Dv = desc.effective_v_head_dim();
  const dtype element = desc.element_type;

  struct presence {
    const char* name;
    const tensor_view& view;
    bool required;
    const char* feature;
  };
  const presence all[] = {{"q", args.q, true, ""},
                          {"k", args.k, true, ""},
                          {"v", args.v, true, ""},
                          {"mask", args.mask, desc.has_additive_mask(), "additive mask"},
                          {"key_padding", args.key_padding, desc.has_key_padding_mask(), "key-padding mask"},
                          {"output", args.output, true, ""},
                          {"lse", args.lse, desc.lse_output, "log-sum-exp output"}};
  for (const auto& p : all)
    if (status s = check_presence(p.name, p.view, p.required, p.feature); !s) return s;

  // q defines B and Lq (its own extents are checked against themselves); k defines Lk.
  const std::int64_t B = args.q.rank == 4 ? args.q.shape[0] : 0;
  const std::int64_t Lq = args.q.rank == 4 ? args.q.shape[1] : 0;
  if (status s = check_layout("q", args.q, element, "(B, Lq, H, D)",
                              {{"batch", B}, {"Lq", Lq}, {"heads", H, "", true}, {"head_dim", D}});
      !s)
    return s;
  const std::int64_t Lk = args.k.rank == 4 ? args.k.shape[1] : 0;
  if (status s = check_layout("k", args.k, element, "(B, Lk, KVH, D)",
                              {{"batch", B, "q"}, {"Lk", Lk}, {"kv heads", KVH, "", true}, {"head_dim", D}});
      !s)
    return s;
  if (status s = check_layout("v", args.v, element, "(B, Lk, KVH, Dv)",
                              {{"batch", B, "q"}, {"Lk", Lk, "k"}, {"kv heads", KVH, "", true}, {"v head_dim", Dv}});
      !s)
    return s;
  if (desc.has_additive_mask()) {
    std::vector<expected_dim> dims;
    const char* text = "";
    switch (desc.additive_mask_shape) {
      case mask_shape::lq_lk: dims = {{"Lq", Lq, "q"}, {"Lk", Lk, "k"}}; text = "(Lq, Lk)"; break;
      case mask_shape::h_lq_lk: dims = {{"heads", H, "", true}, {"Lq", Lq, "q"}, {"Lk", Lk, "k"}}; text = "(H, Lq, Lk)"; break;
      case mask_shape::b_h_lq_lk:
        dims = {{"batch", B, "q"}, {"heads", H, "", true}, {"Lq", Lq, "q"}, {"Lk", Lk, "k"}};
        text = "(B, H, Lq, Lk)";
        break;
      case mask_shape::b_1_lq_lk:
        dims = {{"batch", B, "q"}, {"heads (broadcast)", 1, "", true}, {"Lq", Lq, "q"}, {"Lk", Lk, "k"}};
        text = "(B, 1, Lq, Lk)";
        break;
      case mask_shape::none: break;
    }
    if (status s = check_layout("mask", args.mask, element, text, dims); !s) return s;
  }
  if (desc.has_key_padding_mask())
    if (status s = check_layout("key_padding", args.key_padding, dtype::u8, "(B, Lk)",
                                {{"batch", B, "q"}, {"Lk", Lk, "k"}});
        !s)
      return s;
  if (status s = check_layout("output", args.output, element, "(B, Lq, H, Dv)",
                              {{"batch", B, "q"}, {"Lq", Lq, "q"}, {"heads", H, "", true}, {"v head_dim", Dv}});
      !s)
    return s;
  if (desc.lse_output)
    if (status s = check_layout("lse", args.lse, dtype::f32, "(B, H, Lq)",
                                {{"batch", B, "q"}, {"heads", H, "", true}, {"Lq", Lq, "q"}});
        !s)
      return s;

  // Kernels read inputs while writing outputs: in-place calls would read what they already wrote.
  const presence inputs[] = {all[0], all[1], all[2], all[3], all[4]};
  for (const presence* out : {&all[5], &all[6]})
    for (const auto& in : inputs)
      if (overlap(out->view, in.view))
        return fail(error_code::wrong_shape, out->name,
                    std::string("overlaps ") + in.name + " in memory; kernels do not run in place");
  if (overlap(args.output, args.lse)) return fail(error_code::wrong_shape, "lse", "overlaps output in memory");
  return {};
}

}  // namespace attngen
