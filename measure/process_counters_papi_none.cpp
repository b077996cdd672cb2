// The PAPI counting path of ProcessCounters in a build without PAPI: it counts nothing.
#include "measure/process_counters.hpp"

namespace dls {
namespace {

class NoPapi final : public CountingPath {
 public:
  const char* name() const override { return "papi"; }
  std::string probe(const std::string&) override {
    return "dlscale was built without PAPI (DLS_WITH_PAPI=OFF)";
  }
  std::unique_ptr<ThreadCounting> open(int, const std::vector<std::string>&) override {
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<CountingPath> papi_counting_path() { return std::make_unique<NoPapi>(); }

}  // namespace dls
