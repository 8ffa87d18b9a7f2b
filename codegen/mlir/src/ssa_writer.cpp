#include "ssa_writer.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace attngen::mlir_export {

std::string ssa_writer::value(const std::string& operation) {
  std::string name = fresh();
  line(name + " = " + operation);
  return name;
}

void ssa_writer::line(const std::string& text) {
  text_.append(std::size_t(2 * depth_), ' ');
  text_ += text;
  text_ += '\n';
}

std::string f32_literal(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%08X", bits);
  return buffer;
}

std::string ssa_writer::f32_constant(float x) { return value("arith.constant " + f32_literal(x) + " : f32"); }
std::string ssa_writer::i32_constant(int x) { return value("arith.constant " + std::to_string(x) + " : i32"); }
std::string ssa_writer::bool_constant(bool x) { return value(std::string("arith.constant ") + (x ? "true" : "false")); }
std::string ssa_writer::index_constant(long long x) { return value("arith.constant " + std::to_string(x) + " : index"); }

}  // namespace attngen::mlir_export
