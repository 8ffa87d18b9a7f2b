#pragma once
/// Per-lane loads and stores of global memory, the block's staging of key/value tiles into shared
/// memory (cp.async on the device, in flight while the previous tile is computed), and the block's
/// barrier. On the host a "block" is run one warp after another, each staging every tile itself,
/// so staging is a plain copy and the barrier is nothing.
///
/// q and the output hold 16-bit elements of the tensor cores' type E, or f32 elements (a
/// description's f32_on_tensor_cores) that are rounded to E as they are read; K and V hold their
/// cache's elements (launch_shape.hpp's cache_element), converted to E once staged in shared memory
/// where they are not E's own.

#include <cstdint>
#include <type_traits>

#include "attngen/tensorcore/launch_shape.hpp"
#include "attngen/tensorcore/mma.hpp"
#include "attngen/tensorcore/warp.hpp"

#if !defined(__CUDACC__)
#include <cstring>
#endif

namespace attngen::tensorcore {

/// Two consecutive 16-bit elements as one 32-bit word where `valid`, else 0.
ATTNGEN_TC_FN lanes<std::uint32_t> load_pair(const lanes<const std::uint16_t*>& address, const lanes<bool>& valid) {
  return each(
      [](const std::uint16_t* p, bool ok) -> std::uint32_t {
#if defined(__CUDACC__)
        return ok ? *reinterpret_cast<const std::uint32_t*>(p) : 0u;
#else
        std::uint32_t word = 0;
        if (ok) std::memcpy(&word, p, sizeof word);
        return word;
#endif
      },
      address, valid);
}

/// Two consecutive elements as one register of two E values where `valid`, else 0: 16-bit elements
/// as they are, f32 ones rounded to E. Pairs are aligned to their size.
template <element16 E, typename Storage>
ATTNGEN_TC_FN lanes<std::uint32_t> load_packed(const lanes<const Storage*>& address, const lanes<bool>& valid) {
  if constexpr (std::is_same_v<Storage, std::uint16_t>) {
    return load_pair(address, valid);
  } else {
    static_assert(std::is_same_v<Storage, float>, "tensors hold 16-bit or f32 elements");
    return each(
        [](const float* p, bool ok) -> std::uint32_t {
          if (!ok) return 0u;
#if defined(__CUDACC__)
          const float2 pair = *reinterpret_cast<const float2*>(p);
          return pack2<E>(pair.x, pair.y);
#else
          return pack2<E>(p[0], p[1]);
#endif
        },
        address, valid);
  }
}

/// Stores `value` where `valid`: a pair of 16-bit elements, or one float.
template <typename Element, typename Value>
ATTNGEN_TC_FN void store_where(const lanes<Element*>& address, const lanes<Value>& value, const lanes<bool>& valid) {
  static_assert(sizeof(Value) == 4, "stores are of 32-bit words");
#if defined(__CUDACC__)
  if (valid.value) *reinterpret_cast<Value*>(address.value) = value.value;
#else
  for (int lane = 0; lane < warp_lanes; ++lane)
    if (valid[lane]) std::memcpy(address[lane], &value[lane], sizeof(Value));
#endif
}

/// Stores `low` and `high` at `address` and the element after it where `valid`, in the storage type:
/// rounded to E and packed for 16-bit elements, as they are for f32. Pairs are aligned to their size.
template <element16 E, typename Storage>
ATTNGEN_TC_FN void store_pair(const lanes<Storage*>& address, const lanes<float>& low, const lanes<float>& high,
                              const lanes<bool>& valid) {
  if constexpr (std::is_same_v<Storage, std::uint16_t>) {
    store_where(address, pack2<E>(low, high), valid);
  } else {
    static_assert(std::is_same_v<Storage, float>, "tensors hold 16-bit or f32 elements");
#if defined(__CUDACC__)
    if (valid.value) *reinterpret_cast<float2*>(address.value) = make_float2(low.value, high.value);
#else
    for (int lane = 0; lane < warp_lanes; ++lane)
      if (valid[lane]) {
        address[lane][0] = low[lane];
        address[lane][1] = high[lane];
      }
#endif
  }
}

/// Copies `rows` rows of `row_elements` 16-bit elements (a multiple of 8) from global memory, row r
/// at `row_address(r)` (a page of a paged cache, or rows a stride apart), into shared memory rows
/// `shared_row_stride` apart; rows at or past `valid_rows` are zeros and their addresses are not
/// taken. On the device every thread of the block takes 16-byte pieces, asynchronously:
/// `commit_staging` closes the group, `wait_for_staging<N>` waits until at most N groups are in flight.
template <typename RowAddress>
ATTNGEN_TC_FN void stage_rows(std::uint16_t* shared, int shared_row_stride, const RowAddress& row_address, int rows,
                              int row_elements, int valid_rows) {
#if defined(__CUDACC__)
  const int pieces_per_row = row_elements / 8;
  const int threads = int(blockDim.x);
  for (int piece = int(threadIdx.x); piece < rows * pieces_per_row; piece += threads) {
    const int row = piece / pieces_per_row, column = (piece % pieces_per_row) * 8;
    const bool valid = row < valid_rows;
    const std::uint16_t* from = valid ? row_address(row) + column : row_address(0);
    const auto to = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared + row * shared_row_stride + column));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(valid ? 16 : 0));
  }
