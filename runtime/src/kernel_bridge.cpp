#include "attngen/runtime/kernel_bridge.hpp"

#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace attngen::detail {

namespace {

// Passed to generated kernels as Halide's user_context, so errors reach the call that raised them
// without any global state.
struct call_context {
  std::string error;
};

halide_type_t halide_type_for(dtype t) {
  switch (t) {
    case dtype::f32: return halide_type_t(halide_type_float, 32);
    case dtype::f16: return halide_type_t(halide_type_float, 16);
    case dtype::bf16: return halide_type_t(halide_type_bfloat, 16);
    case dtype::u8: return halide_type_t(halide_type_uint, 8);
  }
  return halide_type_t();
}

// A halide_buffer_t over a tensor view: Halide's dimension 0 is the view's innermost dimension.
struct halide_view {
  halide_buffer_t buffer = {};
  halide_dimension_t dims[tensor_view::max_rank] = {};

  explicit halide_view(const tensor_view& t) {
    buffer.host = static_cast<std::uint8_t*>(t.data);
    buffer.type = halide_type_for(t.type);
    buffer.dimensions = t.rank;
    buffer.dim = dims;
    for (int d = 0; d < t.rank; ++d) {
      const int from = t.rank - 1 - d;
      dims[d].min = 0;
      dims[d].extent = static_cast<std::int32_t>(t.shape[from]);
      dims[d].stride = static_cast<std::int32_t>(t.shape[from] > 1 ? t.strides[from] : 1);
    }
  }
  halide_view(const halide_view&) = delete;
  halide_view& operator=(const halide_view&) = delete;
};

// Writes `value` to every element of a float view of any float dtype (only 0 and -inf are needed).
void fill(const tensor_view& t, float value) {
  const int size = size_of(t.type);
  std::uint8_t pattern[4];
  if (t.type == dtype::f32) std::memcpy(pattern, &value, 4);
  else if (value == 0.0f) std::memset(pattern, 0, 4);
  else {
    const std::uint16_t negative_infinity = t.type == dtype::bf16 ? 0xff80 : 0xfc00;
    std::memcpy(pattern, &negative_infinity, 2);
  }
  std::int64_t index[tensor_view::max_rank] = {};
  std::int64_t count = 1;
  for (int d = 0; d < t.rank; ++d) count *= t.shape[d];
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t offset = 0;
    for (int d = 0; d < t.rank; ++d) offset += index[d] * t.strides[d];
    std::memcpy(static_cast<std::uint8_t*>(t.data) + offset * size, pattern, size);
    for (int d = t.rank - 1; d >= 0 && ++index[d] == t.shape[d]; --d) index[d] = 0;
  }
}

// The call's status from the generated function's result and the errors it reported.
status finish_call(call_context& context, int result) {
  while (!context.error.empty() && context.error.back() == '\n') context.error.pop_back();
  if (result != 0)
    return status(error_code::kernel_failed,
                  "kernel: " + (context.error.empty() ? "failed with Halide error " + std::to_string(result)
                                                      : context.error));
  return {};
}

// Copies `row` (one element-type vector of `output`'s innermost extent) into every row of `output`.
void fill_rows(const tensor_view& output, const tensor_view& row) {
  const int size = size_of(output.type);
  const std::int64_t features = output.shape[output.rank - 1];
  for (std::int64_t outer = 0; outer < output.shape[0]; ++outer)
    for (std::int64_t inner = 0; inner < output.shape[1]; ++inner) {
      auto* target = static_cast<std::uint8_t*>(output.data) + (outer * output.strides[0] + inner * output.strides[1]) * size;
      for (std::int64_t c = 0; c < features; ++c) {
        if (row.empty()) std::memset(target + c * size, 0, size);
        else std::memcpy(target + c * size, static_cast<const std::uint8_t*>(row.data) + c * row.strides[0] * size, size);
      }
    }
}

// B, L and the keys S' (appended ones included) of a module call whose query and key have rank 3.
struct module_lengths {
  std::int64_t batch, queries, keys;
};

module_lengths lengths_of(const mha_args& args, const mha_desc& desc) {
  const int sequence_dim = desc.batch_major ? 1 : 0;
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  return {args.query.shape[desc.batch_major ? 0 : 1], args.query.shape[sequence_dim],
          key.shape[sequence_dim] + desc.extra_keys()};
}

}  // namespace

