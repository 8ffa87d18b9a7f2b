// Entry point of the GPU test programs: runs the suite when the program's GPU API has a device, and
// otherwise says why and exits with 77, which ctest reports as skipped.
#include <cstdio>
#include <string>

#include "catch_session.hpp"
#include "gpu/gpu_availability.hpp"

int main(int argc, char** argv) {
  const std::string missing = attngen::testing::gpu_unavailable_reason();
  if (!missing.empty()) {
    std::printf("skipped: %s\n", missing.c_str());
    return 77;
  }
  return attngen::testing::run_test_session(argc, argv);
}
