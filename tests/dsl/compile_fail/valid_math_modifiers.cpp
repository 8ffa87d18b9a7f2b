#include "attngen/attngen.hpp"
using namespace attngen::mod;
// FlexAttention-style modifiers: a dilated mask combined with &, a hashed block mask, periodic
// biases and masking through the score with -infinity.
constexpr auto good = attngen::attention()
                          .heads(8)
                          .kv_heads(2)
                          .head_dim(64)
                          .mask_mod(((q - kv) % 2 == 0) & (kv <= q) | (((q >> 6) ^ (kv >> 6)) & 1) == 0)
                          .score_mod(select(kv % 4 == 3, -infinity,
                                            score + sin(to_float(q - kv) * 0.1f) * exp2(to_float(-h)) +
                                                sigmoid(score) * erf(score) - floor(sqrt(abs(score)))));
int main() { return attngen::validated<good>().num_heads; }
