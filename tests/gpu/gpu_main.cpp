// Entry point of the GPU test programs: runs the suite when the program's GPU API has a device, and
// otherwise says why and exits with 77, which ctest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include "catch_console.hpp"
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "gpu/gpu_availability.hpp"

int main(int argc, char** argv) {
  const std::string missing = attngen::testing::gpu_unavailable_reason();
  if (!missing.empty()) {
    std::printf("skipped: %s\n", missing.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
