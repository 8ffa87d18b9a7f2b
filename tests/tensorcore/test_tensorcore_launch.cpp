// Which calls the runtime sends to a kernel's tensor-core forward pass (detail::tensorcore_launch_of):
// those on CUDA device tensors laid out as the tile code reads them; every other call runs the Halide
// CUDA code.
#include <catch2/catch.hpp>

#include "support/configurations.hpp"
#include "tc_bf16_mqa_tensorcore.hpp"
#include "tc_tensorcore_f32_as_bf16_tensorcore.hpp"
#include "tc_tensorcore_paged_decode_f16_tensorcore.hpp"
#include "tc_tensorcore_paged_int8_bf16_tensorcore.hpp"
#include "tc_tensorcore_sinks_bf16_tensorcore.hpp"
#include "tensorcore/tensorcore_runtime_run.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

constexpr attention_desc mqa = description_of<"bf16_mqa">();
using mqa_variant = tc_bf16_mqa_tensorcore_variant;

std::optional<attngen::detail::tensorcore_launch> launch_of(attention_args args) {
  return attngen::detail::tensorcore_launch_of(mqa, args, tensorcore_record<mqa_variant>());
}

// A small call's arguments, its tensors marked as CUDA device tensors.
const attention_problem small_problem = make_random_problem(mqa, 1, 5, 9, 1);
attention_args device_args(aot_call& call) {
  attention_args args = call.args();
  mark_as_cuda(args);
  return args;
}

// The parameters' sizes of one sequence decoding one token against `keys` keys.
tensorcore::forward_params one_token_decoding(int heads, int kv_heads, int keys) {
  tensorcore::forward_params p{};
  p.batch = 1;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.query_length = 1;
  p.key_length = keys;
  return p;
}

}  // namespace

TEST_CASE("tensor-core launch: a call on dense CUDA device tensors is launched on the kernel's grid", "[tensorcore]") {
  const attention_problem p = make_random_problem(mqa, 3, 70, 17, 1);
  aot_call call(p);
  const auto launch = launch_of(device_args(call));
  REQUIRE(launch.has_value());
  // MQA 8/1: a block's 64 rows are 8 queries of the group's 8 heads.
  CHECK(launch->grid.x == 9);
  CHECK(launch->grid.y == 1);
  CHECK(launch->grid.z == 3);
  CHECK(launch->params.k_strides.position == 64);
  CHECK(launch->params.lse_head_stride == 70);
}

TEST_CASE("tensor-core launch: host tensors, even run on a GPU, take the Halide code", "[tensorcore]") {
  aot_call call(small_problem);
  attention_args args = call.args();
  args.gpu.run_host_tensors_on = device_kind::cuda;
  CHECK_FALSE(launch_of(args).has_value());
}

TEST_CASE("tensor-core launch: K rows not 16-byte aligned take the Halide code", "[tensorcore]") {
  aot_call call(small_problem);
  attention_args args = device_args(call);
  args.k.data = static_cast<char*>(args.k.data) + 4;
  CHECK_FALSE(launch_of(args).has_value());
}

TEST_CASE("tensor-core launch: an lse strided along Lq takes the Halide code", "[tensorcore]") {
  aot_call call(small_problem);
  attention_args args = device_args(call);
  args.lse.strides[2] = 2;
  args.lse.shape[2] = 2;
  CHECK_FALSE(launch_of(args).has_value());
}

TEST_CASE("tensor-core launch: a kernel without tensor-core code takes the Halide code", "[tensorcore]") {
  aot_call call(small_problem);
  attention_args args = device_args(call);
  CHECK_FALSE(attngen::detail::tensorcore_launch_of(mqa, args, attngen::detail::tensorcore_kernel{}).has_value());
}

TEST_CASE("tensor-core launch: f32 q rows (f32 on the tensor cores) not 8-byte aligned take the Halide code",
          "[tensorcore]") {
  constexpr attention_desc f32_as_bf16 = description_of<"tensorcore_f32_as_bf16">();
  const auto record = tensorcore_record<tc_tensorcore_f32_as_bf16_tensorcore_variant>();
  const attention_problem p = make_random_problem(f32_as_bf16, 1, 5, 9, 1);
  aot_call call(p);
  attention_args args = device_args(call);
  REQUIRE(attngen::detail::tensorcore_launch_of(f32_as_bf16, args, record).has_value());
  args.q.data = static_cast<float*>(args.q.data) + 1;
  CHECK_FALSE(attngen::detail::tensorcore_launch_of(f32_as_bf16, args, record).has_value());
}

