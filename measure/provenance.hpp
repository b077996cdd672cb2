// Provenance: where and with what a measurement ran. Captured once per process and copied into
// every record it writes, so each record can be traced without a side file.
//   host, site, start_time (UTC), git commit + dirty flag, compiler + flags + build type,
//   the BLAS (name, config, dispatched core, threads, threading mode), oneDNN, MPI, PAPI, CUDA
//   versions (when linked), CPU model and topology, ISA flags, hypervisor, kernel release,
//   and the environment variables that change results.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dls {

struct ProvenanceOptions {
  std::string site = "localhost";
  std::string command_line;
};

nlohmann::json capture_provenance(const ProvenanceOptions& options);

// `dlscale --version`: the version, git commit, build and the libraries this binary runs on
// (the provenance's git, build and libraries, a line each).
std::string version_text();

// The environment variables that change results (threading, binding, BLAS/DNN dispatch, MPI,
// GPU maths modes). Only those that are set are recorded.
bool is_relevant_env_var(const std::string& name);

}  // namespace dls
