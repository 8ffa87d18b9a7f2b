#pragma once
// Writes MLIR operations as text into a function body, one per line, each result a fresh SSA name.
// Names are unique in the whole function: MLIR refuses a name a nested region redefines.

#include <string>

namespace attngen::mlir_export {

class ssa_writer {
 public:
  /// Appends `%vN = <operation>` at the current indentation and returns `%vN`.
  std::string value(const std::string& operation);
  /// Appends a line that defines no value (yield, return, a region's closing brace).
  void line(const std::string& text);
  void indent() { depth_ += 1; }
  void dedent() { depth_ -= 1; }
  /// A value name of the writer's own sequence, for block arguments.
  std::string fresh() { return "%v" + std::to_string(next_++); }
  const std::string& text() const { return text_; }

  std::string f32_constant(float x);
  std::string i32_constant(int x);
  std::string bool_constant(bool x);
  std::string index_constant(long long x);

 private:
  std::string text_;
  int depth_ = 1;
  int next_ = 0;
};

/// The MLIR spelling of a float's bits, exact for every value including infinities and NaNs.
std::string f32_literal(float x);

}  // namespace attngen::mlir_export
