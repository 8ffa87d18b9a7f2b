#include "attngen/codegen/kernel_pipeline.hpp"

#include "attngen/codegen/dead_branches.hpp"

namespace attngen::codegen {

Halide::Pipeline kernel_pipeline(const std::vector<Halide::Func>& outputs) {
  Halide::Pipeline pipeline(outputs);
  drop_branches_loops_decide(pipeline);
  return pipeline;
}

}  // namespace attngen::codegen
