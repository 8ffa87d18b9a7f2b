#define ATTNGEN_VECTOR_DECODE_FEATURES "avx512f,avx512cd,avx512bw,avx512dq,avx512vl,fma,f16c"
#define ATTNGEN_VECTOR_DECODE_WORKER run_vector_decode_worker_avx512
#include "vector_decode_worker.hpp"
