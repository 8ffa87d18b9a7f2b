#pragma once
/// Validation of module descriptions, at compile time and at run time, from one list of rules (as
/// validation.hpp does for the operator).
///
/// Compile time:  `attngen::validated<my_module>()` stops compilation with
///                "static assertion failed: attngen: <message>" for the first broken rule.
/// Run time:      `attngen::first_problem(desc)` returns the same message, or an empty view when valid.

#include <string_view>

#include "attngen/module.hpp"
#include "attngen/validation.hpp"

namespace attngen {

// Conditions never divide by zero or read a derived size before the rules it depends on hold, so the
// first message names the cause.
#define ATTNGEN_MODULE_RULES(RULE)                                                                        \
  RULE(embed_dim_given, d.embed != mha_desc::unset, "embed_dim is not set: call .embed_dim(n)")           \
  RULE(embed_dim_positive, d.embed == mha_desc::unset || d.embed >= 1, "embed_dim must be at least 1")   \
  RULE(module_heads_given, d.num_heads != mha_desc::unset, "heads is not set: call .heads(n)")           \
  RULE(module_heads_positive, d.num_heads == mha_desc::unset || d.num_heads >= 1,                        \
       "heads must be at least 1")                                                                       \
  RULE(heads_divide_embed_dim, d.num_heads < 1 || d.embed < 1 || d.embed % d.num_heads == 0,             \
       "embed_dim must be divisible by heads (head_dim = embed_dim / heads)")                            \
  RULE(module_head_dim_in_range, d.num_heads < 1 || d.embed < 1 || d.head_dim() <= max_head_dim,         \
       "embed_dim / heads (the head dimension) must be at most 512")                                     \
  RULE(module_kv_heads_positive, d.num_kv_heads == mha_desc::unset || d.num_kv_heads >= 1,               \
       "kv_heads must be at least 1")                                                                    \
  RULE(module_kv_heads_divide_heads,                                                                     \
       d.num_heads < 1 || d.effective_kv_heads() < 1 || d.num_heads % d.effective_kv_heads() == 0,       \
       "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)")          \
  RULE(kdim_positive, d.key_dim == mha_desc::unset || d.key_dim >= 1, "kdim must be at least 1")         \
  RULE(vdim_positive, d.value_dim == mha_desc::unset || d.value_dim >= 1, "vdim must be at least 1")     \
  RULE(self_attention_dims,                                                                              \
       !d.self_attn || ((d.key_dim == mha_desc::unset || d.key_dim == d.embed) &&                        \
                        (d.value_dim == mha_desc::unset || d.value_dim == d.embed)),                     \
       "self_attention reads key and value from the query: kdim and vdim must equal embed_dim")          \
  RULE(dropout_in_range, d.dropout_p >= 0.0f && d.dropout_p < 1.0f,                                      \
       "dropout must be in [0, 1): p = 1 would drop every weight")                                       \
  RULE(attn_mask_shape_given, (d.mask == mask_kind::none) == (d.mask_dims == attn_mask_shape::none),     \
       "attn_mask needs both a kind (boolean or additive) and a shape (l_s, bh_l_s or b_h_l_s)")         \
  RULE(module_element_type_is_float,                                                                     \
       d.element_type == dtype::f32 || d.element_type == dtype::f16 || d.element_type == dtype::bf16,     \
       "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)")

/// first_problem(const mha_desc&), is_valid(const mha_desc&), validated<mha_desc D>() (see
/// ATTNGEN_VALIDATION_FUNCTIONS in validation.hpp).
ATTNGEN_VALIDATION_FUNCTIONS(mha_desc, ATTNGEN_MODULE_RULES)

}  // namespace attngen
