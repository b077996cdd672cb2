// The repeats of a campaign, summarised: records grouped by their point_id (the hash of their
// parameters, the same for every repeat of a measurement), with the mean, the sample standard
// deviation and the count of the headline metric of their kind (train: images_per_s, kernel:
// gflop_per_s, collective: busbw_bytes_per_s). Written to summary.json by `dlscale run`.
#pragma once

#include <string>
#include <vector>

#include "harness/run/campaign.hpp"

namespace dls {

struct SummaryRow {
  std::string experiment, kind, benchmark, point_id, metric, label;
  int n = 0;
  double mean = 0, stddev = 0;  // stddev 0 for n == 1
};

std::vector<SummaryRow> summarize_campaign(const Campaign& campaign);
void write_summary(const std::string& dir,
                   const std::vector<SummaryRow>& rows);  // DIR/summary.json, atomically

}  // namespace dls
