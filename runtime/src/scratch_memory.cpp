#include "attngen/runtime/detail/scratch_memory.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

// Size classes of cached blocks: four to an octave from smallest_cached_block up, so that a block
// serves requests up to a quarter smaller than itself.
constexpr int classes_per_octave = 4;
constexpr int smallest_class_octave = std::bit_width(smallest_cached_block) - 1;
static_assert(std::has_single_bit(smallest_cached_block));
// Requests past this are refused (a null block), as the system would refuse them.
constexpr std::size_t largest_request = std::size_t(1) << 62;
constexpr int class_count = (62 - smallest_class_octave) * classes_per_octave + classes_per_octave + 1;
// A request missing in its class takes a cached block up to this many classes larger (at most about
// twice its size) before asking the system.
constexpr int larger_classes_tried = 3;
// A block that is not in any class: a small one, malloc's.
constexpr std::uint32_t uncached = ~std::uint32_t(0);

// Before every block's bytes: its class (or `uncached`) and, while cached, the next block of its class.
struct alignas(scratch_alignment) block_header {
  std::uint32_t size_class;
  block_header* next;
};
static_assert(sizeof(block_header) == scratch_alignment && sizeof(block_header) >= scratch_readable_margin);

constexpr std::size_t rounded_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

// The smallest class holding `bytes` (at least smallest_cached_block): its octave's base times 1, 5/4,
// 6/4 or 7/4, or the next octave's base.
constexpr int class_of(std::size_t bytes) {
  const int octave = std::bit_width(bytes) - 1;
  const std::size_t base = std::size_t(1) << octave, step = base / classes_per_octave;
  const int steps = int((bytes - base + step - 1) / step);  // 0..classes_per_octave
  return (octave - smallest_class_octave) * classes_per_octave + steps;
}

constexpr std::size_t class_bytes(int size_class) {
  const std::size_t base = std::size_t(1) << (smallest_class_octave + size_class / classes_per_octave);
  return base / classes_per_octave * (classes_per_octave + size_class % classes_per_octave);
}
static_assert(class_bytes(class_of(smallest_cached_block)) == smallest_cached_block);
static_assert(class_bytes(class_of(smallest_cached_block + 1)) == smallest_cached_block * 5 / 4);
static_assert(class_bytes(class_of(2 * smallest_cached_block - 1)) == 2 * smallest_cached_block);
static_assert(class_bytes(class_of(3 << 20)) == std::size_t(3) << 20);
static_assert(class_of(largest_request) < class_count);

block_header* from_system(std::size_t bytes, std::uint32_t size_class) {
  const std::size_t system_bytes = sizeof(block_header) + bytes + scratch_readable_margin;
  void* memory = std::aligned_alloc(scratch_alignment, rounded_up(system_bytes, scratch_alignment));
  if (memory == nullptr) return nullptr;
  return new (memory) block_header{size_class, nullptr};
}

using free_lists = std::array<block_header*, class_count>;

std::size_t cached_bytes_in(const free_lists& lists) {
  std::size_t bytes = 0;
  for (int c = 0; c < class_count; ++c)
    for (const block_header* block = lists[c]; block != nullptr; block = block->next) bytes += class_bytes(c);
  return bytes;
}

void free_all(const free_lists& lists) {
  for (block_header* block : lists)
    while (block != nullptr) std::free(std::exchange(block, block->next));
}

std::atomic<std::size_t> cached_bytes{0};
std::atomic<std::uint64_t> system_allocations{0};

// One thread's cached blocks. A block a thread freed serves that thread's next request: a call's
// buffers are rewritten by the thread that takes them, and from its own cache they are often still in
// its L2 (decode_paged f32, whose splits stage 1 MiB of values each: 33.0 ms from caches per thread,
// 39.2-40.8 from one shared cache, 32.1-34.2 from glibc's per-thread arenas told to keep memory mapped).
struct thread_cache {
  std::mutex mutex;  // held by its thread, and by release_scratch_cache and fork from others
  free_lists lists{};

