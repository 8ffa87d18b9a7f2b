#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attngen/runtime/attention_call.hpp"
#include "tensor_checks.hpp"

namespace attngen {

using namespace detail;

status validate(const attention_desc& desc, const attention_args& args) {
  const std::int64_t H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim,
                     Dv = desc.effective_v_head_dim();
  const dtype element = desc.element_type;

  // Captured tensors are named as declared; slots past the declared ones by their index.
  static constexpr const char* capture_slots[] = {"captures[0]", "captures[1]", "captures[2]", "captures[3]"};
  static_assert(std::size(capture_slots) == capture_table::max_tensors);
  const capture_table& captures = desc.captures;
  auto capture_name_of = [&](int n) { return n < captures.tensor_count ? captures.tensors[n].name.text : capture_slots[n]; };
  const tensor_presence all[] = {
      {"q", args.q, true, ""},
      {"k", args.k, true, ""},
      {"v", args.v, true, ""},
      {"mask", args.mask, desc.has_additive_mask(), "additive mask"},
      {"key_padding", args.key_padding, desc.has_key_padding_mask(), "key-padding mask"},
      {capture_name_of(0), args.captures[0], captures.tensor_count > 0, "captured tensor in this slot"},
      {capture_name_of(1), args.captures[1], captures.tensor_count > 1, "captured tensor in this slot"},
      {capture_name_of(2), args.captures[2], captures.tensor_count > 2, "captured tensor in this slot"},
      {capture_name_of(3), args.captures[3], captures.tensor_count > 3, "captured tensor in this slot"},
      {"output", args.output, true, ""},
      {"lse", args.lse, desc.lse_output, "log-sum-exp output"}};
  // The outputs, output and lse, come last.
  constexpr int first_output = int(std::size(all)) - 2;
  for (const auto& p : all)
    if (status s = check_presence(p); !s) return s;
  if (status s = check_same_device(all, int(std::size(all))); !s) return s;

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
  for (int n = 0; n < captures.tensor_count; ++n) {
    const tensor_capture& declared = captures.tensors[n];
    std::vector<expected_dim> dims;
    std::string text = "(";
    for (int d = 0; d < declared.rank; ++d) {
      const extent e = declared.extents[d];
      switch (e.kind) {
        case extent_kind::batch: dims.push_back({"batch", B, "q"}); break;
        case extent_kind::heads: dims.push_back({"heads", H, "", true}); break;
        case extent_kind::query_length: dims.push_back({"Lq", Lq, "q"}); break;
        case extent_kind::key_length: dims.push_back({"Lk", Lk, "k"}); break;
        case extent_kind::fixed: dims.push_back({"declared extent", e.size}); break;
      }
      text += std::string(d > 0 ? ", " : "") + dims.back().label;
    }
    text += ")";
    const dtype type = declared.type == capture_type::i32 ? dtype::i32 : dtype::f32;
    if (status s = check_layout(declared.name.text, args.captures[n], type, text.c_str(), dims); !s) return s;
  }
  if (status s = check_layout("output", args.output, element, "(B, Lq, H, Dv)",
                              {{"batch", B, "q"}, {"Lq", Lq, "q"}, {"heads", H, "", true}, {"v head_dim", Dv}});
      !s)
    return s;
  if (status s = check_distinct_elements("output", args.output); !s) return s;
  if (desc.lse_output) {
    if (status s = check_layout("lse", args.lse, dtype::f32, "(B, H, Lq)",
                                {{"batch", B, "q"}, {"heads", H, "", true}, {"Lq", Lq, "q"}});
        !s)
      return s;
    if (status s = check_distinct_elements("lse", args.lse); !s) return s;
  }

  // Kernels read inputs while writing outputs: in-place calls would read what they already wrote.
  for (const tensor_presence* out : {&all[first_output], &all[first_output + 1]})
    for (int in = 0; in < first_output; ++in)
      if (overlap(out->view, all[in].view))
        return fail(error_code::wrong_shape, out->name,
                    std::string("overlaps ") + all[in].name + " in memory; kernels do not run in place");
  if (overlap(args.output, args.lse)) return fail(error_code::wrong_shape, "lse", "overlaps output in memory");
  return {};
}

}  // namespace attngen
