#pragma once
/// A warp of 32 lanes, written once for NVIDIA GPUs and for the host. On the device each lane is a
/// CUDA thread and `lanes<T>` is one register of it; on the host `lanes<T>` holds the 32 lanes'
/// values and the collective operations (shuffles here, mma and ldmatrix in mma.hpp) exchange them
/// exactly as the PTX ISA documents, so the tile code's fragment bookkeeping runs in the test suite
/// without a GPU. Control flow in tile code is uniform across the warp: lane-dependent choices are
/// made per lane inside `each`, as they are on the hardware's predicated paths.
///
/// Compiled by nvcc (__CUDACC__), tile code is device code; compiled by a host compiler, it is the
/// host model. The two never mix in one translation unit.

#include <cstdint>

#if defined(__CUDACC__)
#define ATTNGEN_TC_FN __device__ __forceinline__
// Loops over a warp's fragments, unrolled so that the fragments stay in registers: a loop left
// rolled indexes them at run time, which puts them in local memory.
#define ATTNGEN_TC_UNROLL _Pragma("unroll")
#else
#include <cmath>
#define ATTNGEN_TC_FN inline
#define ATTNGEN_TC_UNROLL
#endif

namespace attngen::tensorcore {

inline constexpr int warp_lanes = 32;

/// One value per lane of a warp.
template <typename T>
struct lanes {
#if defined(__CUDACC__)
  T value;
  lanes() = default;
  ATTNGEN_TC_FN lanes(T broadcast) : value(broadcast) {}
  ATTNGEN_TC_FN T& operator[](int) { return value; }
  ATTNGEN_TC_FN const T& operator[](int) const { return value; }
#else
  T value[warp_lanes];
  lanes() = default;
  lanes(T broadcast) {
    for (T& v : value) v = broadcast;
  }
  T& operator[](int lane) { return value[lane]; }
  const T& operator[](int lane) const { return value[lane]; }
#endif
};

/// f applied lane by lane.
template <typename F, typename... T>
ATTNGEN_TC_FN auto each(F f, const lanes<T>&... a) -> lanes<decltype(f(a[0]...))> {
  lanes<decltype(f(a[0]...))> result;
#if defined(__CUDACC__)
  result.value = f(a.value...);
#else
  for (int lane = 0; lane < warp_lanes; ++lane) result[lane] = f(a[lane]...);
#endif
  return result;
}

/// The lane's index in its warp, 0 to 31.
ATTNGEN_TC_FN lanes<int> lane_id() {
#if defined(__CUDACC__)
  return lanes<int>(int(threadIdx.x) & (warp_lanes - 1));
#else
  lanes<int> id;
  for (int lane = 0; lane < warp_lanes; ++lane) id[lane] = lane;
  return id;
#endif
}

/// Each lane's value from lane (its index XOR `mask`): __shfl_xor_sync over the whole warp.
template <typename T>
ATTNGEN_TC_FN lanes<T> shuffle_xor(const lanes<T>& a, int mask) {
#if defined(__CUDACC__)
  return lanes<T>(__shfl_xor_sync(0xffffffffu, a.value, mask));
#else
  lanes<T> result;
  for (int lane = 0; lane < warp_lanes; ++lane) result[lane] = a[lane ^ mask];
  return result;
#endif
}

template <typename T>
ATTNGEN_TC_FN lanes<T> operator+(const lanes<T>& a, const lanes<T>& b) {
  return each([](T x, T y) { return T(x + y); }, a, b);
}
template <typename T>
ATTNGEN_TC_FN lanes<T> operator-(const lanes<T>& a, const lanes<T>& b) {
  return each([](T x, T y) { return T(x - y); }, a, b);
}
template <typename T>
ATTNGEN_TC_FN lanes<T> operator*(const lanes<T>& a, const lanes<T>& b) {
  return each([](T x, T y) { return T(x * y); }, a, b);
}
ATTNGEN_TC_FN float max_of(float a, float b) {
#if defined(__CUDACC__)
  return fmaxf(a, b);  // one FMNMX, where a comparison and a select take two ALU instructions
#else
  return a > b ? a : b;
#endif
}
/// a * b + c, rounded once (one FFMA on the device).
ATTNGEN_TC_FN lanes<float> fma_of(const lanes<float>& a, const lanes<float>& b, const lanes<float>& c) {
  return each([](float x, float y, float z) { return fmaf(x, y, z); }, a, b, c);
}
ATTNGEN_TC_FN lanes<float> max_of(const lanes<float>& a, const lanes<float>& b) {
  return each([](float x, float y) { return max_of(x, y); }, a, b);
}

/// 2^x: ex2.approx.ftz on the device (the softmax's exponentials are taken in base 2, the scores
/// pre-multiplied by log2(e), as FlashAttention does; exp2f adds a rescaling for denormal results,
/// which flush to 0 here), exp2 on the host.
ATTNGEN_TC_FN float exp2_of(float x) {
#if defined(__CUDACC__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}
ATTNGEN_TC_FN lanes<float> exp2_of(const lanes<float>& a) {
  return each([](float x) { return exp2_of(x); }, a);
}

/// The sum, or the maximum, over each quad of lanes (the 4 lanes that hold one row of an mma
/// accumulator), left in all 4.
ATTNGEN_TC_FN lanes<float> quad_sum(lanes<float> a) {
  a = a + shuffle_xor(a, 1);
  return a + shuffle_xor(a, 2);
}
ATTNGEN_TC_FN lanes<float> quad_max(lanes<float> a) {
  a = max_of(a, shuffle_xor(a, 1));
  return max_of(a, shuffle_xor(a, 2));
}

}  // namespace attngen::tensorcore
