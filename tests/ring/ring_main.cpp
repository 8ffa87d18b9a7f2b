// The ring tests' main: every rank runs the same test cases in the same order (each is collective),
// and the process's exit status is the worst rank's, so mpirun fails when any rank does.
#define CATCH_CONFIG_RUNNER
#include "catch_console.hpp"
#include <catch2/catch.hpp>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Catch::Session session;
  // Only rank 0 reports passes; every rank reports its failures.
  if (rank != 0) session.configData().showSuccessfulTests = false;
  int failed = session.run(argc, argv);
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
