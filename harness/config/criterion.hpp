// Reading a plan's `acceptance:` list (docs/harness_formats.md, "Acceptance"): each criterion
// checked against the plan's experiments and the derived metric it names, with file, line and
// key in every error.
#pragma once

#include <string>
#include <vector>

#include "harness/config/plan.hpp"
#include "harness/config/yaml_reader.hpp"

namespace dls {

// The criteria under `acceptance` in `top` (none when the key is absent).
std::vector<Criterion> read_acceptance(YamlMap& top, const std::vector<Experiment>& experiments);

}  // namespace dls
