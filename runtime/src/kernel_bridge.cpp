#include "attngen/runtime/kernel_bridge.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"
#include "call_context.hpp"
#include "tensor_checks.hpp"

namespace attngen::detail {

namespace {

// GPU code takes bf16 as its bits (Halide 14's GPU backends cannot compile bfloat16 values).
halide_type_t halide_type_for(dtype t, bool bfloat16_as_bits = false) {
  switch (t) {
    case dtype::f32: return halide_type_t(halide_type_float, 32);
    case dtype::f16: return halide_type_t(halide_type_float, 16);
    case dtype::bf16: return bfloat16_as_bits ? halide_type_t(halide_type_uint, 16) : halide_type_t(halide_type_bfloat, 16);
    case dtype::u8: return halide_type_t(halide_type_uint, 8);
    case dtype::i32: return halide_type_t(halide_type_int, 32);
  }
  return halide_type_t();
}

// A halide_buffer_t over a tensor view: Halide's dimension 0 is the view's innermost dimension.
struct halide_view {
  halide_buffer_t buffer = {};
  halide_dimension_t dims[tensor_view::max_rank] = {};

  explicit halide_view(const tensor_view& t, bool bfloat16_as_bits = false) {
    buffer.host = static_cast<std::uint8_t*>(t.data);
    buffer.type = halide_type_for(t.type, bfloat16_as_bits);
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

// Halide's CUDA runtime asks these for the context and stream of each call: the app's, when the
// call's options give them, else Halide's defaults. Installed once, before the first CUDA call.
halide_cuda_acquire_context_t default_acquire_context = nullptr;
halide_cuda_get_stream_t default_get_stream = nullptr;

int acquire_context(void* user_context, void** cuda_context, bool create) {
  const auto* call = static_cast<const call_context*>(user_context);
  if (call != nullptr && call->cuda_context != nullptr) {
    *cuda_context = call->cuda_context;
    return 0;
  }
  return default_acquire_context(user_context, cuda_context, create);
}

int get_stream(void* user_context, void* cuda_context, void** stream) {
  const auto* call = static_cast<const call_context*>(user_context);
  if (call != nullptr && call->cuda_stream != nullptr) {
    *stream = call->cuda_stream;
    return 0;
  }
  return default_get_stream(user_context, cuda_context, stream);
}

void install_cuda_hooks() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    default_acquire_context = halide_set_cuda_acquire_context(&acquire_context);
    default_get_stream = halide_set_cuda_get_stream(&get_stream);
  });
}

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

// A dense host tensor of `t`'s shape and type, its elements zero bytes, stored in `bytes`.
tensor_view dense_host_like(const tensor_view& t, std::vector<std::uint8_t>& bytes) {
  std::int64_t count = 1;
  for (int d = 0; d < t.rank; ++d) count *= t.shape[d];
  bytes.assign(std::size_t(count) * size_of(t.type), 0);
  tensor_view dense = t;
  dense.data = bytes.data();
  dense.device = device_kind::host;
  std::int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    dense.strides[d] = stride;
    stride *= t.shape[d];
  }
  return dense;
}

// What a call on a GPU does around the kernel: device tensors are wrapped (never copied), host
// tensors are copied in before and out after, and everything is let go of afterwards. On the host
// it does nothing.
class gpu_call {
 public:
  gpu_call(call_context& context, device_kind device) : context_(context), device_(device) {
    if (device == device_kind::cuda) install_cuda_hooks();
    if (device != device_kind::host)
      interface_ = device == device_kind::cuda ? halide_cuda_device_interface() : halide_opencl_device_interface();
  }
  gpu_call(const gpu_call&) = delete;
  gpu_call& operator=(const gpu_call&) = delete;
  // Detaches wrapped device tensors and frees the copies of host tensors.
  ~gpu_call() {
    for (halide_buffer_t* buffer : wrapped_) halide_device_detach_native(&context_, buffer);
    for (halide_buffer_t* buffer : copied_) halide_device_free(&context_, buffer);
  }

  // Makes `view` (over `tensor`) usable by the kernel.
  status attach(halide_view& view, const tensor_view& tensor, bool is_output) {
    if (interface_ == nullptr) return {};
    if (tensor.device == device_) {
      view.buffer.host = nullptr;
      const int result = halide_device_wrap_native(&context_, &view.buffer, reinterpret_cast<std::uint64_t>(tensor.data), interface_);
      if (result != 0) return finish_call(context_, result);
      wrapped_.push_back(&view.buffer);
    } else {
      if (!is_output) view.buffer.flags |= halide_buffer_flag_host_dirty;
      copied_.push_back(&view.buffer);
      if (is_output) host_outputs_.push_back(&view.buffer);
    }
    return {};
  }

