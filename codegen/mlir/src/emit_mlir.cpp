#include "attngen/mlir/emit_mlir.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attngen/arguments.hpp"
#include "modifier_emitter.hpp"
#include "ssa_writer.hpp"

namespace attngen::mlir_export {

namespace {

const char* element_name(dtype t, bool bfloat16_as_bits) {
  switch (t) {
    case dtype::f16: return "f16";
    case dtype::bf16: return bfloat16_as_bits ? "i16" : "bf16";
    default: break;
  }
  return "f32";
}

std::string tensor_type(const std::vector<std::string>& extents, const std::string& element) {
  std::string text = "tensor<";
  for (const auto& e : extents) text += e + "x";
  return text + element + ">";
}

std::string iterators(int parallel, bool reduction) {
  std::string text = "[";
  for (int n = 0; n < parallel; ++n) text += std::string(n ? ", " : "") + "\"parallel\"";
  if (reduction) text += ", \"reduction\"";
  return text + "]";
}

enum class row_reduction { maximum, sum };

// One linalg.generic: its maps, iterators, inputs and output; the body is written by `body`, given
// the block arguments (inputs, then the output's).
struct generic_op {
  std::vector<std::string> maps;
  std::string iterator_types;
  std::vector<std::string> inputs, input_types;
  std::string output, output_type;
};

class attention_emission {
 public:
  attention_emission(const attention_desc& desc, std::string_view name, const mlir_options& options)
      : d_(desc), name_(name), bits_(options.bfloat16_as_bits && desc.element_type == dtype::bf16),
        element_(element_name(desc.element_type, options.bfloat16_as_bits)) {}

  std::string emit() {
    const std::string signature = arguments_and_results();
    dimensions();
    const std::string dots = dot_products();
    const std::string scores = masked_scores(dots);
    const std::string row_max = reduce_rows(scores, row_reduction::maximum);
    const std::string weights = exponentials(scores, row_max);
    const std::string row_sum = reduce_rows(weights, row_reduction::sum);
    const std::string output = normalized_output(weighted_values(weights), row_sum);
    std::string results = output, result_types = output_type_;
    if (d_.lse_output) {
      results += ", " + log_sum_exp(row_max, row_sum);
      result_types += ", " + lse_type_;
    }
    out_.line("return " + results + " : " + result_types);
    return "// attngen " + std::string(name_) + ": exported from an attngen description\nmodule {\n" + signature +
           out_.text() + "  }\n}\n";
  }

 private:
  // The function's first line, from the kernel's argument list (attngen/arguments.hpp): each input
  // an argument (the captured scalars one f32 each), each output a result. Records their types.
  std::string arguments_and_results() {
    const std::string H = std::to_string(d_.num_heads), Dv = std::to_string(d_.effective_v_head_dim());
    accumulator_type_ = tensor_type({"?", "?", H, Dv}, "f32");
    scores_type_ = tensor_type({"?", H, "?", "?"}, "f32");
    rows_type_ = tensor_type({"?", H, "?"}, "f32");
    std::string args, results;
    for (const kernel_argument& argument : kernel_arguments(d_)) {
      if (argument.slot == argument_slot::scalars) {
        for (int s = 0; s < d_.captures.scalar_count; ++s) {
          captures_.scalars.push_back("%scalar_" + std::string(d_.captures.scalars[s].view()));
          args += (args.empty() ? "" : ", ") + captures_.scalars.back() + ": f32";
        }
        continue;
      }
      const std::string type = type_of(argument);
      if (argument.is_output()) {
        results += (results.empty() ? "" : ", ") + type;
        (argument.slot == argument_slot::output ? output_type_ : lse_type_) = type;
        continue;
      }
      std::string name = "%" + std::string(argument.name);
      switch (argument.slot) {
        case argument_slot::q: q_type_ = type; break;
        case argument_slot::k: k_type_ = type; break;
        case argument_slot::v: v_type_ = type; break;
        case argument_slot::mask: mask_type_ = type; break;
        case argument_slot::capture:
          name = "%capture_" + std::string(argument.name);
          captures_.tensors.push_back(name);
          captures_.tensor_types.push_back(type);
          break;
        default: break;
      }
      args += (args.empty() ? "" : ", ") + name + ": " + type;
    }
    return "  func @" + std::string(name_) + "(" + args + ") -> (" + results +
           ") attributes {llvm.emit_c_interface} {\n";
  }

