// One runner per campaign: DIR/runner.lock, made with an exclusive create, so it also works where
// flock does not (Lustre, NFS). The file is written whole beside the lock and hard-linked to its
// name (link(2) fails when the name exists), so a lock file is never seen half written. It holds
// the holder's host, pid, the pid's start time (against pid reuse), the host's boot id and a
// token.
// A lock is stale, and taken over with a line in the log, when its holder ran on this host, in
// this pid namespace, and is gone (no such pid, another process under that pid, or the host
// rebooted since), and so is its watchdog (which stops the dead runner's point: a takeover waits
// up to 15 s for it). A lock of a live holder, of another host or pid namespace (whose pids
// cannot be checked from here), or whose holder cannot be examined (another user's, /proc
// hidden), refuses the run with CampaignBusy naming host, pid and start; the user removes a lock
// left by a dead runner elsewhere by hand, as the message says.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "measure/check.hpp"

namespace dls {

class CampaignBusy : public Error {
 public:
  using Error::Error;
};

// The exit status of `dlscale run` when another runner holds the campaign.
inline constexpr int kExitCampaignBusy = 5;

class CampaignLock {
 public:
  explicit CampaignLock(const std::string& dir);  // throws CampaignBusy, or Error
  ~CampaignLock();                                // removes the lock if it is still this one's
  CampaignLock(const CampaignLock&) = delete;
  CampaignLock& operator=(const CampaignLock&) = delete;

  const std::string& took_over() const { return took_over_; }  // "" or what stale lock was replaced
  const std::string& path() const { return path_; }
  void set_watchdog(long pid);  // records the runner's watchdog in the lock

 private:
  std::string path_, token_, took_over_;
  nlohmann::json me_;
};

}  // namespace dls
