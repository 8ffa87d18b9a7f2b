#pragma once
/// Element types of attention tensors.

#include <cstdint>
#include <string_view>

namespace attngen {

/// Element type of Q, K, V, the additive mask and the output (K and V may differ: a KV cache's element
/// type). Accumulation is always float32.
enum class dtype : std::uint8_t {
  f32,   ///< IEEE binary32
  f16,   ///< IEEE binary16
  bf16,  ///< bfloat16 (the top half of a binary32)
  u8,    ///< one byte per element; used for boolean masks (0 = false, anything else = true)
  i32,   ///< 32-bit signed integer; used for captured integer tensors (document ids and the like)
  i8,    ///< 8-bit signed integer; keys and values of a quantised KV cache, each row with a float32 scale
};

/// Bytes per element.
constexpr int size_of(dtype t) {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::f16: return 2;
    case dtype::bf16: return 2;
    case dtype::u8: return 1;
    case dtype::i32: return 4;
    case dtype::i8: return 1;
  }
  return 0;
}

/// The spelling used in text descriptions, messages and generated code.
constexpr std::string_view name_of(dtype t) {
  switch (t) {
    case dtype::f32: return "f32";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::u8: return "u8";
    case dtype::i32: return "i32";
    case dtype::i8: return "i8";
  }
  return "?";
}

}  // namespace attngen