  // An argument's tensor type: run-time extents dynamic, the description's fixed.
  std::string type_of(const kernel_argument& argument) const {
    std::vector<std::string> extents;
    for (int d = 0; d < argument.rank; ++d) {
      const argument_dim& dim = argument.dims[d];
      extents.push_back(dim.source == extent_source::description ? std::to_string(dim.extent) : "?");
    }
    switch (argument.type) {
      case dtype::u8: case dtype::i8: return tensor_type(extents, "i8");
      case dtype::i32: return tensor_type(extents, "i32");
      case dtype::f32: return tensor_type(extents, "f32");
      case dtype::f16: case dtype::bf16: break;
    }
    return tensor_type(extents, element_);
  }

  // The additive mask's map from the score's (b, h, i, j).
  std::string mask_map() const {
    switch (d_.additive_mask_shape) {
      case mask_shape::lq_lk: return "affine_map<(b, h, i, j) -> (i, j)>";
      case mask_shape::h_lq_lk: return "affine_map<(b, h, i, j) -> (h, i, j)>";
      case mask_shape::b_h_lq_lk: return "affine_map<(b, h, i, j) -> (b, h, i, j)>";
      case mask_shape::b_1_lq_lk: return "affine_map<(b, h, i, j) -> (b, 0, i, j)>";
      case mask_shape::none: break;
    }
    return {};
  }

  // B, Lq and Lk as index values, and as i32 for the modifiers.
  void dimensions() {
    const std::string zero = out_.index_constant(0), one = out_.index_constant(1);
    batch_ = out_.value("tensor.dim %q, " + zero + " : " + q_type_);
    queries_ = out_.value("tensor.dim %q, " + one + " : " + q_type_);
    keys_ = out_.value("tensor.dim %k, " + one + " : " + k_type_);
    leaves_.batch_count = out_.value("arith.index_cast " + batch_ + " : index to i32");
    leaves_.query_length = out_.value("arith.index_cast " + queries_ + " : index to i32");
    leaves_.key_length = out_.value("arith.index_cast " + keys_ + " : index to i32");
    leaves_.heads = d_.num_heads;
    zero_ = out_.f32_constant(0.0f);
    negative_infinity_ = out_.f32_constant(-std::numeric_limits<float>::infinity());
  }

  std::string empty_tensor(const std::vector<std::string>& extents, const std::string& type) {
    std::string sizes;
    for (const auto& e : extents) sizes += (sizes.empty() ? "" : ", ") + e;
    return out_.value("linalg.init_tensor [" + sizes + "] : " + type);
  }

  // Uninitialised tensors of the three shapes the stages produce.
  std::string empty_scores() {  // (B, H, Lq, Lk) f32
    return empty_tensor({batch_, std::to_string(d_.num_heads), queries_, keys_}, scores_type_);
  }
  std::string empty_rows(const std::string& type) {  // (B, H, Lq): rows_type_ or lse_type_
    return empty_tensor({batch_, std::to_string(d_.num_heads), queries_}, type);
  }
  std::string empty_outputs(const std::string& type) {  // (B, Lq, H, Dv): accumulator_type_ or output_type_
    return empty_tensor({batch_, queries_, std::to_string(d_.num_heads), std::to_string(d_.effective_v_head_dim())},
                        type);
  }

  std::string filled(const std::string& value, const std::string& tensor, const std::string& type) {
    return out_.value("linalg.fill(" + value + ", " + tensor + ") : f32, " + type + " -> " + type);
  }

  // Writes a linalg.generic; `body` gets the block arguments and returns the value to yield.
  template <typename Body>
  std::string generic(const generic_op& g, Body body) {
    std::string maps, ins, in_types;
    for (const auto& m : g.maps) maps += (maps.empty() ? "" : ", ") + m;
    for (std::size_t n = 0; n < g.inputs.size(); ++n) {
      ins += (n ? ", " : "") + g.inputs[n];
      in_types += (n ? ", " : "") + g.input_types[n];
    }
    const std::string result = out_.fresh();
    out_.line(result + " = linalg.generic {indexing_maps = [" + maps + "], iterator_types = " + g.iterator_types +
              "} ins(" + ins + " : " + in_types + ") outs(" + g.output + " : " + g.output_type + ") {");
    std::vector<std::string> arguments;
    std::string block;
    for (std::size_t n = 0; n <= g.inputs.size(); ++n) {
      arguments.push_back(out_.fresh());
      const std::string type = n < g.inputs.size() ? scalar_of(g.input_types[n]) : scalar_of(g.output_type);
      block += (n ? ", " : "") + arguments.back() + ": " + type;
    }
    out_.line("^bb0(" + block + "):");
    out_.indent();
    out_.line("linalg.yield " + body(arguments) + " : " + scalar_of(g.output_type));
    out_.dedent();
    out_.line("} -> " + g.output_type);
    return result;
  }

