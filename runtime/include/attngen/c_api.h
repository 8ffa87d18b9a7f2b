/* attngen's C API: calling generated kernels from C, and from other languages through their C FFI
 * (Python's ctypes, Rust's extern "C", C#'s P/Invoke, ...).
 *
 * Every generated kernel `<name>` (attngen_add_kernel, `attngen generate`) comes with the C header
 * `<name>.h` next to its C++ `<name>.hpp`. It declares, with the kernel's description and shape
 * contract in its comment:
 *
 *     int32_t <name>_run(const attngen_attention_args* args, attngen_error* error);  (operators)
 *     int32_t <name>_backward(const attngen_attention_backward_args* args, attngen_error* error);
 *                                                            (operators with .with_backward())
 *     int32_t <name>_run(const attngen_mha_args* args, attngen_error* error);        (modules)
 *     int32_t <name>_weights_from_state_dict(const attngen_state_dict_tensor* tensors, size_t count,
 *                                            attngen_mha_weights* weights, attngen_error* error);
 *                                                                                    (modules)
 *     const char* <name>_record(void);
 *
 * With a C++ namespace (NAMESPACE ns::sub), the C names are prefixed `ns_sub_<name>`.
 *
 * Errors: the same validation and messages as the C++ runtime (attngen/runtime/status.hpp). A call
 * returns ATTNGEN_OK (0) or an attngen_error_code; when `error` is not NULL it receives the code and
 * the message, truncated to fit and always NUL-terminated ("" when ok). When a call fails, no output
 * was written. Nothing aborts and no C++ exception crosses this API. Values of the enumerations
 * below that a field does not know (an unknown dtype, a rank above ATTNGEN_MAX_RANK) are errors that
 * name the tensor.
 *
 * Tensors: as attngen::tensor_view (attngen/runtime/tensor.hpp): shape and strides outermost first,
 * strides in elements. A zero-initialised attngen_tensor is "no tensor", and a zero-initialised args
 * struct ({0}) is the starting point of every call: fill in the tensors the kernel's description
 * takes. Fields are fixed-width so that FFI declarations are unambiguous.
 *
 * Threads: kernels share one thread pool, sized by attngen_set_num_threads.
 */
#ifndef ATTNGEN_C_API_H
#define ATTNGEN_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  ATTNGEN_MAX_RANK = 4,
  ATTNGEN_MAX_CAPTURED_TENSORS = 4,
  ATTNGEN_MAX_CAPTURED_SCALARS = 4,
  ATTNGEN_ERROR_MESSAGE_SIZE = 512
};

/* Element types (attngen::dtype). */
typedef enum attngen_dtype {
  ATTNGEN_F32 = 0,
  ATTNGEN_F16 = 1,
  ATTNGEN_BF16 = 2,
  ATTNGEN_U8 = 3, /* boolean masks: 0 = false, anything else = true */
  ATTNGEN_I32 = 4, /* captured integer tensors; offsets, lengths and page tables */
  ATTNGEN_I8 = 5   /* int8 keys and values of a quantised KV cache */
} attngen_dtype;

/* Where a tensor's memory is (attngen::device_kind; see attngen/runtime/gpu.hpp). */
typedef enum attngen_device {
  ATTNGEN_HOST = 0,
  ATTNGEN_CUDA = 1,  /* data is a CUdeviceptr */
  ATTNGEN_OPENCL = 2 /* data is a cl_mem */
} attngen_device;

/* attngen::error_code, value for value. */
typedef enum attngen_error_code {
  ATTNGEN_OK = 0,
  ATTNGEN_NULL_POINTER = 1,
  ATTNGEN_UNEXPECTED_TENSOR = 2,
  ATTNGEN_WRONG_RANK = 3,
  ATTNGEN_WRONG_SHAPE = 4,
  ATTNGEN_WRONG_STRIDE = 5,
  ATTNGEN_WRONG_DTYPE = 6,
  ATTNGEN_TOO_LARGE = 7,
  ATTNGEN_WRONG_DEVICE = 8,
  ATTNGEN_DEVICE_NOT_GENERATED = 9,
  ATTNGEN_KERNEL_FAILED = 10,
  ATTNGEN_MISALIGNED_POINTER = 11,
  ATTNGEN_READ_ONLY_OUTPUT = 12,
  ATTNGEN_COMMUNICATION_FAILED = 13
} attngen_error_code;

typedef struct attngen_error {
  int32_t code; /* an attngen_error_code */
  char message[ATTNGEN_ERROR_MESSAGE_SIZE];
} attngen_error;

typedef struct attngen_tensor {
  void* data;
  int32_t dtype;  /* an attngen_dtype */
  int32_t rank;   /* 0 to ATTNGEN_MAX_RANK; 0 with data NULL is "no tensor" */
  int64_t shape[ATTNGEN_MAX_RANK];
  int64_t strides[ATTNGEN_MAX_RANK]; /* in elements; the innermost must be 1 */
  int32_t device; /* an attngen_device */
} attngen_tensor;

typedef struct attngen_gpu_options {
  int32_t run_host_tensors_on; /* an attngen_device: ATTNGEN_HOST runs host tensors on the CPU */
  void* cuda_context;          /* CUcontext, or NULL */
  void* cuda_stream;           /* CUstream, or NULL for the default stream */
} attngen_gpu_options;