TEST_CASE("tensor-core launch: strided sinks take the Halide code, contiguous ones reach the variant", "[tensorcore]") {
  constexpr attention_desc with_sinks = description_of<"tensorcore_sinks_bf16">();
  const auto record = tensorcore_record<tc_tensorcore_sinks_bf16_tensorcore_variant>();
  const attention_problem p = make_random_problem(with_sinks, 1, 5, 9, 1);
  aot_call call(p);
  attention_args args = device_args(call);
  const auto launch = attngen::detail::tensorcore_launch_of(with_sinks, args, record);
  REQUIRE(launch.has_value());
  CHECK(launch->variant.in.sinks == args.sinks.data);
  args.sinks.strides[0] = 2;
  args.sinks.shape[0] = 2;
  CHECK_FALSE(attngen::detail::tensorcore_launch_of(with_sinks, args, record).has_value());
}

TEST_CASE("tensor-core launch: a paged ragged batch is one launch over its longest sequence's queries, its index "
          "tensors where the call holds them",
          "[tensorcore][kv_cache]") {
  constexpr attention_desc paged = description_of<"tensorcore_paged_decode_f16">();
  sequence_batch batch = make_sequence_batch(paged, {1, 8, 0, 3}, {17, 70, 5, 300}, 3);
  attention_args args = batch.args();
  mark_as_cuda(args);
  const auto launch =
      attngen::detail::tensorcore_launch_of(paged, args, tensorcore_record<tc_tensorcore_paged_decode_f16_tensorcore_variant>());
  REQUIRE(launch.has_value());
  const tensorcore::forward_params& p = launch->params;
  CHECK(p.batch == 4);
  CHECK(p.query_length == 8);
  CHECK(p.key_length == batch.max_pages * 16);
  CHECK(p.q_strides.batch == 0);
  CHECK(p.lse_batch_stride == 0);
  CHECK(p.lse_head_stride == batch.total_queries());
  CHECK(p.layout.query_offsets == batch.q_offsets.data());
  CHECK(p.layout.kv_lengths == batch.kv_lengths.data());
  CHECK(p.layout.page_table == batch.page_table.data());
  CHECK(p.layout.page_table_stride == batch.max_pages);
  CHECK(p.layout.page_size_log2 == 4);
  // GQA 8/2: a block's 64 rows are 16 queries of the group's 4 heads.
  CHECK(launch->grid.x == 1);
  CHECK(launch->grid.z == 4);
}

TEST_CASE("tensor-core launch: a page table whose pages are not contiguous along a row takes the Halide code",
          "[tensorcore][kv_cache]") {
  constexpr attention_desc paged = description_of<"tensorcore_paged_decode_f16">();
  sequence_batch batch = make_sequence_batch(paged, {1, 1}, {17, 40}, 3);
  attention_args args = batch.args();
  mark_as_cuda(args);
  REQUIRE(args.page_table.shape[1] > 1);
  args.page_table.strides[1] = 2;
  CHECK_FALSE(attngen::detail::tensorcore_launch_of(paged, args,
                                                    tensorcore_record<tc_tensorcore_paged_decode_f16_tensorcore_variant>())
                  .has_value());
}

TEST_CASE("tensor-core launch: an int8 paged cache reaches the kernel with its scales, rows aligned in bytes",
          "[tensorcore][kv_cache][dtype]") {
  constexpr attention_desc int8_cache = description_of<"tensorcore_paged_int8_bf16">();
  sequence_batch batch = make_sequence_batch(int8_cache, {1, 4}, {17, 70}, 3);
  attention_args args = batch.args();
  mark_as_cuda(args);
  const auto record = tensorcore_record<tc_tensorcore_paged_int8_bf16_tensorcore_variant>();
  const auto launch = attngen::detail::tensorcore_launch_of(int8_cache, args, record);
  REQUIRE(launch.has_value());
  const tensorcore::forward_params& p = launch->params;
  // K rows are 64 int8 elements of 2 kv heads; a page holds 16 tokens.
  CHECK(p.k_strides.head == 64);
  CHECK(p.k_strides.position == 128);
  CHECK(p.k_strides.batch == 16 * 128);
  CHECK(p.k_scale == args.k_scale.data);
  CHECK(p.v_scale == args.v_scale.data);
  CHECK(p.k_scale_strides.batch == 16 * 2);
  CHECK(p.k_scale_strides.position == 2);
  CHECK(p.k_scale_strides.head == 1);
  // int8 rows 16-byte aligned but a K pool offset by 8 bytes: the Halide code.
  args.k.data = static_cast<std::int8_t*>(args.k.data) + 8;
  CHECK_FALSE(attngen::detail::tensorcore_launch_of(int8_cache, args, record).has_value());
}

