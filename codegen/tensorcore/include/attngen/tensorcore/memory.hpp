#pragma once
/// Per-lane loads and stores of global memory, the block's staging of key/value tiles into shared
/// memory (cp.async on the device, in flight while the previous tile is computed), and the block's
/// barrier. On the host a "block" is run one warp after another, each staging every tile itself,
/// so staging is a plain copy and the barrier is nothing.
///
/// Tensors hold 16-bit elements of the tensor cores' type E, or f32 elements (a description's
/// f32_on_tensor_cores) that are rounded to E as they are read (K and V once staged in shared
/// memory); outputs are stored in the tensors' type.

#include <cstdint>
#include <type_traits>

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

/// Copies `rows` rows of `row_elements` f32 elements (a multiple of 4) from global memory, row r at
/// `row_address(r)` (16-byte aligned), into consecutive shared memory rows; rows at or past
/// `valid_rows` are zeros. Asynchronous on the device, as stage_rows.
template <typename RowAddress>
ATTNGEN_TC_FN void stage_f32_rows(float* shared, const RowAddress& row_address, int rows, int row_elements,
                                  int valid_rows) {
#if defined(__CUDACC__)
  const int pieces_per_row = row_elements / 4;
  const int threads = int(blockDim.x);
  for (int piece = int(threadIdx.x); piece < rows * pieces_per_row; piece += threads) {
    const int row = piece / pieces_per_row, column = (piece % pieces_per_row) * 4;
    const bool valid = row < valid_rows;
    const float* from = valid ? row_address(row) + column : row_address(0);
    const auto to = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared + row * row_elements + column));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(valid ? 16 : 0));
  }
#else
  for (int row = 0; row < rows; ++row) {
    float* to = shared + row * row_elements;
    if (row < valid_rows) std::memcpy(to, row_address(row), sizeof(float) * row_elements);
    else std::memset(to, 0, sizeof(float) * row_elements);
  }
#endif
}

/// Rounds `rows` staged f32 rows of `row_elements` (consecutive, from stage_f32_rows) to E into
/// 16-bit rows `tile_row_stride` apart, the whole block taking 4 elements per thread at a time.
template <element16 E>
ATTNGEN_TC_FN void round_staged_rows(std::uint16_t* tile, int tile_row_stride, const float* staged, int rows,
                                     int row_elements) {
#if defined(__CUDACC__)
  const int pieces_per_row = row_elements / 4;
  const int threads = int(blockDim.x);
  for (int piece = int(threadIdx.x); piece < rows * pieces_per_row; piece += threads) {
    const int row = piece / pieces_per_row, column = (piece % pieces_per_row) * 4;
    const float4 values = *reinterpret_cast<const float4*>(staged + row * row_elements + column);
    *reinterpret_cast<uint2*>(tile + row * tile_row_stride + column) =
        make_uint2(pack2<E>(values.x, values.y), pack2<E>(values.z, values.w));
  }
#else
  for (int row = 0; row < rows; ++row)
    for (int column = 0; column < row_elements; ++column)
      tile[row * tile_row_stride + column] = std::uint16_t(pack2<E>(staged[row * row_elements + column], 0.0f));
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

ATTNGEN_TC_FN void block_barrier() {
#if defined(__CUDACC__)
  __syncthreads();
#endif
}

}  // namespace attngen::tensorcore
