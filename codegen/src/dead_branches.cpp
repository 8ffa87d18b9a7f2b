#include "attngen/codegen/dead_branches.hpp"

#include <string>
#include <vector>

namespace attngen::codegen {

namespace {

using namespace Halide::Internal;
using Halide::Expr;

class drop_decided_branches : public IRMutator {
  using IRMutator::visit;

  // The loops around the statement being visited: their variable and the end of their range, while
  // the names that end reads keep the values they had at the loop.
  struct loop_range {
    std::string variable;
    Expr end;
  };
  std::vector<loop_range> loops_;

  Stmt visit(const For* loop) override {
    loops_.push_back({loop->name, simplify(loop->min + loop->extent)});
    Stmt body = mutate(loop->body);
    loops_.pop_back();
    return body.same_as(loop->body)
               ? Stmt(loop)
               : For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->device_api, body);
  }

  // A name bound again inside a loop may change what its variable or its end means: that loop
  // decides nothing within the binding.
  Stmt visit(const LetStmt* let) override {
    std::vector<loop_range> outer = loops_;
    std::erase_if(loops_, [&](const loop_range& l) {
      return l.variable == let->name || expr_uses_var(l.end, let->name);
    });
    Stmt result = IRMutator::visit(let);
    loops_ = std::move(outer);
    return result;
  }

  // Whether `test` holds everywhere in one of the enclosing loops: `v + c < end + c` or
  // `v + c <= end + c - 1` (c a constant, 0 included) inside `for v in [min, end)`.
  bool loop_decides(const Expr& test) const {
    Expr lhs, bound;
    if (const LT* less = test.as<LT>()) {
      lhs = less->a;
      bound = less->b;
    } else if (const LE* at_most = test.as<LE>()) {
      lhs = at_most->a;
      bound = at_most->b + 1;
    } else {
      return false;
    }
    Expr offset = 0;
    if (const Add* sum = lhs.as<Add>(); sum && is_const(sum->b)) {
      lhs = sum->a;
      offset = sum->b;
    }
    const Variable* v = lhs.as<Variable>();
    if (!v) return false;
    const Expr end = simplify(bound - offset);
    for (const loop_range& loop : loops_)
      if (loop.variable == v->name && graph_equal(loop.end, end)) return true;
    return false;
  }

  Stmt visit(const IfThenElse* branch) override {
    if (loop_decides(branch->condition)) return mutate(branch->then_case);
    return IRMutator::visit(branch);
  }
};

}  // namespace

void drop_branches_loops_decide(Halide::Pipeline& pipeline) {
  pipeline.add_custom_lowering_pass(new drop_decided_branches);
}

}  // namespace attngen::codegen
