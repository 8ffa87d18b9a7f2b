#include "attngen/runtime/detail/tensorcore_launch.hpp"

#include <bit>
#include <cstdint>

namespace attngen::detail {

namespace {

// Strides of a (B, L, heads, D) tensor, or of a packed (total_q, heads, D) one (batch stride 0), of
// `element_bytes` elements whose rows start `alignment` bytes apart and aligned, D contiguous;
// dimensions of one element may have any stride.
std::optional<tensorcore::sequence_strides> rows_of(const tensor_view& t, int element_bytes, int alignment) {
  if ((t.rank != 4 && t.rank != 3) || (t.strides[t.rank - 1] != 1 && t.shape[t.rank - 1] > 1)) return std::nullopt;
  if (reinterpret_cast<std::uintptr_t>(t.data) % alignment != 0) return std::nullopt;
  for (int d = 0; d < t.rank - 1; ++d)
    if (t.shape[d] > 1 && (t.strides[d] * element_bytes) % alignment != 0) return std::nullopt;
  if (t.rank == 3) return tensorcore::sequence_strides{0, t.strides[0], t.strides[1]};
  return tensorcore::sequence_strides{t.strides[0], t.strides[1], t.strides[2]};
}

// Whether a one-dimensional view, or a matrix's rows, are contiguous.
bool contiguous_along_last(const tensor_view& t) {
  return t.empty() || t.shape[t.rank - 1] <= 1 || t.strides[t.rank - 1] == 1;
}

// The additive mask's strides as (batch, head, query, key), 0 where its shape broadcasts.
void mask_strides(mask_shape shape, const tensor_view& mask, std::int64_t* strides) {
  const int r = mask.rank;
  strides[0] = shape == mask_shape::b_h_lq_lk || shape == mask_shape::b_1_lq_lk ? mask.strides[0] : 0;
  strides[1] = shape == mask_shape::h_lq_lk || shape == mask_shape::b_h_lq_lk ? mask.strides[r - 3] : 0;
  strides[2] = mask.strides[r - 2];
  strides[3] = mask.strides[r - 1];
}

}  // namespace

std::optional<tile_code_inputs> tile_code_inputs_of(const attention_desc& desc, const attention_args& args,
                                                    int kv_row_alignment) {
  // Pairs of q and output elements are read and written at once.
  const int element = int(size_of(desc.element_type)), cache_element = int(size_of(desc.effective_kv_element()));
  const auto q = rows_of(args.q, element, 2 * element), out = rows_of(args.output, element, 2 * element),
             k = rows_of(args.k, cache_element, kv_row_alignment), v = rows_of(args.v, cache_element, kv_row_alignment);
  if (!q || !out || !k || !v) return std::nullopt;
  if (!contiguous_along_last(args.lse) || !contiguous_along_last(args.q_offsets) ||
      !contiguous_along_last(args.kv_lengths) || !contiguous_along_last(args.page_table))
    return std::nullopt;
  if (!args.key_padding.empty() && args.key_padding.strides[1] != 1 && args.key_padding.shape[1] > 1)
    return std::nullopt;
  if (!args.sinks.empty() && args.sinks.strides[0] != 1 && args.sinks.shape[0] > 1) return std::nullopt;

  tile_code_inputs inputs{};
  tensorcore::forward_params& p = inputs.params;
  p.q = args.q.data;
  p.k = args.k.data;
  p.v = args.v.data;
  p.out = args.output.data;
  p.lse = args.lse.empty() ? nullptr : static_cast<float*>(args.lse.data);
  p.q_strides = *q;
  p.k_strides = *k;
  p.v_strides = *v;
  p.out_strides = *out;
  // An int8 cache's scales, (B, Lk, KVH) or (num_pages, page_size, KVH): any strides.
  if (desc.has_kv_scales()) {
    p.k_scale = static_cast<const float*>(args.k_scale.data);
    p.v_scale = static_cast<const float*>(args.v_scale.data);
    p.k_scale_strides = {args.k_scale.strides[0], args.k_scale.strides[1], args.k_scale.strides[2]};
    p.v_scale_strides = {args.v_scale.strides[0], args.v_scale.strides[1], args.v_scale.strides[2]};
  }
  // lse is (B, H, Lq), or (H, total_q) with ragged queries.
  const bool packed_lse = args.lse.rank == 2;
  p.lse_batch_stride = args.lse.empty() || packed_lse ? 0 : args.lse.strides[0];
  p.lse_head_stride = args.lse.empty() ? 0 : args.lse.strides[packed_lse ? 0 : 1];
  p.heads = desc.num_heads;
  p.kv_heads = desc.effective_kv_heads();
  p.scale = desc.effective_scale();
  // The index tensors are host memory (attention_call.hpp): the longest sequence's queries size the
  // grid; the launch copies them to the device (tensorcore_driver.cpp).
  tensorcore::sequence_layout& layout = p.layout;
  if (desc.is_ragged()) {
    const auto* offsets = static_cast<const std::int32_t*>(args.q_offsets.data);
    p.batch = int(args.q_offsets.shape[0]) - 1;
    p.query_length = 0;
    for (int b = 0; b < p.batch; ++b)
      if (offsets[b + 1] - offsets[b] > p.query_length) p.query_length = offsets[b + 1] - offsets[b];
    layout.query_offsets = offsets;
  } else {
    p.batch = int(args.q.shape[0]);
    p.query_length = int(args.q.shape[1]);
  }
  p.key_length = int(args.k.shape[1]);
  if (desc.is_paged()) {
    layout.page_table = static_cast<const std::int32_t*>(args.page_table.data);
    layout.page_table_stride = args.page_table.strides[0];
    layout.page_size_log2 = std::countr_zero(unsigned(desc.kv_page_size));
    p.key_length = int(args.page_table.shape[1]) * desc.kv_page_size;
  }
  if (desc.has_kv_lengths()) layout.kv_lengths = static_cast<const std::int32_t*>(args.kv_lengths.data);

  tensorcore::variant_state& variant = inputs.variant;
  if (!args.mask.empty()) {
    variant.in.additive_mask = args.mask.data;
    mask_strides(desc.additive_mask_shape, args.mask, variant.in.mask_strides);
  }
  if (!args.key_padding.empty()) {
    variant.in.key_padding = static_cast<const std::uint8_t*>(args.key_padding.data);
    variant.in.key_padding_batch_stride = args.key_padding.strides[0];
  }
  if (!args.sinks.empty()) variant.in.sinks = static_cast<const float*>(args.sinks.data);
  for (int n = 0; n < desc.captures.tensor_count; ++n) {
    const tensor_view& capture = args.captures[n];
    tensorcore::captured_view& view = variant.in.tensors[n];
    view.data = capture.data;
    for (int d = 0; d < capture.rank; ++d) {
      view.extents[d] = int(capture.shape[d]);
      view.strides[d] = capture.strides[d];
    }
  }
  for (int n = 0; n < desc.captures.scalar_count; ++n) variant.in.scalars[n] = args.scalars[n];
  return inputs;
}

std::optional<tensorcore_launch> tensorcore_launch_of(const attention_desc& desc, const attention_args& args,
                                                      const tensorcore_kernel& kernel) {
  // Validation puts every tensor the kernel reads on q's device.
  if (kernel.fatbin == nullptr || args.q.device != device_kind::cuda) return std::nullopt;
  // K and V rows are copied 16 bytes at a time (cp.async, and 4 f32 elements at a time).
  const auto inputs = tile_code_inputs_of(desc, args, 16);
  if (!inputs) return std::nullopt;
  return tensorcore_launch{inputs->params, inputs->variant, tensorcore::forward_grid(inputs->params, kernel.block_rows)};
}

}  // namespace attngen::detail
