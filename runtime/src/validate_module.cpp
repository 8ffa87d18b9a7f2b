#include <iterator>
#include <string>
#include <vector>

#include "attngen/runtime/module_call.hpp"
#include "tensor_checks.hpp"

namespace attngen {

using namespace detail;

namespace {

bool same_view(const tensor_view& a, const tensor_view& b) {
  if (a.data != b.data || a.type != b.type || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

}  // namespace

status validate(const mha_desc& desc, const mha_args& args) {
  const std::int64_t E = desc.embed, KVE = desc.kv_embed(), H = desc.num_heads;
  const std::int64_t kdim = desc.effective_kdim(), vdim = desc.effective_vdim();
  const bool bias = desc.projection_bias, bias_kv = desc.bias_kv, batch_first = desc.batch_major;
  const mha_weights& w = args.weights;
  const dtype element = desc.element_type;

  const tensor_presence all[] = {
      {"query", args.query, true, ""},
      {"key", args.key, !desc.self_attn, ""},
      {"value", args.value, !desc.self_attn, ""},
      {"weights.q_weight", w.q_weight, true, ""},
      {"weights.k_weight", w.k_weight, true, ""},
      {"weights.v_weight", w.v_weight, true, ""},
      {"weights.q_bias", w.q_bias, bias, "projection bias"},
      {"weights.k_bias", w.k_bias, bias, "projection bias"},
      {"weights.v_bias", w.v_bias, bias, "projection bias"},
      {"weights.bias_k", w.bias_k, bias_kv, "add_bias_kv"},
      {"weights.bias_v", w.bias_v, bias_kv, "add_bias_kv"},
      {"weights.out_weight", w.out_weight, true, ""},
      {"weights.out_bias", w.out_bias, bias, "projection bias"},
      {"key_padding_mask", args.key_padding_mask, desc.key_padding != mask_kind::none, "key_padding_mask"},
      {"attn_mask", args.attn_mask, desc.mask != mask_kind::none, "attn_mask"},
      {"output", args.output, true, ""},
      {"attn_weights", args.attn_weights, desc.weights != weights_output::none, "need_weights"}};
  // A self-attention kernel reads key and value from the query: they may be omitted, or be the
  // query's own view (as in PyTorch's `module(x, x, x)`), and are then ignored.
  const bool self = desc.self_attn;
  for (const auto& p : all) {
    if (self && (&p.view == &args.key || &p.view == &args.value)) {
      if (!p.view.empty() && !same_view(p.view, args.query))
        return fail(error_code::unexpected_tensor, p.name,
                    "this kernel is self-attention (it reads the query); pass no tensor or the query's own view");
      continue;
    }
    if (status s = check_presence(p); !s) return s;
  }
  if (status s = check_same_device(all, int(std::size(all))); !s) return s;

  // query defines B and L; key defines S.
  const int batch_dim = batch_first ? 0 : 1, sequence_dim = batch_first ? 1 : 0;
  const bool query_ok = args.query.rank == 3;
  const std::int64_t B = query_ok ? args.query.shape[batch_dim] : 0;
  const std::int64_t L = query_ok ? args.query.shape[sequence_dim] : 0;
  const std::int64_t S = self ? L : args.key.rank == 3 ? args.key.shape[sequence_dim] : 0;
  auto sequence = [&](const char* length_label, std::int64_t length, const char* length_from, const char* features_label,
                      std::int64_t features) {
    const expected_dim batch{"batch", B, "query"}, position{length_label, length, length_from},
        feature{features_label, features};
    return batch_first ? std::vector<expected_dim>{batch, position, feature}
                       : std::vector<expected_dim>{position, batch, feature};
  };
  const char* query_text = batch_first ? "(B, L, E)" : "(L, B, E)";
  if (status s = check_layout("query", args.query, element, query_text, sequence("L", L, "", "embed_dim", E)); !s)
    return s;
  if (!self) {
    if (status s = check_layout("key", args.key, element, batch_first ? "(B, S, kdim)" : "(S, B, kdim)",
                                sequence("S", S, "", "kdim", kdim));
        !s)
      return s;
    if (status s = check_layout("value", args.value, element, batch_first ? "(B, S, vdim)" : "(S, B, vdim)",
                                sequence("S", S, "key", "vdim", vdim));
        !s)
      return s;
  }

  struct matrix {
    const char* name;
    const tensor_view& view;
    std::int64_t rows, columns;
    const char* rows_label;
    const char* columns_label;
  };
  const matrix matrices[] = {
      {"weights.q_weight", w.q_weight, E, E, "out features (embed_dim)", "in features (embed_dim)"},
      {"weights.k_weight", w.k_weight, KVE, kdim, "out features (kv_heads x head_dim)", "in features (kdim)"},
      {"weights.v_weight", w.v_weight, KVE, vdim, "out features (kv_heads x head_dim)", "in features (vdim)"},
      {"weights.out_weight", w.out_weight, E, E, "out features (embed_dim)", "in features (embed_dim)"}};
  for (const auto& m : matrices)
    if (status s = check_layout(m.name, m.view, element, "(out, in)", {{m.rows_label, m.rows}, {m.columns_label, m.columns}}); !s)
      return s;
  struct vector {
    const char* name;
    const tensor_view& view;
    bool required;
    std::int64_t length;
    const char* label;
  };
  const vector vectors[] = {{"weights.q_bias", w.q_bias, bias, E, "embed_dim"},
                            {"weights.k_bias", w.k_bias, bias, KVE, "kv_heads x head_dim"},
                            {"weights.v_bias", w.v_bias, bias, KVE, "kv_heads x head_dim"},
                            {"weights.bias_k", w.bias_k, bias_kv, KVE, "kv_heads x head_dim"},
                            {"weights.bias_v", w.bias_v, bias_kv, KVE, "kv_heads x head_dim"},
                            {"weights.out_bias", w.out_bias, bias, E, "embed_dim"}};
  for (const auto& v : vectors)
    if (v.required)
      if (status s = check_layout(v.name, v.view, element, "(features)", {{v.label, v.length}}); !s) return s;

  if (desc.key_padding != mask_kind::none) {
    const dtype type = desc.key_padding == mask_kind::boolean ? dtype::u8 : element;
    if (status s = check_layout("key_padding_mask", args.key_padding_mask, type, "(B, S)",
                                {{"batch", B, "query"}, {"S", S, "key"}});
        !s)
      return s;
  }
  if (desc.mask != mask_kind::none) {
    const dtype type = desc.mask == mask_kind::boolean ? dtype::u8 : element;
    std::vector<expected_dim> dims;
    const char* text = "";
    switch (desc.mask_dims) {
      case attn_mask_shape::l_s: dims = {{"L", L, "query"}, {"S", S, "key"}}; text = "(L, S)"; break;
      case attn_mask_shape::bh_l_s:
        dims = {{"batch x heads", B * H, "query"}, {"L", L, "query"}, {"S", S, "key"}};
        text = "(B x heads, L, S)";
        break;
      case attn_mask_shape::b_h_l_s:
        dims = {{"batch", B, "query"}, {"heads", H, "", true}, {"L", L, "query"}, {"S", S, "key"}};
        text = "(B, heads, L, S)";
        break;
      case attn_mask_shape::none: break;
    }
    if (status s = check_layout("attn_mask", args.attn_mask, type, text, dims); !s) return s;
  }
  if (status s = check_layout("output", args.output, element, query_text, sequence("L", L, "query", "embed_dim", E)); !s)
    return s;
  if (status s = check_writable("output", args.output); !s) return s;
  if (status s = check_distinct_elements("output", args.output); !s) return s;
  const std::int64_t columns = S + desc.extra_keys();
  if (desc.weights == weights_output::per_head)
    if (status s = check_layout("attn_weights", args.attn_weights, element, "(B, heads, L, S')",
                                {{"batch", B, "query"}, {"heads", H, "", true}, {"L", L, "query"},
                                 {"S' (keys with appended ones)", columns, "key"}});
        !s)
      return s;
  if (desc.weights == weights_output::averaged)
    if (status s = check_layout("attn_weights", args.attn_weights, element, "(B, L, S')",
                                {{"batch", B, "query"}, {"L", L, "query"},
                                 {"S' (keys with appended ones)", columns, "key"}});
        !s)
      return s;
  if (desc.weights != weights_output::none)
    if (status s = check_writable("attn_weights", args.attn_weights); !s) return s;
    if (status s = check_distinct_elements("attn_weights", args.attn_weights); !s) return s;

  // Kernels read inputs while writing outputs: in-place calls would read what they already wrote.
  // (With self-attention, key and value are the query or absent; checking them again is harmless.)
  const std::size_t first_output = std::size(all) - 2;
  for (std::size_t out = first_output; out < std::size(all); ++out)
    for (std::size_t in = 0; in < first_output; ++in)
      if (overlap(all[out].view, all[in].view))
        return fail(error_code::wrong_shape, all[out].name,
                    std::string("overlaps ") + all[in].name + " in memory; kernels do not run in place");
  if (overlap(args.output, args.attn_weights))
    return fail(error_code::wrong_shape, "attn_weights", "overlaps output in memory");
  return {};
}

}  // namespace attngen
