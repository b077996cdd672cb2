// main() of the MPI test binaries (mpi_test_run.hpp).
#include "collectives/mpi_test_run.hpp"

int main(int argc, char** argv) { return dls::run_mpi_tests(&argc, &argv); }
