// The protein-folding contact-map CVAE (models_and_recipes.md §4.3), input 1x28x28 binary maps,
// "same" padding everywhere, ReLU after every conv and dense layer but the heads:
//   encoder  convs 3x3 (feature maps, strides) -> flatten -> [dropout] -> dense 128
//            -> z_mean, z_log_var (dense 128 -> L, linear) -> z (reparameterisation)
//   decoder  dense L -> 128 -> flat, reshape; for i = 1..n-1 a transposed conv 3x3 with
//            feature_maps[-i-1] filters and strides[-i]; the output transposed conv to 1 channel
//            with strides[0] (its sigmoid folded into the loss)
//   loss     batch mean of sum-over-pixels BCE + KL (conventions: VaeConventions)
// cvae (DEEPEX): maps 128,128,128, strides 1,1,1: 26,384,647 parameters, 489,919,616 MACs.
// cvae_molecules (yngtodd/molecules, DeepDriveMD): maps 64 x4, strides 1,2,1,1: 3,448,007 and
// 47,467,648. Keras initialisation: glorot_uniform kernels, zero biases.
#include <fmt/format.h>

#include "apps/models/model.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

template <class T>
std::unique_ptr<Net<T>> build_cvae(const std::string& name, const ModelOptions& o,
                                   const std::vector<int>& maps, const std::vector<int>& strides) {
  const auto [height, width] = image_size(o, 28);
  const int channels = or_default(o.channels, 1), latent = or_default(o.latent, 3);
  auto n = std::make_unique<Net<T>>(name, Dims{o.batch, channels, height, width});
  const Filler glorot{Filler::kGlorotUniform, 0};
  int scale = 1;  // the encoder's strides' product, which the decoder multiplies back
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const std::string id = "enc_conv" + std::to_string(i + 1);
    conv(*n, id,
         {.out = o.w(maps[i]), .kernel = 3, .stride = strides[i], .pad = 1, .weight = glorot});
    relu(*n, id + "_relu");
    scale *= strides[i];
  }
  const int fmaps = o.w(maps.back()), size_h = n->dims(n->last()).h, size_w = n->dims(n->last()).w;
  if (size_h * scale != height || size_w * scale != width)
    throw ConfigError(fmt::format(
        "{}: image {}x{}: each side must be a multiple of {} (the strides' product) for the "
        "decoder to give the input's size back (--image)",
        name, height, width, scale));
  const std::string h =
      (linear(*n, "enc_dense", {.out = o.w(128), .weight = glorot}), relu(*n, "enc_dense_relu"));
  const std::string mu = linear(*n, "z_mean", {.out = latent, .weight = glorot}, {h});
  const std::string logvar = linear(*n, "z_log_var", {.out = latent, .weight = glorot}, {h});
  n->add(std::make_unique<ReparamLayer<T>>("z", o.vae), {mu, logvar});
  linear(*n, "dec_dense1", {.out = o.w(128), .weight = glorot});
  relu(*n, "dec_dense1_relu");
  linear(*n, "dec_dense2", {.out = fmaps * size_h * size_w, .weight = glorot});
  relu(*n, "dec_dense2_relu");
  n->add(std::make_unique<ReshapeLayer<T>>("dec_reshape", fmaps, size_h, size_w));
  auto deconv = [&](const std::string& id, int out, int stride) {
    return n->add(std::make_unique<Deconv2dLayer<T>>(id, DeconvOptions{.out = out,
                                                                       .kernel = 3,
                                                                       .stride = stride,
                                                                       .pad = 1,
                                                                       .output_padding = stride - 1,
                                                                       .weight = glorot}));
  };
  const std::size_t k = maps.size();
  for (std::size_t i = 1; i < k; ++i) {
    deconv("dec_deconv" + std::to_string(i), o.w(maps[k - 1 - i]), strides[k - i]);
    relu(*n, "dec_deconv" + std::to_string(i) + "_relu");
  }
  const std::string logits = deconv("dec_out", channels, strides[0]);
  n->add(std::make_unique<CvaeLossLayer<T>>("loss", o.vae), {logits, "data", mu, logvar}, 1.0f);
  return n;
}

}  // namespace

template <class T>
std::unique_ptr<Net<T>> make_cvae(const ModelOptions& o) {
  return build_cvae<T>("cvae", o, {128, 128, 128}, {1, 1, 1});
}
template <class T>
std::unique_ptr<Net<T>> make_cvae_molecules(const ModelOptions& o) {
  return build_cvae<T>("cvae_molecules", o, {64, 64, 64, 64}, {1, 2, 1, 1});
}

template std::unique_ptr<Net<float>> make_cvae<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_cvae<double>(const ModelOptions&);
template std::unique_ptr<Net<float>> make_cvae_molecules<float>(const ModelOptions&);
template std::unique_ptr<Net<double>> make_cvae_molecules<double>(const ModelOptions&);

}  // namespace dls
