// The allreduce sweep's GPU-memory target (device_allreduce.hpp): NCCL, and MPI on device
// memory (CUDA-aware) or through a host copy (staging).
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>

#include "collectives/nccl_comm.hpp"
#include "collectives/sweep_common.hpp"
#include "kernels/gpu/cuda_check.hpp"
#include "measure/check.hpp"

// Open MPI says at compile time whether it was built with CUDA, and at run time whether the
// library loaded has it (MPIX_Query_cuda_support); other MPIs: assume not, and stage.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace dls {
namespace {

#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
bool mpi_cuda_aware() { return MPIX_Query_cuda_support() == 1; }
#else
bool mpi_cuda_aware() { return false; }
#endif

void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}

template <class T>
ncclDataType_t nccl_type();
template <>
ncclDataType_t nccl_type<float>() {
  return ncclFloat32;
}
template <>
ncclDataType_t nccl_type<double>() {
  return ncclFloat64;
}

struct NodePlace {
  int local_rank, local_size;
};
NodePlace node_place(const Comm& c) {
  MPI_Comm node;
  mpi_check(MPI_Comm_split_type(c.raw(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  NodePlace p{0, 1};
  MPI_Comm_rank(node, &p.local_rank);
  MPI_Comm_size(node, &p.local_size);
  MPI_Comm_free(&node);
  return p;
}

template <class T>
class DeviceTarget final : public AllreduceTarget {
 public:
  DeviceTarget(const Comm& c, std::vector<DeviceAlgo> algos, std::size_t max_count)
      : c_(c), algos_(std::move(algos)), host_(max_count), cuda_aware_(mpi_cuda_aware()) {
    const NodePlace place = node_place(c);
    int ndev = 0;
    const cudaError_t e = cudaGetDeviceCount(&ndev);
    std::string why = e != cudaSuccess ? fmt::format("no CUDA device ({})", cudaGetErrorString(e))
                      : ndev == 0      ? std::string("no CUDA device")
                                       : "";
    const bool nccl = std::find(algos_.begin(), algos_.end(), DeviceAlgo::kNccl) != algos_.end();
    // collective: every rank asks (a GPU per rank, or DLS_NCCL_SHARE_GPU=1 on one node)
    const std::string nccl_why = nccl ? NcclComm::unusable(c) : "";
    if (why.empty() && !nccl_why.empty()) why = nccl_why + " (or --algo mpi)";
    if (c.any(!why.empty()))
      throw ConfigError(
          fmt::format("--memory device: {}", why.empty() ? "another rank has no usable GPU" : why));
    device_ = place.local_rank % ndev;
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    device_name_ = prop.name;
    cuda_check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    buf_ = DeviceBuffer(max_count * sizeof(T));
    if (nccl) comm_ = std::make_unique<NcclComm>(c), nccl_ = static_cast<ncclComm_t>(comm_->raw());
  }
  ~DeviceTarget() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  DeviceTarget(const DeviceTarget&) = delete;
  DeviceTarget& operator=(const DeviceTarget&) = delete;

  std::vector<std::string> algos() const override {
    std::vector<std::string> v;
    for (DeviceAlgo a : algos_) v.push_back(device_algo_name(a));
    return v;
  }
  void zero(std::size_t n) override {
    cuda_check(cudaMemsetAsync(buf_.raw(), 0, n * sizeof(T), stream_), "cudaMemsetAsync");
  }
  void run(std::size_t algo, std::size_t n) override {
    if (n == 0) return;
    if (algos_[algo] == DeviceAlgo::kNccl)
      return nccl_ok(
          ncclAllReduce(buf_.raw(), buf_.raw(), n, nccl_type<T>(), ncclSum, nccl_, stream_),
          "ncclAllReduce");
    wait();  // MPI reads the buffer: earlier work on the stream must be done
    if (cuda_aware_) {
      mpi_check(MPI_Allreduce(MPI_IN_PLACE, buf_.raw(), int(n), mpi_type<T>(), MPI_SUM, c_.raw()),
                "MPI_Allreduce (device)");
      return;
    }
    copy(host_.data(), dev(), n, cudaMemcpyDeviceToHost);
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, host_.data(), int(n), mpi_type<T>(), MPI_SUM, c_.raw()),
              "MPI_Allreduce (staged)");
    copy(dev(), host_.data(), n, cudaMemcpyHostToDevice);
  }
  void wait() override { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  void fill_check(std::size_t n, int rank) override {
    dls::fill_check(host_.data(), n, rank);
    copy(dev(), host_.data(), n, cudaMemcpyHostToDevice);
  }
  long count_wrong(std::size_t n, int ranks) override {
    copy(host_.data(), dev(), n, cudaMemcpyDeviceToHost);
    return dls::count_wrong(host_.data(), n, ranks);
  }
  nlohmann::json describe(std::size_t algo) const override {
    nlohmann::json j = {{"memory", "device"}, {"device", device_name_}, {"gpu_index", device_}};
    if (algos_[algo] == DeviceAlgo::kMpi)
      j["mpi_path"] = cuda_aware_ ? "cuda-aware" : "host staging";
    else
      j["nccl_version"] = NCCL_VERSION_CODE, j["nccl_shared_gpu"] = comm_->shares_gpu();
    return j;
  }

 private:
  T* dev() const { return static_cast<T*>(buf_.raw()); }
  void copy(T* dst, const T* src, std::size_t n, cudaMemcpyKind kind) {
    cuda_check(cudaMemcpyAsync(dst, src, n * sizeof(T), kind, stream_), "cudaMemcpyAsync");
    wait();
  }
  const Comm& c_;
  std::vector<DeviceAlgo> algos_;
  std::vector<T> host_;  // staging copy and check data
  bool cuda_aware_;
  int device_ = 0;
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer buf_;  // the swept vector
  std::unique_ptr<NcclComm> comm_;
  ncclComm_t nccl_ = nullptr;  // comm_'s
};

}  // namespace

template <class T>
std::unique_ptr<AllreduceTarget> make_device_target(const Comm& c,
                                                    const std::vector<DeviceAlgo>& algos,
                                                    std::size_t max_count) {
  return std::make_unique<DeviceTarget<T>>(c, algos, max_count);
}

template std::unique_ptr<AllreduceTarget> make_device_target<float>(const Comm&,
                                                                    const std::vector<DeviceAlgo>&,
                                                                    std::size_t);
template std::unique_ptr<AllreduceTarget> make_device_target<double>(const Comm&,
                                                                     const std::vector<DeviceAlgo>&,
                                                                     std::size_t);

}  // namespace dls
