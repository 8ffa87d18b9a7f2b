// Catch2's implementation, alone in its translation unit: it is slow to compile (about 40 s) and never
// changes, so every test program links this one object, through catch_main.cpp's main or a main of
// its own (GPU availability, MPI ranks) that calls run_test_session.
#define CATCH_CONFIG_RUNNER
#include "catch_session.hpp"

#include "catch_console.hpp"
#include <catch2/catch.hpp>

namespace attngen::testing {

int run_test_session(int argc, char** argv, bool report_passes) {
  Catch::Session session;
  const int status = session.applyCommandLine(argc, argv);
  if (status != 0) return status;
  if (!report_passes) session.configData().showSuccessfulTests = false;
  return session.run();
}

}  // namespace attngen::testing