  static std::string scalar_of(const std::string& tensor) {
    return tensor.substr(tensor.rfind('x') + 1, tensor.size() - tensor.rfind('x') - 2);
  }

  // An element of the description's type as f32 (bf16 bits are a float32's upper half).
  std::string widened(const std::string& x) {
    if (d_.element_type == dtype::f32) return x;
    if (!bits_) return out_.value("arith.extf " + x + " : " + element_ + " to f32");
    const std::string wide = out_.value("arith.extui " + x + " : i16 to i32");
    const std::string shifted = out_.value("arith.shli " + wide + ", " + out_.value("arith.constant 16 : i32") + " : i32");
    return out_.value("arith.bitcast " + shifted + " : i32 to f32");
  }

  // An f32 as the description's type; bf16 bits round to nearest even, and a NaN stays a quiet NaN.
  std::string narrowed(const std::string& x) {
    if (d_.element_type == dtype::f32) return x;
    if (!bits_) return out_.value("arith.truncf " + x + " : f32 to " + element_);
    const auto constant = [this](unsigned value) { return out_.value("arith.constant " + std::to_string(value) + " : i32"); };
    const std::string bits = out_.value("arith.bitcast " + x + " : f32 to i32");
    const std::string upper = out_.value("arith.shrui " + bits + ", " + constant(16) + " : i32");
    const std::string odd = out_.value("arith.andi " + upper + ", " + constant(1) + " : i32");
    const std::string bias = out_.value("arith.addi " + constant(0x7fff) + ", " + odd + " : i32");
    const std::string rounded =
        out_.value("arith.shrui " + out_.value("arith.addi " + bits + ", " + bias + " : i32") + ", " + constant(16) + " : i32");
    const std::string magnitude = out_.value("arith.andi " + bits + ", " + constant(0x7fffffff) + " : i32");
    const std::string is_nan = out_.value("arith.cmpi ugt, " + magnitude + ", " + constant(0x7f800000) + " : i32");
    const std::string quiet = out_.value("arith.ori " + upper + ", " + constant(0x40) + " : i32");
    return out_.value("arith.trunci " + out_.value("select " + is_nan + ", " + quiet + ", " + rounded + " : i32") +
                      " : i32 to i16");
  }

  std::string kv_head(const char* h) const {
    const int group = d_.group_size();
    return group == 1 ? std::string(h) : std::string(h) + " floordiv " + std::to_string(group);
  }

  // q.k for every (b, h, i, j): a reduction over the head dim d.
  std::string dot_products() {
    const std::string zeros = filled(zero_, empty_scores(), scores_type_);
    generic_op g{{"affine_map<(b, h, i, j, d) -> (b, i, h, d)>",
                  "affine_map<(b, h, i, j, d) -> (b, j, " + kv_head("h") + ", d)>",
                  "affine_map<(b, h, i, j, d) -> (b, h, i, j)>"},
                 iterators(4, true), {"%q", "%k"}, {q_type_, k_type_}, zeros, scores_type_};
    return generic(g, [this](const std::vector<std::string>& x) {
      const std::string product = out_.value("arith.mulf " + widened(x[0]) + ", " + widened(x[1]) + " : f32");
      return out_.value("arith.addf " + x[2] + ", " + product + " : f32");
    });
  }

  // The score of every (b, h, i, j) after scale, score_mod and the additive mask; -inf where the
  // key is hidden by causality, padding, mask_mod or the mask.
  std::string masked_scores(const std::string& dots) {
    const std::string identity = "affine_map<(b, h, i, j) -> (b, h, i, j)>";
    generic_op g{{identity}, iterators(4, false), {dots}, {scores_type_}, std::string(), scores_type_};
    if (d_.has_additive_mask()) {
      g.maps.push_back(mask_map());
      g.inputs.push_back("%mask");
      g.input_types.push_back(mask_type_);
    }
    if (d_.has_key_padding_mask()) {
      g.maps.push_back("affine_map<(b, h, i, j) -> (b, j)>");
      g.inputs.push_back("%key_padding");
      g.input_types.push_back("tensor<?x?xi8>");
    }
    g.maps.push_back(identity);
    g.output = empty_scores();
    return generic(g, [this](const std::vector<std::string>& x) { return masked_score(x); });
  }

