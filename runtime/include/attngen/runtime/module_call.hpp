#pragma once
/// The arguments of a module kernel call (attngen::mha_desc), their validation, and the weights of a
/// PyTorch nn.MultiheadAttention state_dict as views.
///
/// Shape contract (outermost first; B, L, S are any run-time values, the rest come from the
/// description; E = embed_dim, KVE = kv_heads x head_dim, S' = S + appended keys):
///   query             (B, L, E)      or (L, B, E) without batch_first
///   key               (B, S, kdim)   or (S, B, kdim)
///   value             (B, S, vdim)   or (S, B, vdim)
///                     with self_attention: no key and value, or the query's own view (S = L)
///   weights.q_weight  (E, E)         PyTorch's (out, in)
///   weights.k_weight  (KVE, kdim)
///   weights.v_weight  (KVE, vdim)
///   weights.q_bias (E), k_bias (KVE), v_bias (KVE), out_bias (E)   with bias
///   weights.bias_k (KVE), bias_v (KVE)                             with add_bias_kv
///   weights.out_weight (E, E)
///   key_padding_mask  (B, S)         bytes (nonzero = ignore) or the element type (added)
///   attn_mask         (L, S), (B x heads, L, S) or (B, heads, L, S)  as described; bytes (nonzero =
///                     masked out) or the element type (added)
///   output            like query
///   attn_weights      (B, heads, L, S') per head, (B, L, S') averaged  with need_weights
/// Every tensor is in the description's element type except boolean masks (u8).
/// B == 0 or L == 0 writes nothing. S == 0 without appended keys leaves every query fully masked: its
/// output is the output projection's bias (0 without bias).
/// Every tensor is on one device: the host, or a GPU the kernel was generated for (see
/// attngen/runtime/gpu.hpp).

#include <cstdint>
#include <span>
#include <string_view>

#include "attngen/module.hpp"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

/// The module's learned parameters as views; those the description does not take stay empty.
struct mha_weights {
  tensor_view q_weight, k_weight, v_weight;
  tensor_view q_bias, k_bias, v_bias;
  tensor_view bias_k, bias_v;
  tensor_view out_weight, out_bias;
};

struct mha_args {
  tensor_view query, key, value;
  mha_weights weights;
  tensor_view key_padding_mask;  ///< only if the description has one
  tensor_view attn_mask;         ///< only if the description has one
  tensor_view output;
  tensor_view attn_weights;      ///< only with need_weights
  /// Dropout applies only when true (training); the same seed gives the same result bit for bit.
  bool training = false;
  std::uint64_t seed = 0;
  gpu_options gpu;  ///< where the call runs when not where its tensors are; CUDA context and stream
};

/// Checks `args` against `desc` and the shape contract above; the first problem found is returned.
status validate(const mha_desc& desc, const mha_args& args);

/// The arguments of a module's backward pass (a description with .with_backward()): the forward
/// call's inputs, weights, masks and dropout scalars as it took them (the forward is recomputed:
/// nothing of it is kept between the calls), the loss's gradient of the output, and the gradients
/// written, each of its input's shape and type:
///   d_output   like output       the loss's gradient of the module's output
///   d_query    like query        written; with self_attention, the gradient of the one input
///   d_key, d_value               written, without self_attention
///   d_weights  like weights      written: q_weight, k_weight, v_weight, [biases], [bias_k, bias_v],
///                                out_weight, [out_bias], as PyTorch's (out, in) layout. Views made by
///                                weights_from_state_dict over the parameters' .grad tensors write the
///                                state_dict's layout (in_proj_weight packed) in place.
/// The same seed (with training) drops the same weights as the forward call. Each gradient is summed
/// in a fixed order: the same bits for any number of threads. B == 0 or L == 0 writes zero gradients;
/// S == 0 (no input keys) is refused (error_code::wrong_shape, naming key).
struct mha_backward_args {
  tensor_view query, key, value;
  mha_weights weights;
  tensor_view key_padding_mask;  ///< only if the description has one
  tensor_view attn_mask;         ///< only if the description has one
  bool training = false;
  std::uint64_t seed = 0;
  tensor_view d_output;
  tensor_view d_query, d_key, d_value;
  mha_weights d_weights;
  gpu_options gpu;  ///< where the call runs when not where its tensors are; CUDA context and stream
};

/// Checks `args` against `desc` (which must have .with_backward()) and the shape contract above.
status validate(const mha_desc& desc, const mha_backward_args& args);

namespace detail {

/// The arguments of a generated module's typed call, run(query, ..., weights, ..., output, ...):
/// `tensors` are the views of kernel_arguments(desc) in its order (attngen/module_arguments.hpp),
/// the weights left out, which `weights` gives.
mha_args mha_args_of(const mha_desc& desc, const tensor_view* tensors, const mha_weights& weights, bool training,
                     std::uint64_t seed, const gpu_options& gpu);

}  // namespace detail

/// One tensor of a PyTorch state_dict: its key and its data, dense row-major in the description's
/// element type (e.g. `module.state_dict()["in_proj_weight"].contiguous().data_ptr()`).
struct state_dict_tensor {
  std::string_view name;
  const void* data;
};

/// Views of the weights in a state_dict of `nn.MultiheadAttention(embed_dim, heads, ...)` with this
/// description. Keys: `in_proj_weight` (3E, E) when kdim == vdim == E, otherwise `q_proj_weight`,
/// `k_proj_weight`, `v_proj_weight`; `in_proj_bias` (E + 2 KVE) and `out_proj.bias` with bias;
/// `bias_k`, `bias_v` (1, 1, KVE) with add_bias_kv; `out_proj.weight`. With kv heads (not in PyTorch)
/// the same keys hold KVE rows for k and v: `in_proj_weight` is (E + 2 KVE, E). The packed tensors
/// are viewed in place, not copied. A missing, unknown or repeated key is an error that names it;
/// `weights` is then left as it was.
/// `tensors` is any contiguous range of them: a std::vector, a std::array or a C array, e.g.
/// `const state_dict_tensor state[] = {{"in_proj_weight", w}, ...}; weights_from_state_dict(desc, state, weights)`.
status weights_from_state_dict(const mha_desc& desc, std::span<const state_dict_tensor> tensors, mha_weights& weights);

/// A gradient of a PyTorch state_dict's tensor: its key and the memory a backward call writes it to,
/// dense row-major in the description's element type (e.g. `param.grad.data_ptr()` of
/// `module.in_proj_weight`).
struct state_dict_gradient {
  std::string_view name;
  void* data;
};

/// Writable views of the weights' gradients in the state_dict's layout (the same keys and packing as
/// weights_from_state_dict), for mha_backward_args::d_weights: a backward call then writes
/// `in_proj_weight`'s gradient (q, k and v packed) in place, as an optimiser over the state_dict wants.
status gradients_from_state_dict(const mha_desc& desc, std::span<const state_dict_gradient> gradients,
                                 mha_weights& d_weights);

}  // namespace attngen
