// The explicit table of ops `dlscale kernels` knows (no self-registration): name, descriptor
// syntax, and the factory that builds a case from a descriptor. mb > 0 overrides the batch of
// ops that have one (batch sweeps).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/bench/kernel_case.hpp"

namespace dls {

using CaseFactory = std::unique_ptr<KernelCase> (*)(std::string_view descriptor, int mb);

struct OpEntry {
  const char* op;
  const char* syntax;    // documented descriptor syntax, with an example
  const char* backends;  // backends with an implementation
  CaseFactory make;
};

const std::vector<OpEntry>& op_table();
const OpEntry* find_op(std::string_view op);
// Named groups of ops: "conv2d" -> its three directions, "pool" -> max and avg, fwd and bwd...
const std::vector<std::pair<std::string, std::vector<std::string>>>& op_groups();
// "conv2d" -> its three directions, and other group names; a plain op -> itself.
// Throws ConfigError naming the op and listing the known ones.
std::vector<std::string> expand_op(std::string_view op);

// Factories, one per op family, defined next to the kernels (kernels/<family>/*_bench.cpp).
std::unique_ptr<KernelCase> make_gemm_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_bwd_data_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_bwd_filter_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_wino_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_wino_bwd_data_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_wino_bwd_filter_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_direct_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_blocked_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_blocked_bwd_data_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_direct_bwd_data_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_conv2d_direct_bwd_filter_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_fc_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_fc_bwd_data_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_fc_bwd_weights_case(std::string_view d, int mb);

std::unique_ptr<KernelCase> make_relu_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_relu_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_sigmoid_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_sigmoid_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_tanh_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_tanh_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_add_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_scale_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_scale_underflow_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_triad_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_nchw2nhwc_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_nhwc2nchw_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_maxpool_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_maxpool_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_avgpool_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_avgpool_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_lrn_across_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_lrn_across_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_lrn_within_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_lrn_within_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_bnorm_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_bnorm_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_dropout_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_dropout_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_concat_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_concat_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_softmax_xent_fwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_softmax_xent_bwd_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_sgd_caffe_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_sgd_torch_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_nesterov_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_rmsprop_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_adam_case(std::string_view d, int mb);
std::unique_ptr<KernelCase> make_lars_case(std::string_view d, int mb);

}  // namespace dls