/* An operator call: attngen::attention_args; shape contract in attngen/runtime/attention_call.hpp. */
typedef struct attngen_attention_args {
  attngen_tensor q, k, v;
  attngen_tensor mask;        /* only if the description has an additive mask */
  attngen_tensor key_padding; /* only if the description has a key-padding mask */
  attngen_tensor output;
  attngen_tensor lse;         /* only if the description returns the log-sum-exp */
  attngen_tensor captures[ATTNGEN_MAX_CAPTURED_TENSORS]; /* in declaration order */
  float scalars[ATTNGEN_MAX_CAPTURED_SCALARS];            /* in declaration order */
  attngen_gpu_options gpu;
  /* KV cache and ragged batches (after the rest, so that earlier callers' layouts hold): */
  attngen_tensor q_offsets;         /* only with ragged queries: (B + 1) int32, host memory */
  attngen_tensor k_scale, v_scale;  /* only with int8 keys and values */
  attngen_tensor page_table;        /* only with a paged cache: (B, max_pages) int32, host memory */
  attngen_tensor kv_lengths;        /* only with per-sequence kv lengths: (B) int32, host memory */
  attngen_tensor sinks;             /* only with attention sinks: (H) float32 */
  attngen_tensor positions;         /* only with global positions: (4) int32, host memory */
} attngen_attention_args;

/* A backward call: attngen::attention_backward_args; shape contract in
 * attngen/runtime/attention_backward_call.hpp. Host tensors only. */
typedef struct attngen_attention_backward_args {
  attngen_tensor q, k, v;
  attngen_tensor sinks;       /* only with attention sinks */
  attngen_tensor mask;        /* only if the description has an additive mask */
  attngen_tensor key_padding; /* only if the description has a key-padding mask */
  attngen_tensor captures[ATTNGEN_MAX_CAPTURED_TENSORS]; /* in declaration order */
  float scalars[ATTNGEN_MAX_CAPTURED_SCALARS];            /* in declaration order */
  attngen_tensor output, lse, d_output;                  /* the forward's results, the output's gradient */
  attngen_tensor dq, dk, dv;                             /* written */
  attngen_tensor d_sinks;                                /* written, with attention sinks */
  attngen_tensor d_captures[ATTNGEN_MAX_CAPTURED_TENSORS]; /* written: float tensors the score modifier reads */
  attngen_tensor d_scalars;                              /* written where the score modifier reads a scalar */
  attngen_gpu_options gpu;
} attngen_attention_backward_args;

/* A module's weights: attngen::mha_weights (attngen/runtime/module_call.hpp). */
typedef struct attngen_mha_weights {
  attngen_tensor q_weight, k_weight, v_weight;
  attngen_tensor q_bias, k_bias, v_bias;
  attngen_tensor bias_k, bias_v;
  attngen_tensor out_weight, out_bias;
} attngen_mha_weights;

/* A module call: attngen::mha_args; shape contract in attngen/runtime/module_call.hpp. */
typedef struct attngen_mha_args {
  attngen_tensor query, key, value;
  attngen_mha_weights weights;
  attngen_tensor key_padding_mask;
  attngen_tensor attn_mask;
  attngen_tensor output;
  attngen_tensor attn_weights;
  int32_t training; /* nonzero applies dropout */
  uint64_t seed;
  attngen_gpu_options gpu;
} attngen_mha_args;

/* A module's backward call: attngen::mha_backward_args; shape contract in attngen/runtime/module_call.hpp. */
typedef struct attngen_mha_backward_args {
  attngen_tensor query, key, value;
  attngen_mha_weights weights;
  attngen_tensor key_padding_mask;
  attngen_tensor attn_mask;
  int32_t training; /* nonzero applies dropout, as the forward call did */
  uint64_t seed;
  attngen_tensor d_output;
  attngen_tensor d_query, d_key, d_value; /* written */
  attngen_mha_weights d_weights;          /* written */
  attngen_gpu_options gpu;
} attngen_mha_backward_args;

/* One tensor of a PyTorch state_dict: its key (NUL-terminated) and its dense data. */
typedef struct attngen_state_dict_tensor {
  const char* name;
  const void* data;
} attngen_state_dict_tensor;

/* A partial result (attngen::attention_partial): a kernel's output and log-sum-exp over some of the keys. */
typedef struct attngen_partial {
  attngen_tensor output, lse;
} attngen_partial;

/* attngen::merge (attngen/runtime/merge.hpp): writes to `output` and `lse` the attention over the union
 * of the `count` parts' keys; `sinks` (H) float32 joins each row's denominator once, or is left empty
 * (all zeros) for none. Returns ATTNGEN_OK or the error (the C++ message, "parts[1].lse: ..."); on error
 * nothing is written. */
int32_t attngen_merge(const attngen_partial* parts, int32_t count, attngen_tensor output, attngen_tensor lse,
                      attngen_tensor sinks, attngen_error* error);

/* A dense row-major host tensor over `data` with `rank` extents from `shape` (outermost first).
 * A rank outside 0..ATTNGEN_MAX_RANK, or a NULL shape with rank > 0 (the tensor gets rank -1),
 * gives a tensor that every call rejects as ATTNGEN_WRONG_RANK. */
attngen_tensor attngen_dense_tensor(void* data, int32_t dtype, int32_t rank, const int64_t* shape);

/* The enumerator's name without its prefix, e.g. "wrong_shape"; "unknown" for other values. */
const char* attngen_error_code_name(int32_t code);

/* Number of threads kernels may use; 0 restores the default (the number of CPUs, or HL_NUM_THREADS). */
void attngen_set_num_threads(int32_t threads);

/* Frees the scratch memory kernels keep between calls (see attngen::release_cached_memory). */
void attngen_release_cached_memory(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNGEN_C_API_H */