  thread_cache();
  ~thread_cache();
};

// Every thread's cache, for release_scratch_cache and fork. Never destroyed: threads may exit during
// the process's static destruction.
struct cache_registry {
  std::mutex mutex;
  std::vector<thread_cache*> caches;
};
cache_registry& registry() {
  static cache_registry* instance = new cache_registry;
  return *instance;
}

thread_cache::thread_cache() {
  std::lock_guard lock(registry().mutex);
  registry().caches.push_back(this);
}

thread_cache::~thread_cache() {
  {
    std::lock_guard lock(registry().mutex);
    std::erase(registry().caches, this);
  }
  cached_bytes -= cached_bytes_in(lists);
  free_all(lists);
}

thread_cache& this_thread_cache() {
  thread_local thread_cache cache;
  return cache;
}

// A fork while another thread holds a lock would leave the child's copy locked forever: fork waits
// for every lock, and both processes release them.
void lock_every_cache() {
  registry().mutex.lock();
  for (thread_cache* cache : registry().caches) cache->mutex.lock();
}
void unlock_every_cache() {
  for (thread_cache* cache : registry().caches) cache->mutex.unlock();
  registry().mutex.unlock();
}

void* halide_scratch_malloc(void*, std::size_t bytes) { return scratch_allocate(bytes); }
void halide_scratch_free(void*, void* block) { scratch_release(block); }

}  // namespace

void* scratch_allocate(std::size_t bytes) noexcept {
  if (bytes > largest_request) return nullptr;
  if (bytes < smallest_cached_block) {
    block_header* block = from_system(bytes, uncached);
    return block ? block + 1 : nullptr;
  }
  const int wanted = class_of(bytes);
  thread_cache& cache = this_thread_cache();
  {
    std::lock_guard lock(cache.mutex);
    for (int c = wanted; c < class_count && c <= wanted + larger_classes_tried; ++c)
      if (block_header* block = cache.lists[c]) {
        cache.lists[c] = block->next;
        cached_bytes -= class_bytes(c);
        return block + 1;
      }
  }
  ++system_allocations;
  block_header* block = from_system(class_bytes(wanted), std::uint32_t(wanted));
  return block ? block + 1 : nullptr;
}

void scratch_release(void* bytes) noexcept {
  if (bytes == nullptr) return;
  block_header* block = static_cast<block_header*>(bytes) - 1;
  if (block->size_class != uncached) {
    const std::size_t size = class_bytes(int(block->size_class));
    // Counted before it is cached, so that threads releasing at once cannot pass the bound together.
    if (cached_bytes.fetch_add(size) + size <= most_cached_bytes) {
      thread_cache& cache = this_thread_cache();
      std::lock_guard lock(cache.mutex);
      block->next = cache.lists[block->size_class];
      cache.lists[block->size_class] = block;
      return;
    }
    cached_bytes -= size;
  }
  std::free(block);
}

void release_scratch_cache() noexcept {
  std::lock_guard registry_lock(registry().mutex);
  for (thread_cache* cache : registry().caches) {
    free_lists taken;
    {
      std::lock_guard lock(cache->mutex);
      taken = std::exchange(cache->lists, free_lists{});
    }
    cached_bytes -= cached_bytes_in(taken);
    free_all(taken);
  }
}

scratch_statistics scratch_memory_statistics() noexcept { return {system_allocations.load(), cached_bytes.load()}; }

void install_scratch_memory() {
  static const bool installed = [] {
    pthread_atfork(&lock_every_cache, &unlock_every_cache, &unlock_every_cache);
    halide_set_custom_malloc(&halide_scratch_malloc);
    halide_set_custom_free(&halide_scratch_free);
    return true;
  }();
  (void)installed;
}

}  // namespace attngen::detail