  std::string masked_score(const std::vector<std::string>& x) {
    std::size_t next_input = 1;
    const float scale = d_.effective_scale();
    std::string score = out_.value("arith.mulf " + x[0] + ", " + out_.f32_constant(scale) + " : f32");
    std::string hidden = out_.bool_constant(false);
    const auto hide_also = [&](const std::string& condition) {
      hidden = out_.value("arith.ori " + hidden + ", " + condition + " : i1");
    };
    const std::string i = out_.value("linalg.index 2 : index"), j = out_.value("linalg.index 3 : index");
    if (d_.has_score_mod() || d_.has_mask_mod()) {
      leaves_.batch = out_.value("arith.index_cast " + out_.value("linalg.index 0 : index") + " : index to i32");
      leaves_.head = out_.value("arith.index_cast " + out_.value("linalg.index 1 : index") + " : index to i32");
      leaves_.query = out_.value("arith.index_cast " + i + " : index to i32");
      leaves_.key = out_.value("arith.index_cast " + j + " : index to i32");
    }
    if (d_.has_score_mod()) {
      leaves_.score = score;
      score = emit_modifier(out_, d_.score_modifier, d_.captures, captures_, leaves_);
      leaves_.score.clear();
      hide_also(out_.value("arith.cmpf ole, " + score + ", " + out_.f32_constant(mask_out_threshold) + " : f32"));
    }
    if (d_.has_additive_mask()) {
      const std::string bias = widened(x[next_input++]);
      score = out_.value("arith.addf " + score + ", " + bias + " : f32");
      hide_also(out_.value("arith.cmpf ole, " + bias + ", " + out_.f32_constant(mask_out_threshold) + " : f32"));
    }
    if (d_.has_key_padding_mask()) {
      const std::string flag =
          out_.value("arith.cmpi " + std::string(d_.key_padding == padding_polarity::true_means_ignore ? "ne" : "eq") +
                     ", " + x[next_input++] + ", " + out_.value("arith.constant 0 : i8") + " : i8");
      hide_also(flag);
    }
    if (d_.is_causal()) {
      // Key j is after the diagonal of query i: j > i, or j > i + (Lk - Lq) aligned bottom-right.
      std::string diagonal = i;
      if (d_.causal_mode == causal_alignment::bottom_right)
        diagonal = out_.value("arith.subi " + out_.value("arith.addi " + i + ", " + keys_ + " : index") + ", " +
                              queries_ + " : index");
      hide_also(out_.value("arith.cmpi sgt, " + j + ", " + diagonal + " : index"));
    }
    if (d_.has_mask_mod()) {
      const std::string visible = emit_modifier(out_, d_.mask_modifier, d_.captures, captures_, leaves_);
      hide_also(out_.value("arith.xori " + visible + ", " + out_.bool_constant(true) + " : i1"));
    }
    return out_.value("select " + hidden + ", " + negative_infinity_ + ", " + score + " : f32");
  }

  // The maximum (from -inf) or the sum (from 0) of every row of (b, h, i, j).
  std::string reduce_rows(const std::string& values, row_reduction reduction) {
    const bool maximum = reduction == row_reduction::maximum;
    const std::string start = filled(maximum ? negative_infinity_ : zero_, empty_rows(rows_type_), rows_type_);
    generic_op g{{"affine_map<(b, h, i, j) -> (b, h, i, j)>", "affine_map<(b, h, i, j) -> (b, h, i)>"},
                 iterators(3, true), {values}, {scores_type_}, start, rows_type_};
    return generic(g, [&](const std::vector<std::string>& x) {
      if (!maximum) return out_.value("arith.addf " + x[1] + ", " + x[0] + " : f32");
      // NaN never wins the maximum here; it reaches the row through its exponential instead.
      const std::string greater = out_.value("arith.cmpf ogt, " + x[0] + ", " + x[1] + " : f32");
      return out_.value("select " + greater + ", " + x[0] + ", " + x[1] + " : f32");
    });
  }

  // exp(score - row max); 0 in a row with no visible key.
  std::string exponentials(const std::string& scores, const std::string& row_max) {
    generic_op g{{"affine_map<(b, h, i, j) -> (b, h, i, j)>", "affine_map<(b, h, i, j) -> (b, h, i)>",
                  "affine_map<(b, h, i, j) -> (b, h, i, j)>"},
                 iterators(4, false), {scores, row_max}, {scores_type_, rows_type_}, empty_scores(), scores_type_};
    return generic(g, [this](const std::vector<std::string>& x) {
      const std::string none_visible = out_.value("arith.cmpf oeq, " + x[1] + ", " + negative_infinity_ + " : f32");
      const std::string e = out_.value("math.exp " + out_.value("arith.subf " + x[0] + ", " + x[1] + " : f32") + " : f32");
      return out_.value("select " + none_visible + ", " + zero_ + ", " + e + " : f32");
    });
  }

