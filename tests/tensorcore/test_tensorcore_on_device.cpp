// The tensor-core kernels generated for the registry's configurations (attngen tensorcore), compiled
// by nvcc and run on this machine's CUDA device against the float64 reference: the same cases as the
// host model's (test_tensorcore_configurations.cpp), now through the instructions themselves.
#include <vector>

#include "tensorcore/tensorcore_cases.hpp"

namespace attngen::testing {
/// Defined by the build's compiled_tensorcore_kernels.cu (support/configuration_kernels.cmake).
extern const std::vector<compiled_tensorcore_variant> compiled_tensorcore_kernels;
}  // namespace attngen::testing

namespace {
const bool registered =
    attngen::testing::register_tensorcore_cases(attngen::testing::compiled_tensorcore_kernels, "on this CUDA device");
}  // namespace
