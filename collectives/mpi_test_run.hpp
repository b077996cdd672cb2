// The body of an MPI test binary's main(): MPI is initialised once, one rank prints, and every
// rank's result decides the exit code (and so mpirun's). Tests use EXPECT_* only: a rank that
// failed must still join the next collective instead of hanging the others.
#pragma once

#include <gtest/gtest.h>

#include "collectives/comm.hpp"

namespace dls {

inline int run_mpi_tests(int* argc, char*** argv) {
  MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(argc, *argv);
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (Comm().rank() != 0) delete listeners.Release(listeners.default_result_printer());
  const int rc = RUN_ALL_TESTS();
  return Comm().any(rc != 0) ? 1 : 0;
}

}  // namespace dls
