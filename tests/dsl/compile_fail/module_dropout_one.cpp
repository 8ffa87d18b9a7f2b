#include "attngen/attngen.hpp"
constexpr auto bad = attngen::multihead_attention().embed_dim(64).heads(8).dropout(1.0f);
int main() { return attngen::validated<bad>().embed; }
