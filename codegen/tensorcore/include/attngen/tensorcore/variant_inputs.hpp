#pragma once
/// The run-time inputs a description's variant reads besides q, k and v: the additive mask, the key
/// padding mask, the sinks and the modifiers' captured tensors and scalars. The runtime fills one from a
/// call's arguments; the variant the emitter writes for the description reads it. Strides are in
/// elements, outermost first; a broadcast dimension has stride 0.

#include <cstdint>

namespace attngen::tensorcore {

/// A captured tensor of 1 to 3 dimensions (f32 or i32 elements).
struct captured_view {
  const void* data;
  int extents[3];
  std::int64_t strides[3];
};

struct variant_inputs {
  static constexpr int max_tensors = 4, max_scalars = 4;
  /// Elements of the tensors' storage type (16-bit, or f32), indexed (batch, head, query, key).
  const void* additive_mask;
  std::int64_t mask_strides[4];
  /// (B, Lk) bytes.
  const std::uint8_t* key_padding;
  std::int64_t key_padding_batch_stride;
  /// (H) f32 logits of attention sinks, or null.
  const float* sinks;
  captured_view tensors[max_tensors];
  float scalars[max_scalars];
};

/// A variant's data: every generated variant is this with the description's hooks (so the launching
/// code fills one layout for all). The sequences' lengths come to the hooks from the call's
/// parameters (launch_shape.hpp's sequence_extent).
struct variant_state {
  variant_inputs in;
};

}  // namespace attngen::tensorcore
