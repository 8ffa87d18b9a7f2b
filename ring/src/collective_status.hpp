#pragma once
// Statuses every rank agrees on, so that an error on one rank is an error on all of them and none
// waits for a message that will not come.

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/runtime/status.hpp"

namespace attngen::ring {

// A failed MPI call as a status: "<what> failed: <MPI's message>".
status mpi_failure(int code, const std::string& what);

// The first failing rank's status on every rank ("rank r: <its message>"), or ok when every rank's
// `local` is. Collective.
status agreed_status(MPI_Comm communicator, int rank, const status& local);

// One value every rank must give alike, named for the message that says they do not.
struct agreed_value {
  const char* name;
  std::int64_t value;
};

// Ok when every rank gives the same values; else, on every rank, which one differs and its range.
// Collective.
status check_agreement(MPI_Comm communicator, const std::vector<agreed_value>& values);

}  // namespace attngen::ring
