#include "attngen/attngen.hpp"
constexpr auto bad = attngen::attention().heads(8).kv_heads(2).head_dim(64).paged_kv(24);
int main() { return attngen::validated<bad>().num_heads; }
