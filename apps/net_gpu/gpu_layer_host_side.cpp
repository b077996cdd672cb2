// Host side: a layer whose work is too small to earn a kernel (the CVAE's reparameterisation,
// 2 x latent values a sample, and its loss) runs as the CPU layer itself on host copies of its
// device buffers. Each call waits for the queued work (cudaMemcpy on the default stream),
// copies the inputs down, runs the host layer (backend openblas, the step's seed: the same
// noise and the same numbers as a CPU run), and copies the results up. The copies are part of
// the layer's device time (the net's marks bracket them). The trainer's record lists these
// layers (host_side_layers), and the host layer keeps what it reports (the CVAE loss terms).
#include <algorithm>

#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cuda_check.hpp"
#include "kernels/gpu/cuda_kernels.hpp"

namespace dls {
namespace {

void down(const float* dev, std::vector<float>& host) {
  cuda_check(cudaMemcpy(host.data(), dev, sizeof(float) * host.size(), cudaMemcpyDeviceToHost),
             "cudaMemcpy D2H (host-side layer)");
}
void up(const std::vector<float>& host, float* dev) {
  cuda_check(cudaMemcpy(dev, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice),
             "cudaMemcpy H2D (host-side layer)");
}

class HostSideGpu final : public DeviceLayer {
 public:
  HostSideGpu(Layer<float>& l, const std::vector<Dims>& in, Dims out)
      : l_(l), y_(std::size_t(out.count())), dy_(y_.size()) {
    if (!l.params().empty())
      throw Error("layer '" + l.name() + "': a host-side device layer cannot have parameters");
    for (const Dims& d : in) x_.emplace_back(std::size_t(d.count())), dx_.emplace_back(0);
    scratch_ = DeviceBuffer(sizeof(float) * std::size_t(std::max(1L, max_input())));
  }
  bool host_side() const override { return true; }
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    l_.forward(host(ctx), inputs(x), y_.data());
    up(y_, y);
  }
  void backward(const Context& ctx, const std::vector<const float*>& x, const float* y,
                const float* dy, const std::vector<float*>& dx,
                const std::vector<char>& acc) override {
    const std::vector<const float*> xs = inputs(x);
    if (y) down(y, y_);
    if (dy) down(dy, dy_);
    std::vector<float*> dxs(dx.size(), nullptr);
    for (std::size_t i = 0; i < dx.size(); ++i)
      if (dx[i]) dx_[i].assign(x_[i].size(), 0.0f), dxs[i] = dx_[i].data();
    l_.backward(host(ctx), xs, y ? y_.data() : nullptr, dy ? dy_.data() : nullptr, dxs);
    for (std::size_t i = 0; i < dx.size(); ++i) {
      if (!dx[i]) continue;
      if (!acc[i]) {
        up(dx_[i], dx[i]);
        continue;
      }
      up(dx_[i], scratch_.f());
      cuda::add(dx[i], scratch_.f(), dx[i], long(dx_[i].size()), false, nullptr);
      cuda_check(cudaGetLastError(), "add kernel (host-side layer's accumulated dx)");
    }
  }

 private:
  static Context host(Context ctx) {
    ctx.backend = Backend::kOpenBlas;
    return ctx;
  }
  std::vector<const float*> inputs(const std::vector<const float*>& x) {
    std::vector<const float*> xs;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i]) down(x[i], x_[i]);
      xs.push_back(x[i] ? x_[i].data() : nullptr);
    }
    return xs;
  }
  long max_input() const {
    long m = 0;
    for (const auto& v : x_) m = std::max(m, long(v.size()));
    return m;
  }
  Layer<float>& l_;
  std::vector<std::vector<float>> x_, dx_;
  std::vector<float> y_, dy_;
  DeviceBuffer scratch_;
};

}  // namespace

std::unique_ptr<DeviceLayer> gpu_host_side(const GpuLayerArgs& a) {
  return std::make_unique<HostSideGpu>(a.layer, a.in, a.out);
}

}  // namespace dls
