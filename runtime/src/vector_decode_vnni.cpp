#define ATTNGEN_VECTOR_DECODE_FEATURES "avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx512vnni,fma,f16c"
#define ATTNGEN_VECTOR_DECODE_WORKER run_vector_decode_worker_vnni
#define ATTNGEN_VECTOR_DECODE_VNNI 1
#include "vector_decode_worker.hpp"
