#include "module_parts.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/module_arguments.hpp"
#include "attngen/runtime/detail/module_part_times.hpp"
#include "attngen/runtime/detail/scratch_memory.hpp"

namespace attngen::detail {

namespace {

// A dense float32 buffer between a module's parts, held for the call, in scratch memory that the next
// call reuses.
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
    data_.reset(static_cast<float*>(scratch_allocate(std::size_t(count) * sizeof(float))));
    if (!data_)
      return status(error_code::kernel_failed, std::string(argument) + ": cannot allocate the module's " + what + " (" +
                                                   std::to_string(count * 4) + " bytes)");
    view = make_tensor(data_.get(), shape);
    return {};
  }
  tensor_view view;

 private:
  std::unique_ptr<float, scratch_deleter> data_;
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

// This thread's record of part times (record_module_part_times), or null.
thread_local module_part_times* part_times = nullptr;

// The views of one call of a part, for the slots of its arguments (part_arguments).
struct part_views {
  const tensor_view *x = nullptr, *weight = nullptr, *bias = nullptr, *linear_output = nullptr;
  const tensor_view *projected_q = nullptr, *keys = nullptr, *values = nullptr, *key_padding_mask = nullptr,
                    *attn_mask = nullptr, *attention_result = nullptr, *attn_weights = nullptr;

  const tensor_view* of(module_slot slot) const {
    switch (slot) {
      case module_slot::x: return x;
      case module_slot::weight: return weight;
      case module_slot::bias: return bias;
      case module_slot::linear_output: return linear_output;
      case module_slot::projected_q: return projected_q;
      case module_slot::keys: return keys;
      case module_slot::values: return values;
      case module_slot::key_padding_mask: return key_padding_mask;
      case module_slot::attn_mask: return attn_mask;
      case module_slot::attention_result: return attention_result;
      case module_slot::attn_weights: return attn_weights;
      default: return nullptr;
    }
  }
};

// Runs `part` of a module's CPU code over `views`, in its arguments' order; the part's status
// (finish_call's), or attaching's.
status run_part(const mha_desc& desc, module_part part, generated_module_entry entry, const part_views& views,
                call_context& context, gpu_call& host, const mha_args& args) {
  const module_argument_table arguments = part_arguments(desc, part);
  static const tensor_view none;
  const tensor_view* buffers_views[module_slot_count];
  std::fill(std::begin(buffers_views), std::end(buffers_views), &none);
  for (int n = 0; n < arguments.size(); ++n) buffers_views[n] = views.of(arguments[n].slot);
  kernel_buffers<module_slot_count> buffers;
  // On the host, attaching only wraps the views; its status is passed on all the same.
  if (status s = buffers.attach(host, buffers_views, arguments.first_output(), false); !s) return s;
  if (part_times == nullptr) return finish_call(context, entry(&context, buffers.data(), args.training, args.seed));
  const auto start = std::chrono::steady_clock::now();
  const int result = entry(&context, buffers.data(), args.training, args.seed);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (part == module_part::attention ? part_times->attention
   : part == module_part::weights ? part_times->weights
                                  : part_times->projections) += seconds;
  return finish_call(context, result);
}

}  // namespace

void record_module_part_times(module_part_times* record) { part_times = record; }

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

  // A linear layer's views; the attention's and the weights'.
  auto linear = [](const tensor_view& x, const tensor_view& weight, const tensor_view& bias, const tensor_view& out) {
    return part_views{.x = &x, .weight = &weight, .bias = &bias, .linear_output = &out};
  };
  const part_views attending{.projected_q = &projected_q.view,
                             .keys = &keys.view,
                             .values = &values.view,
                             .key_padding_mask = &key_padding.view,
                             .attn_mask = &attn_mask.view,
                             .attention_result = &attention.view,
                             .attn_weights = &args.attn_weights};
  const module_cpu_parts& p = parts;
  status result = run_part(desc, module_part::projection, p.projection, linear(query, w.q_weight, w.q_bias, projected_q.view),
                           context, host, args);
  if (result && keys_projected)
    result = run_part(desc, module_part::projection, p.projection, linear(key, w.k_weight, w.k_bias, projected_keys),
                      context, host, args);
  if (result && keys_projected)
    result = run_part(desc, module_part::projection, p.projection,
                      linear(value, w.v_weight, w.v_bias, projected_values), context, host, args);
  if (result) result = run_part(desc, module_part::attention, p.attention, attending, context, host, args);
  // f32 modules project the output with the projection part (f32 in, f32 out).
  const module_part out_part = p.out_projection ? module_part::out_projection : module_part::projection;
  const generated_module_entry out_projection = p.out_projection ? p.out_projection : p.projection;
  if (result)
    result = run_part(desc, out_part, out_projection, linear(attention_rows, w.out_weight, w.out_bias, output), context,
                      host, args);
  if (result && p.weights != nullptr) result = run_part(desc, module_part::weights, p.weights, attending, context, host, args);
  return result;
}

}  // namespace attngen::detail
