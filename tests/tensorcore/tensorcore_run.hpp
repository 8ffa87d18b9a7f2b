#pragma once
/// A generated tensor-core variant (attngen tensorcore) run over a test problem: dense (B, L, heads, D)
/// tensors in the variant's element type, its masks, padding and captures as its variant_inputs. The
/// same preparation serves the host model of the warp (tensorcore_host_run.hpp) and a CUDA device
/// (tensorcore_device_run.cuh); `Memory` puts each array where the kernel reads it and reads results
/// back, `Launch` runs the tile code.

#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "attngen/runtime/detail/bf16_rounding.hpp"
#include "attngen/tensorcore/flash_forward.hpp"
#include "attngen/tensorcore/variant_inputs.hpp"
#include "support/problem.hpp"
#include "support/sequence_batch.hpp"

namespace attngen::testing {

struct tensorcore_result {
  std::vector<float> output;  ///< (B, Lq, H, D)
  std::vector<float> lse;     ///< (B, H, Lq), NaN where the description returns none
};

// Host conversions of their own, not the tile code's pack2 and unpack: compiled by nvcc those are
// device functions, which nvcc's host pass turns into a call of exit(1).
template <tensorcore::element16 E>
std::uint16_t host_bits(float value) {
  if constexpr (E == tensorcore::element16::bf16) return attngen::detail::bf16_bits(value);
  else return std::bit_cast<std::uint16_t>(static_cast<_Float16>(value));
}
template <tensorcore::element16 E>
float host_value(std::uint16_t bits) {
  if constexpr (E == tensorcore::element16::bf16) return std::bit_cast<float>(std::uint32_t(bits) << 16);
  else return static_cast<float>(std::bit_cast<_Float16>(bits));
}

/// The bits of `values` (exact in E) in element type E.
template <tensorcore::element16 E>
std::vector<std::uint16_t> bits_of(const std::vector<float>& values) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t n = 0; n < values.size(); ++n) bits[n] = host_bits<E>(values[n]);
  return bits;
}

/// `values` as the variant's tensors hold them: as they are for f32 storage (the kernel rounds them),
/// else their bits in E.
template <tensorcore::element16 E, typename Storage>
std::vector<Storage> stored(const std::vector<float>& values) {
  if constexpr (std::is_same_v<Storage, float>) return values;
  else return bits_of<E>(values);
}

/// `values` as a variant's K or V hold them: in its cache's element type (exact there). Dense problems
/// have no int8 scales: int8 caches are tested in batches (run_tensorcore_batch).
template <typename Variant>
auto cache_values(const std::vector<float>& values) {
  constexpr tensorcore::cache_element C = Variant::cache;
  if constexpr (C == tensorcore::cache_element::f32) {
    return values;
  } else if constexpr (C == tensorcore::cache_element::i8) {
    throw std::logic_error("a dense problem has no int8 scales: run int8 caches as batches");
    return std::vector<std::int8_t>{};
  } else {
    return bits_of<C == tensorcore::cache_element::bf16 ? tensorcore::element16::bf16 : tensorcore::element16::f16>(
        values);
  }
}

/// Strides (batch, head, query, key) of a dense additive mask of `shape`, 0 where it broadcasts.
inline void dense_mask_strides(mask_shape shape, int heads, int query_length, int key_length, std::int64_t* strides) {
  const std::int64_t matrix = std::int64_t(query_length) * key_length;
  const std::int64_t batch = shape == mask_shape::b_h_lq_lk ? heads * matrix : shape == mask_shape::b_1_lq_lk ? matrix : 0;
  const std::int64_t head = shape == mask_shape::h_lq_lk || shape == mask_shape::b_h_lq_lk ? matrix : 0;
  const std::int64_t values[4] = {batch, head, key_length, 1};
  for (int n = 0; n < 4; ++n) strides[n] = values[n];
}

/// The variant of a dense problem `p`: its masks, padding, sinks and captures placed by `memory`
/// (as run_tensorcore's Memory).
template <typename Variant, typename Memory>
Variant variant_of(const attention_problem& p, Memory& memory) {
  using storage = typename Variant::storage;
  const attention_desc& d = p.desc;
  Variant variant{};
  variant.in.additive_mask = memory.place(stored<Variant::element, storage>(p.mask));
  dense_mask_strides(d.additive_mask_shape, d.num_heads, p.query_length, p.key_length, variant.in.mask_strides);
  variant.in.key_padding = memory.place(p.key_padding);
  variant.in.key_padding_batch_stride = p.key_length;
  variant.in.sinks = memory.place(p.sinks);
  for (std::size_t n = 0; n < p.captures.size(); ++n) {
    tensorcore::captured_view& view = variant.in.tensors[n];
    const std::vector<int> shape = p.capture_shape(int(n));
    std::int64_t stride = 1;
    for (int dim = int(shape.size()) - 1; dim >= 0; --dim) {
      view.extents[dim] = shape[dim];
      view.strides[dim] = stride;
      stride *= shape[dim];
    }
    if (d.captures.tensors[n].type == capture_type::i32)
      view.data = memory.place(std::vector<std::int32_t>(p.captures[n].begin(), p.captures[n].end()));
    else
      view.data = memory.place(p.captures[n]);
  }
  for (std::size_t n = 0; n < p.scalars.size(); ++n) variant.in.scalars[n] = p.scalars[n];
  return variant;
}

