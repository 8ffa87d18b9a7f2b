#pragma once
// Whole files in and out: what the generator writes, and what the external tools it runs wrote.

#include <string>

namespace attngen::codegen {

// Writes `text` as the file at `path`. Throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

// The bytes of the file at `path` (empty if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace attngen::codegen
