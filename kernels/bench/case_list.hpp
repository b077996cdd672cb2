// Expansion of `dlscale kernels` arguments into cases: every descriptor (from --shape and
// --shapes files, each line optionally prefixed by its op) x op x batch x threads x backend.
// Pure: parses and validates everything before anything runs, so bad input never leaves a
// partial result behind.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/bench/kernel_case.hpp"
#include "measure/core_latency.hpp"
#include "measure/counter_list.hpp"

namespace dls {

struct CaseRequest {
  std::vector<std::string> shapes;       // --shape, repeatable
  std::vector<std::string> shape_files;  // --shapes, repeatable
  std::vector<std::string> ops;          // --op (comma lists allowed); empty: ops from lines
  std::vector<std::string> backends;     // --backend
  std::vector<int> threads;              // --threads
  std::vector<int> mbs;                  // --mb (batch sweep; 0 = descriptor's batch)
};

struct CaseEntry {
  std::string op, descriptor, source;  // source: "--shape" or "file:line"
  Backend backend = Backend::kOpenBlas;
  int threads = 1, mb = 0;
  std::unique_ptr<KernelCase> kcase;
  std::string unsupported;  // non-empty: skipped, with this reason
  // filled while running
  bool prepared = false;
  std::string error;
  CheckOutcome check;
  std::vector<double> samples_s;
  long iterations = 0;
  CounterTotals counters;
  std::vector<CoreRoundTrip> cores;  // the cores' round trips before and after its timing
  std::string name() const;          // "<op>/<backend>/t<threads>/<canonical shape>"
};

std::vector<CaseEntry> build_cases(const CaseRequest& req);  // throws ConfigError

}  // namespace dls
