#pragma once
/// The kernels' parallel loops (halide_do_par_for) on attngen's own pool: workers start on CPUs other
/// than their creator's and keep spinning for a while after a loop before they sleep, so that
/// back-to-back small calls find them awake and apart. With Halide 14's pool (workers asleep after
/// about 40 yields, started beside their creator) mha_small ran at one thread's speed, 72-83 us
/// against 39-47, for stretches of 1.5-10 ms: the two threads took turns on one CPU until Linux's
/// load balancer moved one (docs/performance.md).

namespace attngen::detail {

/// Makes every kernel's parallel loops run on the pool (idempotent; every kernel call does it).
void install_thread_pool();

/// The threads the pool's loops use, the caller included: `threads`, or with 0 HL_NUM_THREADS where
/// set, else the CPUs.
void set_pool_threads(int threads);

/// The threads the pool's loops use now, the caller included.
int pool_threads();

}  // namespace attngen::detail
