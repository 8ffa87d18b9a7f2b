#include "codegen/jit_runner.hpp"

#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/visibility_table.hpp"
#include "attngen/runtime/detail/lse_layout.hpp"
#include "attngen/runtime/detail/sequence_views.hpp"
#include "attngen/runtime/detail/visibility_slices.hpp"
#include "codegen/jit_inputs.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

// A view's Halide buffer (no copy), its dimension `batch_dim` (outermost first; -1: none) starting
// at `batch`.
Halide::Buffer<> buffer_of(const tensor_view& t, int batch_dim, int batch) {
  std::vector<halide_dimension_t> dims(std::size_t(t.rank));
  for (int d = 0; d < t.rank; ++d)
    dims[std::size_t(t.rank - 1 - d)] = {0, std::int32_t(t.shape[d]), std::int32_t(t.shape[d] > 1 ? t.strides[d] : 1), 0};
  if (batch_dim >= 0) dims[std::size_t(t.rank - 1 - batch_dim)].min = batch;
  return Halide::Buffer<>(codegen::halide_type_of(t.type), t.data, t.rank, dims.data());
}

// The pipeline's ImageParam for an input argument.
Halide::ImageParam& parameter_for(codegen::attention_algorithm& a, const kernel_argument& argument) {
  switch (argument.slot) {
    case argument_slot::q: return a.q;
    case argument_slot::q_offsets: return a.q_offsets;
    case argument_slot::k: return a.k;
    case argument_slot::v: return a.v;
    case argument_slot::k_scale: return a.k_scale;
    case argument_slot::v_scale: return a.v_scale;
    case argument_slot::page_table: return a.page_table;
    case argument_slot::kv_lengths: return a.kv_lengths;
    case argument_slot::positions: return a.positions;
    case argument_slot::sinks: return a.sinks;
    case argument_slot::mask: return a.mask;
    case argument_slot::key_padding: return a.key_padding;
    case argument_slot::capture: return a.captures.tensors.at(std::size_t(argument.index));
    case argument_slot::scalars: return a.captures.scalars;
    case argument_slot::output: case argument_slot::lse: break;
  }
  throw std::logic_error("jit_runner: an output has no ImageParam");
}

// Sequence rows that see no key, as the runtime fills them: output 0, lse -inf or the sink's logit.
void fill_rows_without_keys(const attention_desc& d, const tensor_view& output, const tensor_view& lse,
                            const std::vector<float>& sinks) {
  const std::int64_t rows = output.shape[0] * output.shape[1] * output.shape[2];
  std::memset(output.data, 0, std::size_t(rows * output.shape[3] * size_of(output.type)));
  if (!d.lse_output) return;
  for (std::int64_t h = 0; h < lse.shape[1]; ++h)
    for (std::int64_t i = 0; i < lse.shape[2]; ++i)
      static_cast<float*>(lse.data)[h * lse.strides[1] + i * lse.strides[2]] =
          d.has_sinks ? sinks[std::size_t(h)] : -std::numeric_limits<float>::infinity();
}

}  // namespace

struct jit_kernel::impl {
  Halide::Target target;
  codegen::visibility_layout visibility_layout;  ///< the variant's over the kernel's targets
  codegen::attention_algorithm algorithm;
  Halide::Pipeline pipeline;
  /// The visibility table's part, where the kernel takes the table (as the runtime runs it first).
  std::optional<codegen::visibility_table_algorithm> visibility;
  Halide::Pipeline visibility_pipeline;
};

jit_kernel::jit_kernel(const attention_desc& desc, kernel_variant variant, const std::string& target,
                       const std::string& finer_target, bool bf16_dot_products)
    : impl_(std::make_unique<impl>()) {
  impl_->target =
      codegen::target_for(target.empty() ? codegen::running_cpu_target() : codegen::parse_target(target), desc);
  std::vector<Halide::Target> kernel_targets = {impl_->target};
  if (!finer_target.empty()) kernel_targets.push_back(codegen::parse_target(finer_target));
  codegen::blocking tiles = codegen::cpu_kernel_variant_blocking(desc, impl_->target, kernel_targets, variant);
  if (bf16_dot_products) tiles.bf16_dot_products = tiles.qk == codegen::qk_layout::keys_in_lanes && !tiles.split_per_block;
  impl_->algorithm = codegen::define_attention(desc, tiles);
  codegen::schedule_cpu(impl_->algorithm);
  impl_->pipeline = Halide::Pipeline(impl_->algorithm.outputs());
  impl_->pipeline.compile_jit(impl_->target);
  if (impl_->algorithm.visibility_table.defined()) {
    impl_->visibility_layout =
        codegen::visibility_table_layout(codegen::cpu_variant_tiles(desc, kernel_targets)[int(variant)]);
    impl_->visibility = codegen::define_visibility_table(desc, codegen::cpu_blocking(desc, impl_->target).lanes);
    codegen::schedule_visibility_table_cpu(*impl_->visibility);
    impl_->visibility_pipeline = Halide::Pipeline(impl_->visibility->stages.table);
    impl_->visibility_pipeline.compile_jit(impl_->target);
  }
}

jit_kernel::~jit_kernel() = default;

