#include "attngen/runtime/detail/thread_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

// How long an idle worker spins before it sleeps: longer than the gaps between an app's
// back-to-back calls, short enough that an idle process gives its CPUs back within a blink.
constexpr std::chrono::microseconds spin_before_sleep{2000};

// Set on the pool's workers, and on a caller while it runs a loop's iterations: a loop started
// from inside an iteration (nested parallelism) runs serially there.
thread_local bool inside_loop = false;

inline void pause_briefly() { __builtin_ia32_pause(); }

// One parallel loop: iterations [min, min + size) of `task`, taken one at a time by whoever is free.
struct loop {
  halide_task_t task;
  void* user_context;
  int min, size;
  std::uint8_t* closure;
  std::atomic<int> next{0}, done{0}, result{0};

  // Runs iterations until none is left; the first failing iteration's result is the loop's.
  void take_iterations() {
    for (int i = next.fetch_add(1); i < size; i = next.fetch_add(1)) {
      if (const int r = task(user_context, min + i, closure); r != 0) {
        int none = 0;
        result.compare_exchange_strong(none, r);
      }
      done.fetch_add(1, std::memory_order_release);
    }
  }
};

int run_serially(void* user_context, halide_task_t task, int min, int size, std::uint8_t* closure) {
  for (int i = 0; i < size; ++i)
    if (const int r = task(user_context, min + i, closure); r != 0) return r;
  return 0;
}

int configured_threads(int requested) {
  if (requested > 0) return requested;
  if (const char* text = std::getenv("HL_NUM_THREADS"); text != nullptr && std::atoi(text) > 0) return std::atoi(text);
  return std::max(1, int(std::thread::hardware_concurrency()));
}

class spinning_pool {
 public:
  spinning_pool() { pthread_atfork(nullptr, nullptr, &forget_workers_in_child); }
  ~spinning_pool() { stop_workers(); }

