#pragma once
/// The attention description: a constexpr value that says which fused attention kernel to generate.
///
///     constexpr auto llama_prefill = attngen::attention()
///         .heads(32).kv_heads(8).head_dim(128)
///         .causal(attngen::top_left);
///
/// Everything here is compile-time configuration; batch size and sequence lengths are run-time values.
/// A description is checked by `attngen::validated<D>()` (see validation.hpp), which the build runs for
/// every kernel, so an invalid description stops the build with a message naming the problem.
///
/// Semantics (the ONNX-style MultiHeadAttention operator with `num_kv_heads`, PyTorch's
/// `scaled_dot_product_attention` where they agree):
///
///     out[b, i, h, :] = sum_j softmax_j(scale * q[b,i,h,:] . k[b,j,g,:] + mask[..., i, j]) * v[b, j, g, :]
///     g = h / (heads / kv_heads)          (query head h reads kv head g: GQA, MQA when kv_heads == 1)
///
/// Masked keys (causal, key padding, additive mask values <= -1e38 including -inf) get weight exactly 0.
/// A row whose keys are all masked yields output 0 and log-sum-exp -inf (PyTorch yields NaN there).
///
/// With ragged queries or per-sequence kv lengths (a KV cache), each sequence b is its own problem of
/// Lq_b queries and Lk_b keys: causality, masks' and modifiers' positions (q, kv) and lengths (q_len,
/// kv_len) are the sequence's own, so bottom-right causality puts query i at position Lk_b - Lq_b + i.
/// With global positions (with_global_positions()), positions and lengths are those of the whole
/// sequence the call's queries and keys are slices of.
/// Attention sinks add exp(sink_h) to each row's denominator: a row with no visible key yields 0 and
/// log-sum-exp sink_h.

#include <cmath>

#include "attngen/dtype.hpp"
#include "attngen/modifiers.hpp"

namespace attngen {

/// Where the causal diagonal sits when Lq != Lk. Both agree when Lq == Lk.
enum class causal_alignment : std::uint8_t {
  none,          ///< not causal
  top_left,      ///< query i sees keys j <= i (PyTorch `is_causal=True`, `torch.tril(ones(Lq, Lk))`)
  bottom_right,  ///< query i sees keys j <= i + (Lk - Lq) (FlashAttention >= 2.1; decoding with a KV cache)
};
inline constexpr causal_alignment top_left = causal_alignment::top_left;
inline constexpr causal_alignment bottom_right = causal_alignment::bottom_right;

/// Additive mask values at or below this (-inf, and the `finfo.min` style sentinels of Hugging Face
/// models) mask the key out exactly: weight 0. Kernels also hold masked scores at or below it.
inline constexpr float mask_out_threshold = -1e38f;

/// Shape of the optional additive float mask, added to the scaled scores. Its element type is the
/// description's dtype. Values <= mask_out_threshold (including -inf) mask the key out.
enum class mask_shape : std::uint8_t {
  none,
  lq_lk,      ///< (Lq, Lk): the same for every batch and head
  h_lq_lk,    ///< (H, Lq, Lk): per head
  b_h_lq_lk,  ///< (B, H, Lq, Lk): per batch and head
  b_1_lq_lk,  ///< (B, 1, Lq, Lk): per batch, broadcast over heads
};

/// Meaning of `true` in the boolean (B, Lk) key-padding mask. PyTorch's `nn.MultiheadAttention` uses
/// `true_means_ignore`; the ONNX operator's mask_index and SDPA's boolean masks use `true_means_keep`.
/// attngen has no default: the description names one.
enum class padding_polarity : std::uint8_t {
  none,               ///< no key-padding mask
  true_means_ignore,  ///< nonzero byte: the key is padding and is masked out
  true_means_keep,    ///< nonzero byte: the key takes part; zero: masked out
};
inline constexpr padding_polarity true_means_ignore = padding_polarity::true_means_ignore;
inline constexpr padding_polarity true_means_keep = padding_polarity::true_means_keep;

/// How a batch's queries are laid out.
enum class query_layout : std::uint8_t {
  dense,   ///< (B, Lq, H, D): every sequence has Lq queries
  /// (total_q, H, D), the sequences' queries packed one after another, with (B + 1) int32 q_offsets:
  /// sequence b's queries are rows q_offsets[b] to q_offsets[b + 1] - 1 (FlashAttention's cu_seqlens_q);
  /// a sequence may have none.
  ragged,
};

/// How a batch's keys and values are laid out: the KV cache.
enum class kv_layout : std::uint8_t {
  dense,    ///< (B, Lk, KVH, D): every sequence has Lk keys
  /// (B, Lk, KVH, D) with (B) int32 kv_lengths: sequence b's keys are its first kv_lengths[b]; the
  /// others do not exist for it (no mask, no work).
  lengths,
  /// Pools (num_pages, page_size, KVH, D) of pages, a (B, max_pages) int32 page table and (B) int32
  /// kv_lengths: sequence b's key j is row j % page_size of page page_table[b][j / page_size]. Pages may
  /// come in any order and be shared between sequences; entries past a sequence's last page are not read.
  paged,
};

/// Largest page of a paged KV cache (pages hold a power of two of tokens, 1 to this).
inline constexpr int max_page_size = 256;

/// A complete description of one attention kernel. A structural type, so it can be a template argument.
/// Build it with `attngen::attention()` and the chained setters; read it through the `effective_*`
/// accessors, which apply the defaults.
struct attention_desc {
  static constexpr int unset = -1;