TEST_CASE("tensor-core launch: decoding splits its keys so that every multiprocessor has a block", "[tensorcore]") {
  // B1 GQA 32/8 D128 decoding one token against 4096 keys: 8 blocks of 4 rows on an H100's 132.
  tensorcore::forward_params decode = one_token_decoding(32, 8, 4096);
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 132) == 17);
  decode.key_splits = tensorcore::key_splits_for(decode, 64, 64, 132);
  CHECK(tensorcore::forward_grid(decode, 64).x == 17);
  CHECK(tensorcore::tiles_of_split(64, 17, 16).begin == 64);
  CHECK(tensorcore::tiles_of_split(64, 17, 15).end == 64);
  // Each split at least two tiles of keys, at most 32 splits.
  decode.key_length = 300;
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 132) == 2);
  decode.key_length = 100;
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 132) == 1);
  decode.key_length = 1 << 20;
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 132) == 17);
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 1000) == 32);
  // A batch of 16 sequences fills 128 multiprocessors without splitting.
  decode.batch = 16;
  decode.key_length = 4096;
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 128) == 1);
}

TEST_CASE("tensor-core launch: past head dim 128 tiles hold 32 keys and q lives in shared memory", "[tensorcore]") {
  CHECK(tensorcore::keys_per_tile(128, 128) == 64);
  CHECK(tensorcore::keys_per_tile(144, 144) == 32);
  CHECK(tensorcore::keys_per_tile(64, 256) == 32);
  CHECK(tensorcore::keys_per_tile(192, 128) == 32);
  CHECK(!tensorcore::q_in_shared_memory(128));
  CHECK(tensorcore::q_in_shared_memory(144));
  // Two stages of K and V tiles of 32 keys and the q rows of 4 warps: 99 KiB at D 256, 130 KiB for
  // an f32 cache converted as it is staged; both within sm_80's 163 KiB a block.
  CHECK(tensorcore::forward_shared_bytes(256, 256, 4, 0) == 2 * (2 * 32 * 264 * 2) + 4 * 16 * 264 * 2);
  CHECK(tensorcore::forward_shared_bytes(256, 256, 4, 4) == 2 * 32 * 264 * 2 + 2 * 32 * 256 * 4 + 4 * 16 * 264 * 2);
  CHECK(tensorcore::forward_shared_bytes(256, 256, 4, 4) <= 163 * 1024);
  CHECK(tensorcore::forward_shared_bytes(128, 128, 4, 0) == 2 * (2 * 64 * 136 * 2));
  // K rows of D 192 and V rows of Dv 128 in each stage, then q's rows (DeepSeek's MLA prefill).
  CHECK(tensorcore::forward_shared_bytes(192, 128, 4, 0) == 2 * (32 * 200 + 32 * 136) * 2 + 4 * 16 * 200 * 2);
  // The q rows of the last warp end the shared memory.
  using d256 = tensorcore::forward_tiles<256, 256, 4, 0>;
  CHECK(d256::q_rows_of_warp(3) + 16 * 264 == int(d256::shared_bytes / 2));
  CHECK(d256::q_rows_of_warp(0) == 2 * 2 * 32 * 264);
  using mla = tensorcore::forward_tiles<192, 128, 4, 0>;
  CHECK(mla::stage_elements == 32 * 200 + 32 * 136);
  CHECK(mla::q_rows_of_warp(0) == 2 * mla::stage_elements);
  // Decoding at D 256: 4096 keys are 128 tiles, so at most 32 splits of at least 2.
  tensorcore::forward_params decode = one_token_decoding(16, 8, 4096);
  CHECK(tensorcore::key_splits_for(decode, 64, 32, 132) == 17);
  decode.key_length = 100;
  CHECK(tensorcore::key_splits_for(decode, 64, 32, 132) == 2);
  CHECK(tensorcore::key_splits_for(decode, 64, 64, 132) == 1);
}
