#include "attngen/attngen.hpp"
using namespace attngen::mod;
// A shift by a float count.
constexpr auto bad = attngen::attention().heads(4).head_dim(64).mask_mod((kv << 1.5f) <= q);
int main() { return attngen::validated<bad>().num_heads; }
