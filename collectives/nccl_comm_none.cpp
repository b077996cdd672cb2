// NcclComm in a build without CUDA or NCCL (nccl_comm.hpp): a clear refusal.
#include "collectives/nccl_comm.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {
const char* const kNoNccl =
    "this build has no NCCL (built without CUDA or NCCL; configure with nvcc, cuDNN and NCCL "
    "present)";
}  // namespace

struct NcclComm::Impl {};

NcclComm::NcclComm(const Comm&) { throw ConfigError(kNoNccl); }
NcclComm::~NcclComm() = default;
void NcclComm::start_average(float*, long) {}
void NcclComm::wait() {}
std::string NcclComm::order_concurrent_launches() { return kNoNccl; }
void NcclComm::average(const std::vector<std::pair<float*, long>>&) {}
void* NcclComm::raw() const { return nullptr; }
std::string NcclComm::version() { return "none (built without NCCL)"; }
std::string NcclComm::unusable(const Comm&, bool) { return kNoNccl; }

}  // namespace dls
