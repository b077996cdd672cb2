// The NetDevice on one CUDA device (gpu_device.hpp): memory, copies, the marks (CUDA events),
// input staging and the optimizer updates. All device compute is queued on the default stream,
// where the cuDNN and cuBLAS handles of kernels/gpu work (a host-side layer computes on the host
// between blocking copies on that stream); input staging has a non-blocking stream of
// its own so that the next batch's copy overlaps this step's compute.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "apps/net_gpu/gpu_device.hpp"
#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cuda_kernels.hpp"
#include "kernels/gpu/gpu.hpp"
#include "kernels/gpu/gpu_op_base.hpp"

namespace dls {
namespace {

class CudaNetDevice final : public NetDevice {
 public:
  explicit CudaNetDevice(int local_rank) {
    if (const std::string why = gpu_unavailable(); !why.empty())
      throw ConfigError("--backend cudnn: " + why);
    int n = 0;
    cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    index_ = local_rank % n;
    cuda_check(cudaSetDevice(index_), "cudaSetDevice");
    name_ = fmt::format("cuda:{} ({}, math {}, conv {})", index_, gpu_name(), gpu_math_mode(),
                        gpu_conv_choice());
    cuda_check(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    norms_ = DeviceBuffer(2 * sizeof(double));
  }
  ~CudaNetDevice() override {
    for (cudaEvent_t e : marks_) cudaEventDestroy(e);
    for (Slot& s : slots_)
      if (s.pinned) cudaFreeHost(s.pinned);
    if (copy_) cudaStreamDestroy(copy_);
  }

  std::string name() const override { return name_; }
  int index() const override { return index_; }

  float* alloc(long count) override {
    DeviceBuffer& b = buffers_.emplace_back(sizeof(float) * std::size_t(count));
    if (count) cuda_check(cudaMemset(b.raw(), 0, b.bytes()), "cudaMemset");
    return b.f();
  }
  void upload(const float* host, float* dev, long count) override {
    cuda_check(cudaMemcpy(dev, host, sizeof(float) * std::size_t(count), cudaMemcpyHostToDevice),
               "cudaMemcpy H2D");
  }
  void download(const float* dev, float* host, long count) override {
    cuda_check(cudaMemcpy(host, dev, sizeof(float) * std::size_t(count), cudaMemcpyDeviceToHost),
               "cudaMemcpy D2H");
  }
  void fill(float* dev, long count, float value) override {
    cuda::fill(dev, count, value, nullptr);
    cuda_check(cudaGetLastError(), "fill kernel");
  }
  void accumulate(const float* x, float* z, long count) override {
    cuda::accumulate(x, z, count, nullptr);
    cuda_check(cudaGetLastError(), "accumulate kernel");
  }
  std::unique_ptr<DeviceLayer> make_layer(Layer<float>& layer, const std::vector<Dims>& in,
                                          Dims out, const std::vector<float*>& w,
                                          const std::vector<float*>& dw) override {
    return make_gpu_layer(layer, in, out, w, dw);
  }
  void optim_update(Optim o, const OptimParams& p, float* w, const float* g, float* s1, float* s2,
                    long count) override {
    cuda::optim_update(o, p, w, g, s1, s2, count, static_cast<double*>(norms_.raw()), nullptr);
    cuda_check(cudaGetLastError(), "optimizer kernel");
  }

  // Slot buffers are made on first use; a slot's pinned copy and upload finish before return,
  // so the caller (one prefetch thread) may reuse its host buffer at once.
  float* stage_input(int slot, const float* host, long count) override {
    cuda_check(cudaSetDevice(index_), "cudaSetDevice (input staging thread)");
    const std::size_t bytes = sizeof(float) * std::size_t(count);
    Slot* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(m_);
      while (int(slots_.size()) <= slot) slots_.emplace_back();
      s = &slots_[std::size_t(slot)];
      if (s->device.bytes() < bytes) {
        if (s->pinned) cuda_check(cudaFreeHost(s->pinned), "cudaFreeHost");
        s->pinned = nullptr;
        cuda_check(cudaMallocHost(&s->pinned, bytes), "cudaMallocHost");
        s->device = DeviceBuffer(bytes);
      }
    }
    std::memcpy(s->pinned, host, bytes);
    cuda_check(cudaMemcpyAsync(s->device.raw(), s->pinned, bytes, cudaMemcpyHostToDevice, copy_),
               "cudaMemcpyAsync (input)");
    cuda_check(cudaStreamSynchronize(copy_), "cudaStreamSynchronize (input)");
    return s->device.f();
  }

  void record(std::size_t mark) override {
    while (marks_.size() <= mark) {
      cudaEvent_t e = nullptr;
      cuda_check(cudaEventCreate(&e), "cudaEventCreate");
      marks_.push_back(e);
    }
    cuda_check(cudaEventRecord(marks_[mark], nullptr), "cudaEventRecord");
  }
  double seconds(std::size_t from, std::size_t to) override {
    cuda_check(cudaEventSynchronize(marks_.at(to)), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, marks_.at(from), marks_.at(to)), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }
  void synchronize() override {
    cuda_check(cudaGetLastError(), "a kernel launch");
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

 private:
  struct Slot {
    void* pinned = nullptr;
    DeviceBuffer device;
  };
  int index_ = 0;
  std::string name_;
  cudaStream_t copy_ = nullptr;
  std::deque<DeviceBuffer> buffers_;  // deque: growing it moves no buffer
  std::deque<Slot> slots_;
  std::vector<cudaEvent_t> marks_;
  DeviceBuffer norms_;  // LARS's two squared norms
  std::mutex m_;
};

}  // namespace

std::unique_ptr<NetDevice> make_gpu_device(int local_rank) {
  return std::make_unique<CudaNetDevice>(local_rank);
}

}  // namespace dls
