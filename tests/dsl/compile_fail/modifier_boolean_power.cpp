#include "attngen/attngen.hpp"
using namespace attngen::mod;
// pow with a comparison as its exponent.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).score_mod(pow(score, kv <= q));
int main() { return attngen::validated<bad>().num_heads; }
