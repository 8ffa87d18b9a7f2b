/* The consumer's kernel called through the installed C API, from C. */
#include <stdio.h>
#include <string.h>

#include "sliding_gqa.h"

int run_sliding_gqa_from_c(float* q, float* k, float* v, float* output, int64_t batch, int64_t length) {
  const int64_t q_shape[] = {batch, length, 4, 32};
  const int64_t kv_shape[] = {batch, length, 2, 32};
  attngen_attention_args args;
  attngen_error error;
  memset(&args, 0, sizeof args);
  args.q = attngen_dense_tensor(q, ATTNGEN_F32, 4, q_shape);
  args.k = attngen_dense_tensor(k, ATTNGEN_F32, 4, kv_shape);
  args.v = attngen_dense_tensor(v, ATTNGEN_F32, 4, kv_shape);
  args.output = attngen_dense_tensor(output, ATTNGEN_F32, 4, q_shape);
  if (sliding_gqa_run(&args, &error) != ATTNGEN_OK) {
    fprintf(stderr, "C call failed (%s): %s\n", attngen_error_code_name(error.code), error.message);
    return 1;
  }
  return 0;
}
