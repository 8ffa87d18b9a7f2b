#include "attngen/attngen.hpp"
constexpr auto bad = attngen::attention().head_dim(64);
int main() { return attngen::validated<bad>().num_heads; }
