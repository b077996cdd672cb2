// main() of the MPI test binary: MPI is initialised once, one rank prints, and every rank's
// result decides the exit code (and so mpirun's). Tests use EXPECT_* only: a rank that failed
// must still join the next collective instead of hanging the others.
#include <gtest/gtest.h>

#include "collectives/comm.hpp"

int main(int argc, char** argv) {
  dls::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (dls::Comm().rank() != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  const int rc = RUN_ALL_TESTS();
  return dls::Comm().any(rc != 0) ? 1 : 0;
}
