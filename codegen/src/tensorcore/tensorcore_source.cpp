#include "attngen/codegen/tensorcore_source.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "attngen/tensorcore/launch_shape.hpp"
#include "modifier_source.hpp"

namespace attngen::codegen {

namespace {

// Warps per block: 4 warps of 16 rows with D = 128 keep q, the scores and the output in registers
// (up to 208 per thread on sm_80/90, no spills; with q there too, D = 256 spilled 172 bytes, hence
// launch_shape.hpp's q in shared memory past 128). The kernels' launch bounds ask for one block per
// SM at least: left to itself, ptxas held D = 64 kernels to 128 registers and spilled.
constexpr int warps_per_block = 4;

// The statements of score(): each of the description's masks returns -infinity where it hides the
// key, then the score modifier and the additive mask give the score, in the Halide lowering's order
// (codegen/src/operator/algorithm.cpp, masked_score_at).
std::string score_body(const attention_desc& d) {
  const std::string indent = "    ";
  const std::string hidden = indent + "  return -INFINITY;\n";
  const std::string threshold = tensorcore_source::float_literal(mask_out_threshold);
  std::string body = indent + "[[maybe_unused]] const int q_len = sequence.queries, kv_len = sequence.keys;\n";
  if (d.is_causal()) {
    const char* offset = d.causal_mode == causal_alignment::bottom_right ? " + (kv_len - q_len)" : "";
    body += indent + "if (kv > q" + offset + ")\n" + hidden;
  }
  if (d.key_padding != padding_polarity::none) {
    const char* test = d.key_padding == padding_polarity::true_means_ignore ? "!= 0" : "== 0";
    body += indent + "if (in.key_padding[b * in.key_padding_batch_stride + kv] " + test + ")\n" + hidden;
  }
  if (d.has_mask_mod()) body += indent + "if (!shows(b, h, q, kv, sequence))\n" + hidden;
  if (d.has_score_mod()) {
    body += tensorcore_source::modifier_statements(d.score_modifier, d.captures, "s", indent);
    body += indent + "score = s" + std::to_string(d.score_modifier.count - 1) + ";\n";
    body += indent + "if (score <= " + threshold + ")\n" + hidden;
  }
  if (d.additive_mask_shape != mask_shape::none) {
    body += indent + "const float bias = attngen::tensorcore::value_of<element>(static_cast<const storage*>(" +
            "in.additive_mask)[b * in.mask_strides[0] + h * in.mask_strides[1] + (sequence.first_row + q) * " +
            "in.mask_strides[2] + " +
            "kv * in.mask_strides[3]]);\n";
    body += indent + "if (bias <= " + threshold + ")\n" + hidden;
    body += indent + "score += bias;\n";
  }
  return body + indent + "return score;\n";
}

// shows(): the mask modifier at one (row, key); visibility_of_tile(): the same over a tile's ranges.
std::string mask_hooks(const attention_desc& d) {
  const std::string indent = "    ";
  std::string shows = indent + "return true;\n", visibility = indent + "return attngen::tensorcore::tile_visibility::whole;\n";
  if (d.has_mask_mod()) {
    const std::string root = std::to_string(d.mask_modifier.count - 1);
    shows = indent + "namespace modifier = attngen::tensorcore::modifier;\n" + indent +
            "[[maybe_unused]] const int q_len = sequence.queries, kv_len = sequence.keys;\n" +
            tensorcore_source::modifier_statements(d.mask_modifier, d.captures, "m", indent) + indent + "return m" +
            root + ";\n";
    visibility = indent + "namespace ranges = attngen::tensorcore::ranges;\n" + indent +
                 "[[maybe_unused]] const ranges::int_range b = ranges::point(t.batch), h = ranges::span(t.first_head, "
                 "t.last_head),\n" +
                 indent + "    q = ranges::span(t.first_query, t.last_query), kv = ranges::span(t.first_key, t.last_key),\n" +
                 indent + "    q_len = ranges::point(sequence.queries), kv_len = ranges::point(sequence.keys);\n" +
                 tensorcore_source::modifier_range_statements(d.mask_modifier, d.captures, "r", indent) + indent +
                 "return ranges::visibility_of(r" + root + ");\n";
  }
  return "  ATTNGEN_TC_FN bool shows([[maybe_unused]] int b, [[maybe_unused]] int h, [[maybe_unused]] int q,\n"
         "                          [[maybe_unused]] int kv,\n"
         "                          [[maybe_unused]] const attngen::tensorcore::sequence_extent& sequence) const {\n" +
         shows +
         "  }\n"
         "  ATTNGEN_TC_FN attngen::tensorcore::tile_visibility visibility_of_tile(\n"
         "      [[maybe_unused]] const attngen::tensorcore::tile_bounds& t,\n"
         "      [[maybe_unused]] const attngen::tensorcore::sequence_extent& sequence) const {\n" +
         visibility + "  }\n";
}

// The kernel's K and V element type, and the tensor cores' own as one.
tensorcore::cache_element cache_of(dtype t) {
  switch (t) {
    case dtype::bf16: return tensorcore::cache_element::bf16;
    case dtype::f16: return tensorcore::cache_element::f16;
    case dtype::i8: return tensorcore::cache_element::i8;
    default: return tensorcore::cache_element::f32;
  }
}
const char* cache_name(tensorcore::cache_element c) {
  switch (c) {
    case tensorcore::cache_element::bf16: return "bf16";
    case tensorcore::cache_element::f16: return "f16";
    case tensorcore::cache_element::i8: return "i8";
    case tensorcore::cache_element::f32: break;
  }
  return "f32";
}

}  // namespace

std::string tensorcore_refusal(const attention_desc& d) {
  if (d.tensor_core_type() == dtype::f32)
    return "the tensor cores take bf16 and f16 descriptions, and f32 ones with .f32_on_tensor_cores(bf16 or f16); "
           "this one is f32";
  for (const auto& [name, dim] : {std::pair{"head_dim", d.qk_head_dim}, std::pair{"v_head_dim", d.effective_v_head_dim()}})
    if (dim % 16 != 0 || dim > tensorcore::largest_head_dim)
      return std::string(name) + " " + std::to_string(dim) + " is not a multiple of 16 up to " +
             std::to_string(tensorcore::largest_head_dim);
  if (d.global_positions) return "global positions run the Halide GPU code";
  return {};
}

std::string tensorcore_variant_struct(const attention_desc& d, const std::string& struct_name) {
  const std::string element = d.tensor_core_type() == dtype::bf16 ? "bf16" : "f16";
  // f32 tensors (f32_on_tensor_cores) are rounded to the element type as the tile code reads them.
  const std::string storage = d.element_type == dtype::f32 ? "float" : "std::uint16_t";
  std::string key_end = "sequence.keys", plain_key_end = "sequence.keys";
  if (d.causal_mode == causal_alignment::top_left) {
    key_end = "last_query + 1";
    plain_key_end = "first_query + 1";
  }
  if (d.causal_mode == causal_alignment::bottom_right) {
    key_end = "last_query + (sequence.keys - sequence.queries) + 1";
    plain_key_end = "first_query + (sequence.keys - sequence.queries) + 1";
  }
  // Every score of a padded, modified or additively masked description goes through score(); a
  // mask modifier's tiles are plain where visibility_of_tile() shows them whole.
  if (d.key_padding != padding_polarity::none || d.has_score_mod() || d.additive_mask_shape != mask_shape::none)
    plain_key_end = "0";
  return "struct " + struct_name + " : attngen::tensorcore::variant_state {\n"
         "  static constexpr attngen::tensorcore::element16 element = attngen::tensorcore::element16::" + element + ";\n"
         "  using storage = " + storage + ";\n"
         "  static constexpr attngen::tensorcore::cache_element cache = attngen::tensorcore::cache_element::" +
         cache_name(cache_of(d.effective_kv_element())) + ";\n"

         "  static constexpr int head_dim = " + std::to_string(d.qk_head_dim) + ";\n"
         "  static constexpr int v_head_dim = " + std::to_string(d.effective_v_head_dim()) + ";\n"
         "  static constexpr int warps = " + std::to_string(warps_per_block) + ";\n\n"
         "  ATTNGEN_TC_FN int key_end([[maybe_unused]] int last_query,\n"
         "                           [[maybe_unused]] const attngen::tensorcore::sequence_extent& sequence) const {\n"
         "    return " + key_end + ";\n"
         "  }\n"
         "  ATTNGEN_TC_FN int plain_key_end([[maybe_unused]] int first_query,\n"
         "                                 [[maybe_unused]] const attngen::tensorcore::sequence_extent& sequence) const {\n"
         "    return " + plain_key_end + ";\n"
         "  }\n" +
         mask_hooks(d) +
         "  ATTNGEN_TC_FN float score(float score, [[maybe_unused]] int b, [[maybe_unused]] int h, [[maybe_unused]] int q,\n"
         "                            [[maybe_unused]] int kv,\n"
         "                            [[maybe_unused]] const attngen::tensorcore::sequence_extent& sequence) const {\n"
         "    namespace modifier = attngen::tensorcore::modifier;\n" +
         score_body(d) +
         "  }\n"
         "};\n";
}

std::string tensorcore_variant_header(const attention_desc& d, const std::string& name) {
  if (const std::string refusal = tensorcore_refusal(d); !refusal.empty())
    throw std::invalid_argument("attngen: " + name + " has no tensor-core variant: " + refusal);
  return "// Generated by attngen for " + name +
         ": its variant for the tensor-core tile code (attngen/tensorcore/flash_forward.hpp).\n"
         "#pragma once\n\n"
         "#include \"attngen/tensorcore/flash_forward.hpp\"\n"
         "#include \"attngen/tensorcore/modifier_math.hpp\"\n"
         "#include \"attngen/tensorcore/modifier_ranges.hpp\"\n\n" +
         tensorcore_variant_struct(d, name + "_tensorcore_variant");
}

std::string tensorcore_kernel_source(const attention_desc& d, const std::string& name) {
  if (const std::string refusal = tensorcore_refusal(d); !refusal.empty())
    throw std::invalid_argument("attngen: " + name + " has no tensor-core kernel: " + refusal);
  const std::string variant = name + "_tensorcore_variant";
  return "// Generated by attngen: " + name + "'s forward pass on the tensor cores (sm_80 and later), for nvcc.\n"
         "#include \"" + name + "_tensorcore.hpp\"\n\n"
         "extern \"C\" __global__ void __launch_bounds__(" + variant + "::warps * 32, 1)\n" +
         name + "_tensorcore_forward(attngen::tensorcore::forward_params p, " + variant + " variant) {\n"
         "  attngen::tensorcore::forward_block<" + variant + "::element, " + variant + "::head_dim, " + variant +
         "::warps>(p, variant);\n"
         "}\n\n"
         "// The merge of a call whose keys were split across blocks (FlashDecoding).\n"
         "extern \"C\" __global__ void __launch_bounds__(attngen::tensorcore::merge_threads)\n" +
         name + "_tensorcore_merge(attngen::tensorcore::forward_params p, " + variant + " variant) {\n"
         "  attngen::tensorcore::merge_block<" + variant + "::element, " + variant + "::v_head_dim>(p, variant);\n"
         "}\n";
}

tensorcore_shape tensorcore_kernel_shape(const attention_desc& desc) {
  return {tensorcore::rows_per_warp * warps_per_block, 32 * warps_per_block,
          tensorcore::forward_shared_bytes(
              desc.qk_head_dim, desc.effective_v_head_dim(), warps_per_block,
              tensorcore::converted_bytes(cache_of(desc.effective_kv_element()), cache_of(desc.tensor_core_type())))};
}

}  // namespace attngen::codegen
