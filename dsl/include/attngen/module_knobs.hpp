#pragma once
/// The module description's knobs, each with the rules its value must satisfy: one table from which
/// the text form's printer and parser and the C++ printer (module_text_format.hpp) and the
/// description's validation at compile time and at run time (module_validation.hpp) are produced, as
/// attention_knobs.hpp is for the operator. Sizes that default to others are written only when set,
/// so the text round-trips exactly.

#define ATTNGEN_MODULE_KNOBS(KNOB, RULE)                                                                       \
  KNOB(integer_knob<&mha_desc::embed>("embed_dim", "embed_dim"))                                               \
  RULE(embed_dim_given, d.embed != mha_desc::unset, "embed_dim is not set: call .embed_dim(n)")                \
  RULE(embed_dim_positive, d.embed == mha_desc::unset || d.embed >= 1, "embed_dim must be at least 1")        \
  KNOB(integer_knob<&mha_desc::num_heads>("heads", "heads"))                                                   \
  RULE(module_heads_given, d.num_heads != mha_desc::unset, "heads is not set: call .heads(n)")                \
  RULE(module_heads_positive, d.num_heads == mha_desc::unset || d.num_heads >= 1, "heads must be at least 1") \
  RULE(heads_divide_embed_dim, d.num_heads < 1 || d.embed < 1 || d.embed % d.num_heads == 0,                  \
       "embed_dim must be divisible by heads (head_dim = embed_dim / heads)")                                 \
  RULE(module_head_dim_in_range, d.num_heads < 1 || d.embed < 1 || d.head_dim() <= max_head_dim,              \
       "embed_dim / heads (the head dimension) must be at most 512")                                          \
  KNOB(integer_knob<&mha_desc::num_kv_heads, &mha_desc::num_kv_heads, written::when_set, written::when_set>(   \
      "kv_heads", "kv_heads"))                                                                                 \
  RULE(module_kv_heads_positive, d.num_kv_heads == mha_desc::unset || d.num_kv_heads >= 1,                    \
       "kv_heads must be at least 1")                                                                         \
  RULE(module_kv_heads_divide_heads,                                                                          \
       d.num_heads < 1 || d.effective_kv_heads() < 1 || d.num_heads % d.effective_kv_heads() == 0,            \
       "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)")               \
  KNOB(integer_knob<&mha_desc::key_dim, &mha_desc::key_dim, written::when_set, written::when_set>("kdim",      \
                                                                                                 "kdim"))     \
  RULE(kdim_positive, d.key_dim == mha_desc::unset || d.key_dim >= 1, "kdim must be at least 1")              \
  KNOB(integer_knob<&mha_desc::value_dim, &mha_desc::value_dim, written::when_set, written::when_set>("vdim",  \
                                                                                                     "vdim")) \
  RULE(vdim_positive, d.value_dim == mha_desc::unset || d.value_dim >= 1, "vdim must be at least 1")          \
  KNOB(flag_knob<&mha_desc::projection_bias>("bias", "bias"))                                                  \
  KNOB(flag_knob<&mha_desc::bias_kv>("add_bias_kv", "add_bias_kv"))                                            \
  KNOB(flag_knob<&mha_desc::zero_attn>("add_zero_attn", "add_zero_attn"))                                      \
  KNOB(flag_knob<&mha_desc::batch_major>("batch_first", "batch_first"))                                        \
  KNOB(flag_knob<&mha_desc::self_attn>("self_attention", "self_attention"))                                    \
  RULE(self_attention_dims,                                                                                   \
       !d.self_attn || ((d.key_dim == mha_desc::unset || d.key_dim == d.embed) &&                             \
                        (d.value_dim == mha_desc::unset || d.value_dim == d.embed)),                          \
       "self_attention reads key and value from the query: kdim and vdim must equal embed_dim")               \
  KNOB(float_knob<&mha_desc::dropout_p>("dropout", "dropout"))                                                 \
  RULE(dropout_in_range, d.dropout_p >= 0.0f && d.dropout_p < 1.0f,                                           \
       "dropout must be in [0, 1): p = 1 would drop every weight")                                            \
  KNOB(enum_knob<&mha_desc::weights, weights_spellings>("need_weights", "need_weights"))                       \
  KNOB(enum_knob<&mha_desc::causal_mode, causal_spellings>("causal", "causal"))                                \
  KNOB(enum_knob<&mha_desc::key_padding, mask_kind_spellings>("key_padding_mask", "key_padding_mask"))         \
  /* One setter takes the mask's kind and its shape: .attn_mask(kind, shape). */                              \
  KNOB(knob<mha_desc>{"attn_mask", "attn_mask",                                                                \
                      [](const mha_desc& d) { return format_enum<mask_kind_spellings>(d.mask, false); },       \
                      [](std::string_view value, mha_desc& d) {                                                \
                        return read_enum<mask_kind_spellings>(value, d.mask);                                  \
                      },                                                                                       \
                      [](const mha_desc& d) -> std::optional<std::string> {                                    \
                        return format_enum<mask_kind_spellings>(d.mask, true) + ", " +                         \
                               format_enum<attn_mask_shape_spellings>(d.mask_dims, true);                      \
                      }})                                                                                      \
  KNOB(enum_knob<&mha_desc::mask_dims, attn_mask_shape_spellings, written::never>("attn_mask_shape",           \
                                                                                  "attn_mask"))                \
  RULE(attn_mask_shape_given, (d.mask == mask_kind::none) == (d.mask_dims == attn_mask_shape::none),          \
       "attn_mask needs both a kind (boolean or additive) and a shape (l_s, bh_l_s or b_h_l_s)")              \
  KNOB(knob<mha_desc>{"backward", "with_backward",                                                             \
                      [](const mha_desc& d) { return d.backward ? std::string("true") : ""; },                 \
                      [](std::string_view value, mha_desc& d) { return read_flag(value, d.backward); },         \
                      [](const mha_desc& d) -> std::optional<std::string> {                                    \
                        if (!d.backward) return std::nullopt;                                                  \
                        return std::string();                                                                  \
                      }})                                                                                      \
  KNOB(enum_knob<&mha_desc::element_type, dtype_spellings>("dtype", "element"))                                \
  RULE(module_element_type_is_float,                                                                          \
       d.element_type == dtype::f32 || d.element_type == dtype::f16 || d.element_type == dtype::bf16,          \
       "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)")
