#pragma once
/// The test configurations: one table of named descriptions and, for each backend, the sizes it checks
/// the description at. Every backend's suite iterates it instead of a list of its own:
///
///   jit     codegen: tests (tests/codegen/test_jit_configurations.cpp): every kernel variant, compiled
///           through Halide's JIT, against the float64 reference at every (batch, Lq, Lk) of a matrix;
///   aot     kernels: tests (tests/kernels/test_aot_kernels.cpp, test_aot_module.cpp): the kernel
///           tests/CMakeLists.txt generates with attngen_add_kernel, called through the runtime;
///   gpu     gpu: tests (tests/gpu/): the kernel generated with CUDA and OpenCL targets, on each API's
///           device, with host tensors copied in and out or with tensors on the device;
///   mlir    mlir: tests (tests/mlir/test_mlir_export.cpp): the MLIR export, lowered and run, against
///           the float64 reference and the Halide kernel;
///   backward codegen: tests (tests/codegen/test_jit_backward.cpp): the backward pass through the JIT
///           against the float64 reference's gradients;
///   bench   attngen-bench's cases (bench/cases.cpp): model shapes, timed by scripts/bench.
///   tensorcore  tensorcore: tests (tests/tensorcore/): the description's tensor-core variant (attngen
///           tensorcore) run by the tile code on the host model of the warp against the float64
///           reference at these sizes, and its CUDA kernel compiled for sm_80 and sm_90 without spills.
///
/// A backend whose field is empty does not run the configuration; cannot_run says why a backend
/// cannot run a description at all. Adding a configuration is adding one entry (and, for aot, gpu and
/// bench, its name to the kernel list in tests/CMakeLists.txt or bench/CMakeLists.txt, since those
/// kernels are generated at build time).
///
/// This header is also the DESCRIPTION of those kernels: attngen_add_kernel's VARIABLE is
/// `attngen::testing::description_of<"name">()`. It includes nothing but the DSL and example 03's
/// description.

#include <cstddef>
#include <initializer_list>
#include <string_view>

#include "../../examples/03_custom_modifier/kernels.hpp"
#include "attngen/attngen.hpp"

namespace attngen::testing {

/// At most `Capacity` values, written as a braced list in a constant expression.
template <typename T, int Capacity>
struct short_list {
  T items[Capacity]{};
  int count = 0;

