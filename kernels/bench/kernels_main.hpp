// `dlscale kernels`: runs kernels named by one-line descriptors, checks them against their
// references, times them with Google Benchmark, and writes one dlscale record per case.
#pragma once

#include <string>
#include <vector>

namespace dls {
int kernels_main(int argc, char** argv);  // returns the process exit code

// Why `dlscale kernels ARGS` would refuse these arguments while it reads them (an option out of
// range, an unknown op, a descriptor that does not parse), "" when it would not: the harness
// asks before a campaign runs any point. Nothing is timed or written.
std::string kernels_args_refusal(const std::vector<std::string>& args);
}  // namespace dls
