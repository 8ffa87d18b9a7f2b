#include "module_parts.hpp"

#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

// A dense float32 buffer between a module's parts, held for the call.
class part_buffer {
 public:
  // Allocates `shape` (outermost first); `what` and `argument` name it and the argument whose sizes
  // it takes in an error.
  status allocate(std::initializer_list<std::int64_t> shape, const char* what, const char* argument) {
    std::int64_t count = 1;
    for (const std::int64_t extent : shape) count *= extent;
    if (count > std::numeric_limits<std::int32_t>::max())
      return status(error_code::too_large, std::string(argument) + ": the module's " + what + " would have " +
                                               std::to_string(count) + " elements, past the kernel's 32-bit indexing");
    data_.reset(new (std::nothrow) float[std::size_t(count)]);
    if (!data_)
      return status(error_code::kernel_failed, std::string(argument) + ": cannot allocate the module's " + what + " (" +
                                                   std::to_string(count * 4) + " bytes)");
    view = make_tensor(data_.get(), shape);
    return {};
  }
  tensor_view view;

 private:
  std::unique_ptr<float[]> data_;
};

// A module's mask as its CPU parts read it. They read the masks for every key, the appended ones
// included (their scores select past the masks), so with no input keys, where a mask has no element
// to read, zeros shaped as the mask with one key stand in: they hide and add nothing. Held for the
// call.
class module_mask {
 public:
  module_mask(const tensor_view& mask, bool no_input_keys) : view(mask) {
    if (!no_input_keys || mask.empty()) return;
    tensor_view one_key = mask;
    one_key.shape[one_key.rank - 1] = 1;
    view = dense_host_like(one_key, zeros_);
  }
  tensor_view view;

 private:
  std::vector<std::uint8_t> zeros_;
};

// A module's (B, L, F) or (L, B, F) sequence tensor as (B, L, F).
tensor_view batch_major(const tensor_view& sequence, bool batch_first) {
  tensor_view view = sequence;
  if (!batch_first) {
    std::swap(view.shape[0], view.shape[1]);
    std::swap(view.strides[0], view.strides[1]);
  }
  return view;
}

// Rows `first` on of a dense float (B, R, G, D) buffer, as (B, R - first, G * D).
tensor_view rows_from(const tensor_view& dense, std::int64_t first) {
  const std::int64_t features = dense.shape[2] * dense.shape[3];
  return make_tensor(static_cast<float*>(dense.data) + first * features, dtype::f32,
                     {dense.shape[0], dense.shape[1] - first, features}, {dense.strides[0], features, 1});
}

// Element `index` of a vector of the module's element type, as float.
float float_element(const tensor_view& vector, std::int64_t index) {
  const auto* element = static_cast<const std::uint8_t*>(vector.data) + index * vector.strides[0] * size_of(vector.type);
  if (vector.type == dtype::f32) {
    float value;
    std::memcpy(&value, element, 4);
    return value;
  }
  std::uint16_t bits;
  std::memcpy(&bits, element, 2);
  if (vector.type == dtype::f16) return halide_float16_bits_to_float(bits);
  const std::uint32_t widened = std::uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &widened, 4);
  return value;
}

// The `extra` keys (or values) placed before each batch's projected ones in a dense float (B, S', KVH,
// D) buffer: `bias` (bias_k or bias_v) first when given, then zeros (add_zero_attn).
void write_appended_keys(const tensor_view& keys, const tensor_view& bias, std::int64_t extra) {
  const std::int64_t features = keys.shape[2] * keys.shape[3];
  for (std::int64_t batch = 0; batch < keys.shape[0]; ++batch)
    for (std::int64_t row = 0; row < extra; ++row) {
      float* key = static_cast<float*>(keys.data) + batch * keys.strides[0] + row * features;
      for (std::int64_t c = 0; c < features; ++c) key[c] = row == 0 && !bias.empty() ? float_element(bias, c) : 0.0f;
    }
}

