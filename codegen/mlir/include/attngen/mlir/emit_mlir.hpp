#pragma once
/// The MLIR export: a description as one MLIR 14 module, for MLIR-based stacks (IREE and the like)
/// and as a second lowering, independent of Halide, that the tests compare with the kernels.
///
/// The module holds one builtin `func` of linalg.generic, arith, math and tensor operations on
/// tensors, marked `llvm.emit_c_interface`. Batch and sequence lengths are dynamic (`?`); heads
/// and head dims are the description's. Shape contract (outermost first, dense tensors):
///
///   arguments  q (B, Lq, H, D), k (B, Lk, KVH, D), v (B, Lk, KVH, Dv) of the element type;
///              the additive mask in its shape (lq_lk: (Lq, Lk); h_lq_lk: (H, Lq, Lk);
///              b_h_lq_lk: (B, H, Lq, Lk); b_1_lq_lk: (B, 1, Lq, Lk)), element type, if described;
///              key_padding (B, Lk) i8, if described; each captured tensor (i32 or f32, its declared
///              extents), then each captured scalar (f32), in declaration order
///   results    output (B, Lq, H, Dv) of the element type; lse (B, H, Lq) f32, if described
///
/// Semantics are the kernels': softmax(score_mod(q.k * scale) + mask) over the keys that causality,
/// padding, mask_mod and the mask (values <= -1e38) leave visible, times v; a row with no visible
/// key gives output 0 and lse -inf. Computed in f32 (f16 and bf16 inputs are widened).
///
/// Lowering with MLIR 14: mlir-opt-14 with the passes of `mlir_lowering_pipeline` below, then
/// mlir-translate-14 --mlir-to-llvmir and llc-14. The C entry point is `_mlir_ciface_<function>`.

#include <string>
#include <string_view>

#include "attngen/attngen.hpp"

namespace attngen::mlir_export {

struct mlir_options {
  /// bf16 tensors as i16 holding bf16's bits, converted with integer ops (rounding to nearest
  /// even), for pipelines whose backend has no bf16: LLVM 14 cannot select bf16 loads and stores on
  /// x86. Off, bf16 tensors are `bf16`, for MLIR compilers that support it.
  bool bfloat16_as_bits = false;
};

/// The MLIR module computing `desc` as function `function_name`. `desc` must be valid
/// (attngen::first_problem empty); throws std::invalid_argument naming the broken rule otherwise.
std::string emit_mlir(const attention_desc& desc, std::string_view function_name = "attention",
                      const mlir_options& options = {});

/// The mlir-opt-14 passes that lower an emitted module to the LLVM dialect, space-separated.
std::string_view mlir_lowering_pipeline();

}  // namespace attngen::mlir_export
