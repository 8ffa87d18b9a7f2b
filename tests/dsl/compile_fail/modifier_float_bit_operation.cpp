#include "attngen/attngen.hpp"
using namespace attngen::mod;
// A bit operation on a float.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).mask_mod((to_float(kv) & 3) == 0);
int main() { return attngen::validated<bad>().num_heads; }