// Runs one part of a module's CPU code over `views`, its last `outputs` the part's outputs; the
// part's status (finish_call's), or attaching's.
template <int N>
status run_part(generated_module_entry part, call_context& context, gpu_call& host,
                const tensor_view* const (&views)[N], int outputs, const mha_args& args) {
  kernel_buffers<N> buffers;
  // On the host, attaching only wraps the views; its status is passed on all the same.
  if (status s = buffers.attach(host, views, N - outputs, false); !s) return s;
  return finish_call(context, part(&context, buffers.data(), args.training, args.seed));
}

}  // namespace

module_lengths lengths_of(const mha_args& args, const mha_desc& desc) {
  const int sequence_dim = desc.batch_major ? 1 : 0;
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  return {args.query.shape[desc.batch_major ? 0 : 1], args.query.shape[sequence_dim],
          key.shape[sequence_dim] + desc.extra_keys()};
}

status run_module_parts(const mha_desc& desc, const mha_args& args, const module_cpu_parts& parts,
                        const module_lengths& lengths, call_context& context, gpu_call& host) {
  const std::int64_t heads = desc.num_heads, kv_heads = desc.effective_kv_heads(), head_dim = desc.head_dim();
  const char* key_argument = desc.self_attn ? "query" : "key";
  part_buffer projected_q, keys, values, attention;
  if (status s = projected_q.allocate({lengths.batch, lengths.queries, desc.embed}, "projected queries", "query"); !s)
    return s;
  if (status s = keys.allocate({lengths.batch, lengths.keys, kv_heads, head_dim}, "projected keys", key_argument); !s)
    return s;
  if (status s = values.allocate({lengths.batch, lengths.keys, kv_heads, head_dim}, "projected values", key_argument); !s)
    return s;
  if (status s = attention.allocate({lengths.batch, lengths.queries, heads, head_dim}, "attention result", "query"); !s)
    return s;

  // The projections read and write every sequence batch-major; keys and values go after the
  // appended ones, which are written here.
  const mha_weights& w = args.weights;
  const std::int64_t extra = desc.extra_keys();
  const tensor_view query = batch_major(args.query, desc.batch_major);
  const tensor_view key = desc.self_attn ? query : batch_major(args.key, desc.batch_major);
  const tensor_view value = desc.self_attn ? query : batch_major(args.value, desc.batch_major);
  const tensor_view projected_keys = rows_from(keys.view, extra), projected_values = rows_from(values.view, extra);
  const tensor_view attention_rows =
      make_tensor(attention.view.data, dtype::f32, {lengths.batch, lengths.queries, desc.embed});
  const tensor_view output = batch_major(args.output, desc.batch_major);
  write_appended_keys(keys.view, w.bias_k, extra);
  write_appended_keys(values.view, w.bias_v, extra);
  const bool keys_projected = lengths.keys > extra;
  const module_mask key_padding(args.key_padding_mask, !keys_projected), attn_mask(args.attn_mask, !keys_projected);

  const tensor_view* project_query[] = {&query, &w.q_weight, &w.q_bias, &projected_q.view};
  const tensor_view* project_key[] = {&key, &w.k_weight, &w.k_bias, &projected_keys};
  const tensor_view* project_value[] = {&value, &w.v_weight, &w.v_bias, &projected_values};
  const tensor_view* attend[] = {&projected_q.view, &keys.view,      &values.view,
                                 &key_padding.view, &attn_mask.view, &attention.view};
  const tensor_view* project_output[] = {&attention_rows, &w.out_weight, &w.out_bias, &output};
  const tensor_view* weights[] = {&projected_q.view, &keys.view, &key_padding.view, &attn_mask.view,
                                  &args.attn_weights};
  status result = run_part(parts.projection, context, host, project_query, 1, args);
  if (result && keys_projected) result = run_part(parts.projection, context, host, project_key, 1, args);
  if (result && keys_projected) result = run_part(parts.projection, context, host, project_value, 1, args);
  if (result) result = run_part(parts.attention, context, host, attend, 1, args);
  const generated_module_entry out_projection = parts.out_projection ? parts.out_projection : parts.projection;
  if (result) result = run_part(out_projection, context, host, project_output, 1, args);
  if (result && parts.weights != nullptr) result = run_part(parts.weights, context, host, weights, 1, args);
  return result;
}

}  // namespace attngen::detail