status run_attention_kernel(const attention_desc& desc, const attention_args& args, generated_entry entry) {
  if (status s = validate(desc, args); !s) return s;
  const std::int64_t batch = args.q.shape[0], queries = args.q.shape[1], keys = args.k.shape[1];
  if (batch == 0 || queries == 0) return {};
  if (keys == 0) {
    // No keys: every row is fully masked, which the documented semantics define as 0 and -inf.
    fill(args.output, 0.0f);
    if (desc.lse_output) fill(args.lse, -std::numeric_limits<float>::infinity());
    return {};
  }

  halide_view q(args.q), k(args.k), v(args.v), output(args.output);
  halide_view mask(args.mask), key_padding(args.key_padding), lse(args.lse);
  halide_buffer_t* buffers[7];
  int count = 0;
  buffers[count++] = &q.buffer;
  buffers[count++] = &k.buffer;
  buffers[count++] = &v.buffer;
  if (desc.has_additive_mask()) buffers[count++] = &mask.buffer;
  if (desc.has_key_padding_mask()) buffers[count++] = &key_padding.buffer;
  buffers[count++] = &output.buffer;
  if (desc.lse_output) buffers[count++] = &lse.buffer;

  call_context context;
  return finish_call(context, entry(&context, buffers));
}

status run_module_kernel(const mha_desc& desc, const mha_args& args, generated_module_entry entry) {
  if (status s = validate(desc, args); !s) return s;
  const module_lengths lengths = lengths_of(args, desc);
  if (lengths.batch == 0 || lengths.queries == 0) return {};
  if (lengths.keys == 0) {
    // No keys: every query is fully masked, its attention 0, its output the output projection's bias.
    fill_rows(args.output, args.weights.out_bias);
    return {};
  }

  const mha_weights& w = args.weights;
  // A self-attention kernel takes no key and value (validation has checked that any given are the query).
  const tensor_view none;
  const tensor_view* key_view = desc.self_attn ? &none : &args.key;
  const tensor_view* value_view = desc.self_attn ? &none : &args.value;
  const tensor_view* views[] = {&args.query,      key_view,        value_view,     &w.q_weight,
                                &w.k_weight,      &w.v_weight,     &w.q_bias,      &w.k_bias,
                                &w.v_bias,        &w.bias_k,       &w.bias_v,      &w.out_weight,
                                &w.out_bias,      &args.key_padding_mask, &args.attn_mask, &args.output,
                                &args.attn_weights};
  constexpr int max_buffers = sizeof(views) / sizeof(views[0]);
  // Validation has checked that exactly the tensors the description takes are given, in this order.
  std::optional<halide_view> held[max_buffers];
  halide_buffer_t* buffers[max_buffers];
  int count = 0;
  for (const tensor_view* view : views) {
    if (view->empty()) continue;
    buffers[count] = &held[count].emplace(*view).buffer;
    ++count;
  }

  call_context context;
  return finish_call(context, entry(&context, buffers, args.training, args.seed));
}

kernel_variant variant_for(const mha_args& args, const mha_desc& desc, int short_queries_per_tile) {
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  if (args.query.rank != 3 || key.rank != 3) return kernel_variant::general;
  const module_lengths lengths = lengths_of(args, desc);
  return choose_variant(lengths.queries, lengths.keys, desc.num_heads / desc.effective_kv_heads(), desc.is_causal(),
                        short_queries_per_tile);
}

kernel_variant variant_for(const attention_args& args, const attention_desc& desc, int short_queries_per_tile) {
  if (args.q.rank != 4 || args.k.rank != 4) return kernel_variant::general;
  return choose_variant(args.q.shape[1], args.k.shape[1], desc.group_size(), desc.is_causal(),
                        short_queries_per_tile);
}

}  // namespace attngen::detail

namespace attngen {

void set_num_threads(int threads) { halide_set_num_threads(threads); }

}  // namespace attngen

// Replaces the Halide runtime's default error handler (which prints and aborts) for every kernel of
// the process: the message goes to the call context of the kernel call that raised it.
extern "C" void halide_error(void* user_context, const char* message) {
  if (user_context != nullptr) {
    static_cast<attngen::detail::call_context*>(user_context)->error += message;
    return;
  }
  // Only code that is not an attngen kernel call reaches here (no context to report to).
  std::fputs(message, stderr);
}
