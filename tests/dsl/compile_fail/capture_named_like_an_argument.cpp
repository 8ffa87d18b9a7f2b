#include "attngen/attngen.hpp"
// The typed call run(q, k, v, ..., output, ...) would take two parameters named `output`.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).capture(attngen::scalar("output"));
int main() { return attngen::validated<bad>().num_heads; }
