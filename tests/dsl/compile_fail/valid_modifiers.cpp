#include "attngen/attngen.hpp"
using namespace attngen::mod;
constexpr auto document = attngen::tensor<attngen::capture_type::i32>("document", attngen::dim::batch,
                                                                      attngen::dim::key_length);
constexpr auto good = attngen::attention()
                          .heads(8)
                          .kv_heads(2)
                          .head_dim(64)
                          .capture(document)
                          .mask_mod(attngen::document_mask(document) && attngen::sliding_window(256, 0))
                          .score_mod(attngen::softcap(30.0f));
int main() { return attngen::validated<good>().num_heads; }
