#include "attngen/attngen.hpp"
using namespace attngen::mod;
constexpr auto bad = attngen::attention().heads(4).head_dim(64).mask_mod(q - kv);
int main() { return attngen::validated<bad>().num_heads; }