  int num_heads = unset;
  int num_kv_heads = unset;     ///< unset: same as num_heads (multi-head attention)
  int qk_head_dim = unset;
  int v_dim = unset;            ///< unset: same as qk_head_dim
  causal_alignment causal_mode = causal_alignment::none;
  mask_shape additive_mask_shape = mask_shape::none;
  padding_polarity key_padding = padding_polarity::none;
  bool has_scale = false;
  float scale_value = 0.0f;     ///< used only when has_scale; otherwise 1/sqrt(head_dim)
  bool lse_output = false;
  dtype element_type = dtype::f32;
  query_layout queries = query_layout::dense;
  kv_layout kv = kv_layout::dense;
  int kv_page_size = unset;       ///< tokens per page; with kv_layout::paged
  bool kv_element_given = false;
  dtype kv_element_type = dtype::f32;  ///< used only when kv_element_given; otherwise element_type
  /// With f32 elements, the type the tensor cores take q, k and v in (bf16 or f16); f32: none.
  dtype f32_tensor_core_type = dtype::f32;
  bool has_sinks = false;
  bool global_positions = false;  ///< the call's queries and keys are slices of a longer sequence
  bool backward = false;          ///< the kernel also has the backward pass (gradients)
  modifier_graph score_modifier;  ///< empty: the score is q.k * scale
  modifier_graph mask_modifier;   ///< empty: no mask_mod
  capture_table captures;         ///< run-time tensors and scalars the modifiers read

