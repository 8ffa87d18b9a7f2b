#include "c_callers.h"

#include <string.h>

#include "aot_all_options.h"
#include "aot_learned_alibi_slopes.h"
#include "aot_module_encoder.h"

attngen_attention_args all_options_args(float* q, float* k, float* v, float* mask, uint8_t* key_padding,
                                        float* output, float* lse, int64_t batch, int64_t query_length,
                                        int64_t key_length) {
  const int64_t q_shape[] = {batch, query_length, 4, 64};
  const int64_t k_shape[] = {batch, key_length, 2, 64};
  const int64_t v_shape[] = {batch, key_length, 2, 32};
  const int64_t mask_shape[] = {batch, 1, query_length, key_length};
  const int64_t key_padding_shape[] = {batch, key_length};
  const int64_t output_shape[] = {batch, query_length, 4, 32};
  const int64_t lse_shape[] = {batch, 4, query_length};
  attngen_attention_args args;
  memset(&args, 0, sizeof args);
  args.q = attngen_dense_tensor(q, ATTNGEN_F32, 4, q_shape);
  args.k = attngen_dense_tensor(k, ATTNGEN_F32, 4, k_shape);
  args.v = attngen_dense_tensor(v, ATTNGEN_F32, 4, v_shape);
  args.mask = attngen_dense_tensor(mask, ATTNGEN_F32, 4, mask_shape);
  args.key_padding = attngen_dense_tensor(key_padding, ATTNGEN_U8, 2, key_padding_shape);
  args.output = attngen_dense_tensor(output, ATTNGEN_F32, 4, output_shape);
  args.lse = attngen_dense_tensor(lse, ATTNGEN_F32, 3, lse_shape);
  return args;
}

int32_t run_all_options(float* q, float* k, float* v, float* mask, uint8_t* key_padding, float* output, float* lse,
                        int64_t batch, int64_t query_length, int64_t key_length, attngen_error* error) {
  const attngen_attention_args args =
      all_options_args(q, k, v, mask, key_padding, output, lse, batch, query_length, key_length);
  return aot_all_options_run(&args, error);
}

int32_t run_module_encoder(const float* in_proj_weight, const float* in_proj_bias, const float* out_proj_weight,
                           const float* out_proj_bias, float* query, float* key, float* value, float* output,
                           float* attn_weights, int64_t batch, int64_t query_length, int64_t key_length,
                           attngen_error* error) {
  const attngen_state_dict_tensor state_dict[] = {{"in_proj_weight", in_proj_weight},
                                                  {"in_proj_bias", in_proj_bias},
                                                  {"out_proj.weight", out_proj_weight},
                                                  {"out_proj.bias", out_proj_bias}};
  const int64_t query_shape[] = {query_length, batch, 64};
  const int64_t key_shape[] = {key_length, batch, 64};
  const int64_t weights_shape[] = {batch, query_length, key_length};
  attngen_mha_args args;
  memset(&args, 0, sizeof args);
  const int32_t code = aot_module_encoder_weights_from_state_dict(
      state_dict, sizeof state_dict / sizeof state_dict[0], &args.weights, error);
  if (code != ATTNGEN_OK) return code;
  args.query = attngen_dense_tensor(query, ATTNGEN_F32, 3, query_shape);
  args.key = attngen_dense_tensor(key, ATTNGEN_F32, 3, key_shape);
  args.value = attngen_dense_tensor(value, ATTNGEN_F32, 3, key_shape);
  args.output = attngen_dense_tensor(output, ATTNGEN_F32, 3, query_shape);
  args.attn_weights = attngen_dense_tensor(attn_weights, ATTNGEN_F32, 3, weights_shape);
  return aot_module_encoder_run(&args, error);
}

int32_t run_learned_slopes_backward(float* q, float* k, float* v, float* slopes, float* output, float* lse,
                                    float* d_output, float* dq, float* dk, float* dv, float* d_slopes, int64_t batch,
                                    int64_t query_length, int64_t key_length, attngen_error* error) {
  const int64_t q_shape[] = {batch, query_length, 4, 32};
  const int64_t k_shape[] = {batch, key_length, 2, 32};
  const int64_t lse_shape[] = {batch, 4, query_length};
  const int64_t slopes_shape[] = {4};
  attngen_attention_backward_args args;
  memset(&args, 0, sizeof args);
  args.q = attngen_dense_tensor(q, ATTNGEN_F32, 4, q_shape);
  args.k = attngen_dense_tensor(k, ATTNGEN_F32, 4, k_shape);
  args.v = attngen_dense_tensor(v, ATTNGEN_F32, 4, k_shape);
  args.captures[0] = attngen_dense_tensor(slopes, ATTNGEN_F32, 1, slopes_shape);
  args.output = attngen_dense_tensor(output, ATTNGEN_F32, 4, q_shape);
  args.lse = attngen_dense_tensor(lse, ATTNGEN_F32, 3, lse_shape);
  args.d_output = attngen_dense_tensor(d_output, ATTNGEN_F32, 4, q_shape);
  args.dq = attngen_dense_tensor(dq, ATTNGEN_F32, 4, q_shape);
  args.dk = attngen_dense_tensor(dk, ATTNGEN_F32, 4, k_shape);
  args.dv = attngen_dense_tensor(dv, ATTNGEN_F32, 4, k_shape);
  args.d_captures[0] = attngen_dense_tensor(d_slopes, ATTNGEN_F32, 1, slopes_shape);
  return aot_learned_alibi_slopes_backward(&args, error);
}

int32_t merge_two(float* output_a, float* lse_a, float* output_b, float* lse_b, float* output, float* lse,
                  int64_t batch, int64_t query_length, int64_t heads, int64_t v_head_dim, attngen_error* error) {
  const int64_t output_shape[4] = {batch, query_length, heads, v_head_dim};
  const int64_t lse_shape[3] = {batch, heads, query_length};
  attngen_partial parts[2];
  attngen_tensor no_sinks;
  memset(&no_sinks, 0, sizeof no_sinks);
  parts[0].output = attngen_dense_tensor(output_a, ATTNGEN_F32, 4, output_shape);
  parts[0].lse = attngen_dense_tensor(lse_a, ATTNGEN_F32, 3, lse_shape);
  parts[1].output = attngen_dense_tensor(output_b, ATTNGEN_F32, 4, output_shape);
  parts[1].lse = attngen_dense_tensor(lse_b, ATTNGEN_F32, 3, lse_shape);
  return attngen_merge(parts, 2, attngen_dense_tensor(output, ATTNGEN_F32, 4, output_shape),
                       attngen_dense_tensor(lse, ATTNGEN_F32, 3, lse_shape), no_sinks, error);
}
