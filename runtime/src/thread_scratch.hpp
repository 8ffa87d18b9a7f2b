#pragma once
/// Scratch memory of one pool thread for the hand-written CPU paths (the AMX forward pass, vector
/// decoding): kept for the thread's next call, since the pool's threads live as long as the process.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace attngen::detail {

/// At least `bytes` of this thread's scratch, 64-byte aligned; valid until its next call here.
inline unsigned char* thread_scratch(std::size_t bytes) {
  constexpr std::size_t alignment = 64;
  thread_local std::unique_ptr<unsigned char[]> held;
  thread_local std::size_t held_bytes = 0;
  if (held_bytes < bytes) {
    held.reset();
    held.reset(new unsigned char[bytes + alignment]);
    held_bytes = bytes;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(held.get());
  return held.get() + (alignment - address % alignment) % alignment;
}

}  // namespace attngen::detail
