#include "attngen/ring/ring_attention.hpp"

namespace attngen {

std::vector<ring_chunk> ring_chunks(std::int64_t length, int ranks, int rank, ring_split split) {
  const int chunks = split == ring_split::balanced ? 2 * ranks : ranks;
  // Chunk c of `chunks` near-equal ones, the first length % chunks one longer.
  auto chunk = [&](int c) {
    const std::int64_t base = length / chunks, longer = length % chunks;
    return ring_chunk{c * base + std::min<std::int64_t>(c, longer), base + (c < longer ? 1 : 0)};
  };
  if (split == ring_split::contiguous) return {chunk(rank)};
  return {chunk(rank), chunk(chunks - 1 - rank)};
}

}  // namespace attngen
