// Host side: a layer whose work is too small to earn a kernel (the CVAE's reparameterisation,
// 2 x latent values a sample, and its loss) runs as the CPU layer itself on host copies of its
// device buffers. Each call waits for the queued work (cudaMemcpy on the default stream),
// copies down the inputs (forward) or the output's gradient (backward), runs the host layer
// (backend openblas, the step's seed: the same noise and the same numbers as a CPU run), and
// copies the results up. The copies are part of the layer's device time (the net's marks
// bracket them). The trainer's record lists these layers (host_side_layers), and the host layer
// keeps what it reports (the CVAE loss terms).
#include "apps/net_gpu/gpu_layers.hpp"
#include "kernels/gpu/cuda_check.hpp"

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
    if (l.can_accumulate_dx())  // the net would ask it to add to dx, which the upload overwrites
      throw Error("layer '" + l.name() + "': a host-side device layer cannot accumulate dx");
    for (const Dims& d : in)
      x_.emplace_back(std::size_t(d.count())), dx_.emplace_back(std::size_t(d.count()));
  }
  bool host_side() const override { return true; }
  void forward(const Context& ctx, const std::vector<const float*>& x, float* y) override {
    for (std::size_t i = 0; i < x.size(); ++i) down(x[i], x_[i]);
    l_.forward(host(ctx), inputs(), y_.data());
    up(y_, y);
  }
  // The inputs and output are forward's host copies: what a backward reads, the net keeps
  // unchanged on the device until it has run.
  void backward(const Context& ctx, const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx, const std::vector<char>&) override {
    if (dy) down(dy, dy_);
    std::vector<float*> dxs(dx.size(), nullptr);
    for (std::size_t i = 0; i < dx.size(); ++i)
      if (dx[i]) dxs[i] = dx_[i].data();
    l_.backward(host(ctx), inputs(), y_.data(), dy ? dy_.data() : nullptr, dxs);
    for (std::size_t i = 0; i < dx.size(); ++i)
      if (dx[i]) up(dx_[i], dx[i]);
  }

 private:
  static Context host(Context ctx) {
    ctx.backend = Backend::kOpenBlas;
    return ctx;
  }
  std::vector<const float*> inputs() const {
    std::vector<const float*> xs;
    for (const auto& v : x_) xs.push_back(v.data());
    return xs;
  }
  Layer<float>& l_;
  std::vector<std::vector<float>> x_, dx_;
  std::vector<float> y_, dy_;
};

}  // namespace

std::unique_ptr<DeviceLayer> gpu_host_side(const GpuLayerArgs& a) {
  return std::make_unique<HostSideGpu>(a.layer, a.in, a.out);
}

}  // namespace dls
