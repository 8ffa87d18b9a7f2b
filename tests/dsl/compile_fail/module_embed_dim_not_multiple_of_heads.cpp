#include "attngen/attngen.hpp"
constexpr auto bad = attngen::multihead_attention().embed_dim(100).heads(8);
int main() { return attngen::validated<bad>().embed; }
