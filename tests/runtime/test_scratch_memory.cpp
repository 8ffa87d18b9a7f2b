// The kernels' scratch memory (Halide's halide_malloc and the module's buffers between parts): blocks
// aligned for the widest vector, a released block reused by its thread's next request of its size
// class, the cache bounded, emptied on request and at a thread's exit, and a kernel's repeated calls
// served from it.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "HalideRuntime.h"
#include "aot_module_encoder.hpp"
#include "attngen/runtime.hpp"
#include "attngen/runtime/detail/scratch_memory.hpp"
#include "kernels/aot_module_call.hpp"

using namespace attngen;
using namespace attngen::detail;

namespace {

bool aligned(const void* block) { return reinterpret_cast<std::uintptr_t>(block) % scratch_alignment == 0; }

constexpr std::size_t large = 3 * smallest_cached_block;

}  // namespace

TEST_CASE("scratch blocks, small and large, are aligned for the widest vector and readable around their ends",
          "[runtime][scratch]") {
  for (const std::size_t bytes : {std::size_t(1), std::size_t(100), smallest_cached_block - 1, large, large + 7}) {
    auto* block = static_cast<unsigned char*>(scratch_allocate(bytes));
    REQUIRE(block != nullptr);
    CHECK(aligned(block));
    std::memset(block, 1, bytes);
    const std::ptrdiff_t margin = std::ptrdiff_t(scratch_readable_margin);
    volatile unsigned char around = block[-margin] | block[std::ptrdiff_t(bytes) + margin - 1];
    (void)around;
    scratch_release(block);
  }
}

TEST_CASE("a released large block serves the next request of its size class, up to a quarter smaller",
          "[runtime][scratch]") {
  release_cached_memory();
  void* first = scratch_allocate(large);
  scratch_release(first);
  CHECK(scratch_memory_statistics().cached_bytes >= large);
  const std::uint64_t taken = scratch_memory_statistics().system_allocations;
  void* again = scratch_allocate(large - large / 5);
  CHECK(again == first);
  CHECK(scratch_memory_statistics().system_allocations == taken);
  CHECK(scratch_memory_statistics().cached_bytes == 0);
  scratch_release(again);
}

TEST_CASE("a block in use is never handed out again", "[runtime][scratch]") {
  void* a = scratch_allocate(large);
  void* b = scratch_allocate(large);
  CHECK(a != b);
  scratch_release(a);
  void* c = scratch_allocate(large);
  CHECK(c == a);
  CHECK(c != b);
  scratch_release(b);
  scratch_release(c);
}

TEST_CASE("a block released on one thread serves that thread's next request, not another thread's",
          "[runtime][scratch]") {
  release_cached_memory();
  void* mine = scratch_allocate(large);
  scratch_release(mine);
  void* theirs = nullptr;
  std::thread([&theirs] {
    theirs = scratch_allocate(large);
    scratch_release(theirs);
  }).join();
  CHECK(theirs != mine);
  void* again = scratch_allocate(large);
  CHECK(again == mine);
  scratch_release(again);
}

TEST_CASE("a thread's cached blocks go back to the system when it exits", "[runtime][scratch]") {
  release_cached_memory();
  std::size_t cached_on_the_thread = 0;
  std::thread([&cached_on_the_thread] {
    scratch_release(scratch_allocate(large));
    cached_on_the_thread = scratch_memory_statistics().cached_bytes;
  }).join();
  CHECK(cached_on_the_thread >= large);
  CHECK(scratch_memory_statistics().cached_bytes == 0);
}

TEST_CASE("release_cached_memory empties the cache; the next large request comes from the system",
          "[runtime][scratch]") {
  scratch_release(scratch_allocate(large));
  CHECK(scratch_memory_statistics().cached_bytes > 0);
  release_cached_memory();
  CHECK(scratch_memory_statistics().cached_bytes == 0);
  const std::uint64_t taken = scratch_memory_statistics().system_allocations;
  scratch_release(scratch_allocate(large));
  CHECK(scratch_memory_statistics().system_allocations == taken + 1);
}

TEST_CASE("the cache holds at most most_cached_bytes; blocks released past it go back to the system",
          "[runtime][scratch]") {
  release_cached_memory();
  // Three blocks of more than a third of the bound each (never touched, so never faulted in).
  const std::size_t bytes = most_cached_bytes / 5 * 2;
  std::vector<void*> blocks;
  for (int n = 0; n < 3; ++n) blocks.push_back(scratch_allocate(bytes));
  for (void* block : blocks) {
    REQUIRE(block != nullptr);
    scratch_release(block);
  }
  const std::size_t cached = scratch_memory_statistics().cached_bytes;
  CHECK(cached <= most_cached_bytes);
  CHECK(cached >= 2 * bytes);
  release_cached_memory();
}

TEST_CASE("a request past what any system could give is refused with a null block", "[runtime][scratch]") {
  CHECK(scratch_allocate(~std::size_t(0) / 2) == nullptr);
  scratch_release(nullptr);
}

TEST_CASE("module E64 H4, B2 L64 S64: calls after the first take no new block from the system",
          "[runtime][scratch]") {
  const auto problem = attngen::testing::make_random_module_problem(aot_module_encoder::description, 2, 64, 64, 7);
  attngen::testing::aot_module_call call(problem);
  const mha_args args = call.args();
  REQUIRE(aot_module_encoder::run(args).ok());
  REQUIRE(aot_module_encoder::run(args).ok());
  CHECK(scratch_memory_statistics().cached_bytes > 0);  // its buffers between parts wait for the next call
  const std::uint64_t taken = scratch_memory_statistics().system_allocations;
  for (int n = 0; n < 5; ++n) REQUIRE(aot_module_encoder::run(args).ok());
  CHECK(scratch_memory_statistics().system_allocations == taken);
}

TEST_CASE("Halide's halide_malloc and halide_free are the scratch cache's once a kernel has run",
          "[runtime][scratch]") {
  const auto problem = attngen::testing::make_random_module_problem(aot_module_encoder::description, 1, 2, 3, 8);
  attngen::testing::aot_module_call call(problem);
  REQUIRE(aot_module_encoder::run(call.args()).ok());
  release_cached_memory();
  void* block = halide_malloc(nullptr, large);
  REQUIRE(block != nullptr);
  halide_free(nullptr, block);
  CHECK(scratch_memory_statistics().cached_bytes >= large);
}
