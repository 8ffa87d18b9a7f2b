#include "attngen/attngen.hpp"
using namespace attngen::mod;
constexpr auto document = attngen::tensor<attngen::capture_type::i32>("document", attngen::dim::batch,
                                                                      attngen::dim::key_length);
// Reads `document` without .capture(document).
constexpr auto bad = attngen::attention().heads(4).head_dim(64).mask_mod(document(b, q) == document(b, kv));
int main() { return attngen::validated<bad>().num_heads; }
