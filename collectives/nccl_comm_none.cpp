// NcclComm in a build without CUDA or NCCL (nccl_comm.hpp): a clear refusal.
#include "collectives/nccl_comm.hpp"
#include "measure/check.hpp"

namespace dls {

struct NcclComm::Impl {};

NcclComm::NcclComm(const Comm&) {
  throw ConfigError(
      "this build has no NCCL (built without CUDA or NCCL; configure with nvcc, cuDNN and NCCL "
      "present)");
}
NcclComm::~NcclComm() = default;
void NcclComm::average(float*, long) {}
void* NcclComm::raw() const { return nullptr; }
bool NcclComm::built() { return false; }
std::string NcclComm::version() { return "none (built without NCCL)"; }

}  // namespace dls
