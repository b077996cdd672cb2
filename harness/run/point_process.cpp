// Point processes and the watchdog (see point_process.hpp).
#include "harness/run/point_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "harness/run/proc_stat.hpp"
#include "measure/check.hpp"
#include "measure/interrupt.hpp"

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Session id and state of a process from /proc/PID/stat (fields 6 and 3); false when it is gone.
bool session_of(const char* pid, long& sid, char& state) {
  const std::vector<std::string> f = proc_stat_fields(pid);
  if (f.size() < 4 || f[0].empty()) return false;
  state = f[0][0], sid = std::atol(f[3].c_str());
  return true;
}

template <class F>
void for_each_in_session(pid_t sid, F f) {
  DIR* d = ::opendir("/proc");
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    long s = 0;
    char state = 0;
    if (session_of(e->d_name, s, state) && s == sid) f(pid_t(std::atol(e->d_name)), state);
  }
  ::closedir(d);
}

// SIGTERM to the session, then SIGKILL to what is left after `grace_s`.
void stop_session(pid_t sid, double grace_s) {
  kill_session(sid, SIGTERM);
  const auto t0 = Clock::now();
  while (session_alive(sid) && since(t0) < grace_s)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill_session(sid, SIGKILL);
}

bool say_to(int fd, char what, pid_t sid) {
  const std::string msg = fmt::format("{} {}\n", what, sid);
  return ::write(fd, msg.data(), msg.size()) == ssize_t(msg.size());
}

// The child's side of run_point, between fork and exec: a session of its own, announced to the
// watchdog before anything else runs in it. Only async-signal-safe calls.
[[noreturn]] void exec_point(char* const* argv, char* const* envp, int in_fd, int out_fd,
                             int wd_fd) {
  ::setsid();
  char msg[32] = "S ";
  int n = 2;
  char digits[20];
  int k = 0;
  for (long v = ::getpid(); v > 0; v /= 10) digits[k++] = char('0' + v % 10);
  while (k > 0) msg[n++] = digits[--k];
  msg[n++] = '\n';
  if (::write(wd_fd, msg, std::size_t(n)) < 0) {
  }  // a watchdog that is gone (EPIPE: the runner ignores SIGPIPE): the point runs all the same
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGPIPE}) ::signal(sig, SIG_DFL);
  ::dup2(in_fd, 0);  // not the terminal: a launcher in another session must not read it
  ::dup2(out_fd, 1), ::dup2(out_fd, 2);
  ::execvpe(argv[0], argv, envp);
  const char err[] = "dlscale run: cannot start the point's launcher\n";
  if (::write(2, err, sizeof err - 1) < 0) {
  }
  ::_exit(127);
}

// This process's environment with `add` (NAME=value) set over it, for execvpe.
std::vector<std::string> environment_with(const std::vector<std::string>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('=') + 1);
    bool replaced = false;
    for (const auto& a : add) replaced = replaced || a.compare(0, name.size(), name) == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), add.begin(), add.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("dlscale") : p.string();
}

void kill_session(pid_t sid, int sig) {
  if (sid <= 1) return;
  for_each_in_session(sid, [sig](pid_t pid, char) { ::kill(pid, sig); });
}

bool session_alive(pid_t sid) {
  bool alive = false;
  for_each_in_session(sid, [&alive](pid_t, char state) { alive = alive || state != 'Z'; });
  return alive;
}

Watchdog::Watchdog() {
  ::signal(SIGPIPE,
           SIG_IGN);  // a watchdog gone: its pipe's writes fail with EPIPE, not kill the runner
  int p[2], ready[2];
  if (::pipe2(p, O_CLOEXEC) != 0 || ::pipe2(ready, O_CLOEXEC) != 0)
    throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  const std::string exe = self_exe(), fd_arg = std::to_string(p[0]),
                    ready_arg = std::to_string(ready[1]);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setsid();  // its own session: a signal to the runner's process group does not reach it
    ::fcntl(p[0], F_SETFD, 0), ::fcntl(ready[1], F_SETFD, 0);
    char* const argv[] = {const_cast<char*>("dlscale"), const_cast<char*>("__watchdog"),
                          const_cast<char*>(fd_arg.c_str()), const_cast<char*>(ready_arg.c_str()),
                          nullptr};
    ::execv(exe.c_str(), argv);
    ::_exit(127);
  }
  ::close(p[0]), ::close(ready[1]);
  fd_ = p[1], pid_ = pid;
  // the watchdog says it runs; without that (exec failed, or it died) the runner must not start
  char c = 0;
  pollfd pf{ready[0], POLLIN, 0};
  const bool up = ::poll(&pf, 1, 30000) == 1 && ::read(ready[0], &c, 1) == 1 && c == 'R';
  ::close(ready[0]);
  if (!up) {
    ::close(fd_);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    throw Error(
        fmt::format("the watchdog ({} __watchdog) did not start; without it a runner that dies "
                    "would leave its point "
                    "running",
                    exe));
  }
}

