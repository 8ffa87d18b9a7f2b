// DLPack tensors as attngen views (attngen/runtime/dlpack.hpp): layout, element types and devices
// carried over, what a view cannot hold refused with a message naming the tensor, and a kernel run
// through such views gives bitwise the output of the same call through make_tensor views.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "aot_gqa_causal.hpp"
#include "attngen/runtime/dlpack.hpp"

using namespace attngen;
using Catch::Matchers::Equals;

namespace {

// A DLTensor over `data`, as a framework exports it: host, one lane, no offset.
DLTensor dl_tensor(void* data, DLDataTypeCode code, int bits, int ndim, std::int64_t* shape,
                   std::int64_t* strides = nullptr) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = {static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

// A view that a refused conversion must leave as it is.
tensor_view sentinel_view() {
  static float data[6];
  return on_device(make_tensor(static_cast<void*>(data), dtype::i32, {1, 2, 3}), device_kind::opencl);
}

void check_unchanged(const tensor_view& view) {
  const tensor_view before = sentinel_view();
  CHECK(view.data == before.data);
  CHECK(view.type == before.type);
  CHECK(view.rank == before.rank);
  for (int d = 0; d < tensor_view::max_rank; ++d) {
    CHECK(view.shape[d] == before.shape[d]);
    CHECK(view.strides[d] == before.strides[d]);
  }
  CHECK(view.device == before.device);
  CHECK(view.read_only == before.read_only);
}

}  // namespace

TEST_CASE("DLPack: a contiguous f32 4-D tensor without strides is a dense row-major host view", "[runtime][dlpack]") {
  std::vector<float> data(2 * 3 * 4 * 5);
  std::int64_t shape[] = {2, 3, 4, 5};
  const DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 4, shape);

  tensor_view view;
  const status s = from_dlpack(t, view, "q");
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(view.data == data.data());
  CHECK(view.type == dtype::f32);
  REQUIRE(view.rank == 4);
  const std::int64_t dense[] = {60, 20, 5, 1};
  for (int d = 0; d < 4; ++d) {
    CHECK(view.shape[d] == shape[d]);
    CHECK(view.strides[d] == dense[d]);
  }
  CHECK(view.device == device_kind::host);
  CHECK_FALSE(view.read_only);

  const_tensor_view input;
  REQUIRE(from_dlpack(t, input, "q").ok());
  CHECK(input.data == data.data());
  CHECK(input.rank == 4);
  CHECK(input.strides[0] == 60);
  CHECK(input.read_only);
}

TEST_CASE("DLPack: a transposed view keeps its strides in elements", "[runtime][dlpack]") {
  // Stored (B, H, L, D) = (2, 3, 4, 5), seen (B, L, H, D) as q.transpose(1, 2) exports it.
  std::vector<float> data(2 * 3 * 4 * 5);
  std::int64_t shape[] = {2, 4, 3, 5}, strides[] = {60, 5, 20, 1};
  const DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 4, shape, strides);

  const_tensor_view view;
  REQUIRE(from_dlpack(t, view, "q").ok());
  const const_tensor_view expected = make_bhld_tensor(static_cast<const void*>(data.data()), dtype::f32, {2, 3, 4, 5});
  CHECK(view.data == data.data());
  REQUIRE(view.rank == 4);
  for (int d = 0; d < 4; ++d) {
    CHECK(view.shape[d] == expected.shape[d]);
    CHECK(view.strides[d] == expected.strides[d]);
  }
}

TEST_CASE("DLPack: byte_offset moves the data pointer by that many bytes", "[runtime][dlpack]") {
  std::vector<float> data(16 + 2 * 8);
  std::int64_t shape[] = {2, 8};
  DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 2, shape);
  t.byte_offset = 16 * sizeof(float);

  tensor_view view;
  REQUIRE(from_dlpack(t, view, "k").ok());
  CHECK(view.data == data.data() + 16);
  CHECK(view.shape[0] == 2);
  CHECK(view.strides[0] == 8);
}

TEST_CASE("DLPack: a bf16 tensor is a bf16 view", "[runtime][dlpack]") {
  std::vector<std::uint16_t> data(4 * 8);
  std::int64_t shape[] = {4, 8};
  const DLTensor t = dl_tensor(data.data(), kDLBfloat, 16, 2, shape);

  tensor_view view;
  REQUIRE(from_dlpack(t, view, "v").ok());
  CHECK(view.type == dtype::bf16);
  CHECK(view.data == data.data());
  CHECK(view.strides[0] == 8);
}