/// Memory: `T* place(const std::vector<T>&)` (the kernel's copy, null for an empty vector) and
/// `void read(const T* placed, std::vector<T>& into)`. Launch: `void operator()(const
/// tensorcore::forward_params&, const Variant&)`.
template <typename Variant, typename Memory, typename Launch>
tensorcore_result run_tensorcore(const attention_problem& p, Memory& memory, Launch launch) {
  constexpr tensorcore::element16 E = Variant::element;
  using storage = typename Variant::storage;
  constexpr int D = Variant::head_dim, Dv = Variant::v_head_dim;
  const attention_desc& d = p.desc;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), Lq = p.query_length, Lk = p.key_length;
  tensorcore_result result;
  // Elements no row writes stay NaN.
  std::vector<storage> out(p.output_size(), stored<E, storage>({std::numeric_limits<float>::quiet_NaN()})[0]);
  result.lse.assign(p.lse_size(), std::numeric_limits<float>::quiet_NaN());

  tensorcore::forward_params params{};
  params.q = memory.place(stored<E, storage>(p.q));
  params.k = memory.place(cache_values<Variant>(p.k));
  params.v = memory.place(cache_values<Variant>(p.v));
  params.out = memory.place(out);
  params.lse = d.lse_output ? memory.place(result.lse) : nullptr;
  params.q_strides = {std::int64_t(Lq) * H * D, H * D, D};
  params.k_strides = {std::int64_t(Lk) * KVH * D, KVH * D, D};
  params.v_strides = {std::int64_t(Lk) * KVH * Dv, KVH * Dv, Dv};
  params.out_strides = {std::int64_t(Lq) * H * Dv, H * Dv, Dv};
  params.lse_batch_stride = std::int64_t(H) * Lq;
  params.lse_head_stride = Lq;
  params.batch = p.batch;
  params.heads = H;
  params.kv_heads = KVH;
  params.query_length = Lq;
  params.key_length = Lk;
  params.scale = d.effective_scale();

  launch(params, variant_of<Variant>(p, memory));
  memory.read(static_cast<const storage*>(params.out), out);
  if (params.lse != nullptr) memory.read(params.lse, result.lse);
  result.output.resize(out.size());
  for (std::size_t n = 0; n < out.size(); ++n) {
    if constexpr (std::is_same_v<storage, float>) result.output[n] = out[n];
    else result.output[n] = host_value<E>(out[n]);
  }
  return result;
}

