// Backend names (see backend.hpp).
#include "kernels/common/backend.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

std::string backend_name(Backend b) {
  switch (b) {
    case Backend::kRef:
      return "ref";
    case Backend::kOpenBlas:
      return "openblas";
    case Backend::kOneDnn:
      return "onednn";
    case Backend::kCudnn:
      return "cudnn";
  }
  return "?";
}

Backend parse_backend(std::string_view name) {
  if (name == "ref") return Backend::kRef;
  if (name == "openblas" || name == "cpu") return Backend::kOpenBlas;
  if (name == "onednn") return Backend::kOneDnn;
  if (name == "cudnn") return Backend::kCudnn;
  throw ConfigError(fmt::format(
      "--backend '{}': unknown backend (expected ref, openblas, onednn or cudnn)", name));
}

std::string conv_algo_name(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::kAuto:
      return "auto";
    case ConvAlgo::kGemm:
      return "gemm";
    case ConvAlgo::kWinograd:
      return "winograd";
    case ConvAlgo::kDirect:
      return "direct";
    case ConvAlgo::kBlocked:
      return "blocked";
    case ConvAlgo::kFind:
      return "find";
  }
  return "?";
}

ConvAlgo parse_conv_algo(std::string_view name) {
  if (name == "auto") return ConvAlgo::kAuto;
  if (name == "gemm") return ConvAlgo::kGemm;
  if (name == "winograd") return ConvAlgo::kWinograd;
  if (name == "direct") return ConvAlgo::kDirect;
  if (name == "blocked") return ConvAlgo::kBlocked;
  if (name == "find") return ConvAlgo::kFind;
  throw ConfigError(
      fmt::format("--conv-algo '{}': unknown algorithm (expected auto, gemm, winograd, direct, "
                  "blocked or find)",
                  name));
}

}  // namespace dls
