/* Calls of generated kernels written in C, as a C app writes them: only attngen/c_api.h and the
 * kernels' <name>.h. Compiled as C; the Catch2 cases in test_c_api.cpp give them data and check. */
#ifndef ATTNGEN_TESTS_C_CALLERS_H
#define ATTNGEN_TESTS_C_CALLERS_H

#include "attngen/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dense views for aot_all_options (4 heads, 2 kv heads, head dims 64 and 32, mask
 * (B, 1, Lq, Lk), key padding, lse). */
attngen_attention_args all_options_args(float* q, float* k, float* v, float* mask, uint8_t* key_padding,
                                        float* output, float* lse, int64_t batch, int64_t query_length,
                                        int64_t key_length);

/* aot_all_options_run on all_options_args. */
int32_t run_all_options(float* q, float* k, float* v, float* mask, uint8_t* key_padding, float* output, float* lse,
                        int64_t batch, int64_t query_length, int64_t key_length, attngen_error* error);

/* aot_module_encoder (embed 64, 4 heads, sequence-first, averaged weights) on weights read
 * from PyTorch's packed state_dict tensors. */
int32_t run_module_encoder(const float* in_proj_weight, const float* in_proj_bias, const float* out_proj_weight,
                           const float* out_proj_bias, float* query, float* key, float* value, float* output,
                           float* attn_weights, int64_t batch, int64_t query_length, int64_t key_length,
                           attngen_error* error);

/* aot_learned_alibi_slopes_backward (4 heads, 2 kv heads, head_dim 32, slopes (4) and their
 * gradient) on dense views of its tensors. */
int32_t run_learned_slopes_backward(float* q, float* k, float* v, float* slopes, float* output, float* lse,
                                    float* d_output, float* dq, float* dk, float* dv, float* d_slopes, int64_t batch,
                                    int64_t query_length, int64_t key_length, attngen_error* error);

/* attngen_merge of two dense float32 partial results (B, Lq, H, Dv) with their (B, H, Lq) log-sum-exps
 * into `output` and `lse`, without sinks. */
int32_t merge_two(float* output_a, float* lse_a, float* output_b, float* lse_b, float* output, float* lse,
                  int64_t batch, int64_t query_length, int64_t heads, int64_t v_head_dim, attngen_error* error);

#ifdef __cplusplus
}
#endif

#endif /* ATTNGEN_TESTS_C_CALLERS_H */