TEST_CASE("DLPack: f16, u8, bool and i32 tensors are f16, u8, u8 and i32 views", "[runtime][dlpack]") {
  std::vector<std::uint32_t> data(8);
  std::int64_t shape[] = {8};
  const auto type_of = [&](std::uint8_t code, int bits) {
    DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 1, shape);
    t.dtype.code = code;
    t.dtype.bits = static_cast<std::uint8_t>(bits);
    tensor_view view;
    const status s = from_dlpack(t, view);
    INFO(s.message());
    REQUIRE(s.ok());
    return view.type;
  };
  CHECK(type_of(kDLFloat, 16) == dtype::f16);
  CHECK(type_of(kDLUInt, 8) == dtype::u8);
  CHECK(type_of(6, 8) == dtype::u8);  // kDLBool (DLPack 0.8 and later)
  CHECK(type_of(kDLInt, 32) == dtype::i32);
}

TEST_CASE("DLPack: a CUDA-device tensor maps to device_kind::cuda, its address offset", "[runtime][dlpack]") {
  std::int64_t shape[] = {1, 7, 8, 128};
  // A device address: never dereferenced on the host.
  DLTensor t = dl_tensor(reinterpret_cast<void*>(std::uintptr_t{0x7f0000000000}), kDLFloat, 32, 4, shape);
  t.device = {kDLCUDA, 1};
  t.byte_offset = 512;

  tensor_view view;
  REQUIRE(from_dlpack(t, view, "k").ok());
  CHECK(view.device == device_kind::cuda);
  CHECK(reinterpret_cast<std::uintptr_t>(view.data) == 0x7f0000000000 + 512);
  CHECK(view.strides[0] == 7 * 8 * 128);
}

TEST_CASE("DLPack: pinned host memory (kDLCUDAHost) is a host view", "[runtime][dlpack]") {
  std::vector<float> data(8);
  std::int64_t shape[] = {8};
  DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 1, shape);
  t.device = {kDLCUDAHost, 0};

  tensor_view view;
  REQUIRE(from_dlpack(t, view).ok());
  CHECK(view.device == device_kind::host);
  CHECK(view.data == data.data());
}

TEST_CASE("DLPack: an OpenCL tensor is an OpenCL view, and one with a byte_offset is refused", "[runtime][dlpack]") {
  std::int64_t shape[] = {8};
  DLTensor t = dl_tensor(reinterpret_cast<void*>(std::uintptr_t{0x1000}), kDLFloat, 32, 1, shape);
  t.device = {kDLOpenCL, 0};
  tensor_view view;
  REQUIRE(from_dlpack(t, view).ok());
  CHECK(view.device == device_kind::opencl);
  CHECK(reinterpret_cast<std::uintptr_t>(view.data) == 0x1000);

  t.byte_offset = 64;
  view = sentinel_view();
  const status s = from_dlpack(t, view, "v");
  CHECK_THAT(s.message(), Equals("v: DLPack OpenCL tensor has byte_offset 64; attngen takes an OpenCL buffer from its "
                                 "first byte (byte_offset 0)"));
  CHECK(s.code() == error_code::wrong_device);
  check_unchanged(view);
}

TEST_CASE("DLPack: a vector element type (lanes != 1) is refused, naming the tensor", "[runtime][dlpack]") {
  std::vector<float> data(4 * 8);
  std::int64_t shape[] = {8};
  DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 1, shape);
  t.dtype.lanes = 4;
  tensor_view view = sentinel_view();
  const status s = from_dlpack(t, view, "q");
  CHECK_THAT(s.message(), Equals("q: DLPack element type has 4 lanes (a vector type); attngen takes 1 lane"));
  CHECK(s.code() == error_code::wrong_dtype);
  check_unchanged(view);
}

TEST_CASE("DLPack: a tensor of 5 dimensions is refused, naming the tensor", "[runtime][dlpack]") {
  std::vector<float> data(32);
  std::int64_t shape[] = {2, 2, 2, 2, 2};
  const DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 5, shape);
  const_tensor_view view;
  static_cast<tensor_view&>(view) = sentinel_view();
  const status s = from_dlpack(t, view, "attn_mask");
  CHECK_THAT(s.message(), Equals("attn_mask: DLPack tensor has 5 dimensions; attngen takes at most 4"));
  CHECK(s.code() == error_code::wrong_rank);
  check_unchanged(view);
}

TEST_CASE("DLPack: a tensor with dimensions and a null shape is refused", "[runtime][dlpack]") {
  std::vector<float> data(8);
  const DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 2, nullptr);
  tensor_view view = sentinel_view();
  const status s = from_dlpack(t, view, "k");
  CHECK_THAT(s.message(), Equals("k: DLPack tensor of 2 dimensions has a null shape"));
  CHECK(s.code() == error_code::null_pointer);
  check_unchanged(view);
}