  constexpr short_list() = default;
  constexpr short_list(std::initializer_list<T> values) {
    for (const T& value : values) {
      if (count == Capacity) throw "short_list: more values than its capacity";
      items[count++] = value;
    }
  }
  constexpr const T* begin() const { return items; }
  constexpr const T* end() const { return items + count; }
  constexpr bool empty() const { return count == 0; }
  constexpr int size() const { return count; }
};

/// One call's sizes.
struct shape {
  int batch = 0, query_length = 0, key_length = 0;
};

/// Every (batch, Lq, Lk) with Lq and Lk from `lengths` (all pairs, Lq != Lk included) and batch from
/// `batches`, on one Halide target: empty is the best this CPU runs; `finer_target` is another target
/// of the same fat library, whose finer tiles give the visibility table's finest grid;
/// `bf16_dot_products`: the AVX512-BF16 tier's algorithm on that target (see jit_kernel).
struct length_matrix {
  short_list<int, 6> lengths;
  short_list<int, 3> batches;
  std::string_view target;
  std::string_view finer_target;
  bool bf16_dot_products = false;
};

/// Where a GPU call's tensors are: on the host, copied to the device by the runtime, or on the device.
enum class placement { host_tensors_copied, device_tensors };

struct gpu_call {
  shape sizes;
  placement where = placement::device_tensors;
};

/// One of attngen-bench's timed cases: a model's shape.
struct bench_case_sizes {
  std::string_view case_name;  ///< the name `attngen-bench --case` takes
  shape sizes;
  int rotated_caches = 1;  ///< K/V caches cycled between timed calls, so they come from DRAM (decode)
  int documents = 0;       ///< with a document mask: this many equal documents per sequence
  int window = 0;          ///< with a sliding window: the keys left of the diagonal a query sees
  /// With per-sequence kv lengths: each sequence's drawn (fixed seed) from this to Lk; 0: all Lk.
  int shortest_keys = 0;
  /// Ragged self-attention: sequence b has ragged_lengths[b] queries and as many keys (sizes is left
  /// out: the batch is their count, Lq and Lk their largest).
  short_list<int, 8> ragged_lengths;
  /// The configuration whose kernel runs the same sequences in the same process, for a time ratio:
  /// one call for the batch if it takes per-sequence lengths, else one dense call per sequence.
  std::string_view compared_with;
};

/// A batch of sequences of their own lengths, for descriptions with ragged queries or per-sequence kv
/// lengths: each sequence's query and key counts (with dense queries, every query count is the same).
struct sequence_lengths {
  short_list<int, 10> queries, keys;
};

enum class backend { jit, aot, opencl, cuda, mlir, bench };

/// An operator (attngen::attention()) configuration.
struct operator_configuration {
  std::string_view name;   ///< an identifier: test names, and the kernels <prefix>_<name> in CMake
  std::string_view about;  ///< what it covers, for test names
  std::string_view tags;   ///< Catch2 tags of its tests, besides the suite's own
  attention_desc desc;
  short_list<length_matrix, 2> jit;
  short_list<shape, 3> aot;
  short_list<gpu_call, 4> gpu;
  short_list<shape, 4> mlir;
  /// The backward kernels (codegen/backward.hpp) through the JIT: dq, dk, dv (and d_sinks) at these
  /// sizes against the float64 reference's gradients.
  short_list<shape, 3> backward;
  /// The backward's two-pass schedule too (the runtime's when threads outnumber one pass's tasks), bit
  /// for bit against the one pass: descriptions whose gradients sum differently (GQA and MQA groups,
  /// captured tensors and scalars, sinks, narrow types, the benchmark's blocks).
  bool backward_in_two_passes = false;
  short_list<bench_case_sizes, 2> bench;
  /// Descriptions whose sequences differ in length: the JIT's and the AOT kernel's batches (the JIT
  /// runs every kernel variant on each).
  short_list<sequence_lengths, 3> jit_batches;
  short_list<sequence_lengths, 2> aot_batches;
  /// The GPU kernel's batches of such descriptions, host tensors copied in and out.
  short_list<sequence_lengths, 2> gpu_batches;
  short_list<shape, 5> tensorcore;
  /// The tensor-core variant's batches of descriptions with KV-cache layouts, launched as the runtime
  /// launches them (one launch for every sequence) and run on the host model of the warp.
  short_list<sequence_lengths, 2> tensorcore_batches;
};

/// A module (attngen::multihead_attention()) configuration, checked against PyTorch's
/// nn.MultiheadAttention in float64.
struct module_configuration {
  std::string_view name;
  std::string_view about;
  mha_desc desc;
  short_list<shape, 3> jit;
  bool jit_every_variant = false;  ///< the JIT checks every kernel variant at its calls, not only general
  short_list<shape, 3> aot;
  short_list<gpu_call, 4> gpu;
  /// The backward pass (codegen/module_backward.hpp) through the JIT: every gradient against PyTorch's
  /// autograd at these sizes.
  short_list<shape, 3> backward;
  /// attngen-bench cases: (B, L, S) against nn.MultiheadAttention and oneDNN (bench/module_cases.hpp).
  short_list<bench_case_sizes, 1> bench;
};

/// Why backend `b` cannot run `d` at all, or empty when it can.
constexpr std::string_view cannot_run(backend b, const attention_desc& d) {
  if (b == backend::opencl && d.element_type == dtype::f16) return "OpenCL f16 needs cl_khr_fp16, which PoCL lacks";
  return {};
}
constexpr std::string_view cannot_run(backend b, const mha_desc& d) {
  if (b == backend::mlir) return "the MLIR export has no module level";
  if (b == backend::opencl && d.element_type == dtype::f16) return "OpenCL f16 needs cl_khr_fp16, which PoCL lacks";
  return {};
}

/// The awkward lengths most configurations are checked at through the JIT: 1, a prime below a
/// vector, one above, a prime far from any tile size, and a multiple of every tile.
inline constexpr short_list<int, 6> awkward_lengths = {1, 7, 17, 113, 512};

/// The MLIR export's calls: decoding, Lq < Lk, and Lq > Lk (fully masked rows under bottom-right
/// causality). Its lowering is plain loops: small sizes.
inline constexpr short_list<shape, 4> mlir_shapes = {{1, 1, 1}, {2, 1, 19}, {2, 7, 17}, {1, 17, 7}};

/// The tensor-core tile code's calls on the host model: one query and one key, awkward lengths
/// across its 64-key tiles, and Lq > Lk (fully masked rows under bottom-right causality).
inline constexpr short_list<shape, 5> tensorcore_shapes = {{1, 1, 1}, {2, 7, 17}, {1, 113, 130}, {1, 70, 17}};
/// The backward's calls: one query, Lq > Lk (fully masked rows under bottom-right causality), and a
/// length far from any tile.
inline constexpr short_list<shape, 3> backward_shapes = {{2, 1, 17}, {1, 17, 7}, {1, 113, 113}};

inline constexpr const char* avx2_target = "x86-64-linux-avx2-fma-f16c";
inline constexpr const char* baseline_target = "x86-64-linux";

namespace configuration_parts {
using namespace attngen::mod;
inline constexpr auto mha = attention().heads(4).head_dim(64);
inline constexpr auto gqa = attention().heads(4).kv_heads(2).head_dim(64);
inline constexpr auto llama_gqa = attention().heads(32).kv_heads(8).head_dim(128);
inline constexpr auto long_causal = attention().heads(8).kv_heads(8).head_dim(128).causal(top_left);
inline constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
inline constexpr auto prefix = tensor<capture_type::i32>("prefix", dim::batch);
inline constexpr auto bucket = tensor<capture_type::i32>("bucket", dim::batch, dim::key_length);
inline constexpr auto bias_table = tensor<capture_type::f32>("bias_table", dim::heads, dim::fixed(9));
inline constexpr auto bias_table_17 = tensor<capture_type::f32>("bias_table", dim::heads, dim::fixed(17));
inline constexpr auto cap = scalar("cap");
inline constexpr auto slopes = tensor<capture_type::f32>("slopes", dim::heads);
}  // namespace configuration_parts

namespace detail {
using namespace configuration_parts;
using enum placement;

// Decoding's kernels cut the key range into splits of 512 keys merged at the end (flash-decoding):
// 257 and 769 keys end in a partial split, and causal and padded keys leave whole splits masked.
inline constexpr operator_configuration operator_table[] = {
    // Model shapes: Llama-style GQA, through every backend but MLIR, and the benchmark's shapes.
    {.name = "gqa_causal",
     .about = "GQA H32 KVH8 D128, causal top-left",
     .tags = "[causal]",
     .desc = llama_gqa.causal(top_left),
     .jit = {{.lengths = {1, 113, 512}, .batches = {1}}},
     .aot = {{1, 113, 113}, {3, 17, 7}, {1, 1, 512}},
     .gpu = {{{1, 33, 33}, host_tensors_copied},
             {{2, 17, 40}, host_tensors_copied},
             {{1, 1, 70}, host_tensors_copied},
             {{1, 45, 45}, device_tensors}},
     .bench = {{"prefill_gqa_causal", {1, 1024, 1024}}}},
    {.name = "gqa",
     .about = "GQA H32 KVH8 D128",
     .desc = llama_gqa,
     // AVX2 too: its 256-key blocks take q.k tiles of 3 key vectors, the last shifted over computed keys.
     .jit = {{.lengths = {1, 7, 113, 512}, .batches = {1}}, {.lengths = {300, 533}, .batches = {1}, .target = avx2_target}},
     .bench = {{"prefill_gqa", {1, 2048, 2048}}, {"decode_gqa", {1, 1, 4096}, 4}}},
    {.name = "gqa_bf16",
     .about = "bf16 GQA H32 KVH8 D128",
     .tags = "[dtype]",
     .desc = llama_gqa.element(dtype::bf16),
     .jit = {{.lengths = {1, 113}, .batches = {1}, .target = avx2_target}},
     .bench = {{"prefill_gqa_bf16", {1, 2048, 2048}}}},
    {.name = "gqa_f16",
     .about = "f16 GQA H32 KVH8 D128",
     .tags = "[dtype]",
     .desc = llama_gqa.element(dtype::f16),
     .aot = {{1, 113, 113}, {2, 17, 300}},
     .bench = {{"prefill_gqa_f16", {1, 2048, 2048}}}},
    {.name = "gqa_f32_on_tensor_cores",
     .about = "GQA H32 KVH8 D128, f32 on the tensor cores in bf16",
     .tags = "[tensorcore]",
     .desc = llama_gqa.f32_on_tensor_cores(dtype::bf16),
     .bench = {{"prefill_gqa_f32_tc", {1, 2048, 2048}}, {"decode_gqa_f32_tc", {1, 1, 4096}, 4}}},
    {.name = "gqa_causal_bf16",
     .about = "bf16 GQA H32 KVH8 D128, causal top-left",
     .tags = "[dtype][causal]",
     .desc = llama_gqa.element(dtype::bf16).causal(top_left),
     .aot = {{1, 113, 113}, {2, 17, 7}, {1, 300, 300}},
     .bench = {{"prefill_gqa_causal_bf16", {1, 1024, 1024}}},
     .tensorcore = {{1, 1, 1}, {1, 70, 70}}},
    {.name = "mha_small",
     .about = "MHA H8 D64, short sequences",
     .desc = attention().heads(8).head_dim(64),
     .bench = {{"mha_small", {16, 10, 10}}}},
    {.name = "mha_causal",
     .about = "MHA H16 D64, causal top-left",
     .desc = attention().heads(16).head_dim(64).causal(top_left),
     .bench = {{"prefill_mha_causal", {4, 512, 512}}}},
    // Training's benchmark shapes (forward and backward); their backward through the JIT at small sizes.
    {.name = "train_gqa_causal",
     .about = "GQA H32 KVH8 D128, causal top-left, LSE, with backward",
     .tags = "[backward]",
     .desc = llama_gqa.causal(top_left).return_lse().with_backward(),
     .backward = {{1, 33, 33}, {1, 100, 197}},
     .backward_in_two_passes = true,
     .bench = {{"train_gqa_causal", {1, 1024, 1024}}}},
    {.name = "train_mha",
     .about = "MHA H16 D64, LSE, with backward",
     .tags = "[backward]",
     .desc = attention().heads(16).head_dim(64).return_lse().with_backward(),
     .gpu = {{{1, 40, 33}, host_tensors_copied}},
     .backward = {{2, 17, 40}},
     .bench = {{"train_mha", {4, 512, 512}}}},
    {.name = "long_causal",
     .about = "MHA H8 D128, causal top-left, long sequences",
     .desc = long_causal,
     .bench = {{"long_causal", {1, 16384, 16384}}}},
    {.name = "long_sliding_window",
     .about = "long_causal with a left window of 1024 keys: block sparsity makes it cost L x window",
     .desc = long_causal.mask_mod(sliding_window(1024, 0)),
     .bench = {{"sliding_window_16k", {1, 16384, 16384}, 1, 0, 1024}}},
    {.name = "long_document_mask",
     .about = "long_causal over packed documents, their ids a run-time (B, Lk) tensor",
     .desc = long_causal.capture(document).mask_mod(document_mask(document)),
     .bench = {{"document_mask_16k", {1, 16384, 16384}, 1, 8}}},
    // The same masks on the tensor cores (GPUs only): tiles the mask hides are skipped there too.
    {.name = "long_sliding_window_on_tensor_cores",
     .about = "long_sliding_window, f32 on the tensor cores in bf16",
     .tags = "[tensorcore]",
     .desc = long_causal.mask_mod(sliding_window(1024, 0)).f32_on_tensor_cores(dtype::bf16),
     .bench = {{"sliding_window_16k_tc", {1, 16384, 16384}, 1, 0, 1024}}},
    {.name = "long_document_mask_on_tensor_cores",
     .about = "long_document_mask, f32 on the tensor cores in bf16",
     .tags = "[tensorcore]",
     .desc = long_causal.capture(document).mask_mod(document_mask(document)).f32_on_tensor_cores(dtype::bf16),
     .bench = {{"document_mask_16k_tc", {1, 16384, 16384}, 1, 8}}},

    // Heads and head dims.
    {.name = "mha",
     .about = "MHA H4 D64",
     .desc = mha,
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes},
    {.name = "mha_d32",
     .about = "MHA H4 D32",
     .desc = attention().heads(4).head_dim(32),
     .mlir = mlir_shapes},
    {.name = "mqa",
     .about = "MQA H4 KVH1 D64",
     .desc = attention().heads(4).kv_heads(1).head_dim(64),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}}},
    {.name = "mqa_h32_d32",
     .about = "MQA H32 KVH1 D32: 32-row tiles, block scratch on the heap",
     .desc = attention().heads(32).kv_heads(1).head_dim(32),
     .jit = {{.lengths = {1, 3, 530}, .batches = {1}}}},
    {.name = "mqa_scale",
     .about = "MQA H4 KVH1 D64 with explicit scale 0.5",
     .desc = attention().heads(4).kv_heads(1).head_dim(64).scale(0.5f),
     .mlir = mlir_shapes,
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    {.name = "gqa_groups_of_3_causal",
     .about = "GQA H6 KVH2 D64 (groups of 3), causal bottom-right",
     .tags = "[causal]",
     .desc = attention().heads(6).kv_heads(2).head_dim(64).causal(bottom_right),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    {.name = "gqa_groups_of_3_causal_lse",
     .about = "GQA H6 KVH2 D32 (groups of 3), causal top-left, LSE",
     .tags = "[causal][lse]",
     .desc = attention().heads(6).kv_heads(2).head_dim(32).causal(top_left).return_lse(),
     .mlir = mlir_shapes},
    {.name = "v_head_dim_32",
     .about = "GQA H4 KVH2, v_head_dim 32 unlike head_dim 64",
     .tags = "[dims]",
     .desc = gqa.v_head_dim(32),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}}},
    {.name = "head_dim_128_v_64",
     .about = "GQA H4 KVH2, head_dim 128, v_head_dim 64",
     .tags = "[dims]",
     .desc = attention().heads(4).kv_heads(2).head_dim(128).v_head_dim(64),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}}},
    {.name = "head_dims_80_24",
     .about = "GQA H4 KVH2, head dims 80/24 (not powers of two), causal top-left",
     .tags = "[dims]",
     .desc = gqa.head_dim(80).v_head_dim(24).causal(top_left),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}},
     .backward = backward_shapes},
    {.name = "scale",
     .about = "MHA H4 D64 with explicit scale 0.5",
     .desc = mha.scale(0.5f),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}}},
    {.name = "tiny_heads_causal",
     .about = "MQA H3 KVH1, head dims 5/3 (no power of two), causal top-left",
     .tags = "[dims][causal]",
     .desc = attention().heads(3).kv_heads(1).head_dim(5).v_head_dim(3).causal(top_left),
     .gpu = {{{2, 19, 19}, device_tensors}, {{1, 5, 12}, host_tensors_copied}}},
    {.name = "awkward_dims",
     .about = "GQA H6 KVH3, head dims 24/40 (Dv wider than D, filling no warp), mask (H, Lq, Lk), keep-polarity "
              "padding",
     .tags = "[dims][mask]",
     .desc = attention()
                 .heads(6)
                 .kv_heads(3)
                 .head_dim(24)
                 .v_head_dim(40)
                 .additive_mask(mask_shape::h_lq_lk)
                 .key_padding_mask(true_means_keep),
     .gpu = {{{2, 9, 23}, device_tensors}, {{1, 31, 5}, host_tensors_copied}}},

    // Causality.
    {.name = "causal_top_left",
     .about = "GQA H4 KVH2 D64, causal top-left",
     .tags = "[causal]",
     .desc = gqa.causal(top_left),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes},
    {.name = "causal_bottom_right",
     .about = "GQA H4 KVH2 D64, causal bottom-right: fully masked rows when Lk < Lq",
     .tags = "[causal]",
     .desc = gqa.causal(bottom_right),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes},
    {.name = "lse_causal_bottom_right",
     .about = "GQA H4 KVH2 D64, causal bottom-right, LSE: -inf for fully masked rows",
     .tags = "[causal][lse]",
     .desc = gqa.causal(bottom_right).return_lse(),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes},
    {.name = "decoding_uneven_splits",
     .about = "GQA H4 KVH2 D64, causal bottom-right, key padding, LSE: decoding merges key splits that end unevenly",
     .tags = "[splits]",
     .desc = gqa.causal(bottom_right).key_padding_mask(true_means_ignore).return_lse(),
     .jit = {{.lengths = {1, 3, 257, 769}, .batches = {1, 2}}}},
    {.name = "decoding_masked_splits",
     .about = "MHA H4 D64, causal top-left, LSE: decoding merges key splits when causality hides all but the first",
     .tags = "[splits]",
     .desc = mha.causal(top_left).return_lse(),
     .jit = {{.lengths = {1, 2, 769}, .batches = {1}}}},

    // Global positions: each call a random slice of a longer sequence (query and key starts, totals).
    {.name = "positions_gqa",
     .about = "GQA H4 KVH2 D64, LSE, global positions: a slice's partial result",
     .tags = "[positions]",
     .desc = gqa.return_lse().with_global_positions(),
     .jit = {{.lengths = {1, 17, 113}, .batches = {1, 2}}},
     .aot = {{2, 17, 23}, {1, 1, 64}}},
    {.name = "positions_causal_top_left",
     .about = "GQA H4 KVH2 D64, causal top-left, LSE, global positions",
     .tags = "[positions][causal]",
     .desc = gqa.causal(top_left).return_lse().with_global_positions(),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .aot = {{2, 17, 23}, {1, 113, 64}}},
    {.name = "positions_causal_bottom_right_sinks",
     .about = "GQA H4 KVH2 D64, causal bottom-right, sinks, LSE, global positions",
     .tags = "[positions][causal]",
     .desc = gqa.causal(bottom_right).attention_sinks().return_lse().with_global_positions(),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}}},
    {.name = "positions_window_document",
     .about = "MHA H4 D64, sliding window and document mask, LSE, global positions",
     .tags = "[positions][modifiers]",
     .desc = mha.capture(document)
                 .mask_mod(sliding_window(40, 0) && document_mask(document))
                 .return_lse()
                 .with_global_positions(),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .aot = {{2, 33, 47}},
     .gpu = {{{2, 33, 47}, device_tensors}, {{1, 17, 9}, host_tensors_copied}}},
    {.name = "positions_padding_mask",
     .about = "MHA H4 D64, key padding and a per-batch mask of the call's own keys, LSE, global positions",
     .tags = "[positions][masks]",
     .desc = mha.key_padding_mask(true_means_ignore)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .causal(top_left)
                 .return_lse()
                 .with_global_positions(),
     .jit = {{.lengths = {1, 17, 113}, .batches = {1, 2}}},
     .aot = {{2, 17, 23}}},
    {.name = "positions_alibi_lengths",
     .about = "GQA H4 KVH2 D64, ALiBi plus q_len and kv_len, causal, global positions",
     .tags = "[positions][modifiers]",
     .desc = gqa.causal(top_left)
                 .score_mod(alibi(4) + to_float(kv_len - q_len) * 0.01f)
                 .return_lse()
                 .with_global_positions(),
     .jit = {{.lengths = {1, 17, 113}, .batches = {1, 2}}}},

    // Additive masks and key padding.
    {.name = "mask_lq_lk",
     .about = "GQA H4 KVH2 D64, additive mask (Lq, Lk)",
     .tags = "[mask]",
     .desc = gqa.additive_mask(mask_shape::lq_lk),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "mask_h_lq_lk",
     .about = "GQA H4 KVH2 D64, additive mask (H, Lq, Lk)",
     .tags = "[mask]",
     .desc = gqa.additive_mask(mask_shape::h_lq_lk),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes},
    {.name = "mask_b_h_lq_lk",
     .about = "GQA H4 KVH2 D64, additive mask (B, H, Lq, Lk)",
     .tags = "[mask]",
     .desc = gqa.additive_mask(mask_shape::b_h_lq_lk),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "mask_b_1_lq_lk",
     .about = "GQA H4 KVH2 D64, additive mask (B, 1, Lq, Lk)",
     .tags = "[mask]",
     .desc = gqa.additive_mask(mask_shape::b_1_lq_lk),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes},
    {.name = "key_padding_ignore",
     .about = "GQA H4 KVH2 D64, key padding mask, true means ignore",
     .tags = "[mask]",
     .desc = gqa.key_padding_mask(true_means_ignore),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes},
    {.name = "key_padding_ignore_lse",
     .about = "GQA H4 KVH2 D64, key padding mask, true means ignore, LSE",
     .tags = "[mask][lse]",
     .desc = gqa.key_padding_mask(true_means_ignore).return_lse(),
     .mlir = mlir_shapes},
    {.name = "key_padding_keep",
     .about = "GQA H4 KVH2 D64, key padding mask, true means keep",
     .tags = "[mask]",
     .desc = gqa.key_padding_mask(true_means_keep),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .mlir = mlir_shapes},

    // Every run-time tensor at once.
    {.name = "every_option",
     .about = "GQA H8 KVH2, head dims 64/48, causal bottom-right, mask (B, H, Lq, Lk), key padding, LSE",
     .desc = attention()
                 .heads(8)
                 .kv_heads(2)
                 .head_dim(64)
                 .v_head_dim(48)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_h_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}},
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    // Fat libraries also hold the AVX2 and baseline targets; the dispatcher picks them on CPUs
    // without AVX-512.
    {.name = "every_option_keep",
     .about = "GQA H8 KVH2, head dims 64/48, causal bottom-right, mask (B, 1, Lq, Lk), keep-polarity padding, LSE",
     .desc = attention()
                 .heads(8)
                 .kv_heads(2)
                 .head_dim(64)
                 .v_head_dim(48)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .key_padding_mask(true_means_keep)
                 .return_lse(),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}, .target = avx2_target},
             {.lengths = {1, 17, 113}, .batches = {2}, .target = baseline_target}}},
    {.name = "every_option_head_dims_80_24",
     .about = "GQA H4 KVH2, head dims 80/24, causal bottom-right, mask (B, 1, Lq, Lk), key padding, LSE",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(80)
                 .v_head_dim(24)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .mlir = mlir_shapes},
    {.name = "all_options",
     .about = "GQA H4 KVH2, head dims 64/32, causal bottom-right, mask (B, 1, Lq, Lk), key padding, LSE",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(64)
                 .v_head_dim(32)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .aot = {{3, 17, 113}, {1, 113, 17}, {2, 1, 1}},
     .gpu = {{{3, 17, 45}, device_tensors},
             {{1, 45, 17}, device_tensors},
             {{2, 1, 1}, device_tensors},
             {{2, 33, 70}, host_tensors_copied}}},

    // Element types.
    {.name = "bf16_causal",
     .about = "bf16 GQA H4 KVH2 D64, causal top-left, float32 accumulation",
     .tags = "[dtype]",
     .desc = gqa.causal(top_left).element(dtype::bf16),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}, {.lengths = awkward_lengths, .batches = {1}, .bf16_dot_products = true}},
     .backward = backward_shapes,
     .backward_in_two_passes = true,
     .tensorcore = tensorcore_shapes},
    {.name = "bf16_mask",
     .about = "bf16 GQA H4 KVH2 D64, additive mask (Lq, Lk)",
     .tags = "[dtype]",
     .desc = gqa.element(dtype::bf16).additive_mask(mask_shape::lq_lk),
     .jit = {{.lengths = {1, 7, 113}, .batches = {2}, .bf16_dot_products = true}},
     .mlir = mlir_shapes,
     .tensorcore = tensorcore_shapes},
    {.name = "f16_mask",
     .about = "f16 GQA H4 KVH2 D64, additive mask (Lq, Lk), float32 accumulation",
     .tags = "[dtype]",
     .desc = gqa.additive_mask(mask_shape::lq_lk).element(dtype::f16),
     .jit = {{.lengths = awkward_lengths, .batches = {1}}},
     .tensorcore = tensorcore_shapes},
    {.name = "f16_causal_lse",
     .about = "f16 GQA H4 KVH2 D64, causal top-left, LSE",
     .tags = "[dtype]",
     .desc = gqa.element(dtype::f16).causal(top_left).return_lse(),
     .mlir = mlir_shapes,
     .backward = backward_shapes,
     .backward_in_two_passes = true,
     .tensorcore = tensorcore_shapes},
    {.name = "bf16_mqa",
     .about = "bf16 MQA H8 KVH1 D64, LSE",
     .tags = "[dtype]",
     .desc = attention().heads(8).kv_heads(1).head_dim(64).element(dtype::bf16).return_lse(),
     .aot = {{1, 113, 512}, {3, 7, 17}},
     .gpu = {{{1, 40, 64}, device_tensors}, {{3, 7, 17}, host_tensors_copied}},
     .tensorcore = tensorcore_shapes},
    {.name = "f16_gqa",
     .about = "f16 GQA H8 KVH2 D64",
     .tags = "[dtype]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).element(dtype::f16),
     .gpu = {{{2, 37, 70}, device_tensors}},
     .tensorcore = tensorcore_shapes},

    // Score and mask modifiers: the built-ins, custom expressions and captured tensors.
    {.name = "mask_mod_causal_top_left",
     .about = "GQA H4 KVH2 D64, mask_mod causal top-left",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(causal_mask(top_left)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}}},
    {.name = "mask_mod_causal_bottom_right",
     .about = "GQA H4 KVH2 D64, mask_mod causal bottom-right",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(causal_mask(bottom_right)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}}},
    {.name = "sliding_window",
     .about = "GQA H4 KVH2 D64, mask_mod sliding window (left 5, right 2)",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(sliding_window(5, 2)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "sliding_window_causal",
     .about = "GQA H4 KVH2 D64, mask_mod sliding window 64 with causal top-left: windows longer than a block",
     .tags = "[modifiers]",
     .desc = gqa.causal(top_left).mask_mod(sliding_window(64, 0)),
     .jit = {{.lengths = {1, 17, 300, 700}, .batches = {1}}}},
    {.name = "alibi",
     .about = "GQA H6 KVH3 D32, causal top-left, score_mod ALiBi",
     .tags = "[modifiers]",
     .desc = attention().heads(6).kv_heads(3).head_dim(32).causal(top_left).score_mod(alibi(6)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "softcap",
     .about = "GQA H4 KVH2 D64, score_mod softcap 2.5",
     .tags = "[modifiers]",
     .desc = gqa.score_mod(softcap(2.5f)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "softcap_scalar",
     .about = "GQA H4 KVH2 D64, score_mod softcap with a run-time scalar cap",
     .tags = "[modifiers]",
     .desc = gqa.capture(cap).score_mod(softcap(cap)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    {.name = "prefix_lm",
     .about = "GQA H4 KVH2 D64, mask_mod prefix-LM with per-batch prefix lengths",
     .tags = "[modifiers]",
     .desc = gqa.capture(prefix).mask_mod(prefix_lm(prefix)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}}}},
    // The AVX2 kernel of a fat library reads its slice of the visibility table from the baseline
    // target's finer tiles.
    {.name = "document_mask",
     .about = "GQA H4 KVH2 D64, mask_mod document masking of packed sequences (a visibility table)",
     .tags = "[modifiers]",
     .desc = gqa.capture(document).mask_mod(document_mask(document)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 3}},
             {.lengths = awkward_lengths, .batches = {2}, .target = avx2_target, .finer_target = baseline_target}},
     .backward = backward_shapes},
    // Head h sees keys at most 20 x bias_table[h, 0] behind the query (a window of its own), none ahead.
    {.name = "per_head_table_mask",
     .about = "GQA H4 KVH2 D64, mask_mod reading a per-head table (a visibility table per kv head)",
     .tags = "[modifiers]",
     .desc = gqa.capture(bias_table).mask_mod(kv <= q && to_float(q - kv) <= bias_table(h, 0) * 20.0f),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}}},
    {.name = "relative_position_bias",
     .about = "GQA H4 KVH2 D64, score_mod learned relative-position bias table",
     .tags = "[modifiers]",
     .desc = gqa.capture(bias_table).score_mod(relative_position_bias(bias_table, 4)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    // bucket(b, kv), a read at the key alone, is staged once per key block in the variants that stage
    // such reads; it indexes a read at the head, which is not.
    {.name = "table_through_index",
     .about = "GQA H4 KVH2 D64, score_mod reading a table through a per-key index tensor",
     .tags = "[modifiers]",
     .desc = gqa.capture(bias_table).capture(bucket).score_mod(score + bias_table(h, bucket(b, kv))),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    {.name = "modifiers_and_every_input",
     .about = "GQA H4 KVH2 D64, document and causal mask_mod, run-time softcap, with mask (H, Lq, Lk), key "
              "padding and LSE",
     .tags = "[modifiers]",
     .desc = gqa.additive_mask(mask_shape::h_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse()
                 .capture(document)
                 .capture(cap)
                 .mask_mod(document_mask(document) && causal_mask(bottom_right))
                 .score_mod(softcap(cap)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes},
    // Keys in the same 8-wide chunk as the query or a multiple of 3 away; scores bent by a per-head
    // piecewise function.
    {.name = "custom_operations",
     .about = "GQA H4 KVH2 D64, custom modifiers: integer division, abs, select, min and max",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(kv / 8 == q / 8 || abs(q - kv) / 3 * 3 == abs(q - kv))
                 .score_mod(select(h == 0, max(score, -0.5f), min(score * 2.0f, to_float(q - kv) * 0.25f))),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .backward = backward_shapes},
    // (q - 20) / -3 == 2 holds for q in 12..14 rounding down, for q in 14..16 rounding toward zero.
    {.name = "negative_division",
     .about = "GQA H4 KVH2 D64, integer division by a negative number rounds down, as by a positive one",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(kv <= q && ((q - 20) / -3 == 2 || (kv - 5) / -2 >= -1)),
     .jit = {{.lengths = {1, 17, 30}, .batches = {1}}}},
    {.name = "custom_operations_and_negative_division",
     .about = "GQA H4 KVH2 D64, custom modifiers: integer division (by a negative number too), abs, select, min "
              "and max",
     .tags = "[modifiers]",
     .desc = gqa.mask_mod(kv / 8 == q / 8 || abs(q - kv) / 3 * 3 == abs(q - kv) || (q - 20) / -3 == 2)
                 .score_mod(select(h == 0, max(score, -0.5f), min(score * 2.0f, to_float(q - kv) * 0.25f))),
     .mlir = mlir_shapes},
    // The pointwise math of the modifier language, each node at the awkward lengths. Rounding and
    // remainders act on positions scaled by powers of two, whose float values are exact: on a score
    // a float64 reference could round to the other side of a step.
    {.name = "trigonometric_modifiers",
     .about = "GQA H4 KVH2 D64, trigonometric score_mod",
     .tags = "[modifiers][math]",
     .desc = gqa.score_mod(sin(cos(score)) + tan(score * 0.25f) + asin(tanh(score) * 0.875f) - acos(tanh(score) * 0.75f) +
                           atan(score) + atan2(score, to_float(h)) + sinh(score * 0.25f) - cosh(score * 0.25f)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    // Rounding in the mask, on positions: (q - kv) / 2 rounds its halves to even.
    {.name = "power_and_rounding_modifiers",
     .about = "GQA H4 KVH2 D64, exp2, pow, sqrt, % score_mod, rounding mask_mod",
     .tags = "[modifiers][math]",
     .desc = gqa.score_mod(exp2(score) * 0.5f - sqrt(score * score + 0.25f) + pow(abs(score) + 0.5f, 0.75f) +
                           0.01f * pow(to_float((kv - q) % 9) * 0.5f, 3.0f) + 0.25f * (to_float(q - kv) % 2.5f))
                 .mask_mod(round(to_float(q - kv) * 0.5f) != floor(to_float(q) * 0.25f) - ceil(to_float(kv) * 0.75f)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    {.name = "sigmoid_and_erf_modifiers",
     .about = "GQA H4 KVH2 D64, score_mod sigmoid and erf",
     .tags = "[modifiers][math]",
     .desc = gqa.score_mod(2.0f * sigmoid(score * 3.0f) + erf(score * 0.75f) * to_float(h % 2 + 1)),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .backward = backward_shapes},
    // (kv - q) % 4 == 3 holds for kv = q - 1, q - 5, ... with the remainder that rounds down (-1 with
    // C's); shift counts past 31 are clamped.
    {.name = "strided_and_bit_masks",
     .about = "GQA H4 KVH2 D64, dilated and hashed mask_mod of integer % & | ^ ~ << >>",
     .tags = "[modifiers][math]",
     .desc = gqa.mask_mod((kv - q) % 4 == 3 || ((((q >> 2) ^ (kv >> 2)) & 1) == 0 && (~q & 3) != (kv | 4) - 4) ||
                          ((kv << (q % 37)) & 64) != 0),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes},
    // FlexAttention's masking through the score: rows q % 4 == 1 are hidden whole (output 0, LSE -inf),
    // and the mask modifier hides keys 48 to 63, a block the kernels skip.
    {.name = "minus_infinity_score_mod",
     .about = "GQA H4 KVH2 D64, score_mod -inf hiding keys and whole rows, LSE, mask_mod hiding a block",
     .tags = "[modifiers][math]",
     .desc = gqa.return_lse()
                 .score_mod(select(kv <= q && q % 4 != 1, score, -infinity) +
                            select(kv % 3 == 2, -infinity, 0.0f))
                 .mask_mod((kv >> 4) != 3),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .mlir = mlir_shapes,
     .backward = backward_shapes},
    // Training through the real build path: the generated backward beside the forward.
    {.name = "backward_softcap_sinks",
     .about = "GQA H4 KVH2 D32, causal bottom-right, key padding, run-time softcap, sinks, LSE, with backward",
     .tags = "[backward]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .causal(bottom_right)
                 .key_padding_mask(true_means_ignore)
                 .capture(cap)
                 .score_mod(softcap(cap))
                 .attention_sinks()
                 .return_lse()
                 .with_backward(),
     .aot = {{2, 33, 47}, {1, 1, 9}, {1, 40, 17}},
     .gpu = {{{2, 33, 47}, host_tensors_copied}, {{1, 40, 17}, device_tensors}},
     .backward = {{2, 1, 17}, {1, 17, 7}, {1, 70, 150}},
     .backward_in_two_passes = true},
    // FlexAttention's learnable bias: ALiBi with a learned slope per head, whose gradient the backward
    // writes.
    {.name = "learned_alibi_slopes",
     .about = "GQA H4 KVH2 D32, causal top-left, score_mod score + slopes[h] x (kv - q)",
     .tags = "[modifiers][backward]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .causal(top_left)
                 .capture(slopes)
                 .score_mod(score + slopes(h) * to_float(kv - q))
                 .return_lse()
                 .with_backward(),
     .aot = {{2, 33, 47}, {1, 5, 9}},
     .gpu = {{{2, 33, 47}, host_tensors_copied}, {{1, 5, 9}, device_tensors}},
     .backward = backward_shapes,
     .backward_in_two_passes = true},
    // A learned sink logit per head: its gradient is the backward's d_sinks.
    {.name = "sinks_causal",
     .about = "GQA H4 KVH2 D32, attention sinks, causal bottom-right",
     .tags = "[sinks]",
     .desc = attention().heads(4).kv_heads(2).head_dim(32).causal(bottom_right).attention_sinks(),
     .backward = backward_shapes},
    {.name = "bf16_modifiers",
     .about = "bf16 GQA H4 KVH2 D64, score_mod ALiBi, mask_mod sliding window, in the single-query and short-key "
              "variants",
     .tags = "[modifiers][dtype]",
     .desc = gqa.element(dtype::bf16).score_mod(alibi(4)).mask_mod(sliding_window(9, 0)),
     .jit = {{.lengths = {1, 3, 113}, .batches = {2}}, {.lengths = {1, 3, 113}, .batches = {2}, .bf16_dot_products = true}},
     .tensorcore = tensorcore_shapes},
    {.name = "modifiers",
     .about = "GQA H6 KVH2 D40, document mask and causal mask_mod, ALiBi and run-time softcap score_mod",
     .tags = "[modifiers]",
     .desc = attention()
                 .heads(6)
                 .kv_heads(2)
                 .head_dim(40)
                 .capture(document)
                 .capture(cap)
                 .mask_mod(document_mask(document) && causal_mask(top_left))
                 .score_mod(softcap(cap) + alibi(6) - score),
     .aot = {{2, 113, 113}, {1, 600, 600}, {3, 1, 17}},
     .gpu = {{{2, 70, 70}, device_tensors}, {{1, 33, 33}, host_tensors_copied}}},
    // The new pointwise math through the real build path and the GPU code.
    {.name = "math_modifiers",
     .about = "GQA H4 KVH2 D32, LSE, strided and hashed mask_mod, score_mod of sin, erf, exp2, sigmoid, pow, -inf",
     .tags = "[modifiers][math]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .return_lse()
                 .mask_mod((q - kv) % 3 != 2 && ((q >> 3) ^ (kv >> 3) & 1) != 1)
                 .score_mod(select(kv % 5 == 4, -infinity,
                                   sin(score) + erf(score) * exp2(to_float(-h)) + sigmoid(score) * pow(abs(score), 1.5f))),
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .aot = {{2, 113, 113}, {1, 9, 300}, {3, 1, 17}},
     .gpu = {{{2, 40, 70}, device_tensors}, {{1, 17, 33}, host_tensors_copied}},
     .mlir = mlir_shapes},
    // Long keys give tiles blocks the mask hides, shows whole and cuts.
    {.name = "position_modifiers",
     .about = "GQA H4 KVH2 D32, mask_mod prefix-LM or a causal bottom-right window of 40, score_mod relative-position "
              "bias table and constant softcap",
     .tags = "[modifiers]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .capture(prefix)
                 .capture(bias_table_17)
                 .mask_mod(prefix_lm(prefix) || (causal_mask(bottom_right) && sliding_window(40, 0)))
                 .score_mod(softcap(20.0f) + relative_position_bias(bias_table_17, 8) - score),
     .gpu = {{{2, 150, 300}, device_tensors}, {{1, 61, 47}, host_tensors_copied}}},
    // The tensor-core path's lowering of everything a dense description can add: masks, padding,
    // both causalities, modifiers over captured tensors and scalars.
    {.name = "tensorcore_all_options_bf16",
     .about = "bf16 GQA H4 KVH2 D64, causal bottom-right, mask (B, 1, Lq, Lk), key padding, LSE",
     .tags = "[tensorcore]",
     .desc = gqa.element(dtype::bf16)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .tensorcore = {{1, 1, 1}, {2, 7, 17}, {1, 113, 130}, {1, 70, 17}, {3, 1, 1000}}},
    {.name = "tensorcore_mqa_bf16",
     .about = "bf16 MQA H80 KVH1 D32, LSE: a group larger than a block's rows",
     .tags = "[tensorcore]",
     .desc = attention().heads(80).kv_heads(1).head_dim(32).element(dtype::bf16).return_lse(),
     .tensorcore = {{1, 5, 70}, {2, 1, 17}}},
    {.name = "tensorcore_modifiers_f16",
     .about = "f16 GQA H6/2 D48, document and causal mask_mod, ALiBi and softcap score_mod, mask (H, Lq, Lk), keep-padding",
     .tags = "[tensorcore][modifiers]",
     .desc = attention()
                 .heads(6)
                 .kv_heads(2)
                 .head_dim(48)
                 .element(dtype::f16)
                 .additive_mask(mask_shape::h_lq_lk)
                 .key_padding_mask(true_means_keep)
                 .capture(document)
                 .capture(cap)
                 .mask_mod(document_mask(document) && causal_mask(top_left))
                 .score_mod(softcap(cap) + alibi(6) - score),
     .tensorcore = tensorcore_shapes},
    {.name = "tensorcore_math_modifiers_bf16",
     .about = "bf16 GQA H4/2 D32, LSE, mask (B, H, Lq, Lk), hashed mask_mod, score_mod of sin, erf, exp2, sigmoid, pow",
     .tags = "[tensorcore][modifiers][math]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .element(dtype::bf16)
                 .additive_mask(mask_shape::b_h_lq_lk)
                 .return_lse()
                 .mask_mod((q - kv) % 3 != 2 && ((q >> 3) ^ (kv >> 3) & 1) != 1)
                 .score_mod(select(kv % 5 == 4, -infinity,
                                   sin(score) + erf(score) * exp2(to_float(-h)) + sigmoid(score) * pow(abs(score), 1.5f))),
     .tensorcore = tensorcore_shapes},
    {.name = "tensorcore_position_modifiers_bf16",
     .about = "bf16 GQA H4/2 D32, prefix-LM or bottom-right window mask_mod, bias table and softcap, mask (Lq, Lk)",
     .tags = "[tensorcore][modifiers]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(32)
                 .element(dtype::bf16)
                 .additive_mask(mask_shape::lq_lk)
                 .capture(prefix)
                 .capture(bias_table_17)
                 .mask_mod(prefix_lm(prefix) || (causal_mask(bottom_right) && sliding_window(40, 0)))
                 .score_mod(softcap(20.0f) + relative_position_bias(bias_table_17, 8) - score),
     .tensorcore = tensorcore_shapes},
    // A mask modifier alone: tiles it shows whole take the plain path, tiles it hides are skipped.
    {.name = "tensorcore_documents_causal_bf16",
     .about = "bf16 GQA H4/2 D64, LSE, document and causal mask_mod alone: skipped, whole and cut tiles",
     .tags = "[tensorcore][modifiers]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(2)
                 .head_dim(64)
                 .element(dtype::bf16)
                 .return_lse()
                 .capture(document)
                 .mask_mod(document_mask(document) && causal_mask(top_left)),
     .tensorcore = {{1, 1, 1}, {2, 7, 17}, {1, 113, 130}, {2, 520, 520}}},
    {.name = "tensorcore_sinks_bf16",
     .about = "bf16 GQA H4 KVH2 D64, attention sinks, causal bottom-right, key padding, LSE: rows that see no key",
     .tags = "[tensorcore][sinks]",
     .desc = gqa.element(dtype::bf16)
                 .attention_sinks()
                 .causal(bottom_right)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .tensorcore = tensorcore_shapes},
    // f32 descriptions on the tensor cores (f32_on_tensor_cores): their tensors read and written as
    // f32, rounded to the tensor cores' type inside the kernel; checked at that type's tolerance.
    {.name = "tensorcore_f32_as_bf16",
     .about = "f32 on the tensor cores in bf16: GQA H4 KVH2 D64, causal bottom-right, mask (B, 1, Lq, Lk), key padding, LSE",
     .tags = "[tensorcore]",
     .desc = gqa.f32_on_tensor_cores(dtype::bf16)
                 .causal(bottom_right)
                 .additive_mask(mask_shape::b_1_lq_lk)
                 .key_padding_mask(true_means_ignore)
                 .return_lse(),
     .gpu = {{{2, 70, 130}, device_tensors}, {{1, 17, 33}, host_tensors_copied}},
     .tensorcore = tensorcore_shapes},
    {.name = "tensorcore_f32_as_f16",
     .about = "f32 on the tensor cores in f16: MQA H8 KVH1 D128, LSE",
     .tags = "[tensorcore]",
     .desc = attention().heads(8).kv_heads(1).head_dim(128).f32_on_tensor_cores(dtype::f16).return_lse(),
     .tensorcore = tensorcore_shapes},
    // Past head dim 128: each warp's q rows in shared memory, read a chunk at a time, and tiles of 32
    // keys.
    {.name = "tensorcore_d256_bf16",
     .about = "bf16 GQA H4 KVH2 D256, causal bottom-right, key padding, sinks, LSE",
     .tags = "[tensorcore][head_dim]",
     .desc = gqa.head_dim(256)
                 .element(dtype::bf16)
                 .causal(bottom_right)
                 .key_padding_mask(true_means_ignore)
                 .attention_sinks()
                 .return_lse(),
     .tensorcore = tensorcore_shapes},
    {.name = "tensorcore_d144_f32_as_f16",
     .about = "f32 on the tensor cores in f16, MQA H6 KVH1 D144 (q rows not a multiple of 64 columns), causal "
              "sliding-window mask_mod, LSE",
     .tags = "[tensorcore][head_dim][modifiers]",
     .desc = attention()
                 .heads(6)
                 .kv_heads(1)
                 .head_dim(144)
                 .f32_on_tensor_cores(dtype::f16)
                 .return_lse()
                 .mask_mod(causal_mask(top_left) && sliding_window(40, 0)),
     .tensorcore = {{1, 1, 1}, {2, 7, 17}, {1, 113, 130}, {1, 200, 200}}},
    // v_head_dim unlike head_dim: V's tiles and the output their own width.
    {.name = "tensorcore_mla_prefill_bf16",
     .about = "bf16 GQA H4 KVH2, head_dim 192, v_head_dim 128 (DeepSeek's MLA prefill), causal bottom-right, LSE",
     .tags = "[tensorcore][head_dim]",
     .desc = gqa.head_dim(192).v_head_dim(128).element(dtype::bf16).causal(bottom_right).return_lse(),
     .tensorcore = tensorcore_shapes},
    {.name = "tensorcore_v_head_dim_wider_f16",
     .about = "f16 MQA H4 KVH1, head_dim 32, v_head_dim 160, key padding, sinks",
     .tags = "[tensorcore][head_dim][sinks]",
     .desc = attention()
                 .heads(4)
                 .kv_heads(1)
                 .head_dim(32)
                 .v_head_dim(160)
                 .element(dtype::f16)
                 .key_padding_mask(true_means_keep)
                 .attention_sinks(),
     .tensorcore = tensorcore_shapes},
    // KV caches and ragged batches: each sequence its own lengths (0 included), paged caches with
    // shuffled and shared pages, lengths around the page size, every KV element type.
    {.name = "paged_decode",
     .about = "decoding GQA H8 KVH2 D64 against a paged f32 cache, pages of 16, LSE",
     .tags = "[kv_cache]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).paged_kv(16).causal(bottom_right).return_lse(),
     .jit_batches = {{.queries = {1, 1, 1, 1, 1, 1, 1}, .keys = {0, 1, 15, 16, 17, 300, 33}}},
     .aot_batches = {{.queries = {1, 1, 1, 1}, .keys = {16, 17, 1, 700}}},
     .gpu_batches = {{.queries = {1, 1, 1}, .keys = {16, 33, 300}}}},
    {.name = "paged_decode_256_key_splits",
     .about = "decoding GQA H32 KVH8 D128 against a paged f32 cache, pages of 16: splits of 256 keys",
     .tags = "[kv_cache]",
     .desc = llama_gqa.paged_kv(16).causal(bottom_right),
     .jit_batches = {{.queries = {1, 1, 1, 1}, .keys = {255, 256, 257, 600}}}},
    {.name = "ragged_paged_prefill",
     .about = "ragged chunked prefill and speculative decoding, paged pages of 4, causal bottom-right",
     .tags = "[kv_cache][causal]",
     .desc = attention().heads(6).kv_heads(2).head_dim(32).ragged_queries().paged_kv(4).causal(bottom_right).return_lse(),
     .jit_batches = {{.queries = {0, 1, 7, 37, 3, 130, 5}, .keys = {5, 16, 7, 200, 0, 130, 3}},
                     {.queries = {2, 8, 4}, .keys = {40, 9, 4}}},
     .aot_batches = {{.queries = {3, 0, 64, 1}, .keys = {19, 4, 100, 1}}},
     .gpu_batches = {{.queries = {3, 0, 20}, .keys = {19, 4, 45}}}},
    {.name = "ragged_paged_prefill_bf16",
     .about = "bf16 ragged chunked prefill against a bf16 paged cache (pages of 4), causal bottom-right, LSE: the "
              "AVX512-BF16 tier's pairs of keys across pages and lengths",
     .tags = "[kv_cache][causal][dtype]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).element(dtype::bf16).ragged_queries().paged_kv(4)
                 .causal(bottom_right).return_lse(),
     .aot_batches = {{.queries = {3, 0, 1100, 1, 77}, .keys = {19, 4, 1101, 1, 300}}},
     .tensorcore_batches = {{.queries = {3, 0, 70, 1, 77}, .keys = {19, 4, 71, 1, 300}}}},
    {.name = "ragged_lengths_masks",
     .about = "ragged queries, dense keys with lengths, an additive mask over the packed queries, key padding",
     .tags = "[kv_cache][masks]",
     .desc = attention().heads(4).head_dim(64).ragged_queries().kv_lengths().additive_mask(mask_shape::lq_lk)
                 .key_padding_mask(true_means_ignore).return_lse(),
     .jit_batches = {{.queries = {5, 0, 17, 1}, .keys = {9, 3, 17, 0}}}},
    {.name = "ragged_dense_kv_head_mask",
     .about = "ragged queries over dense keys of one length, a per-head mask over the packed queries",
     .tags = "[kv_cache][masks]",
     .desc = attention().heads(4).kv_heads(2).head_dim(32).ragged_queries().additive_mask(mask_shape::h_lq_lk),
     .jit_batches = {{.queries = {3, 20, 1}, .keys = {13, 13, 13}}}},
    {.name = "lengths_batch_mask_sinks",
     .about = "dense queries, keys with lengths, a batch mask broadcast over heads, sinks, causal top-left",
     .tags = "[kv_cache][sinks]",
     .desc = attention().heads(4).kv_heads(1).head_dim(64).kv_lengths().additive_mask(mask_shape::b_1_lq_lk)
                 .attention_sinks().causal(top_left).return_lse(),
     .jit_batches = {{.queries = {9, 9, 9}, .keys = {0, 9, 40}}}},
    {.name = "paged_bf16_kv_page_1",
     .about = "f32 queries, a bf16 cache in pages of one token",
     .tags = "[kv_cache][dtype]",
     .desc = attention().heads(4).kv_heads(2).head_dim(64).paged_kv(1).kv_element(dtype::bf16),
     .jit_batches = {{.queries = {1, 1, 1}, .keys = {1, 2, 77}}}},
    {.name = "paged_f16_kv_page_256",
     .about = "f32 queries, an f16 cache in pages of 256 tokens",
     .tags = "[kv_cache][dtype]",
     .desc = attention().heads(4).head_dim(32).ragged_queries().paged_kv(256).kv_element(dtype::f16),
     .jit_batches = {{.queries = {1, 4, 30}, .keys = {255, 256, 600}}}},
    {.name = "paged_int8_kv_sinks",
     .about = "an int8 cache with per-token scales, pages of 8, sinks and LSE",
     .tags = "[kv_cache][dtype][sinks]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).ragged_queries().paged_kv(8).kv_element(dtype::i8)
                 .attention_sinks().causal(bottom_right).return_lse(),
     .jit_batches = {{.queries = {1, 1, 6, 0}, .keys = {7, 8, 9, 12}}, {.queries = {1, 40}, .keys = {0, 300}}},
     .aot_batches = {{.queries = {1, 2, 1}, .keys = {8, 33, 500}}}},
    {.name = "paged_bf16_queries_int8_kv",
     .about = "bf16 queries and output over an int8 paged cache",
     .tags = "[kv_cache][dtype]",
     .desc = attention().heads(4).kv_heads(4).head_dim(64).element(dtype::bf16).paged_kv(16).kv_element(dtype::i8),
     .jit_batches = {{.queries = {3, 3}, .keys = {17, 64}}}},
    {.name = "paged_modifiers_positions",
     .about = "modifiers reading each sequence's own positions and lengths: a bottom-right window, a "
              "relative-position bias",
     .tags = "[kv_cache][modifiers]",
     .desc = attention().heads(4).kv_heads(2).head_dim(32).ragged_queries().paged_kv(4)
                 .capture(bias_table)
                 .mask_mod(causal_mask(bottom_right) && (kv >= q + (kv_len - q_len) - 12))
                 .score_mod(relative_position_bias(bias_table, 4)),
     .jit_batches = {{.queries = {1, 9, 30, 2}, .keys = {3, 40, 30, 70}}}},
    // The tensor-core path's KV-cache layouts: one launch for a batch, each block reading its
    // sequence's lengths and pages.
    {.name = "tensorcore_paged_decode_f16",
     .about = "f16 decoding and speculative decoding, GQA H8 KVH2 D64, pages of 16, sinks, LSE, causal bottom-right",
     .tags = "[tensorcore][kv_cache][sinks]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).element(dtype::f16).ragged_queries().paged_kv(16)
                 .attention_sinks().causal(bottom_right).return_lse(),
     .gpu_batches = {{.queries = {1, 1, 4, 0, 8}, .keys = {0, 17, 70, 3, 129}}},
     .tensorcore_batches = {{.queries = {1, 1, 1, 1, 1, 1}, .keys = {0, 1, 15, 16, 17, 300}},
                            {.queries = {4, 8, 2}, .keys = {70, 8, 129}}}},
    {.name = "tensorcore_ragged_lengths_masks_bf16",
     .about = "bf16 ragged queries over dense keys with lengths, a mask over the packed queries, key padding, LSE",
     .tags = "[tensorcore][kv_cache][masks]",
     .desc = attention().heads(4).head_dim(32).element(dtype::bf16).ragged_queries().kv_lengths()
                 .additive_mask(mask_shape::lq_lk).key_padding_mask(true_means_ignore).return_lse(),
     .tensorcore_batches = {{.queries = {5, 0, 17, 1, 70}, .keys = {9, 3, 17, 0, 65}}}},
    {.name = "tensorcore_lengths_batch_mask_sinks_f16",
     .about = "f16 dense queries, keys with lengths, a batch mask broadcast over heads, sinks, causal top-left",
     .tags = "[tensorcore][kv_cache][sinks]",
     .desc = attention().heads(4).kv_heads(1).head_dim(64).element(dtype::f16).kv_lengths()
                 .additive_mask(mask_shape::b_1_lq_lk).attention_sinks().causal(top_left).return_lse(),
     .tensorcore_batches = {{.queries = {9, 9, 9}, .keys = {0, 9, 140}}}},
    {.name = "tensorcore_paged_modifiers_bf16",
     .about = "bf16 modifiers reading each sequence's own positions and lengths over a paged cache (pages of 4): "
              "a bottom-right window, a relative-position bias",
     .tags = "[tensorcore][kv_cache][modifiers]",
     .desc = attention().heads(4).kv_heads(2).head_dim(32).element(dtype::bf16).ragged_queries().paged_kv(4)
                 .capture(bias_table)
                 .mask_mod(causal_mask(bottom_right) && (kv >= q + (kv_len - q_len) - 12))
                 .score_mod(relative_position_bias(bias_table, 4)),
     .tensorcore_batches = {{.queries = {1, 9, 30, 2}, .keys = {3, 40, 30, 70}}}},
    {.name = "tensorcore_paged_f32_as_bf16",
     .about = "f32 on the tensor cores in bf16 over a paged f32 cache, pages of 8, dense queries, LSE",
     .tags = "[tensorcore][kv_cache]",
     .desc = attention().heads(4).kv_heads(2).head_dim(64).f32_on_tensor_cores(dtype::bf16).paged_kv(8).return_lse(),
     .tensorcore_batches = {{.queries = {3, 3, 3}, .keys = {1, 8, 100}}}},
    // Caches of another element type than the tensor cores': staged as they are, converted to the
    // tensor cores' type in shared memory (int8 times its scales).
    {.name = "tensorcore_paged_int8_bf16",
     .about = "bf16 decoding and chunked prefill over an int8 paged cache (pages of 16), GQA H8/2 D64, sinks, LSE, "
              "causal bottom-right",
     .tags = "[tensorcore][kv_cache][dtype][sinks]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).element(dtype::bf16).ragged_queries().paged_kv(16)
                 .kv_element(dtype::i8).attention_sinks().causal(bottom_right).return_lse(),
     .tensorcore_batches = {{.queries = {1, 1, 1, 1, 1, 1}, .keys = {0, 1, 15, 16, 17, 300}},
                            {.queries = {4, 70, 2, 0}, .keys = {70, 129, 8, 3}}}},
    {.name = "tensorcore_f16_queries_bf16_cache",
     .about = "f16 ragged queries over a dense bf16 cache with kv lengths, MQA H4/1 D128",
     .tags = "[tensorcore][kv_cache][dtype]",
     .desc = attention().heads(4).kv_heads(1).head_dim(128).element(dtype::f16).ragged_queries().kv_lengths()
                 .kv_element(dtype::bf16),
     .tensorcore_batches = {{.queries = {1, 17, 0, 65}, .keys = {1, 30, 5, 130}}}},
    {.name = "tensorcore_bf16_queries_f32_cache",
     .about = "bf16 queries over an f32 paged cache (pages of 8), GQA H4/2 D64, causal bottom-right",
     .tags = "[tensorcore][kv_cache][dtype]",
     .desc = attention().heads(4).kv_heads(2).head_dim(64).element(dtype::bf16).paged_kv(8).kv_element(dtype::f32)
                 .causal(bottom_right),
     .tensorcore_batches = {{.queries = {3, 3, 3}, .keys = {3, 9, 100}}}},
    {.name = "tensorcore_f32_queries_bf16_cache",
     .about = "f32 on the tensor cores in bf16 over a bf16 paged cache (pages of 16), decoding, LSE",
     .tags = "[tensorcore][kv_cache][dtype]",
     .desc = attention().heads(8).kv_heads(2).head_dim(64).f32_on_tensor_cores(dtype::bf16).ragged_queries()
                 .paged_kv(16).kv_element(dtype::bf16).return_lse(),
     .tensorcore_batches = {{.queries = {1, 1, 3}, .keys = {1, 16, 200}}}},
    {.name = "tensorcore_paged_int8_d256_bf16",
     .about = "bf16 decoding and chunked prefill at D256 over an int8 paged cache (pages of 16), GQA H4/2, sinks, "
              "LSE, causal bottom-right",
     .tags = "[tensorcore][kv_cache][dtype][head_dim][sinks]",
     .desc = attention().heads(4).kv_heads(2).head_dim(256).element(dtype::bf16).ragged_queries().paged_kv(16)
                 .kv_element(dtype::i8).attention_sinks().causal(bottom_right).return_lse(),
     .tensorcore_batches = {{.queries = {1, 1, 1, 1, 1}, .keys = {0, 31, 32, 33, 300}},
                            {.queries = {3, 40, 0}, .keys = {70, 100, 5}}}},
    {.name = "tensorcore_d192_bf16_queries_f32_cache",
     .about = "bf16 queries over an f32 cache with kv lengths at D192, MQA H4/1: the largest staging area",
     .tags = "[tensorcore][kv_cache][dtype][head_dim]",
     .desc = attention().heads(4).kv_heads(1).head_dim(192).element(dtype::bf16).kv_lengths().kv_element(dtype::f32),
     .tensorcore_batches = {{.queries = {5, 5}, .keys = {1, 97}}}},
    {.name = "tensorcore_paged_v_head_dim_int8_bf16",
     .about = "bf16 decoding and chunked prefill over an int8 paged cache (pages of 8), head_dim 128, v_head_dim 64, "
              "GQA H4/2, LSE, causal bottom-right",
     .tags = "[tensorcore][kv_cache][dtype][head_dim]",
     .desc = attention().heads(4).kv_heads(2).head_dim(128).v_head_dim(64).element(dtype::bf16).ragged_queries()
                 .paged_kv(8).kv_element(dtype::i8).causal(bottom_right).return_lse(),
     .tensorcore_batches = {{.queries = {1, 1, 1, 1}, .keys = {0, 7, 65, 300}}, {.queries = {5, 30}, .keys = {40, 30}}}},
    // attngen-bench's KV-cache cases (bench/cache_cases.hpp): Llama-style GQA over caches laid out as a
    // serving engine holds them; 16 sequences of 512 to 8192 keys for decoding.
    {.name = "decode_paged_f32",
     .about = "decoding GQA H32 KVH8 D128 over a paged f32 cache, pages of 16",
     .desc = llama_gqa.causal(bottom_right).paged_kv(16).kv_element(dtype::f32),
     .bench = {{.case_name = "decode_paged",
                .sizes = {16, 1, 8192},
                .rotated_caches = 2,
                .shortest_keys = 512,
                .compared_with = "decode_lengths_f32"}}},
    {.name = "decode_paged_bf16",
     .about = "decoding GQA H32 KVH8 D128 over a paged bf16 cache, pages of 16",
     .desc = llama_gqa.causal(bottom_right).paged_kv(16).kv_element(dtype::bf16),
     .bench = {{.case_name = "decode_paged", .sizes = {16, 1, 8192}, .rotated_caches = 2, .shortest_keys = 512},
               // Speculative decoding: 4 draft tokens a sequence checked in one call (16 rows a kv head).
               {.case_name = "decode_speculative", .sizes = {16, 4, 8192}, .rotated_caches = 2, .shortest_keys = 512}}},
    {.name = "decode_paged_int8",
     .about = "decoding GQA H32 KVH8 D128 over a paged int8 cache with per-token scales, pages of 16",
     .desc = llama_gqa.causal(bottom_right).paged_kv(16).kv_element(dtype::i8),
     .bench = {{.case_name = "decode_paged", .sizes = {16, 1, 8192}, .rotated_caches = 2, .shortest_keys = 512}}},
    {.name = "decode_lengths_f32",
     .about = "decoding GQA H32 KVH8 D128 over a dense f32 cache with per-sequence lengths",
     .desc = llama_gqa.causal(bottom_right).kv_lengths(),
     .bench = {{.case_name = "decode_lengths", .sizes = {16, 1, 8192}, .rotated_caches = 2, .shortest_keys = 512}}},
    // Dense queries: a chunk of one sequence has nothing to pack.
    {.name = "prefill_chunk",
     .about = "a prefill chunk of 512 queries against 4096 cached keys (the chunk's own included), paged",
     .desc = llama_gqa.causal(bottom_right).paged_kv(16),
     .bench = {{"prefill_chunk", {1, 512, 4096}}}},
    {.name = "ragged_prefill",
     .about = "8 prompts of 37 to 2048 tokens packed, each attending causally to its own keys",
     .desc = llama_gqa.causal(bottom_right).ragged_queries().kv_lengths(),
     .bench = {{.case_name = "ragged_prefill",
                .ragged_lengths = {37, 100, 256, 511, 777, 1024, 1500, 2048},
                .compared_with = "gqa_causal"}}},
    {.name = "event_attention",
     .about = "example 03's custom modifier, timestamped events (GQA H8 KVH2 D64)",
     .tags = "[modifiers]",
     .desc = example::event_attention_description,
     .jit = {{.lengths = awkward_lengths, .batches = {1, 2}}},
     .gpu = {{{2, 90, 90}, device_tensors}},
     .mlir = mlir_shapes,
     .backward = backward_shapes,
     .backward_in_two_passes = true},
};

/// The module's JIT calls: single elements, then primes that leave partial tiles and blocks, with more
/// keys than queries.
inline constexpr short_list<shape, 3> module_awkward_sizes = {{1, 1, 1}, {2, 5, 7}, {3, 17, 33}};
/// The module the option-by-option parity configurations vary: E24 H4, PyTorch's defaults.
inline constexpr mha_desc module_base = multihead_attention().embed_dim(24).heads(4);

inline constexpr module_configuration module_table[] = {
    // Option by option against PyTorch through the JIT, then in combination.
    {.name = "mha_defaults", .about = "PyTorch's defaults: bias, sequence-first, E24 H4", .desc = module_base,
     .jit = module_awkward_sizes},
    {.name = "mha_without_bias", .about = "E24 H4 without bias", .desc = module_base.bias(false),
     .jit = module_awkward_sizes},
    {.name = "mha_batch_first", .about = "E24 H4 with batch_first tensors", .desc = module_base.batch_first(true),
     .jit = module_awkward_sizes},
    {.name = "mha_kdim_vdim", .about = "E24 H4 with kdim 10 and vdim 6 unlike embed_dim",
     .desc = module_base.kdim(10).vdim(6), .jit = module_awkward_sizes},
    {.name = "mha_self_attention", .about = "E24 H4 self-attention, given the query as key and value",
     .desc = module_base.self_attention(true), .jit = module_awkward_sizes},
    {.name = "mha_self_attention_gqa",
     .about = "E24 H4/2 self-attention, batch_first, averaged weights",
     .desc = module_base.self_attention(true).kv_heads(2).batch_first(true).need_weights(weights_output::averaged),
     .jit = module_awkward_sizes},
    {.name = "mha_bias_kv", .about = "E24 H4 with add_bias_kv", .desc = module_base.add_bias_kv(true),
     .jit = module_awkward_sizes},
    {.name = "mha_zero_attn", .about = "E24 H4 with add_zero_attn", .desc = module_base.add_zero_attn(true),
     .jit = module_awkward_sizes},
    {.name = "mha_bias_kv_zero_attn", .about = "E24 H4 with add_bias_kv and add_zero_attn",
     .desc = module_base.add_bias_kv(true).add_zero_attn(true), .jit = module_awkward_sizes},
    {.name = "mha_boolean_key_padding", .about = "E24 H4, boolean key_padding_mask (true = ignore)",
     .desc = module_base.key_padding_mask(mask_kind::boolean), .jit = module_awkward_sizes},
    {.name = "mha_float_key_padding", .about = "E24 H4, float key_padding_mask",
     .desc = module_base.key_padding_mask(mask_kind::additive), .jit = module_awkward_sizes},
    {.name = "mha_boolean_mask_l_s", .about = "E24 H4, boolean attn_mask (L, S)",
     .desc = module_base.attn_mask(mask_kind::boolean, attn_mask_shape::l_s), .jit = module_awkward_sizes},
    {.name = "mha_boolean_mask_bh_l_s", .about = "E24 H4, boolean attn_mask (B x H, L, S)",
     .desc = module_base.attn_mask(mask_kind::boolean, attn_mask_shape::bh_l_s), .jit = module_awkward_sizes},
    {.name = "mha_boolean_mask_b_h_l_s", .about = "E24 H4, boolean attn_mask (B, H, L, S)",
     .desc = module_base.attn_mask(mask_kind::boolean, attn_mask_shape::b_h_l_s), .jit = module_awkward_sizes},
    {.name = "mha_float_mask_l_s", .about = "E24 H4, float attn_mask (L, S)",
     .desc = module_base.attn_mask(mask_kind::additive, attn_mask_shape::l_s), .jit = module_awkward_sizes},
    {.name = "mha_float_mask_bh_l_s", .about = "E24 H4, float attn_mask (B x H, L, S)",
     .desc = module_base.attn_mask(mask_kind::additive, attn_mask_shape::bh_l_s), .jit = module_awkward_sizes},
    {.name = "mha_float_mask_b_h_l_s", .about = "E24 H4, float attn_mask (B, H, L, S)",
     .desc = module_base.attn_mask(mask_kind::additive, attn_mask_shape::b_h_l_s), .jit = module_awkward_sizes},
    {.name = "mha_causal_top_left", .about = "E24 H4, causal top-left (PyTorch's triangular mask), L <= S",
     .desc = module_base.causal(top_left), .jit = module_awkward_sizes},
    {.name = "mha_causal_bottom_right", .about = "E24 H4, causal bottom-right, L <= S",
     .desc = module_base.causal(bottom_right), .jit = module_awkward_sizes},
    {.name = "mha_weights_per_head", .about = "E24 H4, attention weights per head",
     .desc = module_base.need_weights(weights_output::per_head), .jit = module_awkward_sizes},
    {.name = "mha_weights_averaged", .about = "E24 H4, attention weights averaged over heads",
     .desc = module_base.need_weights(weights_output::averaged), .jit = module_awkward_sizes},
    {.name = "mha_gqa", .about = "E24 H4/2, each kv head's projection repeated in PyTorch",
     .desc = module_base.kv_heads(2), .jit = module_awkward_sizes},
    {.name = "mha_mqa", .about = "E24 H4/1, the kv head's projection repeated in PyTorch",
     .desc = module_base.kv_heads(1), .jit = module_awkward_sizes},
    {.name = "mha_dropout_inference", .about = "E24 H4, dropout p 0.5 in an inference call (PyTorch in eval mode)",
     .desc = module_base.dropout(0.5f).need_weights(weights_output::per_head), .jit = module_awkward_sizes},
    {.name = "mha_every_option",
     .about = "E32 H8/2 kdim12 vdim20, bias_kv, zero key, batch_first, causal top-left, boolean key padding, "
              "(B, H, L, S) float mask, averaged weights",
     .desc = multihead_attention()
                 .embed_dim(32)
                 .heads(8)
                 .kv_heads(2)
                 .kdim(12)
                 .vdim(20)
                 .add_bias_kv(true)
                 .add_zero_attn(true)
                 .batch_first(true)
                 .causal(top_left)
                 .key_padding_mask(mask_kind::boolean)
                 .attn_mask(mask_kind::additive, attn_mask_shape::b_h_l_s)
                 .need_weights(weights_output::averaged),
     .jit = module_awkward_sizes,
     .jit_every_variant = true},
    {.name = "mha_sequence_first_mix",
     .about = "E24 H4/1 sequence-first, no bias, zero key, causal bottom-right, float key padding, boolean (L, S) "
              "mask, dropout 0.3 in inference, per-head weights",
     .desc = module_base.kv_heads(1)
                 .bias(false)
                 .add_zero_attn(true)
                 .causal(bottom_right)
                 .key_padding_mask(mask_kind::additive)
                 .attn_mask(mask_kind::boolean, attn_mask_shape::l_s)
                 .dropout(0.3f)
                 .need_weights(weights_output::per_head),
     .jit = module_awkward_sizes},
    {.name = "mha_bf16", .about = "bf16 E24 H4, causal bottom-right, per-head weights",
     .desc = module_base.element(dtype::bf16).causal(bottom_right).need_weights(weights_output::per_head),
     .jit = module_awkward_sizes},
    {.name = "mha_f16", .about = "f16 E24 H4, causal bottom-right, per-head weights",
     .desc = module_base.element(dtype::f16).causal(bottom_right).need_weights(weights_output::per_head),
     .jit = module_awkward_sizes},
    // Through the real path (AOT) and on GPUs.
    {.name = "module_all_options",
     .about = "every option that changes the module's arguments or shapes: E32 H8 KVH2 kdim12 vdim20, bias_kv, "
              "zero key, batch_first, dropout, causal top-left, boolean key padding, (B x H, L, S) float mask, "
              "per-head weights",
     .desc = multihead_attention()
                 .embed_dim(32)
                 .heads(8)
                 .kv_heads(2)
                 .kdim(12)
                 .vdim(20)
                 .add_bias_kv(true)
                 .add_zero_attn(true)
                 .batch_first(true)
                 .dropout(0.25f)
                 .causal(top_left)
                 .key_padding_mask(mask_kind::boolean)
                 .attn_mask(mask_kind::additive, attn_mask_shape::bh_l_s)
                 .need_weights(weights_output::per_head),
     .aot = {{2, 5, 7}, {1, 1, 1}, {3, 37, 70}},
     .gpu = {{{2, 5, 7}, device_tensors}, {{1, 1, 1}, device_tensors}, {{3, 37, 70}, device_tensors}}},
    {.name = "module_encoder",
     .about = "PyTorch's defaults (bias, sequence-first, key and value given apart), E64 H4, averaged weights",
     .desc = multihead_attention().embed_dim(64).heads(4).need_weights(weights_output::averaged),
     .aot = {{2, 1, 40}, {2, 64, 64}, {1, 9, 20}},
     .gpu = {{{2, 1, 40}, device_tensors}, {{2, 45, 45}, device_tensors}, {{1, 9, 9}, host_tensors_copied}}},
    {.name = "module_self_attention",
     .about = "self-attention E32 H4, batch_first, zero key, averaged weights: generated without single_query, its "
              "shortest calls run short_keys",
     .desc = multihead_attention()
                 .embed_dim(32)
                 .heads(4)
                 .self_attention(true)
                 .batch_first(true)
                 .add_zero_attn(true)
                 .need_weights(weights_output::averaged),
     .aot = {{2, 1, 1}, {1, 3, 3}, {2, 20, 20}}},
    // The projections read the element type, a second linear layer writes it, and the runtime widens
    // bias_k and bias_v into the appended keys.
    {.name = "module_f16",
     .about = "f16 E16 H2, bias_kv and a zero key, sequence-first",
     .desc = multihead_attention().embed_dim(16).heads(2).add_bias_kv(true).add_zero_attn(true).element(dtype::f16),
     .aot = {{2, 5, 9}, {3, 1, 1}}},
    {.name = "module_bf16",
     .about = "bf16 E16 H2, bias_kv and a zero key, sequence-first",
     .desc = multihead_attention().embed_dim(16).heads(2).add_bias_kv(true).add_zero_attn(true).element(dtype::bf16),
     .aot = {{2, 5, 9}, {3, 1, 1}}},
    {.name = "module_bf16_gqa",
     .about = "bf16 cross-attention E48 H6 KVH3 kdim20, batch_first, causal bottom-right, boolean (L, S) mask, "
              "per-head weights",
     .desc = multihead_attention()
                 .embed_dim(48)
                 .heads(6)
                 .kv_heads(3)
                 .kdim(20)
                 .batch_first(true)
                 .element(dtype::bf16)
                 .causal(bottom_right)
                 .attn_mask(mask_kind::boolean, attn_mask_shape::l_s)
                 .need_weights(weights_output::per_head),
     .gpu = {{{2, 17, 29}, device_tensors}, {{1, 1, 30}, device_tensors}}},

    // The benchmark's modules (bench/module_cases.hpp), their shapes as PyTorch's fast path takes them.
    {.name = "module_self",
     .about = "self-attention E512 H8, batch_first, boolean key padding",
     .desc = multihead_attention()
                 .embed_dim(512)
                 .heads(8)
                 .self_attention(true)
                 .batch_first(true)
                 .key_padding_mask(mask_kind::boolean),
     .bench = {{"module_self", {4, 128, 128}}}},
    {.name = "module_self_weights",
     .about = "self-attention E512 H8, batch_first, boolean key padding, averaged weights",
     .desc = multihead_attention()
                 .embed_dim(512)
                 .heads(8)
                 .self_attention(true)
                 .batch_first(true)
                 .key_padding_mask(mask_kind::boolean)
                 .need_weights(weights_output::averaged),
     .bench = {{"module_self_weights", {4, 128, 128}}}},
    {.name = "module_cross_gqa",
     .about = "cross-attention E1024 H16 KVH4, batch_first",
     .desc = multihead_attention().embed_dim(1024).heads(16).kv_heads(4).batch_first(true),
     .bench = {{"module_cross_gqa", {2, 128, 1024}}}},

    // Training: the backward's gradients of the inputs and of every weight against PyTorch's autograd.
    {.name = "module_backward_defaults",
     .about = "E24 H4 with PyTorch's defaults (bias, sequence-first), with backward",
     .desc = module_base.with_backward(),
     .aot = {{2, 17, 29}, {1, 1, 1}},
     .backward = {{1, 1, 1}, {2, 5, 7}, {2, 70, 90}}},
    {.name = "module_backward_options",
     .about = "E24 H4 KVH2 kdim10 vdim6, add_bias_kv, add_zero_attn, batch_first, causal bottom-right, boolean key "
              "padding, additive (B, H, L, S) mask, with backward",
     .desc = module_base.kv_heads(2)
                 .kdim(10)
                 .vdim(6)
                 .add_bias_kv(true)
                 .add_zero_attn(true)
                 .batch_first(true)
                 .causal(bottom_right)
                 .key_padding_mask(mask_kind::boolean)
                 .attn_mask(mask_kind::additive, attn_mask_shape::b_h_l_s)
                 .with_backward(),
     .gpu = {{{2, 5, 7}, host_tensors_copied}, {{1, 17, 33}, device_tensors}},
     .backward = {{2, 5, 7}, {1, 17, 33}}},
    {.name = "module_backward_self_attention",
     .about = "E32 H4 KVH1 self-attention without bias, causal top-left, float key padding, with backward",
     .desc = multihead_attention()
                 .embed_dim(32)
                 .heads(4)
                 .kv_heads(1)
                 .self_attention(true)
                 .bias(false)
                 .causal(top_left)
                 .key_padding_mask(mask_kind::additive)
                 .with_backward(),
     .backward = {{2, 9, 9}, {1, 40, 40}}},
    {.name = "module_backward_dropout",
     .about = "E24 H4 dropout 0.3 in training, boolean (B x H, L, S) mask, with backward",
     .desc = module_base.dropout(0.3f).attn_mask(mask_kind::boolean, attn_mask_shape::bh_l_s).with_backward(),
     .aot = {{2, 5, 7}},
     .gpu = {{{1, 33, 20}, device_tensors}, {{1, 33, 20}, host_tensors_copied}},
     .backward = {{2, 5, 7}, {1, 33, 20}}},
    {.name = "module_backward_bf16",
     .about = "bf16 E48 H6 KVH3, batch_first, with backward",
     .desc = multihead_attention().embed_dim(48).heads(6).kv_heads(3).batch_first(true).element(dtype::bf16).with_backward(),
     .gpu = {{{2, 5, 7}, host_tensors_copied}},
     .backward = {{2, 5, 7}, {1, 17, 33}}},
};

template <typename Configuration, std::size_t N>
constexpr bool names_are_distinct(const Configuration (&table)[N]) {
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t m = 0; m < n; ++m)
      if (table[m].name == table[n].name) return false;
  return true;
}
constexpr bool some_backend_runs(const operator_configuration& c) {
  return !c.jit.empty() || !c.aot.empty() || !c.gpu.empty() || !c.mlir.empty() || !c.backward.empty() ||
         !c.bench.empty() || !c.jit_batches.empty() || !c.aot_batches.empty() || !c.gpu_batches.empty() ||
         !c.tensorcore.empty() || !c.tensorcore_batches.empty();
}
// Descriptions whose sequences differ in length are checked on batches of sequences; the others on
// (batch, Lq, Lk) matrices.
constexpr bool sizes_fit_layouts(const operator_configuration& c) {
  if (c.desc.has_sequence_lengths())
    return c.jit.empty() && c.aot.empty() && c.gpu.empty() && c.mlir.empty() && c.backward.empty() &&
           c.tensorcore.empty();
  return c.jit_batches.empty() && c.aot_batches.empty() && c.gpu_batches.empty() && c.tensorcore_batches.empty();
}
constexpr bool some_backend_runs(const module_configuration& c) {
  return !c.jit.empty() || !c.aot.empty() || !c.gpu.empty() || !c.backward.empty() || !c.bench.empty();
}
template <typename Configuration, std::size_t N>
constexpr bool every_one_runs(const Configuration (&table)[N]) {
  for (const Configuration& c : table)
    if (!some_backend_runs(c)) return false;
  return true;
}
static_assert(names_are_distinct(operator_table) && names_are_distinct(module_table),
              "attngen tests: two configurations have the same name");
static_assert(every_one_runs(operator_table) && every_one_runs(module_table),
              "attngen tests: a configuration that no backend runs");
static_assert([] {
  for (const operator_configuration& c : operator_table)
    if (!sizes_fit_layouts(c)) return false;
  return true;
}(), "attngen tests: sequences of their own lengths are checked on batches (jit_batches, aot_batches, gpu_batches, "
     "tensorcore_batches), others on jit, aot, gpu, mlir, backward and tensorcore sizes");
// The JIT builds kernels from descriptions without the generator's validation: each must be valid.
static_assert([] {
  for (const operator_configuration& c : operator_table)
    if (!first_problem(c.desc).empty()) return false;
  for (const module_configuration& c : module_table)
    if (!first_problem(c.desc).empty()) return false;
  return true;
}(), "attngen tests: a configuration's description breaks a description rule");

}  // namespace detail

inline constexpr const auto& operator_configurations = detail::operator_table;
inline constexpr const auto& module_configurations = detail::module_table;

/// The configuration called `name`, or null.
constexpr const operator_configuration* operator_configuration_named(std::string_view name) {
  for (const operator_configuration& c : operator_configurations)
    if (c.name == name) return &c;
  return nullptr;
}
constexpr const module_configuration* module_configuration_named(std::string_view name) {
  for (const module_configuration& c : module_configurations)
    if (c.name == name) return &c;
  return nullptr;
}

/// A configuration's name as a template argument: description_of<"gqa_causal">().
template <std::size_t N>
struct configuration_name {
  char text[N];
  constexpr configuration_name(const char (&name)[N]) {
    for (std::size_t n = 0; n < N; ++n) text[n] = name[n];
  }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

/// The description of the configuration called `Name`, operator or module; an unknown name does not
/// compile. attngen_add_kernel's VARIABLE for the kernels generated from the registry.
template <configuration_name Name>
constexpr auto description_of() {
  constexpr const operator_configuration* as_operator = operator_configuration_named(Name.view());
  constexpr const module_configuration* as_module = module_configuration_named(Name.view());
  static_assert(as_operator != nullptr || as_module != nullptr, "attngen tests: no configuration has this name");
  if constexpr (as_operator != nullptr) return as_operator->desc;
  else return as_module->desc;
}

}  // namespace attngen::testing