  // The unnormalised output: sum over j of exp(...) * v, for every (b, i, h, e).
  std::string weighted_values(const std::string& weights) {
    const std::string zeros = filled(zero_, empty_outputs(accumulator_type_), accumulator_type_);
    generic_op g{{"affine_map<(b, i, h, e, j) -> (b, h, i, j)>",
                  "affine_map<(b, i, h, e, j) -> (b, j, " + kv_head("h") + ", e)>",
                  "affine_map<(b, i, h, e, j) -> (b, i, h, e)>"},
                 iterators(4, true), {weights, "%v"}, {scores_type_, v_type_}, zeros, accumulator_type_};
    return generic(g, [this](const std::vector<std::string>& x) {
      const std::string product = out_.value("arith.mulf " + x[0] + ", " + widened(x[1]) + " : f32");
      return out_.value("arith.addf " + x[2] + ", " + product + " : f32");
    });
  }

  // Divided by the row's sum (0 for a row with none visible), in the element type.
  std::string normalized_output(const std::string& sums, const std::string& row_sum) {
    generic_op g{{"affine_map<(b, i, h, e) -> (b, i, h, e)>", "affine_map<(b, i, h, e) -> (b, h, i)>",
                  "affine_map<(b, i, h, e) -> (b, i, h, e)>"},
                 iterators(4, false), {sums, row_sum}, {accumulator_type_, rows_type_}, empty_outputs(output_type_),
                 output_type_};
    return generic(g, [this](const std::vector<std::string>& x) {
      const std::string none_visible = out_.value("arith.cmpf oeq, " + x[1] + ", " + zero_ + " : f32");
      const std::string ratio = out_.value("arith.divf " + x[0] + ", " + x[1] + " : f32");
      const std::string value = out_.value("select " + none_visible + ", " + zero_ + ", " + ratio + " : f32");
      return narrowed(value);
    });
  }

  // row max + log(row sum); -inf for a row with no visible key.
  std::string log_sum_exp(const std::string& row_max, const std::string& row_sum) {
    const std::string rows = "affine_map<(b, h, i) -> (b, h, i)>";
    generic_op g{{rows, rows, rows}, iterators(3, false), {row_max, row_sum}, {rows_type_, rows_type_},
                 empty_rows(lse_type_), lse_type_};
    return generic(g, [this](const std::vector<std::string>& x) {
      const std::string none_visible = out_.value("arith.cmpf oeq, " + x[1] + ", " + zero_ + " : f32");
      const std::string lse = out_.value("arith.addf " + x[0] + ", " + out_.value("math.log " + x[1] + " : f32") + " : f32");
      return out_.value("select " + none_visible + ", " + negative_infinity_ + ", " + lse + " : f32");
    });
  }

  const attention_desc& d_;
  std::string_view name_;
  bool bits_;            // bf16 tensors hold i16 bits
  std::string element_;  // the element type's MLIR name
  ssa_writer out_;
  capture_arguments captures_;
  modifier_leaves leaves_;
  std::string q_type_, k_type_, v_type_, mask_type_, output_type_, lse_type_, scores_type_, rows_type_, accumulator_type_;
  std::string batch_, queries_, keys_, zero_, negative_infinity_;
};

}  // namespace

std::string emit_mlir(const attention_desc& desc, std::string_view function_name, const mlir_options& options) {
  if (const std::string_view problem = first_problem(desc); !problem.empty())
    throw std::invalid_argument("emit_mlir: invalid description: " + std::string(problem));
  if (desc.has_sequence_lengths() || desc.effective_kv_element() != desc.element_type || desc.has_sinks ||
      desc.global_positions)
    throw std::invalid_argument(
        "emit_mlir: the MLIR export covers dense batches of one element type without sinks, each call the whole "
        "sequence; this description has ragged queries, per-sequence kv lengths, a KV element type of its own, "
        "attention sinks or global positions");
  return attention_emission(desc, function_name, options).emit();
}

// math-to-llvm first; libm takes what it leaves (tanh) and, run before it, would refuse math.exp.
std::string_view mlir_lowering_pipeline() {
  return "-linalg-bufferize -arith-bufferize -tensor-bufferize -func-bufferize -finalizing-bufferize "
         "-buffer-deallocation -convert-linalg-to-loops -lower-affine -convert-scf-to-std -convert-math-to-llvm "
         "-convert-math-to-libm -convert-arith-to-llvm -convert-memref-to-llvm -convert-std-to-llvm "
         "-reconcile-unrealized-casts";
}

}  // namespace attngen::mlir_export
