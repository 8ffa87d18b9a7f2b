// attngen's thread pool, which runs every kernel's parallel loops (halide_do_par_for): each
// iteration once, the first failing iteration's result returned, nested loops serial, at most the
// threads set_num_threads allows.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/runtime.hpp"
#include "attngen/runtime/detail/thread_pool.hpp"

using namespace attngen;

namespace {

// What a loop's iterations saw: how often each ran, and on which threads.
struct loop_record {
  std::vector<std::atomic<int>> runs;
  std::mutex lock;
  std::set<std::thread::id> threads;
  int failing = -1;  ///< the iteration that returns an error, if any

  explicit loop_record(int size) : runs(std::size_t(size)) {}
};

int record_iteration(void*, int i, std::uint8_t* closure) {
  auto* r = reinterpret_cast<loop_record*>(closure);
  r->runs[std::size_t(i)].fetch_add(1);
  {
    std::lock_guard<std::mutex> hold(r->lock);
    r->threads.insert(std::this_thread::get_id());
  }
  // Enough work per iteration that a second thread has time to join.
  volatile double x = 0;
  for (int n = 0; n < 20000; ++n) x = x + n;
  return i == r->failing ? -7 : 0;
}

int run_loop(loop_record& r) {
  detail::install_thread_pool();
  return halide_do_par_for(nullptr, &record_iteration, 0, int(r.runs.size()), reinterpret_cast<std::uint8_t*>(&r));
}

}  // namespace

TEST_CASE("thread pool: every iteration of a loop runs exactly once", "[threads]") {
  set_num_threads(4);
  for (int size : {1, 2, 3, 17, 400}) {
    loop_record r(size);
    CHECK(run_loop(r) == 0);
    CHECK(std::all_of(r.runs.begin(), r.runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
  }
  set_num_threads(0);
}

TEST_CASE("thread pool: a failing iteration's result is the loop's, the other iterations still run", "[threads]") {
  set_num_threads(2);
  loop_record r(50);
  r.failing = 31;
  CHECK(run_loop(r) == -7);
  CHECK(std::all_of(r.runs.begin(), r.runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
  set_num_threads(0);
}

TEST_CASE("thread pool: one thread runs every iteration on the caller", "[threads]") {
  set_num_threads(1);
  loop_record r(64);
  CHECK(run_loop(r) == 0);
  CHECK(r.threads == std::set<std::thread::id>{std::this_thread::get_id()});
  set_num_threads(0);
}

TEST_CASE("thread pool: a loop uses at most the threads set, the caller among them", "[threads]") {
  set_num_threads(3);
  for (int repeat = 0; repeat < 20; ++repeat) {
    loop_record r(300);
    CHECK(run_loop(r) == 0);
    CHECK(r.threads.size() <= 3);
  }
  set_num_threads(0);
}

TEST_CASE("thread pool: loops started by several threads at once each run every iteration once", "[threads]") {
  set_num_threads(2);
  std::vector<std::unique_ptr<loop_record>> records;
  for (int t = 0; t < 4; ++t) records.push_back(std::make_unique<loop_record>(97));
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int repeat = 0; repeat < 5; ++repeat) {
        loop_record& r = *records[std::size_t(t)];
        if (run_loop(r) != 0) failures.fetch_add(1);
      }
    });
  for (std::thread& c : callers) c.join();
  CHECK(failures.load() == 0);
  for (const auto& r : records)
    CHECK(std::all_of(r->runs.begin(), r->runs.end(), [](const std::atomic<int>& n) { return n.load() == 5; }));
  set_num_threads(0);
}

namespace {

// Iteration i of the outer loop runs the inner loop whose record is the i-th.
int nested_iteration(void*, int i, std::uint8_t* closure) {
  loop_record& inner = reinterpret_cast<std::unique_ptr<loop_record>*>(closure)[i].operator*();
  return halide_do_par_for(nullptr, &record_iteration, 0, int(inner.runs.size()), reinterpret_cast<std::uint8_t*>(&inner));
}

}  // namespace

TEST_CASE("thread pool: a loop started inside an iteration runs on that iteration's thread", "[threads]") {
  set_num_threads(2);
  detail::install_thread_pool();
  for (int repeat = 0; repeat < 10; ++repeat) {
    std::unique_ptr<loop_record> inners[] = {std::make_unique<loop_record>(10), std::make_unique<loop_record>(10)};
    CHECK(halide_do_par_for(nullptr, &nested_iteration, 0, 2, reinterpret_cast<std::uint8_t*>(inners)) == 0);
    for (const auto& inner : inners) {
      CHECK(std::all_of(inner->runs.begin(), inner->runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
      CHECK(inner->threads.size() == 1);
    }
  }
  set_num_threads(0);
}

TEST_CASE("thread pool: a child of fork() runs its loops on a pool of its own", "[threads]") {
  set_num_threads(2);
  loop_record before(64);
  REQUIRE(run_loop(before) == 0);  // the parent's workers are running
  // Forked only once they wait asleep: a worker still starting may hold the allocator's lock under
  // ASan (clang 15 does not take it around fork), and the child's first allocation would wait forever.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t child = fork();
  if (child == 0) {
    // Long enough (about 20 ms) that a worker of the child's own takes part; the exit stops it.
    loop_record r(2000);
    const bool ok = run_loop(r) == 0 && r.threads.size() == 2 &&
                    std::all_of(r.runs.begin(), r.runs.end(), [](const std::atomic<int>& n) { return n.load() == 1; });
    std::exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  set_num_threads(0);
}
