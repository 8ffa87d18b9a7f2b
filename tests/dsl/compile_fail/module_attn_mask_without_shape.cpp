#include "attngen/attngen.hpp"
constexpr auto bad =
    attngen::multihead_attention().embed_dim(64).heads(8).attn_mask(attngen::mask_kind::boolean, attngen::attn_mask_shape::none);
int main() { return attngen::validated<bad>().embed; }
