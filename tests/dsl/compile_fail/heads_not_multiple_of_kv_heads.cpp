#include "attngen/attngen.hpp"
constexpr auto bad = attngen::attention().heads(32).kv_heads(5).head_dim(128);
int main() { return attngen::validated<bad>().num_heads; }