  int copy_outputs_back() {
    for (halide_buffer_t* buffer : host_outputs_)
      if (int result = halide_copy_to_host(&context_, buffer); result != 0) return result;
    return 0;
  }


  // Writes `value` to every element of an output (0 or -inf), wherever it is.
  status fill(const tensor_view& t, float value) {
    if (interface_ == nullptr || t.device == device_kind::host) {
      detail::fill(t, value);
      return {};
    }
    std::vector<std::uint8_t> host;
    const tensor_view staged = dense_host_like(t, host);
    detail::fill(staged, value);
    return transfer(staged, t);
  }

  // Copies `row` (a vector as long as the output's innermost dimension, or empty for zeros) into
  // every row of a rank-3 output, wherever either is.
  status fill_rows(const tensor_view& output, const tensor_view& row) {
    if (interface_ == nullptr) {
      detail::fill_rows(output, row);
      return {};
    }
    std::vector<std::uint8_t> row_bytes, output_bytes;
    tensor_view host_row = row;
    if (!row.empty() && row.device != device_kind::host) {
      host_row = dense_host_like(row, row_bytes);
      if (status s = transfer(row, host_row); !s) return s;
    }
    const tensor_view staged = output.device == device_kind::host ? output : dense_host_like(output, output_bytes);
    detail::fill_rows(staged, host_row);
    return output.device == device_kind::host ? status() : transfer(staged, output);
  }

 private:
  // Copies the elements of `from` into `to`, one of them on the device and the other on the host.
  status transfer(const tensor_view& from, const tensor_view& to) {
    halide_view source(from, true), target(to, true);
    halide_view& on_device = from.device == device_kind::host ? target : source;
    const tensor_view& device_tensor = from.device == device_kind::host ? to : from;
    on_device.buffer.host = nullptr;
    int result = halide_device_wrap_native(&context_, &on_device.buffer,
                                           reinterpret_cast<std::uint64_t>(device_tensor.data), interface_);
    if (result == 0) {
      result = halide_buffer_copy(&context_, &source.buffer, from.device == device_kind::host ? interface_ : nullptr,
                                  &target.buffer);
      halide_device_detach_native(&context_, &on_device.buffer);
    }
    return finish_call(context_, result);
  }

  call_context& context_;
  device_kind device_;
  const halide_device_interface_t* interface_ = nullptr;
  std::vector<halide_buffer_t*> wrapped_, copied_, host_outputs_;
};

// The Halide buffers of a call's views, in order, empty views skipped: each attached where the call
// runs (views from `first_output` on are outputs). Held here for the call's duration.
template <int N>
class kernel_buffers {
 public:
  status attach(gpu_call& gpu, const tensor_view* const (&views)[N], int first_output, bool on_gpu) {
    for (int n = 0; n < N; ++n) {
      if (views[n]->empty()) continue;
      halide_view& view = held_[count_].emplace(*views[n], on_gpu);
      if (status s = gpu.attach(view, *views[n], n >= first_output); !s) return s;
      buffers_[count_++] = &view.buffer;
    }
    return {};
  }
  halide_buffer_t* const* data() const { return buffers_; }

 private:
  std::optional<halide_view> held_[N];
  halide_buffer_t* buffers_[N] = {};
  int count_ = 0;
};

// A call's context: on a GPU, with the app's CUDA context and stream when it gives them.
call_context context_for(device_kind device, const gpu_options& gpu) {
  call_context context;
  if (device != device_kind::host) {
    context.cuda_context = gpu.cuda_context;
    context.cuda_stream = gpu.cuda_stream;
  }
  return context;
}

// Where a call runs: where its (validated, all on one device) tensors are, or where the options
// send host tensors.
device_kind device_of_call(const tensor_view& first_tensor, const gpu_options& gpu) {
  return first_tensor.device != device_kind::host ? first_tensor.device : gpu.run_host_tensors_on;
}

// The kernel's code for `device`, or device_not_generated naming the tensor that decided the device.
template <typename Entry>
status entry_for(device_kind device, const kernel_entries<Entry>& entries, const char* first_tensor, Entry& entry) {
  entry = device == device_kind::host ? entries.cpu : device == device_kind::cuda ? entries.cuda : entries.opencl;
  if (entry != nullptr) return {};
  return status(error_code::device_not_generated,
                std::string(first_tensor) + ": the call runs on " + name_of(device) +
                    ", for which this kernel has no code; generate it with a GPU target for " + name_of(device));
}

// The key or value tensor a module kernel takes: none with self-attention (validation has checked
// that any given are the query).
const tensor_view* module_input_view(const mha_desc& desc, const tensor_view& tensor) {
  static const tensor_view none;
  return desc.self_attn ? &none : &tensor;
}

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

