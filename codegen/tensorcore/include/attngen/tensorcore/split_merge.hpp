#pragma once
/// FlashDecoding's merge of a call whose keys were split across blocks (launch_shape.hpp's
/// forward_params::key_splits): each row's split outputs, weighted by their share of the row's
/// denominator (FlashInfer's merge of attention states), the row's sink joining the denominator, into
/// out and lse. One thread per (row, pair of features), on the GPU and, for the tests, on the host.

#include <cstdint>
#include <type_traits>

#include "attngen/tensorcore/launch_shape.hpp"
#include "attngen/tensorcore/mma.hpp"
#include "attngen/tensorcore/warp.hpp"

#if !defined(__CUDACC__)
#include <cstring>
#endif

namespace attngen::tensorcore {

/// Merges features 2 pair and 2 pair + 1 (of Dv, the output's) of row `row` (query row / heads, head
/// row % heads) of batch entry `batch`, and the row's lse with the first pair; rows past the sequence's queries hold
/// nothing. A row no split saw a key of is 0, with lse its sink or -infinity, as without splits.
template <element16 E, int Dv, typename Variant>
ATTNGEN_TC_FN void merge_pair(const forward_params& p, const Variant& variant, int batch, int row, int pair) {
  using storage = typename Variant::storage;
  const sequence_extent sequence = extent_of(p, batch);
  const int head = row % p.heads, query = row / p.heads;
  if (query >= sequence.queries) return;
  const int splits = splits_of(p);
  const float* split_lse = p.partial + split_rows(p) * Dv;
  const float sink = variant.in.sinks != nullptr ? variant.in.sinks[head] : -INFINITY;
  float largest = sink;
  for (int s = 0; s < splits; ++s) {
    const float lse = split_lse[split_row(p, s, batch, head, query)];
    largest = lse > largest ? lse : largest;
  }
  const float base = largest == -INFINITY ? 0.0f : largest;
  float total = expf(sink - base), low = 0.0f, high = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const std::int64_t r = split_row(p, s, batch, head, query);
    const float weight = expf(split_lse[r] - base);
    total += weight;
    low += weight * p.partial[r * Dv + 2 * pair];
    high += weight * p.partial[r * Dv + 2 * pair + 1];
  }
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  storage* out = static_cast<storage*>(p.out) + query_row_offset(p.out_strides, batch, sequence, query) +
                 head * p.out_strides.head + 2 * pair;
  if constexpr (std::is_same_v<storage, float>) {
    out[0] = low * inverse;
    out[1] = high * inverse;
  } else {
    const std::uint32_t packed = pack2<E>(low * inverse, high * inverse);
#if defined(__CUDACC__)
    *reinterpret_cast<std::uint32_t*>(out) = packed;
#else
    std::memcpy(out, &packed, sizeof packed);
#endif
  }
  if (pair == 0 && p.lse != nullptr)
    p.lse[batch * p.lse_batch_stride + head * p.lse_head_stride + sequence.first_row + query] =
        total > 0.0f ? base + logf(total) : -INFINITY;
}

#if defined(__CUDACC__)
/// A merge kernel's body: grid merge_grid(p, Dv), merge_threads threads a block.
template <element16 E, int Dv, typename Variant>
__device__ __forceinline__ void merge_block(const forward_params& p, const Variant& variant) {
  const std::int64_t thread = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int row = int(thread / (Dv / 2)), pair = int(thread % (Dv / 2));
  if (row < p.query_length * p.heads) merge_pair<E, Dv>(p, variant, int(blockIdx.z), row, pair);
}
#else
/// The merge on the host, row after row.
template <element16 E, int Dv, typename Variant>
void run_merge_on_host(const forward_params& p, const Variant& variant) {
  for (int batch = 0; batch < p.batch; ++batch)
    for (int row = 0; row < p.query_length * p.heads; ++row)
      for (int pair = 0; pair < Dv / 2; ++pair) merge_pair<E, Dv>(p, variant, batch, row, pair);
}
#endif

}  // namespace attngen::tensorcore
