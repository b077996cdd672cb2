// The result record: one JSON object per measurement, one per line (JSON Lines), schema
// "dlscale.record/1". Every key the analysis relies on is listed here; adding a key is fine,
// renaming one bumps the schema (consumers ignore unknown keys).
//
//   schema                "dlscale.record/1"
//   kind                  kernel | collective | train
//   benchmark             e.g. "conv2d_fwd" (kernels: the op)
//   params                the canonical parameters of the point (object)
//   point_id              16 hex digits: FNV-1a 64 of params dumped with sorted keys
//   metrics               object; units are SI and named in the key (_s, _bytes, _per_s)
//     kernel:     op, backend, shape (one-line repro), time_s (median), time_s_min, time_s_max,
//                 time_s_mean, time_s_cv, samples, flop, gflop_per_s, pct_of_peak, bytes,
//                 bytes_per_s, peak_flop_per_s, peak_source
//     collective: algo, ranks, bytes, time_s (max over ranks of the per-rank mean),
//                 algbw_bytes_per_s, busbw_bytes_per_s
//     train:      model, parameters, forward_macs, scheme, ranks, batch_per_rank, images_per_s
//                 and step_time_s (the steady window's wall clock, slowest rank),
//                 step_time_median_s, step_time_p95_s, steady_window (steps,
//                 exchange_period_steps, periods, whole_periods, note), epoch_time_s and
//                 epoch_time_from, eval_time_s, phase_s (input, forward, backward, update, sync),
//                 loss, accuracy | rmse (per evaluation), peak_rss_bytes; also steps,
//                 warmup_steps, steady_steps, layer_s, epochs (per-evaluation objects, with
//                 epoch_time_s at an epoch's end and eval_time_s),
//                 activation_bytes, parameter_bytes, workspace_bytes (the convolution
//                 workspace after training: im2col columns, per-thread partial sums, Winograd
//                 tiles and filters), input_wait_s, cache, total_time_s; with --conv-algo find
//                 conv_algos (per conv/deconv layer the algorithm of fwd, bwd_data and
//                 bwd_filter, the candidates' times_s and find_s) and conv_find_s; and with
//                 a target target_reached, time_to_target_s, epochs_to_target; distributed
//                 (apps/dist): phase_s_max (max over ranks; phase_s is then the mean),
//                 peak_rss_bytes_max, placement (per rank: host, cpus, threads, gpu), and
//                 per scheme sync_waited_in_backward_s (ssgd), averages (localsgd),
//                 exchanges (easgd, ps-sync), allreduce (the algorithm used, ssgd: of the
//                 largest buckets; with --allreduce auto also allreduce_auto_times_s, what it
//                 was chosen by, and where ssgd's buckets span several size bands
//                 allreduce_bands: each band's count, choice and times)
//   counters              event -> count, over the timed region on every thread of the process
//                         (kernels: each case's timed calls; collectives: each point's; train:
//                         the steady window, by phase in metrics.counters_by_phase); how in
//                         metrics.counters_scope and counters_paths
//   counters_unavailable  event -> why it could not be counted (never recorded as 0)
//   check                 {status: passed | failed | sampled | skipped, max_rel_err, ...}
//   status                ok | failed | timeout | diverged | skipped
//   error                 "" when status is ok, else the error text
//   provenance            where and with what it ran (provenance.hpp)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dls {

inline constexpr std::string_view kRecordSchema = "dlscale.record/1";

struct Record {
  std::string kind;
  std::string benchmark;
  nlohmann::json params = nlohmann::json::object();
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json counters = nlohmann::json::object();
  nlohmann::json counters_unavailable = nlohmann::json::object();
  nlohmann::json check = {{"status", "skipped"}};
  std::string status = "ok";
  std::string error;
  nlohmann::json provenance = nlohmann::json::object();

  nlohmann::json to_json() const;  // adds schema and point_id
  // Validates against the schema; throws ConfigError naming the first bad key.
  static Record from_json(const nlohmann::json& j);
};

std::string point_id(const nlohmann::json& params);

// Throws Error naming `path` unless records can be appended to it, without creating it: an
// existing file is opened for appending (and closed); else its folders are made and a probe file
// of this process's own is created in the last and removed. For a command that writes its record
// at the end (`dlscale train`): an --out that cannot take it fails before the run, and no empty
// file is left by a run refused later (removing one could remove another run's file).
void check_appendable(const std::string& path);

// Appends records to a JSON Lines file. Each append is one write(2) of one whole line under an
// exclusive flock, followed by fdatasync, so concurrent writers never interleave and a killed
// run never loses a record that was already appended. A write cut short by a kill can still
// leave a torn last line: an append after one starts with a newline, and opening the file
// repairs it first (jsonl.hpp's repair_torn_tail; move_aside only for the file's one writer),
// and repaired() says what was done, for the caller's log.
class RecordWriter {
 public:
  // Creates parent folders; throws Error on failure. move_aside: this is the file's only writer
  // (the campaign runner's records.jsonl and points.jsonl), so a torn tail may be cut off.
  explicit RecordWriter(std::string path, bool move_aside = false);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void append(const Record& r);
  void append_json(const nlohmann::json& j);  // any JSON object as one line, the same way
  const std::string& path() const { return path_; }
  const std::string& repaired() const { return repaired_; }  // "" when the file was whole

 private:
  std::string path_, repaired_;
  int fd_ = -1;
};

}  // namespace dls
