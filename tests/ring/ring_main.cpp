// The ring tests' main: every rank runs the same test cases in the same order (each is collective),
// and the process's exit status is the worst rank's, so mpirun fails when any rank does.
#include <mpi.h>

#include "catch_session.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 reports passes; every rank reports its failures.
  int failed = attngen::testing::run_test_session(argc, argv, rank == 0);
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
