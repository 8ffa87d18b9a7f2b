#include "attngen/attngen.hpp"
constexpr auto bad =
    attngen::attention().heads(8).head_dim(64).ragged_queries().additive_mask(attngen::mask_shape::b_1_lq_lk);
int main() { return attngen::validated<bad>().num_heads; }
