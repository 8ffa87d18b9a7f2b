#include "collective_status.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace attngen::ring {

status mpi_failure(int code, const std::string& what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return status(error_code::communication_failed, what + " failed: " + std::string(text, std::size_t(length)));
}

status agreed_status(MPI_Comm communicator, int rank, const status& local) {
  const int mine = local.ok() ? INT_MAX : rank;
  int first = INT_MAX;
  if (int e = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, communicator); e != MPI_SUCCESS)
    return mpi_failure(e, "MPI_Allreduce of the ranks' statuses");
  if (first == INT_MAX) return {};
  // The failing rank's code and message, cut to a fixed length, to every rank.
  struct {
    int code;
    char message[1000];
  } shared{};
  if (rank == first) {
    shared.code = int(local.code());
    std::strncpy(shared.message, local.message().c_str(), sizeof shared.message - 1);
  }
  if (int e = MPI_Bcast(&shared, int(sizeof shared), MPI_BYTE, first, communicator); e != MPI_SUCCESS)
    return mpi_failure(e, "MPI_Bcast of rank " + std::to_string(first) + "'s error");
  return status(error_code(shared.code), "rank " + std::to_string(first) + ": " + shared.message);
}

status check_agreement(MPI_Comm communicator, const std::vector<agreed_value>& values) {
  std::vector<std::int64_t> mine(values.size()), low(values.size()), high(values.size());
  for (std::size_t n = 0; n < values.size(); ++n) mine[n] = values[n].value;
  const int count = int(values.size());
  if (int e = MPI_Allreduce(mine.data(), low.data(), count, MPI_INT64_T, MPI_MIN, communicator); e != MPI_SUCCESS)
    return mpi_failure(e, "MPI_Allreduce of the ranks' shapes");
  if (int e = MPI_Allreduce(mine.data(), high.data(), count, MPI_INT64_T, MPI_MAX, communicator); e != MPI_SUCCESS)
    return mpi_failure(e, "MPI_Allreduce of the ranks' shapes");
  for (std::size_t n = 0; n < values.size(); ++n)
    if (low[n] != high[n])
      return status(error_code::communication_failed,
                    std::string("ranks disagree on ") + values[n].name + ": from " + std::to_string(low[n]) + " to " +
                        std::to_string(high[n]) + " (every rank passes the same description, batch, totals and split)");
  return {};
}

}  // namespace attngen::ring
