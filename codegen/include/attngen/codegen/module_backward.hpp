#pragma once
/// The module's backward pass as Halide Funcs, one pipeline: the forward recomputed (projections,
/// attention, each row's log-sum-exp), then the chain rule back through the output projection, the
/// attention (codegen/backward.hpp, dropout's mask redrawn from the seed), the appended keys and the
/// input projections. With y = x W^T + bias (PyTorch's Linear, W stored (out, in)):
///
///     dx = dy W        dW = sum over rows of dy^T x        dbias = sum over rows of dy
///
/// With self_attention the query is also the key and the value: its gradient is the three inputs'.
/// Every sum over rows is one task's, in order: the same bits for any number of threads.
///
/// Halide dimension order is innermost first: inputs and their gradients (c, i, b) batch-major, or
/// (c, b, i) sequence-first; W and dW (c, n); biases (n).

#include <vector>

#include "Halide.h"
#include "attngen/codegen/backward.hpp"
#include "attngen/codegen/module_algorithm.hpp"

namespace attngen::codegen {

/// The gradients of one linear layer y(n, i, b) = x(c, i, b) . W(c, n) + bias(n).
struct linear_gradients {
  Halide::Func input;       ///< (c, i, b): dy . W, float
  Halide::Func weight;      ///< (c, n): dy^T x summed over rows, float
  Halide::Func bias;        ///< (n): dy summed over rows, float
  Halide::RDom outputs;     ///< input's reduction, over n
  Halide::RDom rows;        ///< weight's and bias's, over (row, batch)
};

struct module_backward_algorithm {
  /// The module's inputs, projections and attention (module_part::backward), and d_output.
  module_algorithm forward;
  row_log_sum_exp lse;
  Halide::Func output_gradient{"output_gradient"};  ///< (n, i, b): d_output as float, batch-major
  Halide::Func attention_result{"attention_result"};  ///< (c, i, b): the attention's output, heads packed
  linear_gradients out_projection;
  Halide::Func attention_gradient{"attention_gradient"};  ///< (e, h, i, b): of the attention's output
  backward_algorithm attention;
  /// (n, i, b) of the projections' outputs: the queries', and the keys' and values' of the input keys.
  Halide::Func q_gradient{"q_gradient"}, k_gradient{"k_gradient"}, v_gradient{"v_gradient"};
  linear_gradients q_projection, k_projection, v_projection;
  Halide::Func query_gradient{"query_gradient"};  ///< (c, i, b): with self_attention, the three inputs'
  Halide::Func bias_k_gradient{"bias_k_gradient"}, bias_v_gradient{"bias_v_gradient"};  ///< (n), with add_bias_kv
  Halide::RDom appended_batch;  ///< their reduction over the batch

  /// One output per gradient of module_backward_arguments(desc), in its order, in the element type
  /// and the tensor's layout.
  std::vector<Halide::Func> gradients;

  std::vector<Halide::Argument> arguments() const { return forward.arguments(); }
  std::vector<Halide::Func> outputs() const { return gradients; }
};

/// Defines the backward of `desc`'s module (which must be valid and have .with_backward()): the
/// forward's attention with `tiles`, its backward with `backward_tiles`. With `bfloat16_as_bits`, bf16
/// tensors are uint16 bit patterns (GPU targets).
module_backward_algorithm define_module_backward(const mha_desc& desc, const blocking& tiles,
                                                 const backward_blocking& backward_tiles, bool bfloat16_as_bits = false);

/// The CPU schedule: every stage computed once per call, in parallel tasks; the attention's forward as
/// schedule_cpu, its backward as schedule_backward_cpu, each linear layer's gradients as matrix
/// products in register tiles.
void schedule_module_backward_cpu(module_backward_algorithm& m, const Halide::Target& target);

/// The GPU schedule (tiles of gpu_blocking and gpu_backward_blocking).
void schedule_module_backward_gpu(module_backward_algorithm& m);

}  // namespace attngen::codegen
