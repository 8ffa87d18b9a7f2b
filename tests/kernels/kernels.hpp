#pragma once
// Descriptions of the kernels the suite generates ahead of time through attngen_add_kernel.
#include "attngen/attngen.hpp"

namespace test_kernels {

/// The flagship shape: Llama-style GQA, causal.
inline constexpr auto gqa_causal = attngen::attention().heads(32).kv_heads(8).head_dim(128).causal(attngen::top_left);

/// Every run-time tensor a description can take.
inline constexpr auto all_options = attngen::attention()
                                        .heads(4)
                                        .kv_heads(2)
                                        .head_dim(64)
                                        .v_head_dim(32)
                                        .causal(attngen::bottom_right)
                                        .additive_mask(attngen::mask_shape::b_1_lq_lk)
                                        .key_padding_mask(attngen::true_means_ignore)
                                        .return_lse();

/// bf16 multi-query attention.
inline constexpr auto bf16_mqa =
    attngen::attention().heads(8).kv_heads(1).head_dim(64).element(attngen::dtype::bf16).return_lse();

/// A module with every option that changes its arguments or its shapes.
inline constexpr auto module_all_options = attngen::multihead_attention()
                                               .embed_dim(32)
                                               .heads(8)
                                               .kv_heads(2)
                                               .kdim(12)
                                               .vdim(20)
                                               .add_bias_kv(true)
                                               .add_zero_attn(true)
                                               .batch_first(true)
                                               .dropout(0.25f)
                                               .causal(attngen::top_left)
                                               .key_padding_mask(attngen::mask_kind::boolean)
                                               .attn_mask(attngen::mask_kind::additive, attngen::attn_mask_shape::bh_l_s)
                                               .need_weights(attngen::weights_output::per_head);

/// A module with PyTorch's defaults (bias, sequence-first, key and value given apart), weights averaged.
inline constexpr auto module_encoder =
    attngen::multihead_attention().embed_dim(64).heads(4).need_weights(attngen::weights_output::averaged);

/// A self-attention module with an appended zero key: generated without single_query, its shortest
/// calls run short_keys.
inline constexpr auto module_self_attention = attngen::multihead_attention()
                                                  .embed_dim(32)
                                                  .heads(4)
                                                  .self_attention(true)
                                                  .batch_first(true)
                                                  .add_zero_attn(true)
                                                  .need_weights(attngen::weights_output::averaged);

/// Half-precision modules on the CPU: the projections read the element type, a second linear layer
/// writes it, and the runtime widens bias_k and bias_v into the appended keys. Sequence-first.
inline constexpr auto module_half = attngen::multihead_attention().embed_dim(16).heads(2).add_bias_kv(true).add_zero_attn(true);
inline constexpr auto module_f16 = module_half.element(attngen::dtype::f16);
inline constexpr auto module_bf16 = module_half.element(attngen::dtype::bf16);

/// A bf16 cross-attention module for GPUs: GQA, bottom-right causality, a shared boolean mask and
/// per-head weights.
inline constexpr auto module_bf16_gqa = attngen::multihead_attention()
                                            .embed_dim(48)
                                            .heads(6)
                                            .kv_heads(3)
                                            .kdim(20)
                                            .batch_first(true)
                                            .element(attngen::dtype::bf16)
                                            .causal(attngen::bottom_right)
                                            .attn_mask(attngen::mask_kind::boolean, attngen::attn_mask_shape::l_s)
                                            .need_weights(attngen::weights_output::per_head);

/// Modifiers through the real path: packed documents (a captured i32 tensor), causal as a mask,
/// ALiBi and a run-time softcap.
inline constexpr auto document = attngen::tensor<attngen::capture_type::i32>("document", attngen::dim::batch,
                                                                            attngen::dim::key_length);
inline constexpr auto cap = attngen::scalar("cap");
inline constexpr auto modifiers = attngen::attention()
                                      .heads(6)
                                      .kv_heads(2)
                                      .head_dim(40)
                                      .capture(document)
                                      .capture(cap)
                                      .mask_mod(attngen::document_mask(document) && attngen::causal_mask(attngen::top_left))
                                      .score_mod(attngen::softcap(cap) + attngen::alibi(6) - attngen::mod::score);

/// The position-only built-ins and a learned table: a prefix (a captured i32 per batch), else a causal
/// bottom-right window of 40 keys; a relative-position bias table and a constant softcap. Long keys
/// give tiles blocks the mask hides, shows whole and cuts.
inline constexpr auto prefix = attngen::tensor<attngen::capture_type::i32>("prefix", attngen::dim::batch);
inline constexpr auto bias_table = attngen::tensor<attngen::capture_type::f32>("bias_table", attngen::dim::heads,
                                                                              attngen::dim::fixed(17));
inline constexpr auto position_modifiers =
    attngen::attention()
        .heads(4)
        .kv_heads(2)
        .head_dim(32)
        .capture(prefix)
        .capture(bias_table)
        .mask_mod(attngen::prefix_lm(prefix) ||
                  (attngen::causal_mask(attngen::bottom_right) && attngen::sliding_window(40, 0)))
        .score_mod(attngen::softcap(20.0f) + attngen::relative_position_bias(bias_table, 8) - attngen::mod::score);

/// Awkward sizes for GPU tiles: head dims that fill no warp, Dv wider than D, a per-head mask and
/// keep-polarity padding.
inline constexpr auto awkward_dims = attngen::attention()
                                         .heads(6)
                                         .kv_heads(3)
                                         .head_dim(24)
                                         .v_head_dim(40)
                                         .additive_mask(attngen::mask_shape::h_lq_lk)
                                         .key_padding_mask(attngen::true_means_keep);

/// f16 on GPUs (CUDA only: OpenCL f16 needs cl_khr_fp16, which PoCL lacks).
inline constexpr auto f16_gqa = attngen::attention().heads(8).kv_heads(2).head_dim(64).element(attngen::dtype::f16);

/// Tiny head dims (no power of two), MQA, causal from the top left.
inline constexpr auto tiny_heads_causal =
    attngen::attention().heads(3).kv_heads(1).head_dim(5).v_head_dim(3).causal(attngen::top_left);

}  // namespace test_kernels
