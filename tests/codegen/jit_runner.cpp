#include "codegen/jit_runner.hpp"

#include <cstring>
#include <optional>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/variants.hpp"
#include "attngen/codegen/visibility_table.hpp"
#include "attngen/runtime/detail/visibility_slices.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

// A Halide buffer with dense row-major `shape` (outermost first) holding `values` in `element`.
Halide::Buffer<> to_buffer(dtype element, const std::vector<int>& shape, const std::vector<float>& values) {
  std::vector<int> extents(shape.rbegin(), shape.rend());
  Halide::Buffer<> buffer(codegen::halide_type_of(element), extents);
  const auto bytes = encode(element, values);
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

// The problem's captured tensors and scalars, as `params` take them.
void set_captures(codegen::capture_params& params, const attention_problem& p) {
  const auto& d = p.desc;
  for (int n = 0; n < d.captures.tensor_count; ++n) {
    const bool integer = d.captures.tensors[n].type == capture_type::i32;
    const std::vector<int> shape = p.capture_shape(n);
    Halide::Buffer<> tensor(integer ? Halide::Int(32) : Halide::Float(32), std::vector<int>(shape.rbegin(), shape.rend()));
    for (std::size_t x = 0; x < p.captures[n].size(); ++x) {
      if (integer) static_cast<std::int32_t*>(tensor.data())[x] = std::int32_t(p.captures[n][x]);
      else static_cast<float*>(tensor.data())[x] = p.captures[n][x];
    }
    params.tensors[n].set(tensor);
  }
  if (d.captures.scalar_count > 0) {
    Halide::Buffer<float> scalars(d.captures.scalar_count);
    std::memcpy(scalars.data(), p.scalars.data(), p.scalars.size() * sizeof(float));
    params.scalars.set(scalars);
  }
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
                       const std::string& finer_target)
    : impl_(std::make_unique<impl>()) {
  impl_->target = target.empty() ? codegen::running_cpu_target() : codegen::parse_target(target);
  std::vector<Halide::Target> kernel_targets = {impl_->target};
  if (!finer_target.empty()) kernel_targets.push_back(codegen::parse_target(finer_target));
  impl_->algorithm = codegen::define_attention(
      desc, codegen::cpu_kernel_variant_blocking(desc, impl_->target, kernel_targets, variant));
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
  if (impl_->visibility) {
    // The table on the finest tiles and its slices, as the runtime computes them before the kernel.
    codegen::visibility_table_algorithm& t = *impl_->visibility;
    const codegen::visibility_layout& layout = impl_->visibility_layout;
    const codegen::visibility_grid grid = layout.finest;
    set_captures(t.captures, p);
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

}  // namespace attngen::testing
