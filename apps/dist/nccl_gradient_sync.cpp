// ssgd's NCCL gradient exchange (see nccl_gradient_sync.hpp).
#include "apps/dist/nccl_gradient_sync.hpp"

#include <fmt/format.h>

#include "measure/check.hpp"

namespace dls {

bool use_nccl(const AllreduceRequest& r, bool on_gpu, const Comm& workers, nlohmann::json& params) {
  if (!on_gpu) return false;
  if (r.kind == AllreduceRequest::Kind::kNccl) {
    if (const std::string why = NcclComm::unusable(workers); !why.empty())
      throw ConfigError("--allreduce nccl: " + why +
                        "; or name a host allreduce, e.g. --allreduce ring, to stage the "
                        "exchange through host memory");
    return true;
  }
  if (r.kind != AllreduceRequest::Kind::kAuto) return false;
  const std::string why = NcclComm::unusable(workers, false);  // auto: never a shared GPU
  if (!why.empty()) params["nccl_not_used"] = why;
  return why.empty();
}

NcclGradientSync::NcclGradientSync(const Comm& c, Net<float>& net, double bucket_mb, int teams,
                                   bool overlap)
    : net_(net), buckets_(cut_buckets(net, bucket_mb)) {
  check_comm_teams(teams);
  if (teams > 1 && !overlap)
    throw ConfigError(fmt::format(
        "--comm-teams {}: communication teams reduce buckets while backward goes on; they need "
        "an overlap (got --overlap none)",
        teams));
  if (teams > 1)
    if (const std::string why = NcclComm::order_concurrent_launches(); !why.empty())
      throw ConfigError(fmt::format("--comm-teams {} with NCCL: {}", teams, why));
  for (int k = 0; k < teams; ++k) teams_.push_back(std::make_unique<NcclComm>(c));
}

void NcclGradientSync::start(std::size_t b) {
  const GradBucket& g = buckets_[b];
  teams_[b % teams_.size()]->start_average(net_.grads_data() + g.lo, long(g.count()));
}

void NcclGradientSync::node_done(std::size_t node) {
  while (next_ < buckets_.size() && node <= buckets_[next_].first_node) start(next_++);
}

void NcclGradientSync::finish() {
  for (; next_ < buckets_.size(); ++next_) start(next_);
  next_ = 0;
  for (auto& t : teams_) t->wait();
}

}  // namespace dls
