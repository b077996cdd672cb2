// The op table (see op_table.hpp). One row per op; groups expand to several ops.
#include "kernels/bench/op_table.hpp"

#include <fmt/format.h>

#include "kernels/core/check.hpp"

namespace dls {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      {"gemm", "MxNxK[_ta][_tb]  e.g. 2048x2048x2048", "ref openblas onednn", &make_gemm_case},
      {"conv2d_fwd", "benchdnn conv: g1mb16ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh0dw0", "ref openblas onednn", &make_conv2d_fwd_case},
      {"conv2d_bwd_data", "as conv2d_fwd", "ref openblas onednn", &make_conv2d_bwd_data_case},
      {"conv2d_bwd_filter", "as conv2d_fwd", "ref openblas onednn", &make_conv2d_bwd_filter_case},
  };
  return table;
}

const OpEntry* find_op(std::string_view op) {
  for (const auto& e : op_table())
    if (op == e.op) return &e;
  return nullptr;
}

std::vector<std::string> expand_op(std::string_view op) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
      {"conv2d", {"conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_filter"}},
  };
  for (const auto& [name, ops] : groups)
    if (op == name) return ops;
  if (find_op(op)) return {std::string(op)};
  std::vector<std::string> known;
  for (const auto& [name, ops] : groups) known.push_back(name);
  for (const auto& e : op_table()) known.emplace_back(e.op);
  throw ConfigError(fmt::format("unknown op '{}' (known: {})", op, fmt::join(known, ", ")));
}

}  // namespace dls