  /// Number of query heads H.
  constexpr attention_desc heads(int h) const { auto d = *this; d.num_heads = h; return d; }
  /// Number of key/value heads; heads must be a multiple of it (1: multi-query attention).
  constexpr attention_desc kv_heads(int h) const { auto d = *this; d.num_kv_heads = h; return d; }
  /// Head dimension of Q and K (and of V unless v_head_dim is given).
  constexpr attention_desc head_dim(int n) const { auto d = *this; d.qk_head_dim = n; return d; }
  /// Head dimension of V and of the output, when it differs from head_dim.
  constexpr attention_desc v_head_dim(int n) const { auto d = *this; d.v_dim = n; return d; }
  /// Causal masking with an explicitly named alignment.
  constexpr attention_desc causal(causal_alignment a) const { auto d = *this; d.causal_mode = a; return d; }
  /// An additive float mask of the given broadcast shape is a run-time input.
  constexpr attention_desc additive_mask(mask_shape s) const { auto d = *this; d.additive_mask_shape = s; return d; }
  /// A boolean (B, Lk) key-padding mask (one byte per key) is a run-time input.
  constexpr attention_desc key_padding_mask(padding_polarity p) const { auto d = *this; d.key_padding = p; return d; }
  /// Scale applied to q.k before the mask; default 1/sqrt(head_dim).
  /// The scale the kernels multiply q.k by: the given one, or 1/sqrt(head_dim).
  float effective_scale() const { return has_scale ? scale_value : 1.0f / std::sqrt(static_cast<float>(qk_head_dim)); }
  constexpr attention_desc scale(float s) const { auto d = *this; d.has_scale = true; d.scale_value = s; return d; }
  /// Also write the natural-log log-sum-exp of each row's masked, scaled scores: float32 (B, H, Lq).
  constexpr attention_desc return_lse() const { auto d = *this; d.lse_output = true; return d; }
  /// Element type of Q, K, V, additive mask and output.
  constexpr attention_desc element(dtype t) const { auto d = *this; d.element_type = t; return d; }
  /// Queries packed as (total_q, H, D) with (B + 1) int32 q_offsets (query_layout::ragged); the
  /// output is packed the same way, the log-sum-exp (H, total_q).
  constexpr attention_desc ragged_queries() const { auto d = *this; d.queries = query_layout::ragged; return d; }
  /// Keys and values (B, Lk, KVH, D) with (B) int32 kv_lengths: each sequence's own key count.
  constexpr attention_desc kv_lengths() const { auto d = *this; d.kv = kv_layout::lengths; return d; }
  /// A paged KV cache of pages of `page_size` tokens (a power of two, 1 to 256): see kv_layout::paged.
  constexpr attention_desc paged_kv(int page_size) const {
    auto d = *this;
    d.kv = kv_layout::paged;
    d.kv_page_size = page_size;
    return d;
  }
  /// Element type of K and V when it differs from the queries': f32, f16, bf16, or i8 with a float32
  /// scale per (token, kv head) in k_scale and v_scale (symmetric: the value is scale x the integer).
  constexpr attention_desc kv_element(dtype t) const {
    auto d = *this;
    d.kv_element_given = true;
    d.kv_element_type = t;
    return d;
  }
  /// A precision choice for f32 descriptions on NVIDIA GPUs, as PyTorch's
  /// set_float32_matmul_precision: calls on CUDA device tensors run on the tensor cores, q, k and v
  /// (and the additive mask) rounded to `t` (bf16 or f16) as the kernel reads them, with float32
  /// accumulation, softmax and output. The CPU code and every call the tensor cores do not take
  /// stay exact in f32.
  constexpr attention_desc f32_on_tensor_cores(dtype t) const {
    auto d = *this;
    d.f32_tensor_core_type = t;
    return d;
  }
  /// A learned logit per query head, (H) float32 `sinks`, that joins every row's softmax denominator
  /// and attends to nothing: out = sum_j exp(s_j) v_j / (exp(sink_h) + sum_j exp(s_j)).
  constexpr attention_desc attention_sinks() const { auto d = *this; d.has_sinks = true; return d; }
  /// The call's queries and keys are slices of one longer sequence, placed by a run-time (4) int32
  /// `positions` = {query_start, key_start, query_total, key_total}: query i is at position
  /// query_start + i of query_total queries, key j at key_start + j of key_total keys. Causality (both
  /// alignments, bottom-right against the totals) and the modifiers' q, kv, q_len and kv_len are the
  /// whole sequence's, and captured tensors with a query_length or key_length extent hold the whole
  /// sequence (query_total, key_total). A call then returns the whole's attention over the slice's
  /// keys: with .return_lse(), partial results that attngen::merge combines (context parallelism).
  /// The additive mask and key padding stay the call's own (Lq, Lk). Dense queries and keys only.
  constexpr attention_desc with_global_positions() const { auto d = *this; d.global_positions = true; return d; }
  /// Also generate the backward pass, for training: from q, k, v, the forward's output and
  /// log-sum-exp and the loss's gradient of the output, the gradients dq, dk, dv (and d_sinks).
  /// Needs .return_lse() and dense queries, keys and values.
  constexpr attention_desc with_backward() const { auto d = *this; d.backward = true; return d; }
  /// Replaces the scaled score by a number expression of score, b, h, q, kv (attngen/modifiers.hpp).
  template <value_kind K>
  constexpr attention_desc score_mod(const expr<K>& e) const {
    static_assert(K != value_kind::boolean,
                  "attngen: score_mod takes a number expression; a condition belongs in mask_mod");
    auto d = *this;
    d.score_modifier = detail::as_float(e).graph;
    return d;
  }
  /// Keeps only the keys where a boolean expression of b, h, q, kv holds (attngen/modifiers.hpp).
  template <value_kind K>
  constexpr attention_desc mask_mod(const expr<K>& e) const {
    static_assert(K == value_kind::boolean,
                  "attngen: mask_mod takes a boolean expression (a comparison); a number belongs in score_mod");
    auto d = *this;
    d.mask_modifier = e.graph;
    return d;
  }
  /// Declares a run-time tensor the modifiers read (attention_args::captures, in declaration order).
  template <capture_type T>
  constexpr attention_desc capture(const captured_tensor<T>& t) const {
    auto d = *this;
    if (d.captures.tensor_count == capture_table::max_tensors) d.captures.overflow = true;
    else d.captures.tensors[d.captures.tensor_count++] = t.declaration;
    return d;
  }
  /// Declares a run-time scalar the modifiers read (attention_args::scalars, in declaration order).
  constexpr attention_desc capture(const scalar_capture& s) const {
    auto d = *this;
    if (d.captures.scalar_count == capture_table::max_scalars) d.captures.overflow = true;
    else d.captures.scalars[d.captures.scalar_count++] = s.name;
    return d;
  }

