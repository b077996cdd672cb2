// The op table (see op_table.hpp). One row per op; groups expand to several ops.
#include "kernels/bench/op_table.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      {"gemm", "MxNxK[_ta][_tb]  e.g. 2048x2048x2048", "ref openblas onednn cudnn",
       &make_gemm_case},
      {"conv2d_fwd", "benchdnn conv: g1mb16ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh0dw0",
       "ref openblas onednn cudnn", &make_conv2d_fwd_case},
      {"conv2d_bwd_data", "as conv2d_fwd", "ref openblas onednn cudnn", &make_conv2d_bwd_data_case},
      {"conv2d_bwd_filter", "as conv2d_fwd", "ref openblas onednn cudnn",
       &make_conv2d_bwd_filter_case},
      {"conv2d_wino_fwd", "as conv2d_fwd; 3x3, stride 1, pad <= 2 (Winograd F(4x4,3x3))",
       "openblas", &make_conv2d_wino_fwd_case},
      {"conv2d_wino_bwd_data", "as conv2d_wino_fwd", "openblas", &make_conv2d_wino_bwd_data_case},
      {"conv2d_wino_bwd_filter", "as conv2d_wino_fwd", "openblas",
       &make_conv2d_wino_bwd_filter_case},
      {"conv2d_direct_fwd", "as conv2d_fwd (direct: implicit GEMM, packed operands)", "openblas",
       &make_conv2d_direct_fwd_case},
      {"conv2d_direct_bwd_data", "as conv2d_fwd; stride 1, pad <= (R-1)(dil+1)", "openblas",
       &make_conv2d_direct_bwd_data_case},
      {"conv2d_direct_bwd_filter", "as conv2d_fwd", "openblas",
       &make_conv2d_direct_bwd_filter_case},
      {"conv2d_blocked_fwd",
       "as conv2d_fwd; at most 128 taps (blocked: channel blocks, packed weights)", "openblas",
       &make_conv2d_blocked_fwd_case},
      {"conv2d_blocked_bwd_data", "as conv2d_blocked_fwd", "openblas",
       &make_conv2d_blocked_bwd_data_case},
      {"fc_fwd", "benchdnn ip: mb16ic9216oc4096 (or mb16ic256ih6iw6oc4096)", "ref openblas",
       &make_fc_fwd_case},
      {"fc_bwd_data", "as fc_fwd", "ref openblas", &make_fc_bwd_data_case},
      {"fc_bwd_weights", "as fc_fwd (dw and db)", "ref openblas", &make_fc_bwd_weights_case},
      {"relu_fwd", "tensor: mb16ic64ih56iw56 or n1000000", "ref openblas cudnn",
       &make_relu_fwd_case},
      {"relu_bwd", "tensor", "ref openblas cudnn", &make_relu_bwd_case},
      {"sigmoid_fwd", "tensor", "ref openblas cudnn", &make_sigmoid_fwd_case},
      {"sigmoid_bwd", "tensor", "ref openblas cudnn", &make_sigmoid_bwd_case},
      {"tanh_fwd", "tensor", "ref openblas cudnn", &make_tanh_fwd_case},
      {"tanh_bwd", "tensor", "ref openblas cudnn", &make_tanh_bwd_case},
      {"add", "tensor", "ref openblas cudnn", &make_add_case},
      {"scale", "tensor: n1000000 (y = 2^-40 x, x in [1, 2))", "ref openblas", &make_scale_case},
      {"scale_underflow", "as scale, x in [1, 2) 2^-100: every result a denormal", "ref openblas",
       &make_scale_underflow_case},
      {"triad", "n67108864 (STREAM's a = b + 3 c, float32; bytes_per_s counts 12 B per element)",
       "ref openblas", &make_triad_case},
      {"nchw2nhwc", "tensor (NCHW dims): mb16ic64ih56iw56", "ref openblas", &make_nchw2nhwc_case},
      {"nhwc2nchw", "tensor (NCHW dims)", "ref openblas", &make_nhwc2nchw_case},
      {"maxpool_fwd", "benchdnn pool: mb16ic64ih112iw112kh3kw3sh2sw2ph1pw1 [ceil1: Caffe rounding]",
       "ref openblas cudnn", &make_maxpool_fwd_case},
      {"maxpool_bwd", "as maxpool_fwd", "ref openblas cudnn", &make_maxpool_bwd_case},
      {"avgpool_fwd", "as maxpool_fwd [cip0: divisor excludes padding]", "ref openblas cudnn",
       &make_avgpool_fwd_case},
      {"avgpool_bwd", "as avgpool_fwd", "ref openblas cudnn", &make_avgpool_bwd_case},
      {"lrn_across_fwd", "mb16ic96ih55iw55ls5alpha1e-4beta0.75k1", "ref openblas cudnn",
       &make_lrn_across_fwd_case},
      {"lrn_across_bwd", "as lrn_across_fwd", "ref openblas cudnn", &make_lrn_across_bwd_case},
      {"lrn_within_fwd", "mb100ic32ih16iw16ls3alpha5e-5beta0.75", "ref openblas",
       &make_lrn_within_fwd_case},
      {"lrn_within_bwd", "as lrn_within_fwd", "ref openblas", &make_lrn_within_bwd_case},
      {"bnorm_fwd", "mb16ic64ih56iw56eps1e-5 (training mode)", "ref openblas cudnn",
       &make_bnorm_fwd_case},
      {"bnorm_bwd", "as bnorm_fwd", "ref openblas cudnn", &make_bnorm_bwd_case},
      {"dropout_fwd", "tensor plus drop probability: mb16ic4096p0.5", "ref openblas",
       &make_dropout_fwd_case},
      {"dropout_bwd", "as dropout_fwd", "ref openblas", &make_dropout_bwd_case},
      {"concat_fwd", "channels of each input: mb16ic64:128:32:32ih28iw28", "ref openblas",
       &make_concat_fwd_case},
      {"concat_bwd", "as concat_fwd", "ref openblas", &make_concat_bwd_case},
      {"softmax_xent_fwd", "mb16ic1000 (batch, classes)", "ref openblas cudnn",
       &make_softmax_xent_fwd_case},
      {"softmax_xent_bwd", "mb16ic1000", "ref openblas cudnn", &make_softmax_xent_bwd_case},
      {"sgd_caffe", "n25557032 (parameters)", "ref openblas cudnn", &make_sgd_caffe_case},
      {"sgd_torch", "n25557032", "ref openblas cudnn", &make_sgd_torch_case},
      {"nesterov", "n25557032", "ref openblas cudnn", &make_nesterov_case},
      {"rmsprop", "n25557032", "ref openblas cudnn", &make_rmsprop_case},
      {"adam", "n25557032", "ref openblas cudnn", &make_adam_case},
      {"lars", "n25557032 (one layer)", "ref openblas cudnn", &make_lars_case},
  };
  return table;
}

