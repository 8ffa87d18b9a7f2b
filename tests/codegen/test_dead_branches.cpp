// The cleanup of codegen/dead_branches.hpp: branches the enclosing loop decides leave the code, so a
// kernel whose log-sum-exp shares the output's loops holds one copy of its tile body, not two.
#include <catch2/catch.hpp>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/dead_branches.hpp"
#include "codegen/lowered_kernel.hpp"

using namespace attngen;
using namespace attngen::codegen;

namespace {

// How many times the lowered code of the general variant computes the state (the tile body),
// counting every copy.
int state_computations(const attention_desc& desc, bool drop_decided_branches) {
  const Halide::Module module = testing::lowered_general_kernel(desc, [&](Halide::Pipeline& pipeline) {
    if (drop_decided_branches) drop_branches_loops_decide(pipeline);
  });
  struct producer_counter : Halide::Internal::IRVisitor {
    int states = 0;
    using IRVisitor::visit;
    void visit(const Halide::Internal::ProducerConsumer* node) override {
      // Halide renames the Funcs of a second pipeline in the process: state$1, ...
      if (node->is_producer && (node->name == "state" || node->name.rfind("state$", 0) == 0)) ++states;
      IRVisitor::visit(node);
    }
  } counter;
  testing::visit_code(module, counter);
  return counter.states;
}

const attention_desc gqa_causal_with_lse = attention().heads(8).kv_heads(2).head_dim(32).causal(top_left).return_lse();

}  // namespace

TEST_CASE("dead branches: a GQA 8/2 D32 causal kernel with LSE computes its tile state in one place",
          "[dead_branches]") {
  CHECK(state_computations(gqa_causal_with_lse, true) == 1);
}

TEST_CASE("dead branches: without the cleanup, the same kernel holds a second, dead copy of it",
          "[dead_branches]") {
  CHECK(state_computations(gqa_causal_with_lse, false) == 2);
}
