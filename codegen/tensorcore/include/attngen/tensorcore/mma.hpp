#pragma once
/// The tensor cores' warp-collective instructions that the tile code uses, each with the host
/// implementation the tests run: mma.sync m16n8k16 (16-bit inputs, f32 accumulators) and ldmatrix
/// m8n8 .x4 (plain and transposed). The fragment layouts are the PTX ISA's ("Matrix Fragments for
/// mma.m16n8k16 with floating point type", "Warp-level matrix load instruction: ldmatrix"): the
/// host code computes every element's place from them, so a tile that gets them wrong fails its
/// test here; only the instructions themselves are left to the hardware.

#include <cstdint>

#include "attngen/tensorcore/warp.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#else
#include <bit>
#include <cstring>

#include "attngen/runtime/detail/bf16_rounding.hpp"
#endif

namespace attngen::tensorcore {

/// The 16-bit input types of the tensor-core path, held as their bits.
enum class element16 { bf16, f16 };

/// Two floats rounded to nearest even and packed as one 32-bit register, `low` in its low half.
template <element16 E>
ATTNGEN_TC_FN std::uint32_t pack2(float low, float high) {
#if defined(__CUDACC__)
  if constexpr (E == element16::bf16) {
    const __nv_bfloat162 packed = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&packed);
  } else {
    const __half2 packed = __floats2half2_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&packed);
  }
#else
  auto bits = [](float x) -> std::uint32_t {
    if constexpr (E == element16::bf16) {
      return detail::bf16_bits(x);
    } else {
      return std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
    }
  };
  return bits(low) | bits(high) << 16;
#endif
}
template <element16 E>
ATTNGEN_TC_FN lanes<std::uint32_t> pack2(const lanes<float>& low, const lanes<float>& high) {
  return each([](float l, float h) { return pack2<E>(l, h); }, low, high);
}

/// The float value of 16 bits of type E.
template <element16 E>
ATTNGEN_TC_FN float unpack(std::uint16_t bits) {
#if defined(__CUDACC__)
  if constexpr (E == element16::bf16) return __uint_as_float(std::uint32_t(bits) << 16);
  else return __half2float(__ushort_as_half(bits));
#else
  if constexpr (E == element16::bf16) return std::bit_cast<float>(std::uint32_t(bits) << 16);
  else return static_cast<float>(std::bit_cast<_Float16>(bits));
#endif
}

/// An element of a tensor as float: 16-bit elements of type E widened, f32 ones as they are.
template <element16 E>
ATTNGEN_TC_FN float value_of(std::uint16_t bits) {
  return unpack<E>(bits);
}
template <element16 E>
ATTNGEN_TC_FN float value_of(float value) {
  return value;
}

/// m16n8k16's A operand (16 rows x 16 k), four registers of two elements per lane.
struct a_fragment {
  lanes<std::uint32_t> reg[4];
};
/// m16n8k16's B operand (16 k x 8 columns), two registers of two elements per lane.
struct b_fragment {
  lanes<std::uint32_t> reg[2];
};
/// m16n8k16's f32 accumulator (16 rows x 8 columns), four per lane.
struct c_fragment {
  lanes<float> x[4];
};

/// Where element i of each fragment lies, for `lane` (groupID = lane / 4, threadID_in_group =
/// lane % 4). A: i in 0..7, register i / 2, low half when i is even; B: i in 0..3; C: i in 0..3.
ATTNGEN_TC_FN int a_row(int lane, int i) { return (lane >> 2) + 8 * ((i >> 1) & 1); }
ATTNGEN_TC_FN int a_col(int lane, int i) { return (lane & 3) * 2 + (i & 1) + 8 * (i >> 2); }
ATTNGEN_TC_FN int b_row(int lane, int i) { return (lane & 3) * 2 + (i & 1) + 8 * (i >> 1); }
ATTNGEN_TC_FN int b_col(int lane, int) { return lane >> 2; }
ATTNGEN_TC_FN int c_row(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
ATTNGEN_TC_FN int c_col(int lane, int i) { return (lane & 3) * 2 + (i & 1); }

/// d = a * b + d.
template <element16 E>
ATTNGEN_TC_FN void mma_m16n8k16(c_fragment& d, const a_fragment& a, const b_fragment& b) {
#if defined(__CUDACC__)
// One instruction per input type, the type named twice (A's and B's).
#define ATTNGEN_TC_MMA(type)                                                                                  \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, " \
               "{%0,%1,%2,%3};\n"                                                                              \
               : "+f"(d.x[0].value), "+f"(d.x[1].value), "+f"(d.x[2].value), "+f"(d.x[3].value)             \
               : "r"(a.reg[0].value), "r"(a.reg[1].value), "r"(a.reg[2].value), "r"(a.reg[3].value),        \
                 "r"(b.reg[0].value), "r"(b.reg[1].value))
  if constexpr (E == element16::bf16) ATTNGEN_TC_MMA("bf16");
  else ATTNGEN_TC_MMA("f16");
#undef ATTNGEN_TC_MMA
#else
  float a_matrix[16][16], b_matrix[16][8];
  for (int lane = 0; lane < warp_lanes; ++lane) {
    for (int i = 0; i < 8; ++i)
      a_matrix[a_row(lane, i)][a_col(lane, i)] = unpack<E>(std::uint16_t(a.reg[i / 2][lane] >> (16 * (i & 1))));
    for (int i = 0; i < 4; ++i)
      b_matrix[b_row(lane, i)][b_col(lane, i)] = unpack<E>(std::uint16_t(b.reg[i / 2][lane] >> (16 * (i & 1))));
  }
  for (int lane = 0; lane < warp_lanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      float sum = d.x[i][lane];
      for (int k = 0; k < 16; ++k) sum += a_matrix[c_row(lane, i)][k] * b_matrix[k][c_col(lane, i)];
      d.x[i][lane] = sum;
    }
#endif
}

/// ldmatrix .m8n8 .x4 .b16 from shared memory: lanes 8m to 8m + 7 give the addresses of the 8 rows
/// (8 elements each) of matrix m, and register m of each lane receives its two elements of matrix
/// m: row lane / 4, columns 2 (lane % 4) and the next; transposed, column lane / 4 of rows
/// 2 (lane % 4) and the next.
template <bool Transposed>
ATTNGEN_TC_FN void ldmatrix_x4(lanes<std::uint32_t> (&reg)[4], const lanes<const std::uint16_t*>& row_address) {
#if defined(__CUDACC__)
  const auto shared = static_cast<std::uint32_t>(__cvta_generic_to_shared(row_address.value));
  if constexpr (Transposed) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(reg[0].value), "=r"(reg[1].value), "=r"(reg[2].value), "=r"(reg[3].value)
                 : "r"(shared));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(reg[0].value), "=r"(reg[1].value), "=r"(reg[2].value), "=r"(reg[3].value)
                 : "r"(shared));
  }
#else
  for (int m = 0; m < 4; ++m)
    for (int lane = 0; lane < warp_lanes; ++lane) {
      std::uint16_t low, high;
      if constexpr (Transposed) {
        low = row_address[8 * m + (lane & 3) * 2][lane >> 2];
        high = row_address[8 * m + (lane & 3) * 2 + 1][lane >> 2];
      } else {
        low = row_address[8 * m + (lane >> 2)][(lane & 3) * 2];
        high = row_address[8 * m + (lane >> 2)][(lane & 3) * 2 + 1];
      }
      reg[m][lane] = std::uint32_t(low) | std::uint32_t(high) << 16;
    }
#endif
}

}  // namespace attngen::tensorcore