#else
  for (int row = 0; row < rows; ++row) {
    std::uint16_t* to = shared + row * shared_row_stride;
    if (row < valid_rows) std::memcpy(to, row_address(row), sizeof(std::uint16_t) * row_elements);
    else std::memset(to, 0, sizeof(std::uint16_t) * row_elements);
  }
#endif
}

/// Copies `rows` rows of `row_elements` elements of T (rows of a multiple of 16 bytes) from global
/// memory, row r at `row_address(r)` (16-byte aligned), into consecutive shared memory rows; rows at
/// or past `valid_rows` are zeros. Asynchronous on the device, as stage_rows.
template <typename T, typename RowAddress>
ATTNGEN_TC_FN void stage_raw_rows(T* shared, const RowAddress& row_address, int rows, int row_elements,
                                  int valid_rows) {
#if defined(__CUDACC__)
  constexpr int piece_elements = 16 / int(sizeof(T));
  const int pieces_per_row = row_elements / piece_elements;
  const int threads = int(blockDim.x);
  for (int piece = int(threadIdx.x); piece < rows * pieces_per_row; piece += threads) {
    const int row = piece / pieces_per_row, column = (piece % pieces_per_row) * piece_elements;
    const bool valid = row < valid_rows;
    const T* from = valid ? row_address(row) + column : row_address(0);
    const auto to = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared + row * row_elements + column));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(valid ? 16 : 0));
  }
#else
  for (int row = 0; row < rows; ++row) {
    T* to = shared + row * row_elements;
    if (row < valid_rows) std::memcpy(to, row_address(row), sizeof(T) * row_elements);
    else std::memset(to, 0, sizeof(T) * row_elements);
  }
#endif
}

/// The element type a cache of type C holds.
template <cache_element C>
using cache_storage = std::conditional_t<C == cache_element::f32, float,
                                         std::conditional_t<C == cache_element::i8, std::int8_t, std::uint16_t>>;

/// A cache element's value: f32 as it is, a 16-bit one widened, int8 times its row's scale.
template <cache_element C>
ATTNGEN_TC_FN float cache_value(cache_storage<C> x, float scale) {
  if constexpr (C == cache_element::f32) return x;
  else if constexpr (C == cache_element::i8) return float(x) * scale;
  else if constexpr (C == cache_element::bf16) return unpack<element16::bf16>(x);
  else return unpack<element16::f16>(x);
}

/// Converts `rows` staged rows of `row_elements` cache elements of type C (consecutive, from
/// stage_raw_rows) to E into 16-bit rows `tile_row_stride` apart, the whole block taking 4 elements
/// per thread at a time; row r's elements are multiplied by scale_of_row(r) in an int8 cache.
template <element16 E, cache_element C, typename ScaleOfRow>
ATTNGEN_TC_FN void convert_staged_rows(std::uint16_t* tile, int tile_row_stride, const cache_storage<C>* staged,
                                       int rows, int row_elements, const ScaleOfRow& scale_of_row) {
#if defined(__CUDACC__)
  const int pieces_per_row = row_elements / 4;
  const int threads = int(blockDim.x);
  for (int piece = int(threadIdx.x); piece < rows * pieces_per_row; piece += threads) {
    const int row = piece / pieces_per_row, column = (piece % pieces_per_row) * 4;
    const cache_storage<C>* from = staged + row * row_elements + column;
    const float scale = C == cache_element::i8 ? scale_of_row(row) : 1.0f;
    float x[4];
    if constexpr (C == cache_element::f32) {
      const float4 four = *reinterpret_cast<const float4*>(from);
      x[0] = four.x, x[1] = four.y, x[2] = four.z, x[3] = four.w;
    } else if constexpr (C == cache_element::i8) {
      const char4 four = *reinterpret_cast<const char4*>(from);
      x[0] = float(four.x) * scale, x[1] = float(four.y) * scale, x[2] = float(four.z) * scale,
      x[3] = float(four.w) * scale;
    } else {
      const uint2 four = *reinterpret_cast<const uint2*>(from);
      const std::uint16_t bits[4] = {std::uint16_t(four.x), std::uint16_t(four.x >> 16), std::uint16_t(four.y),
                                     std::uint16_t(four.y >> 16)};
      for (int n = 0; n < 4; ++n) x[n] = cache_value<C>(bits[n], 1.0f);
    }
    *reinterpret_cast<uint2*>(tile + row * tile_row_stride + column) =
        make_uint2(pack2<E>(x[0], x[1]), pack2<E>(x[2], x[3]));
  }
#else
  for (int row = 0; row < rows; ++row) {
    const float scale = C == cache_element::i8 ? scale_of_row(row) : 1.0f;
    for (int column = 0; column < row_elements; ++column)
      tile[row * tile_row_stride + column] =
          std::uint16_t(pack2<E>(cache_value<C>(staged[row * row_elements + column], scale), 0.0f));
  }
#endif
}

ATTNGEN_TC_FN void commit_staging() {
#if defined(__CUDACC__)
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int InFlight>
ATTNGEN_TC_FN void wait_for_staging() {
#if defined(__CUDACC__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(InFlight));
#endif
}

/// Orders a warp's shared memory writes before its lanes' reads of them.
ATTNGEN_TC_FN void warp_barrier() {
#if defined(__CUDACC__)
  __syncwarp();
#endif
}

ATTNGEN_TC_FN void block_barrier() {
#if defined(__CUDACC__)
  __syncthreads();
#endif
}

}  // namespace attngen::tensorcore
