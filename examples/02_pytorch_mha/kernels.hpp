#pragma once
// The module this example runs, described once; the build generates its kernel.
#include <attngen/attngen.hpp>

namespace example {

/// nn.MultiheadAttention(256, 8, batch_first=True) called as self-attention (query, key and value are
/// one tensor), with a boolean key_padding_mask (True = padding) and the averaged attention weights
/// PyTorch returns by default.
inline constexpr auto encoder_attention = attngen::multihead_attention()
                                              .embed_dim(256)
                                              .heads(8)
                                              .batch_first(true)
                                              .self_attention(true)
                                              .key_padding_mask(attngen::mask_kind::boolean)
                                              .need_weights(attngen::weights_output::averaged);

}  // namespace example
