#pragma once
/// The kernels' heap scratch (Halide's halide_malloc: staged keys and values, long blocks' scores,
/// split states) and the module's buffers between its parts, kept for the next call: a freed block
/// waits in a cache by size class and serves the next request of its class, so that calls after the
/// first reuse memory already mapped rather than map it afresh and fault it in page by page, as
/// glibc's malloc did for them (docs/performance.md, 2026-12-02 fourth).

#include <cstddef>
#include <cstdint>

namespace attngen::detail {

/// Alignment of every scratch block, the widest vector's (Halide needs its buffers so aligned).
inline constexpr std::size_t scratch_alignment = 64;

/// Blocks below this size go to malloc and back directly: glibc serves them from memory it keeps.
inline constexpr std::size_t smallest_cached_block = 16 * 1024;

/// The most bytes the cache holds; a block freed past it goes back to the system.
inline constexpr std::size_t most_cached_bytes = std::size_t(256) << 20;

/// Readable bytes before and after every scratch block (Halide may read a vector past either end).
inline constexpr std::size_t scratch_readable_margin = 64;

/// `bytes` of scratch, aligned to scratch_alignment, readable scratch_readable_margin bytes before and
/// after; null when the system has no memory. Thread-safe.
void* scratch_allocate(std::size_t bytes) noexcept;

/// Returns a block of scratch_allocate (null is ignored) to the cache, or to the system when the
/// cache is full.
void scratch_release(void* block) noexcept;

/// Frees every cached block (attngen::release_cached_memory).
void release_scratch_cache() noexcept;

/// What the cache has done, for tests and diagnostics.
struct scratch_statistics {
  std::uint64_t system_allocations = 0;  ///< blocks taken from the system
  std::size_t cached_bytes = 0;          ///< bytes of blocks waiting in the cache
};
scratch_statistics scratch_memory_statistics() noexcept;

/// Makes every kernel's halide_malloc and halide_free use the scratch cache (idempotent; every kernel
/// call does it).
void install_scratch_memory();

/// unique_ptr's deleter for scratch blocks.
struct scratch_deleter {
  void operator()(void* block) const noexcept { scratch_release(block); }
};

}  // namespace attngen::detail