  constexpr int effective_kv_heads() const { return num_kv_heads == unset ? num_heads : num_kv_heads; }
  constexpr int effective_v_head_dim() const { return v_dim == unset ? qk_head_dim : v_dim; }
  /// Query heads that share one kv head.
  constexpr int group_size() const { return num_heads / effective_kv_heads(); }
  constexpr bool is_causal() const { return causal_mode != causal_alignment::none; }
  constexpr bool has_additive_mask() const { return additive_mask_shape != mask_shape::none; }
  constexpr bool has_key_padding_mask() const { return key_padding != padding_polarity::none; }
  constexpr dtype effective_kv_element() const { return kv_element_given ? kv_element_type : element_type; }
  /// The type the tensor cores multiply in: the element type, or f32_on_tensor_cores' for f32 (f32
  /// where none is given: the tensor cores do not take the description).
  constexpr dtype tensor_core_type() const {
    return element_type == dtype::f32 ? f32_tensor_core_type : element_type;
  }
  constexpr bool is_ragged() const { return queries == query_layout::ragged; }
  constexpr bool is_paged() const { return kv == kv_layout::paged; }
  /// Each sequence has its own key count (kv_lengths).
  constexpr bool has_kv_lengths() const { return kv != kv_layout::dense; }
  /// Sequences differ in their query or key counts, so the kernel runs sequence by sequence.
  constexpr bool has_sequence_lengths() const { return is_ragged() || has_kv_lengths(); }
  /// Keys and values are int8 with float32 scales.
  constexpr bool has_kv_scales() const { return effective_kv_element() == dtype::i8; }
  /// Whether the backward pass writes a gradient of captured tensor n: a float32 tensor the score
  /// modifier reads (what a mask modifier reads, and integer tensors, carry none).
  constexpr bool capture_has_gradient(int n) const {
    if (captures.tensors[n].type != capture_type::f32) return false;
    for (int k = 0; k < score_modifier.count; ++k)
      if (score_modifier.nodes[k].op == expr_op::tensor_read && score_modifier.nodes[k].name == captures.tensors[n].name)
        return true;
    return false;
  }
  /// Whether the backward pass writes the captured scalars' gradient: the score modifier reads one.
  constexpr bool scalars_have_gradient() const { return detail::reads(score_modifier, expr_op::scalar); }
  constexpr bool has_score_mod() const { return !score_modifier.empty(); }
  constexpr bool has_mask_mod() const { return !mask_modifier.empty(); }

  friend constexpr bool operator==(const attention_desc&, const attention_desc&) = default;
};

/// Starts a description; every field is unset or off.
constexpr attention_desc attention() { return {}; }

}  // namespace attngen
