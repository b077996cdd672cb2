// The held-out target of a training run (see trainer.hpp).
#include <fmt/format.h>

#include "apps/train/trainer.hpp"
#include "measure/check.hpp"

namespace dls {

bool Target::met(double loss, double accuracy, double rmse) const {
  switch (metric) {
    case Metric::kNone:
      return false;
    case Metric::kLoss:
      return loss <= value;
    case Metric::kAccuracy:
      return accuracy >= value;
    case Metric::kRmse:
      return rmse >= 0 && rmse <= value;
  }
  return false;
}

std::string Target::str() const {
  switch (metric) {
    case Metric::kNone:
      return "";
    case Metric::kLoss:
      return fmt::format("loss<={:g}", value);
    case Metric::kAccuracy:
      return fmt::format("accuracy>={:g}", value);
    case Metric::kRmse:
      return fmt::format("rmse<={:g}", value);
  }
  return "";
}

Target Target::parse(const std::string& text) {
  Target t;
  if (text.empty()) return t;
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  if (key == "loss")
    t.metric = Metric::kLoss;
  else if (key == "accuracy")
    t.metric = Metric::kAccuracy;
  else if (key == "rmse")
    t.metric = Metric::kRmse;
  else
    throw ConfigError(fmt::format("--target '{}': expected loss=X, accuracy=X or rmse=X", text));
  try {
    std::size_t used = 0;
    t.value = std::stod(text.substr(eq + 1), &used);
    if (eq == std::string::npos || used != text.size() - eq - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("--target '{}': the value is not a number", text));
  }
  return t;
}

}  // namespace dls
