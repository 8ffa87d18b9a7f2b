#include "attngen/attngen.hpp"
using namespace attngen::mod;
// A comparison used as a number.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).score_mod(score + (kv <= q));
int main() { return attngen::validated<bad>().num_heads; }
