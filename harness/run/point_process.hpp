// A point's processes, and what stops them when the runner dies.
// Each point starts in a session of its own (setsid): the launcher and everything it starts
// share that session id, also the ranks that Open MPI's mpirun puts in process groups of their
// own, and also after their parent died (a session, unlike a parent, survives reparenting).
// Stopping a point means signalling every process of its session (kill_session).
// A runner killed outright (kill -9) cannot clean up, so a watchdog process does it: started
// once per campaign in a session of its own, it reads the runner's pipe, on which each point
// announces its session before it execs and the runner says when it ended. When the pipe
// closes without a goodbye (the runner is gone, however it died), the watchdog sends SIGTERM
// to every session still running, then SIGKILL 3 s later, and exits.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "harness/run/proc_stat.hpp"

namespace dls {

struct PointOutcome {
  std::string status;  // ok | check_failed (exit 1) | failed | timeout | interrupted
  int exit_code = -1, signal = 0;
  double seconds = 0;
  // the harness's host while the point ran (own_cores: the launcher and what it reaped, every
  // rank of a local launch); on a multi-node launch it speaks of the harness's node only
  HostLoad host;
};

class Watchdog {
 public:
  // Starts `dlscale __watchdog` (this binary) and waits for it to say it runs; Error when it
  // does not. Sets SIGPIPE to be ignored: a watchdog that dies makes writes fail, not the runner.
  Watchdog();
  ~Watchdog();  // says goodbye (no point is running) and reaps it
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  int fd() const { return fd_; }  // the pipe's write end (close-on-exec)
  pid_t pid() const { return pid_; }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
};

// Runs argv in a session of its own with env added, stdout and stderr to err_path. Past
// limit_s its session gets SIGTERM, then SIGKILL 5 s later (timeout); on a graceful interrupt of
// the runner the leader gets SIGUSR1 (interrupted). Whatever of the session outlives its leader
// is killed before this returns.
PointOutcome run_point(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       const std::string& err_path, double limit_s, const Watchdog& wd);

void kill_session(pid_t sid, int sig);  // every process of session sid
bool session_alive(pid_t sid);          // some process of it that is not a zombie

int watchdog_main(int argc, char** argv);  // `dlscale __watchdog FD`

std::string self_exe();  // this binary's path (/proc/self/exe), "dlscale" when it cannot be read

}  // namespace dls
