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

  const tensor_presence all[] = {{"q", args.q, true, ""},
                          {"k", args.k, true, ""},
                          {"v", args.v, true, ""},
                          {"mask", args.mask, desc.has_additive_mask(), "additive mask"},
                          {"key_padding", args.key_padding, desc.has_key_padding_mask(), "key-padding mask"},
                          {"output", args.output, true, ""},
                          {"lse", args.lse, desc.lse_output, "log-sum-exp output"}};
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
  const tensor_presence inputs[] = {all[0], all[1], all[2], all[3], all[4]};
  for (const tensor_presence* out : {&all[5], &all[6]})
    for (const auto& in : inputs)
      if (overlap(out->view, in.view))
        return fail(error_code::wrong_shape, out->name,
                    std::string("overlaps ") + in.name + " in memory; kernels do not run in place");
  if (overlap(args.output, args.lse)) return fail(error_code::wrong_shape, "lse", "overlaps output in memory");
  return {};
}

}  // namespace attngen
