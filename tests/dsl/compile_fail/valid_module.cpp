#include "attngen/attngen.hpp"
constexpr auto encoder = attngen::multihead_attention()
                             .embed_dim(512)
                             .heads(8)
                             .kv_heads(2)
                             .batch_first(true)
                             .key_padding_mask(attngen::mask_kind::boolean)
                             .need_weights(attngen::weights_output::averaged);
int main() { return attngen::validated<encoder>().embed == 512 ? 0 : 1; }
