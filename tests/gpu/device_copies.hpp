#pragma once
// A call's tensors copied to the tested GPU: each given view (empty ones skipped) is replaced by its
// device copy's view; the outputs are copied back to the host on request.

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "attngen/runtime/device_tensor.hpp"
#include "gpu/gpu_availability.hpp"

namespace attngen::testing {

class device_copies {
 public:
  device_copies(const std::vector<tensor_view*>& inputs, const std::vector<tensor_view*>& outputs) {
    for (auto [views, held] : {std::pair{&inputs, &inputs_}, std::pair{&outputs, &outputs_}})
      for (tensor_view* view : *views) {
        if (view->empty()) continue;
        held->push_back(std::make_unique<device_tensor>(*view, tested_device()));
        REQUIRE(held->back()->result().ok());
        *view = held->back()->view();
      }
  }

  /// Copies every output back into the host tensor it was made from.
  void copy_outputs_back() {
    for (const auto& output : outputs_) REQUIRE(output->copy_to_host().ok());
  }

 private:
  std::vector<std::unique_ptr<device_tensor>> inputs_, outputs_;
};

}  // namespace attngen::testing