/// `batch`'s call, its tensors in its description's KV-cache layouts (support/sequence_batch.hpp), run
/// by `launch` on the tensors `memory` places (Memory and Launch as for run_tensorcore): one launch for
/// every sequence, each block reading its sequence's lengths and pages; with `key_splits` above 1,
/// keys split across that many blocks into a workspace (NaN until written), which `launch` merges.
/// Writes the batch's output and lse.
template <typename Variant, typename Memory, typename Launch>
void run_tensorcore_batch(sequence_batch& batch, Memory& memory, Launch launch, int key_splits = 1) {
  using storage = typename Variant::storage;
  const attention_desc& d = batch.desc;
  const int B = int(batch.sequences.size()), H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim,
            Dv = d.effective_v_head_dim();
  const attention_args args = batch.args();
  tensorcore::forward_params params{};
  params.q = memory.place(batch.q);
  params.k = memory.place(batch.k);
  params.v = memory.place(batch.v);
  params.out = memory.place(batch.output);
  params.lse = d.lse_output ? memory.place(batch.lse) : nullptr;
  const std::int64_t queries_per_sequence = B > 0 ? batch.sequences[0].query_length : 0;
  params.q_strides = {d.is_ragged() ? 0 : queries_per_sequence * H * D, H * D, D};
  params.out_strides = {d.is_ragged() ? 0 : queries_per_sequence * H * Dv, H * Dv, Dv};
  const std::int64_t rows_per_entry = d.is_paged() ? d.kv_page_size : batch.key_capacity;
  params.k_strides = {rows_per_entry * KVH * D, KVH * D, D};
  params.v_strides = {rows_per_entry * KVH * Dv, KVH * Dv, Dv};
  if (d.has_kv_scales()) {
    params.k_scale = memory.place(batch.k_scale);
    params.v_scale = memory.place(batch.v_scale);
    params.k_scale_strides = {rows_per_entry * KVH, KVH, 1};
    params.v_scale_strides = params.k_scale_strides;
  }
  params.lse_batch_stride = d.is_ragged() ? 0 : H * queries_per_sequence;
  params.lse_head_stride = d.is_ragged() ? batch.total_queries() : queries_per_sequence;
  params.batch = B;
  params.heads = H;
  params.kv_heads = KVH;
  for (const attention_problem& sequence : batch.sequences)
    params.query_length = sequence.query_length > params.query_length ? sequence.query_length : params.query_length;
  params.key_length = batch.key_capacity;
  params.scale = d.effective_scale();
  if (key_splits > 1) {
    params.key_splits = key_splits;
    params.partial = memory.place(std::vector<float>(std::size_t(tensorcore::split_workspace_floats(params, Dv)),
                                                     std::numeric_limits<float>::quiet_NaN()));
  }
  tensorcore::sequence_layout& layout = params.layout;
  if (d.is_ragged()) layout.query_offsets = memory.place(batch.q_offsets);
  if (d.has_kv_lengths()) layout.kv_lengths = memory.place(batch.kv_lengths);
  if (d.is_paged()) {
    layout.page_table = memory.place(batch.page_table);
    layout.page_table_stride = batch.max_pages;
    layout.page_size_log2 = std::countr_zero(unsigned(d.kv_page_size));
  }

  Variant variant{};
  variant.in.additive_mask = memory.place(batch.mask);
  if (!args.mask.empty()) {
    // (batch, head, query row, key) strides, 0 where the mask's shape broadcasts.
    const tensor_view& m = args.mask;
    const bool batched = d.additive_mask_shape == mask_shape::b_h_lq_lk || d.additive_mask_shape == mask_shape::b_1_lq_lk;
    const bool per_head = d.additive_mask_shape == mask_shape::b_h_lq_lk || d.additive_mask_shape == mask_shape::h_lq_lk;
    const std::int64_t strides[4] = {batched ? m.strides[0] : 0, per_head ? m.strides[m.rank - 3] : 0,
                                     m.strides[m.rank - 2], m.strides[m.rank - 1]};
    for (int n = 0; n < 4; ++n) variant.in.mask_strides[n] = strides[n];
  }
  variant.in.key_padding = memory.place(batch.key_padding);
  variant.in.key_padding_batch_stride = batch.key_capacity;
  variant.in.sinks = memory.place(batch.sinks);
  for (std::size_t n = 0; n < batch.captures.size(); ++n) {
    const tensor_view& capture = args.captures[n];
    tensorcore::captured_view& view = variant.in.tensors[n];
    view.data = memory.place(batch.captures[n]);
    for (int dim = 0; dim < capture.rank; ++dim) {
      view.extents[dim] = int(capture.shape[dim]);
      view.strides[dim] = capture.strides[dim];
    }
  }
  if (B > 0)
    for (std::size_t n = 0; n < batch.sequences[0].scalars.size(); ++n)
      variant.in.scalars[n] = batch.sequences[0].scalars[n];

  launch(params, variant);
  memory.read(static_cast<const std::uint8_t*>(params.out), batch.output);
  if (params.lse != nullptr) memory.read(params.lse, batch.lse);
}

/// How a variant's mask classifies the tiles the kernel walks ((block, tile of keys) pairs of a dense
/// problem), against the mask evaluated at each of their (row, key) pairs.
struct tile_census {
  int tiles = 0;
  int hidden = 0, whole = 0;                  ///< as visibility_of_tile() classifies them
  int hidden_by_mask = 0, whole_by_mask = 0;  ///< every pair hidden, every pair shown
  int unsound = 0;                            ///< classified hidden or whole, yet the pairs disagree
  std::string first_unsound;
};

/// A generated variant, by configuration name, and what runs it (the build's registries list them):
/// dense problems, and batches of sequences of their own lengths in the description's KV-cache
/// layouts, whose output and lse `run_batch` writes (null in the AMX path's registries: it takes no
/// KV-cache layouts).
struct compiled_tensorcore_variant {
  std::string_view configuration;
  tensorcore_result (*run)(const attention_problem&);
  /// The batch with its keys split across that many blocks (1: none).
  void (*run_batch)(sequence_batch&, int key_splits) = nullptr;
  /// The variant's tile visibility over a dense problem's tiles (tile_census.hpp); host registries only.
  tile_census (*census)(const attention_problem&) = nullptr;
};

}  // namespace attngen::testing
