#pragma once
/// A generated tensor-core variant run by the tile code on the host model of the warp.

#include <cstring>
#include <deque>
#include <vector>

#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

/// Arrays the host model reads where they are: kept for the run.
class host_memory {
 public:
  template <typename T>
  T* place(const std::vector<T>& values) {
    if (values.empty()) return nullptr;
    auto& kept = held_.emplace_back(values.size() * sizeof(T));
    std::memcpy(kept.data(), values.data(), kept.size());
    return reinterpret_cast<T*>(kept.data());
  }
  template <typename T>
  void read(const T* placed, std::vector<T>& into) {
    std::memcpy(into.data(), placed, into.size() * sizeof(T));
  }

 private:
  std::deque<std::vector<unsigned char>> held_;
};

template <typename Variant>
tensorcore_result run_tensorcore_on_host(const attention_problem& p) {
  host_memory memory;
  return run_tensorcore<Variant>(p, memory, [](const tensorcore::forward_params& params, const Variant& variant) {
    tensorcore::run_forward_on_host<Variant::element, Variant::head_dim, Variant::warps>(params, variant);
  });
}

template <typename Variant>
void run_tensorcore_batch_on_host(sequence_batch& batch) {
  host_memory memory;
  run_tensorcore_batch<Variant>(batch, memory, [](const tensorcore::forward_params& params, const Variant& variant) {
    tensorcore::run_forward_on_host<Variant::element, Variant::head_dim, Variant::warps>(params, variant);
  });
}

}  // namespace attngen::testing