const OpEntry* find_op(std::string_view op) {
  for (const auto& e : op_table())
    if (op == e.op) return &e;
  return nullptr;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& op_groups() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
      {"conv2d", {"conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_filter"}},
      {"conv2d_wino", {"conv2d_wino_fwd", "conv2d_wino_bwd_data", "conv2d_wino_bwd_filter"}},
      {"conv2d_direct",
       {"conv2d_direct_fwd", "conv2d_direct_bwd_data", "conv2d_direct_bwd_filter"}},
      {"conv2d_blocked", {"conv2d_blocked_fwd", "conv2d_blocked_bwd_data"}},
      {"fc", {"fc_fwd", "fc_bwd_data", "fc_bwd_weights"}},
      {"activations",
       {"relu_fwd", "relu_bwd", "sigmoid_fwd", "sigmoid_bwd", "tanh_fwd", "tanh_bwd"}},
      {"transpose", {"nchw2nhwc", "nhwc2nchw"}},
      {"maxpool", {"maxpool_fwd", "maxpool_bwd"}},
      {"avgpool", {"avgpool_fwd", "avgpool_bwd"}},
      {"pool", {"maxpool_fwd", "maxpool_bwd", "avgpool_fwd", "avgpool_bwd"}},
      {"lrn_across", {"lrn_across_fwd", "lrn_across_bwd"}},
      {"lrn_within", {"lrn_within_fwd", "lrn_within_bwd"}},
      {"lrn", {"lrn_across_fwd", "lrn_across_bwd", "lrn_within_fwd", "lrn_within_bwd"}},
      {"bnorm", {"bnorm_fwd", "bnorm_bwd"}},
      {"dropout", {"dropout_fwd", "dropout_bwd"}},
      {"concat", {"concat_fwd", "concat_bwd"}},
      {"softmax_xent", {"softmax_xent_fwd", "softmax_xent_bwd"}},
      {"optim", {"sgd_caffe", "sgd_torch", "nesterov", "rmsprop", "adam", "lars"}},
      {"underflow", {"scale", "scale_underflow"}},
      {"stream", {"triad"}},
  };
  return groups;
}

std::vector<std::string> expand_op(std::string_view op) {
  const auto& groups = op_groups();
  for (const auto& [name, ops] : groups)
    if (op == name) return ops;
  if (find_op(op)) return {std::string(op)};
  std::vector<std::string> known;
  for (const auto& [name, ops] : groups) known.push_back(name);
  for (const auto& e : op_table()) known.emplace_back(e.op);
  throw ConfigError(fmt::format("unknown op '{}' (known: {})", op, fmt::join(known, ", ")));
}

}  // namespace dls