// Runs one part of a module's CPU code over `views`, its last `outputs` the part's outputs; a Halide
// error code.
template <int N>
int run_part(generated_module_entry part, call_context& context, gpu_call& host, const tensor_view* const (&views)[N],
             int outputs, const mha_args& args) {
  kernel_buffers<N> buffers;
  // On the host, attaching only wraps the views: it cannot fail.
  if (status s = buffers.attach(host, views, N - outputs, false); !s) return -1;
  return part(&context, buffers.data(), args.training, args.seed);
}

// A host call of a module: its parts one after the other, over buffers allocated here.
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
  int result = run_part(parts.projection, context, host, project_query, 1, args);
  if (result == 0 && keys_projected) result = run_part(parts.projection, context, host, project_key, 1, args);
  if (result == 0 && keys_projected) result = run_part(parts.projection, context, host, project_value, 1, args);
  if (result == 0) result = run_part(parts.attention, context, host, attend, 1, args);
  const generated_module_entry out_projection = parts.out_projection ? parts.out_projection : parts.projection;
  if (result == 0) result = run_part(out_projection, context, host, project_output, 1, args);
  if (result == 0 && parts.weights != nullptr) result = run_part(parts.weights, context, host, weights, 1, args);
  return finish_call(context, result);
}

// A CPU kernel writes the log-sum-exp as its output's second value (codegen's
// blocking::lse_in_output): the (B, H, Lq) tensor seen with the output's dimensions, (B, Lq, H, Dv),
// the feature dimension stepping nowhere. GPU kernels take the tensor as it is.
tensor_view lse_beside_output(const tensor_view& lse, std::int64_t value_head_dim) {
  tensor_view view = lse;
  view.rank = 4;
  const std::int64_t shape[] = {lse.shape[0], lse.shape[2], lse.shape[1], value_head_dim};
  const std::int64_t strides[] = {lse.strides[0], lse.strides[2], lse.strides[1], 0};
  std::copy(std::begin(shape), std::end(shape), view.shape);
  std::copy(std::begin(strides), std::end(strides), view.strides);
  return view;
}

// The visibility table's slices `visibility` gives a host call, computed into `bytes` after the table
// on the finest tiles (an empty view where the variant takes none).
status compute_visibility_table(const visibility_entry& visibility, const attention_args& args,
                                const tensor_view& scalars, call_context& context, gpu_call& host,
                                std::vector<std::uint8_t>& bytes, tensor_view& slices) {
  if (visibility.compute == nullptr) return {};
  const std::int64_t queries = args.q.shape[1], keys = args.k.shape[1];
  const visibility_table_extents finest{args.q.shape[0], visibility.heads,
                                        (queries + visibility.tile_queries - 1) / visibility.tile_queries,
                                        (keys + visibility.block_keys - 1) / visibility.block_keys};
  const std::int64_t count = finest.batch * finest.heads * finest.tiles * finest.blocks;
  if (count * visibility.targets > std::numeric_limits<std::int32_t>::max())
    return status(error_code::too_large, "q and k: the mask modifier's visibility table would have " +
                                             std::to_string(count * visibility.targets) +
                                             " entries, past the kernel's 32-bit indexing");
  try {
    bytes.assign(std::size_t(count * (1 + visibility.targets)), 0);
  } catch (const std::bad_alloc&) {
    return status(error_code::kernel_failed, "q and k: cannot allocate the mask modifier's visibility table (" +
                                                 std::to_string(count * (1 + visibility.targets)) + " bytes)");
  }
  const tensor_view table = make_tensor(bytes.data(), {finest.batch, finest.heads, finest.tiles, finest.blocks});
  const tensor_view* views[] = {&args.captures[0], &args.captures[1], &args.captures[2], &args.captures[3], &scalars,
                                &table};
  kernel_buffers<int(std::size(views))> buffers;
  // On the host, attaching only wraps the views: it cannot fail.
  if (status s = buffers.attach(host, views, int(std::size(views)) - 1, false); !s) return s;
  const int result = visibility.compute(&context, buffers.data(), std::int32_t(queries), std::int32_t(keys),
                                        visibility.tile_queries, visibility.block_keys);
  if (result != 0) return finish_call(context, result);
  fill_visibility_slices(bytes.data(), finest, visibility.ratios, visibility.targets, bytes.data() + count);
  slices = make_tensor(bytes.data() + count,
                       {finest.batch, visibility.targets * finest.heads, finest.tiles, finest.blocks});
  return {};
}

}  // namespace