jit_result jit_kernel::run(const attention_problem& p) {
  auto& a = impl_->algorithm;
  const auto& d = p.desc;
  const dtype element = d.element_type;
  const int B = p.batch, Lq = p.query_length, Lk = p.key_length;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  a.q.set(to_buffer(element, {B, Lq, H, D}, p.q));
  a.k.set(to_buffer(element, {B, Lk, KVH, D}, p.k));
  a.v.set(to_buffer(element, {B, Lk, KVH, Dv}, p.v));
  if (d.has_additive_mask()) a.mask.set(to_buffer(element, p.mask_shape(), p.mask));
  if (d.has_key_padding_mask()) {
    Halide::Buffer<std::uint8_t> padding(Lk, B);
    std::memcpy(padding.data(), p.key_padding.data(), p.key_padding.size());
    a.key_padding.set(padding);
  }
  set_captures(a.captures, p);
  Halide::Buffer<float> sinks(H);
  if (d.has_sinks) {
    std::memcpy(sinks.data(), p.sinks.data(), p.sinks.size() * sizeof(float));
    a.sinks.set(sinks);
  }
  Halide::Buffer<std::int32_t> positions(global_position_count);
  std::memcpy(positions.data(), p.positions, sizeof p.positions);
  if (d.global_positions) a.positions.set(positions);
  if (impl_->visibility) {
    // The table on the finest tiles and its slices, as the runtime computes them before the kernel.
    codegen::visibility_table_algorithm& t = *impl_->visibility;
    const codegen::visibility_layout& layout = impl_->visibility_layout;
    const codegen::visibility_grid grid = layout.finest;
    set_captures(t.captures, p);
    if (d.global_positions) t.positions.set(positions);
    t.query_length.set(Lq);
    t.key_length.set(Lk);
    t.tile_queries.set(grid.queries);
    t.block_keys.set(grid.keys);
    const detail::visibility_table_extents finest{B, codegen::visibility_table_heads(d),
                                                  (Lq + grid.queries - 1) / grid.queries, (Lk + grid.keys - 1) / grid.keys};
    Halide::Buffer<std::uint8_t> table(int(finest.blocks), int(finest.tiles), int(finest.heads), B);
    impl_->visibility_pipeline.realize(table, impl_->target);
    const int targets = int(layout.ratios.size());
    Halide::Buffer<std::uint8_t> slices(int(finest.blocks), int(finest.tiles), targets * int(finest.heads), B);
    detail::fill_visibility_slices(table.data(), finest, layout.ratios.data(), targets, slices.data());
    a.visibility_table.set(slices);
  }
  Halide::Buffer<> output(codegen::halide_type_of(element), {Dv, H, Lq, B});
  std::vector<Halide::Buffer<>> outputs = {output};
  // The (B, H, Lq) log-sum-exp as the CPU kernel writes it: with the output's dimensions, the
  // feature dimension stepping nowhere (as the runtime passes it).
  std::vector<float> lse_values(std::size_t(B) * H * Lq);
  const halide_dimension_t lse_dims[] = {{0, Dv, 0}, {0, H, Lq}, {0, Lq, 1}, {0, B, H * Lq}};
  Halide::Buffer<float> lse(lse_values.data(), 4, lse_dims);
  if (d.lse_output) outputs.push_back(lse);
  impl_->pipeline.realize(Halide::Realization(outputs), impl_->target);
  jit_result r;
  r.output = decode(element, output.data(), output.number_of_elements());
  if (d.lse_output) r.lse = lse_values;
  return r;
}

void jit_kernel::run(sequence_batch& batch) {
  auto& a = impl_->algorithm;
  const attention_desc& d = batch.desc;
  if (impl_->visibility) throw std::logic_error("jit_runner: sequence batches with a visibility table are not run here");
  if (!batch.sequences.empty()) set_captures(a.captures, batch.sequences[0]);
  const attention_args args = batch.args();
  const attention_argument_table arguments = kernel_arguments(d);
  for (std::int64_t b = 0; b < detail::sequence_count(d, args); ++b) {
    const detail::sequence_extents sequence = detail::sequence_of(d, args, b);
    if (sequence.queries == 0) continue;
    std::vector<Halide::Buffer<>> outputs;
    tensor_view output_view, lse_view;
    for (const kernel_argument& argument : arguments) {
      if (argument.slot == argument_slot::capture || argument.slot == argument_slot::scalars) continue;
      const detail::sequence_view cut = detail::sequence_view_of(d, argument, batch.view(argument), sequence);
      if (argument.slot == argument_slot::output) {
        output_view = cut.view;
        outputs.push_back(buffer_of(cut.view, cut.batch_dim, int(b)));
      } else if (argument.slot == argument_slot::lse) {
        lse_view = cut.view;
        outputs.push_back(buffer_of(detail::lse_beside_output(cut.view, d.effective_v_head_dim()), 0, int(b)));
      } else {
        parameter_for(a, argument).set(buffer_of(cut.view, cut.batch_dim, int(b)));
      }
    }
    if (sequence.keys == 0) {
      fill_rows_without_keys(d, output_view, lse_view, batch.sinks);
      continue;
    }
    impl_->pipeline.realize(Halide::Realization(outputs), impl_->target);
  }
}

}  // namespace attngen::testing
