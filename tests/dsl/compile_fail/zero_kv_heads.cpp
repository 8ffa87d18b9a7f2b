#include "attngen/attngen.hpp"
constexpr auto bad = attngen::attention().heads(8).kv_heads(0).head_dim(64);
int main() { return attngen::validated<bad>().num_heads; }