  int run(void* user_context, halide_task_t task, int min, int size, std::uint8_t* closure) {
    // One loop at a time has the workers; a loop nested in an iteration, or started while another
    // thread's loop has them, runs on its caller alone.
    if (inside_loop || size <= 1) return run_serially(user_context, task, min, size, closure);
    std::unique_lock<std::mutex> owner(run_mutex_, std::try_to_lock);
    if (!owner.owns_lock()) return run_serially(user_context, task, min, size, closure);
    if (!started_) start_workers();
    if (workers_.empty()) return run_serially(user_context, task, min, size, closure);
    loop l{task, user_context, min, size, closure};
    current_.store(&l);
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) generation_.notify_all();
    inside_loop = true;
    l.take_iterations();
    inside_loop = false;
    while (l.done.load(std::memory_order_acquire) < size) pause_briefly();
    // No worker may still hold the loop when it goes out of scope: each counts itself active
    // before it reads current_.
    current_.store(nullptr);
    while (active_.load() != 0) pause_briefly();
    return l.result.load();
  }

  int threads() const { return configured_threads(requested_threads_.load()); }

  void set_threads(int threads) {
    std::lock_guard<std::mutex> owner(run_mutex_);
    stop_workers();
    requested_threads_.store(threads);
  }

 private:
  void start_workers() {
    started_ = true;
    stopping_.store(false);
    const int threads = configured_threads(requested_threads_.load());
    cpu_set_t allowed;
    const bool placed = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    const int caller_cpu = sched_getcpu();
    // The generation the workers start from is read here: a stop before a worker first looks is a change.
    const std::uint64_t start = generation_.load();
    for (int n = 1; n < threads; ++n) {
      auto* launch = new worker_launch{this, start, allowed, placed};
      // Linux starts a thread on its creator's CPU, where it waited for the creator's time slice
      // until the load balancer moved it (1.5-10 ms here, the call at one thread's speed): each
      // worker starts on another allowed CPU, then may go anywhere.
      pthread_attr_t attributes;
      pthread_attr_init(&attributes);
      if (cpu_set_t away; placed && away_from(allowed, caller_cpu, n, away))
        pthread_attr_setaffinity_np(&attributes, sizeof away, &away);
      pthread_t worker;
      if (pthread_create(&worker, &attributes, &run_worker, launch) == 0) {
        workers_.push_back(worker);
      } else {
        delete launch;
      }
      pthread_attr_destroy(&attributes);
    }
  }

  // What a new worker needs: its pool, the generation it starts from, the CPUs it may run on.
  struct worker_launch {
    spinning_pool* pool;
    std::uint64_t start;
    cpu_set_t allowed;
    bool placed;
  };

  static void* run_worker(void* argument) {
    const std::unique_ptr<worker_launch> launch(static_cast<worker_launch*>(argument));
    if (launch->placed) sched_setaffinity(0, sizeof launch->allowed, &launch->allowed);
    launch->pool->work(launch->start);
    return nullptr;
  }

  // The n-th allowed CPU other than `caller_cpu`, as a set of one; false where there is none.
  static bool away_from(const cpu_set_t& allowed, int caller_cpu, int n, cpu_set_t& one) {
    std::vector<int> others;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed) && cpu != caller_cpu) others.push_back(cpu);
    if (others.empty() || caller_cpu < 0) return false;
    CPU_ZERO(&one);
    CPU_SET(others[std::size_t(n - 1) % others.size()], &one);
    return true;
  }

  void stop_workers() {
    if (!started_) return;
    stopping_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (pthread_t worker : workers_) pthread_join(worker, nullptr);
    workers_.clear();
    started_ = false;
  }

  // A worker: waits for the next loop (spinning, then asleep), takes its iterations, again.
  void work(std::uint64_t seen) {
    inside_loop = true;
    for (;;) {
      std::uint64_t now = wait_for_change(seen);
      if (stopping_.load()) return;
      seen = now;
      active_.fetch_add(1);
      if (loop* l = current_.load()) l->take_iterations();
      active_.fetch_sub(1);
    }
  }

  std::uint64_t wait_for_change(std::uint64_t seen) {
    auto spin_start = std::chrono::steady_clock::now();
    for (int spins = 1;; ++spins) {
      const std::uint64_t now = generation_.load(std::memory_order_acquire);
      if (now != seen) return now;
      pause_briefly();
      if (spins % 256 != 0 || std::chrono::steady_clock::now() - spin_start < spin_before_sleep) continue;
      sleepers_.fetch_add(1);
      generation_.wait(seen);
      sleepers_.fetch_sub(1);
      spin_start = std::chrono::steady_clock::now();
    }
  }

  // A child of fork() has only the thread that forked: the pool starts afresh there on its next loop.
  static void forget_workers_in_child();

  std::mutex run_mutex_;
  bool started_ = false;
  std::atomic<int> requested_threads_{0};  // read by threads() outside run_mutex_
  std::vector<pthread_t> workers_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<loop*> current_{nullptr};
  std::atomic<int> active_{0}, sleepers_{0};
  std::atomic<bool> stopping_{false};
};

spinning_pool& pool() {
  static spinning_pool instance;
  return instance;
}

void spinning_pool::forget_workers_in_child() {
  spinning_pool& p = pool();
  new (&p.run_mutex_) std::mutex;  // another thread may have held it at the fork
  p.workers_.clear();
  p.started_ = false;
  p.current_.store(nullptr);
  p.active_.store(0);
  p.sleepers_.store(0);
}

int do_par_for(void* user_context, halide_task_t task, int min, int size, std::uint8_t* closure) {
  return pool().run(user_context, task, min, size, closure);
}

}  // namespace

void install_thread_pool() {
  static const bool installed = (halide_set_custom_do_par_for(&do_par_for), true);
  (void)installed;
}

void set_pool_threads(int threads) { pool().set_threads(threads); }

int pool_threads() { return pool().threads(); }

}  // namespace attngen::detail
