#include "attngen/attngen.hpp"
constexpr auto bad = attngen::attention().heads(8).head_dim(0);
int main() { return attngen::validated<bad>().num_heads; }