status run_attention_kernel(const attention_desc& desc, const attention_args& args, const attention_entries& entries,
                            const visibility_entry& visibility) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.q, args.gpu);
  generated_entry entry = nullptr;
  if (status s = entry_for(device, entries, "q", entry); !s) return s;
  const std::int64_t batch = args.q.shape[0], queries = args.q.shape[1], keys = args.k.shape[1];
  if (batch == 0 || queries == 0) return {};

  // Captured scalars reach the kernel as one float buffer (on a GPU, copied to the device).
  const tensor_view scalars = desc.captures.scalar_count == 0
                                  ? tensor_view{}
                                  : make_tensor(args.scalars, {std::int64_t(desc.captures.scalar_count)});
  const tensor_view lse = desc.lse_output && device == device_kind::host
                              ? lse_beside_output(args.lse, desc.effective_v_head_dim())
                              : args.lse;
  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  if (keys == 0) {
    // No keys: every row is fully masked, which the documented semantics define as 0 and -inf.
    if (status s = gpu.fill(args.output, 0.0f); !s) return s;
    if (desc.lse_output) return gpu.fill(args.lse, -std::numeric_limits<float>::infinity());
    return {};
  }
  std::vector<std::uint8_t> table_bytes;
  tensor_view table;
  if (device == device_kind::host)
    if (status s = compute_visibility_table(visibility, args, scalars, context, gpu, table_bytes, table); !s) return s;
  const tensor_view* views[] = {&args.q,           &args.k,           &args.v,           &args.mask,
                                &args.key_padding, &args.captures[0], &args.captures[1], &args.captures[2],
                                &args.captures[3], &scalars,          &table,            &args.output,
                                &lse};
  constexpr int first_output = int(std::size(views)) - 2;

  kernel_buffers<int(std::size(views))> buffers;
  if (status s = buffers.attach(gpu, views, first_output, device != device_kind::host); !s) return s;
  int result = entry(&context, buffers.data());
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result);
}

status run_module_kernel(const mha_desc& desc, const mha_args& args, const module_entries& entries) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.query, args.gpu);
  generated_module_entry gpu_entry = nullptr;
  if (device != device_kind::host) {
    const kernel_entries<generated_module_entry> gpu_entries{nullptr, entries.cuda, entries.opencl};
    if (status s = entry_for(device, gpu_entries, "query", gpu_entry); !s) return s;
  }
  const module_lengths lengths = lengths_of(args, desc);
  if (lengths.batch == 0 || lengths.queries == 0) return {};

  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  if (lengths.keys == 0) {
    // No keys: every query is fully masked, its attention 0, its output the output projection's bias.
    return gpu.fill_rows(args.output, args.weights.out_bias);
  }
  if (device == device_kind::host) return run_module_parts(desc, args, entries.cpu, lengths, context, gpu);
  // The GPU pipeline takes S from the key tensor and reads its rows for the appended keys too.
  if (lengths.keys == desc.extra_keys())
    return status(error_code::wrong_shape,
                  "key: no input keys (S = 0) with appended keys (add_bias_kv, add_zero_attn) runs on the CPU "
                  "only; on a GPU give at least one key");

  const mha_weights& w = args.weights;
  const tensor_view* views[] = {&args.query,  module_input_view(desc, args.key), module_input_view(desc, args.value),
                                &w.q_weight,  &w.k_weight,      &w.v_weight,     &w.q_bias,      &w.k_bias,
                                &w.v_bias,    &w.bias_k,        &w.bias_v,       &w.out_weight,  &w.out_bias,
                                &args.key_padding_mask,         &args.attn_mask, &args.output,   &args.attn_weights};
  constexpr int first_output = int(std::size(views)) - 2;
  // Validation has checked that exactly the tensors the description takes are given, in this order.
  kernel_buffers<int(std::size(views))> buffers;
  if (status s = buffers.attach(gpu, views, first_output, true); !s) return s;
  int result = gpu_entry(&context, buffers.data(), args.training, args.seed);
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result);
}

kernel_variant variant_for(const mha_args& args, const mha_desc& desc, int short_queries_per_tile) {
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  if (args.query.rank != 3 || key.rank != 3) return kernel_variant::general;
  const module_lengths lengths = lengths_of(args, desc);
  return choose_module_variant(lengths.queries, lengths.keys, desc.num_heads / desc.effective_kv_heads(),
                               desc.is_causal(), short_queries_per_tile, desc.self_attn);
}

kernel_variant variant_for(const attention_args& args, const attention_desc& desc, int short_queries_per_tile) {
  if (args.q.rank != 4 || args.k.rank != 4) return kernel_variant::general;
  return choose_variant(args.q.shape[1], args.k.shape[1], desc.group_size(), desc.is_causal(),
                        short_queries_per_tile);
}

status finish_call(call_context& context, int result, const char* what) {
  while (!context.error.empty() && context.error.back() == '\n') context.error.pop_back();
  if (result != 0)
    return status(error_code::kernel_failed,
                  std::string(what) + ": " +
                      (context.error.empty() ? "failed with Halide error " + std::to_string(result) : context.error));
  return {};
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
