#pragma once
/// The operator description's knobs, each with the rules its value must satisfy: one table from which
/// the text form's printer and parser and the C++ printer (text_format.hpp, as knob entries of
/// knobs.hpp) and the description's validation at compile time and at run time (validation.hpp) are
/// produced. A new knob is one KNOB line, its RULE lines, its member and its setter.
///
///     KNOB(entry)                     a knob<attention_desc> (knobs.hpp), in the text form's order
///     RULE(id, condition, message)    a condition on `d` that a valid description satisfies, checked
///                                     in table order (then the capture and modifier rules)
///
/// A rule may read knobs before its own (kv_heads' reads heads); conditions never divide by zero
/// when an earlier rule is broken, so the first message names the cause.

#define ATTNGEN_ATTENTION_KNOBS(KNOB, RULE)                                                                     \
  KNOB(integer_knob<&attention_desc::num_heads>("heads", "heads"))                                              \
  RULE(heads_given, d.num_heads != attention_desc::unset, "heads is not set: call .heads(n)")                  \
  RULE(heads_positive, d.num_heads == attention_desc::unset || d.num_heads >= 1, "heads must be at least 1")   \
  KNOB(integer_knob<&attention_desc::num_kv_heads, &attention_desc::effective_kv_heads>("kv_heads", "kv_heads")) \
  RULE(kv_heads_positive, d.num_kv_heads == attention_desc::unset || d.num_kv_heads >= 1,                      \
       "kv_heads must be at least 1")                                                                          \
  RULE(kv_heads_divide_heads,                                                                                  \
       d.num_heads < 1 || d.effective_kv_heads() < 1 || d.num_heads % d.effective_kv_heads() == 0,             \
       "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)")                \
  KNOB(integer_knob<&attention_desc::qk_head_dim>("head_dim", "head_dim"))                                      \
  RULE(head_dim_given, d.qk_head_dim != attention_desc::unset, "head_dim is not set: call .head_dim(n)")       \
  RULE(head_dim_in_range,                                                                                      \
       d.qk_head_dim == attention_desc::unset || (d.qk_head_dim >= 1 && d.qk_head_dim <= max_head_dim),        \
       "head_dim must be between 1 and 512")                                                                   \
  KNOB(integer_knob<&attention_desc::v_dim, &attention_desc::effective_v_head_dim>("v_head_dim", "v_head_dim")) \
  RULE(v_head_dim_in_range, d.v_dim == attention_desc::unset || (d.v_dim >= 1 && d.v_dim <= max_head_dim),     \
       "v_head_dim must be between 1 and 512")                                                                 \
  KNOB(enum_knob<&attention_desc::causal_mode, causal_spellings, written::when_set>("causal", "causal"))        \
  KNOB(enum_knob<&attention_desc::additive_mask_shape, mask_spellings, written::when_set>("additive_mask",      \
                                                                                          "additive_mask"))     \
  KNOB(enum_knob<&attention_desc::key_padding, padding_spellings, written::when_set>("key_padding",             \
                                                                                     "key_padding_mask"))       \
  /* The scale is two members: whether one is given, and which (`default`: 1/sqrt(head_dim)). */               \
  KNOB(knob<attention_desc>{                                                                                   \
      "scale", "scale",                                                                                        \
      [](const attention_desc& d) { return d.has_scale ? float_literal(d.scale_value, "%.9g") : "default"; },  \
      [](std::string_view value, attention_desc& d) {                                                          \
        d.has_scale = value != "default";                                                                      \
        return !d.has_scale || parse_number(value, d.scale_value);                                             \
      },                                                                                                       \
      [](const attention_desc& d) -> std::optional<std::string> {                                              \
        if (!d.has_scale) return std::nullopt;                                                                 \
        return format_float(d.scale_value, true);                                                              \
      }})                                                                                                      \
  RULE(scale_finite,                                                                                           \
       !d.has_scale || (d.scale_value == d.scale_value && d.scale_value <= 3.4e38f && d.scale_value >= -3.4e38f), \
       "scale must be a finite number")                                                                        \
  /* A setter without an argument: .return_lse(). */                                                           \
  KNOB(knob<attention_desc>{"lse", "return_lse",                                                               \
                            [](const attention_desc& d) { return format_flag(d.lse_output, false); },          \
                            [](std::string_view value, attention_desc& d) { return read_flag(value, d.lse_output); }, \
                            [](const attention_desc& d) -> std::optional<std::string> {                        \
                              if (!d.lse_output) return std::nullopt;                                          \
                              return std::string();                                                            \
                            }})                                                                                \
  KNOB(enum_knob<&attention_desc::element_type, dtype_spellings>("dtype", "element"))                           \
  RULE(element_type_is_float,                                                                                  \
       d.element_type == dtype::f32 || d.element_type == dtype::f16 || d.element_type == dtype::bf16,          \
       "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)")            \
  KNOB(enum_knob<&attention_desc::f32_tensor_core_type, dtype_spellings, written::when_set, written::when_set>(                 \
      "f32_tensor_cores", "f32_on_tensor_cores"))                                                              \
  RULE(f32_tensor_cores_type_valid,                                                                            \
       d.f32_tensor_core_type == dtype::f32 || d.f32_tensor_core_type == dtype::bf16 ||                        \
           d.f32_tensor_core_type == dtype::f16,                                                               \
       "f32_tensor_cores must be bf16 or f16 (the types the tensor cores take), or f32 for none")              \
  RULE(f32_tensor_cores_of_f32,                                                                                \
       d.f32_tensor_core_type == dtype::f32 || d.element_type == dtype::f32,                                   \
       "f32_tensor_cores is a precision choice for f32 descriptions; bf16 and f16 ones take the tensor "       \
       "cores in their own type")                                                                              \
  /* Setters without an argument: .ragged_queries(), .kv_lengths(); paged_kv(n) is page_size's. */          \
  KNOB(knob<attention_desc>{                                                                                   \
      "queries", "ragged_queries",                                                                             \
      [](const attention_desc& d) { return d.is_ragged() ? std::string("ragged") : ""; },                     \
      [](std::string_view value, attention_desc& d) { return parse_spelling(query_layout_spellings, value, d.queries); }, \
      [](const attention_desc& d) -> std::optional<std::string> {                                              \
        if (!d.is_ragged()) return std::nullopt;                                                               \
        return std::string();                                                                                  \
      }})                                                                                                      \
  RULE(ragged_masks_packed,                                                                                    \
       !d.is_ragged() || d.additive_mask_shape == mask_shape::none ||                                          \
           d.additive_mask_shape == mask_shape::lq_lk || d.additive_mask_shape == mask_shape::h_lq_lk,         \
       "with ragged queries the additive mask's rows are the packed queries: its shape is lq_lk "              \
       "((total_q, Lk)) or h_lq_lk ((H, total_q, Lk)), not one with a batch dimension")                        \
  RULE(ragged_captures_not_per_query, !d.is_ragged() || !detail::captures_span_queries(d.captures),           \
       "with ragged queries a captured tensor cannot have a query_length extent (sequences differ in it); "    \
       "index it by key, head, batch or a fixed extent")                                                       \
  KNOB(knob<attention_desc>{                                                                                   \
      "kv_layout", "kv_lengths",                                                                               \
      [](const attention_desc& d) { return d.has_kv_lengths() ? std::string(spell(kv_layout_spellings, d.kv)) : ""; }, \
      [](std::string_view value, attention_desc& d) { return parse_spelling(kv_layout_spellings, value, d.kv); }, \
      [](const attention_desc& d) -> std::optional<std::string> {                                              \
        if (d.kv != kv_layout::lengths) return std::nullopt;                                                   \
        return std::string();                                                                                  \
      }})                                                                                                      \
  KNOB(integer_knob<&attention_desc::kv_page_size, &attention_desc::kv_page_size, written::when_set,           \
                    written::when_set>("page_size", "paged_kv"))                                               \
  RULE(page_size_with_paged_kv, d.is_paged() == (d.kv_page_size != attention_desc::unset),                     \
       "page_size is given with a paged KV cache and only then: call .paged_kv(page_size)")                   \
  RULE(page_size_power_of_two,                                                                                 \
       !d.is_paged() || (d.kv_page_size >= 1 && d.kv_page_size <= max_page_size &&                             \
                         (d.kv_page_size & (d.kv_page_size - 1)) == 0),                                        \
       "page_size must be a power of two from 1 to 256")                                                       \
  /* The KV element type is two members: whether one is given, and which. */                                  \
  KNOB(knob<attention_desc>{                                                                                   \
      "kv_dtype", "kv_element",                                                                                \
      [](const attention_desc& d) { return d.kv_element_given ? std::string(name_of(d.kv_element_type)) : ""; }, \
      [](std::string_view value, attention_desc& d) {                                                          \
        d.kv_element_given = true;                                                                             \
        return parse_spelling(kv_dtype_spellings, value, d.kv_element_type);                                   \
      },                                                                                                       \
      [](const attention_desc& d) -> std::optional<std::string> {                                              \
        if (!d.kv_element_given) return std::nullopt;                                                          \
        return format_enum<kv_dtype_spellings>(d.kv_element_type, true);                                       \
      }})                                                                                                      \
  RULE(kv_element_type_valid,                                                                                  \
       d.effective_kv_element() == dtype::f32 || d.effective_kv_element() == dtype::f16 ||                     \
           d.effective_kv_element() == dtype::bf16 || d.effective_kv_element() == dtype::i8,                   \
       "the KV element type must be f32, f16, bf16 or i8 (with float32 scales)")                               \
  KNOB(knob<attention_desc>{"sinks", "attention_sinks",                                                        \
                            [](const attention_desc& d) { return d.has_sinks ? std::string("true") : ""; },    \
                            [](std::string_view value, attention_desc& d) { return read_flag(value, d.has_sinks); }, \
                            [](const attention_desc& d) -> std::optional<std::string> {                        \
                              if (!d.has_sinks) return std::nullopt;                                           \
                              return std::string();                                                            \
                            }})                                                                                \
  KNOB(knob<attention_desc>{"positions", "with_global_positions",                                             \
                            [](const attention_desc& d) { return d.global_positions ? std::string("global") : ""; }, \
                            [](std::string_view value, attention_desc& d) {                                    \
                              d.global_positions = value == "global";                                          \
                              return d.global_positions || value == "local";                                   \
                            },                                                                                 \
                            [](const attention_desc& d) -> std::optional<std::string> {                        \
                              if (!d.global_positions) return std::nullopt;                                    \
                              return std::string();                                                            \
                            }})                                                                                \
  RULE(global_positions_dense, !d.global_positions || !d.has_sequence_lengths(),                               \
       "global positions place one slice of one sequence per call: they need dense queries and keys (no "       \
       "ragged queries, kv lengths or paged cache, whose sequences have positions of their own)")              \
  KNOB(knob<attention_desc>{"backward", "with_backward",                                                       \
                            [](const attention_desc& d) { return d.backward ? std::string("true") : ""; },     \
                            [](std::string_view value, attention_desc& d) { return read_flag(value, d.backward); }, \
                            [](const attention_desc& d) -> std::optional<std::string> {                        \
                              if (!d.backward) return std::nullopt;                                            \
                              return std::string();                                                            \
                            }})                                                                                \
  RULE(backward_reads_lse, !d.backward || d.lse_output,                                                        \
       "the backward pass reads the forward's log-sum-exp: call .return_lse() with .with_backward()")         \
  RULE(backward_dense, !d.backward || (!d.has_sequence_lengths() && !d.has_kv_scales()),                       \
       "the backward pass needs dense queries, keys and values: no ragged queries, kv lengths, paged or int8 "  \
       "caches (inference layouts)")                                                                           \
  RULE(backward_local_positions, !d.backward || !d.global_positions,                                           \
       "the backward pass takes the whole sequence's queries and keys: no .with_global_positions()")

/// Expansions of a knob table: its entries (KNOB) alone, or its rules (RULE) alone.
#define ATTNGEN_KNOB_ENTRY(...) __VA_ARGS__,
#define ATTNGEN_NO_KNOB(...)
#define ATTNGEN_NO_RULE(id, condition, message)
