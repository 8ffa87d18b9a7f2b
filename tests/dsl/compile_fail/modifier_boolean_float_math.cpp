#include "attngen/attngen.hpp"
using namespace attngen::mod;
// Float math on a comparison.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).score_mod(score * sin(kv <= q));
int main() { return attngen::validated<bad>().num_heads; }