Watchdog::~Watchdog() {
  if (::write(fd_, "Q\n", 2) < 0) {
  }
  ::close(fd_);
  int st = 0;
  ::waitpid(pid_, &st, 0);
}

PointOutcome run_point(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       const std::string& err_path, double limit_s, const Watchdog& wd) {
  std::vector<std::string> args = argv, envs = environment_with(env);
  const std::vector<char*> a = pointers(args),
                           e = pointers(envs);  // made before fork: the child only execs
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    const int err = errno;
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    throw Error(fmt::format("cannot open '{}' or /dev/null: {}", err_path, std::strerror(err)));
  }
  const HostCpuTime cpu0 = host_cpu_time();
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) exec_point(a.data(), e.data(), in, out, wd.fd());
  const int fork_errno = errno;
  ::close(in), ::close(out);
  if (pid < 0) throw Error(fmt::format("fork: {}", std::strerror(fork_errno)));
  PointOutcome o;
  bool term_sent = false, int_sent = false, kill_sent = false;
  Clock::time_point term_at{};
  for (;;) {
    int st = 0;
    rusage ru{};
    if (::wait4(pid, &st, WNOHANG, &ru) == pid) {
      o.seconds = since(t0);
      o.host = host_load(cpu0, host_cpu_time(), cpu_seconds(ru), o.seconds);
      if (WIFEXITED(st)) o.exit_code = WEXITSTATUS(st);
      if (WIFSIGNALED(st)) o.signal = WTERMSIG(st);
      break;
    }
    // the graceful stop goes to the leader only (dlscale itself, or the launcher, which forwards
    // SIGUSR1 to every rank; a SIGINT would make mpirun kill them)
    if (interrupt_requested() && !int_sent) ::kill(pid, SIGUSR1), int_sent = true;
    if (!term_sent && since(t0) > limit_s)
      kill_session(pid, SIGTERM), term_sent = true, term_at = Clock::now();
    if (term_sent && !kill_sent && since(term_at) > 5) kill_session(pid, SIGKILL), kill_sent = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (session_alive(pid)) stop_session(pid, 2.0);  // ranks a crashed launcher left behind
  if (!say_to(wd.fd(), 'E', pid))
    fmt::print(stderr,
               "dlscale run: WARNING: the watchdog is gone; a runner killed now would leave its "
               "point running\n");
  // exit 1: the measurement completed but a check or a target failed; its records say which
  o.status = term_sent          ? "timeout"
             : int_sent         ? "interrupted"
             : o.exit_code == 0 ? "ok"
             : o.exit_code == 1 ? "check_failed"
                                : "failed";
  return o;
}

int watchdog_main(int argc, char** argv) {
  if (argc < 3) return kExitUsage;
  const int fd = std::atoi(argv[1]), ready = std::atoi(argv[2]);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) ::signal(s, SIG_IGN);
  if (::write(ready, "R", 1) != 1) return kExitRuntime;
  ::close(ready);
  std::set<pid_t> running;
  std::string buf;
  char chunk[256];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the runner is gone
    buf.append(chunk, std::size_t(n));
    for (std::size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
      const std::string line = buf.substr(0, nl);
      if (line == "Q") return kExitOk;
      const pid_t sid = pid_t(std::atol(line.c_str() + std::min<std::size_t>(2, line.size())));
      if (line[0] == 'S') running.insert(sid);
      if (line[0] == 'E') running.erase(sid);
    }
  }
  for (pid_t sid : running) {
    fmt::print(stderr,
               "dlscale run: the runner is gone; stopping the processes of its running point "
               "(session {})\n",
               sid);
    stop_session(sid, 3.0);
  }
  return kExitOk;
}

}  // namespace dls