TEST_CASE("DLPack: an unsupported element type (float64) is refused with the types attngen takes",
          "[runtime][dlpack]") {
  std::vector<double> data(8);
  std::int64_t shape[] = {8};
  const DLTensor t = dl_tensor(data.data(), kDLFloat, 64, 1, shape);
  tensor_view view = sentinel_view();
  const status s = from_dlpack(t, view);
  CHECK_THAT(s.message(), Equals("DLTensor: DLPack element type kDLFloat 64 bits is not supported; attngen takes "
                                 "kDLFloat 32 (f32), kDLFloat 16 (f16), kDLBfloat 16 (bf16), kDLUInt 8 or kDLBool 8 "
                                 "(u8), kDLInt 32 (i32)"));
  CHECK(s.code() == error_code::wrong_dtype);
  check_unchanged(view);
}

TEST_CASE("DLPack: an unsupported device (ROCm) is refused with the devices attngen takes", "[runtime][dlpack]") {
  std::vector<float> data(8);
  std::int64_t shape[] = {8};
  DLTensor t = dl_tensor(data.data(), kDLFloat, 32, 1, shape);
  t.device = {kDLROCM, 0};
  tensor_view view = sentinel_view();
  const status s = from_dlpack(t, view, "output");
  CHECK_THAT(s.message(), Equals("output: DLPack device kDLROCM is not supported; attngen takes kDLCPU, kDLCUDAHost, "
                                 "kDLCUDA or kDLOpenCL"));
  CHECK(s.code() == error_code::wrong_device);
  check_unchanged(view);
}

TEST_CASE("DLPack: an AOT kernel run through DLPack views gives bitwise the output of make_tensor views",
          "[runtime][dlpack][aot]") {
  // aot_gqa_causal: 32 heads, 8 kv heads, D 128. q stored (B, H, L, D) and exported transposed, as
  // PyTorch's q.transpose(1, 2); k and v dense (B, S, KVH, D) without strides; the output dense.
  constexpr std::int64_t B = 2, L = 5, S = 9, H = 32, KVH = 8, D = 128;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const auto random_floats = [&](std::int64_t n) {
    std::vector<float> values(static_cast<std::size_t>(n));
    for (float& value : values) value = uniform(random);
    return values;
  };
  const std::vector<float> q = random_floats(B * H * L * D), k = random_floats(B * S * KVH * D),
                           v = random_floats(B * S * KVH * D);
  std::vector<float> out_direct(B * L * H * D, -1.0f), out_dlpack(B * L * H * D, -2.0f);

  const status direct = aot_gqa_causal::run(make_bhld_tensor(static_cast<const void*>(q.data()), dtype::f32, {B, H, L, D}),
                                            make_tensor(k.data(), {B, S, KVH, D}), make_tensor(v.data(), {B, S, KVH, D}),
                                            make_tensor(out_direct.data(), {B, L, H, D}));
  INFO(direct.message());
  REQUIRE(direct.ok());

  std::int64_t q_shape[] = {B, L, H, D}, q_strides[] = {H * L * D, D, L * D, 1};
  std::int64_t kv_shape[] = {B, S, KVH, D}, out_shape[] = {B, L, H, D};
  const DLTensor q_dl = dl_tensor(const_cast<float*>(q.data()), kDLFloat, 32, 4, q_shape, q_strides);
  const DLTensor k_dl = dl_tensor(const_cast<float*>(k.data()), kDLFloat, 32, 4, kv_shape);
  const DLTensor v_dl = dl_tensor(const_cast<float*>(v.data()), kDLFloat, 32, 4, kv_shape);
  const DLTensor out_dl = dl_tensor(out_dlpack.data(), kDLFloat, 32, 4, out_shape);
  const_tensor_view q_view, k_view, v_view;
  tensor_view out_view;
  REQUIRE(from_dlpack(q_dl, q_view, "q").ok());
  REQUIRE(from_dlpack(k_dl, k_view, "k").ok());
  REQUIRE(from_dlpack(v_dl, v_view, "v").ok());
  REQUIRE(from_dlpack(out_dl, out_view, "output").ok());
  const status through_dlpack = aot_gqa_causal::run(q_view, k_view, v_view, out_view);
  INFO(through_dlpack.message());
  REQUIRE(through_dlpack.ok());

  CHECK(std::memcmp(out_dlpack.data(), out_direct.data(), out_direct.size() * sizeof(float)) == 0);
  CHECK(out_direct[0] != -1.0f);
}
