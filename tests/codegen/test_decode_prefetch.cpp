// Which kernels prefetch their cache rows in software (blocking::prefetch_keys_ahead): decoding a
// cache token by token, where the hardware prefetchers stop at every page, prefetches K and V ahead;
// decoding dense tensors per kv head, where they do not, prefetches nothing.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "codegen/lowered_kernel.hpp"

using namespace attngen;

namespace {

// The tensors whose elements the single-query variant's lowered code prefetches, with the number of
// prefetches of each in the code.
std::map<std::string, int> prefetched_tensors(const attention_desc& desc) {
  const Halide::Module module = testing::lowered_kernel(desc, kernel_variant::single_query);
  struct prefetch_collector : Halide::Internal::IRVisitor {
    std::map<std::string, int> tensors;
    using IRVisitor::visit;
    void visit(const Halide::Internal::Call* call) override {
      if (call->is_intrinsic(Halide::Internal::Call::prefetch))
        if (const auto* base = call->args[0].as<Halide::Internal::Variable>()) ++tensors[base->name];
      IRVisitor::visit(call);
    }
  } collector;
  testing::visit_code(module, collector);
  return collector.tensors;
}

constexpr attention_desc gqa_decoding = attention().heads(32).kv_heads(8).head_dim(128).causal(bottom_right);

}  // namespace

TEST_CASE("decode prefetch: the single-query kernel of a paged cache (GQA 32/8 D128, page 16) prefetches K and V",
          "[prefetch]") {
  const std::map<std::string, int> tensors = prefetched_tensors(gqa_decoding.paged_kv(16));
  CHECK(tensors.count("k") == 1);
  CHECK(tensors.count("v") == 1);
  CHECK(tensors.size() == 2);
}

TEST_CASE("decode prefetch: the single-query kernel of an int8 cache with kv lengths (GQA 32/8 D128) prefetches K and V",
          "[prefetch]") {
  const std::map<std::string, int> tensors = prefetched_tensors(gqa_decoding.kv_lengths().kv_element(dtype::i8));
  CHECK(tensors.count("k") == 1);
  CHECK(tensors.count("v") == 1);
}

TEST_CASE("decode prefetch: the single-query kernel of dense tensors (GQA 32/8 D128) prefetches nothing",
          "[prefetch]") {
  CHECK(prefetched_tensors(gqa_decoding).empty());
}
