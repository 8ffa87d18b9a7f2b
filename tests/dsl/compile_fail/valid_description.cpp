// Control: a valid description passes the same check the build applies.
#include "attngen/attngen.hpp"
constexpr auto llama = attngen::attention().heads(32).kv_heads(8).head_dim(128).causal(attngen::top_left);
int main() { return attngen::validated<llama>().num_heads == 32 ? 0 : 1; }
