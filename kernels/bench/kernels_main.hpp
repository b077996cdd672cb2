// `dlscale kernels`: runs kernels named by one-line descriptors, checks them against their
// references, times them with Google Benchmark, and writes one dlscale record per case.
#pragma once

namespace dls {
int kernels_main(int argc, char** argv);  // returns the process exit code
}  // namespace dls
