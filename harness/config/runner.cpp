// The campaign runner (see runner.hpp).
#include "harness/config/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/config/launcher.hpp"
#include "harness/instrument/interrupt.hpp"
#include "harness/instrument/provenance.hpp"
#include "harness/instrument/record.hpp"
#include "kernels/core/check.hpp"

namespace fs = std::filesystem;

namespace dls {
namespace {

using Clock = std::chrono::steady_clock;

std::string self_exe() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("dlscale") : p.string();
}

std::string tail_lines(const std::string& path, int n) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) {
    lines.push_back(l);
    if (int(lines.size()) > n) lines.erase(lines.begin());
  }
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// Points whose records are in records.jsonl (the harness_point of every line).
std::set<std::string> merged_points(const std::string& records) {
  std::set<std::string> done;
  std::ifstream f(records);
  for (std::string l; std::getline(f, l);) {
    if (l.empty()) continue;
    try {
      const auto j = nlohmann::json::parse(l);
      if (j.contains("harness_point")) done.insert(j["harness_point"].get<std::string>());
    } catch (const std::exception&) {
      // a torn last line cannot happen with the atomic appender; ignore anything unreadable
    }
  }
  return done;
}

struct Outcome {
  std::string status;  // ok | failed | timeout | interrupted
  int exit_code = -1, signal = 0;
  double seconds = 0;
};

// Runs argv in its own process group with env added, stdout+stderr to err_path.
Outcome run_point(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& err_path,
                  double limit_s) {
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw Error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL);
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    fmt::print(stderr, "dlscale run: cannot start '{}': {}\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  Outcome o;
  bool term_sent = false, int_sent = false;
  Clock::time_point term_at{};
  for (;;) {
    int st = 0;
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      if (WIFEXITED(st)) o.exit_code = WEXITSTATUS(st);
      if (WIFSIGNALED(st)) o.signal = WTERMSIG(st);
      // exit 1: the measurement completed but a check or a target failed; its records say which
      o.status = term_sent ? "timeout" : int_sent ? "interrupted" : o.exit_code == 0 ? "ok" : o.exit_code == 1 ? "check_failed" : "failed";
      return o;
    }
    const double el = std::chrono::duration<double>(Clock::now() - t0).count();
    // the graceful stop goes to the leader only (dlscale itself, or the launcher, which forwards
    // SIGUSR1 to every rank; a SIGINT would make mpirun kill them)
    if (interrupt_requested() && !int_sent) kill(pid, SIGUSR1), int_sent = true;
    if (!term_sent && el > limit_s) kill(-pid, SIGTERM), term_sent = true, term_at = Clock::now();
    if (term_sent && std::chrono::duration<double>(Clock::now() - term_at).count() > 5) kill(-pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

RunSummary run_campaign(const SiteConfig& site, const Plan& plan, const RunOptions& o) {
  const Expansion ex = expand(plan, site);
  RunSummary sum;
  sum.total = int(ex.points.size());
  sum.campaign = o.campaign.empty() ? fmt::format("results/{}/{}", site.name, plan.name) : o.campaign;
  const std::string bin = !o.dlscale.empty() ? o.dlscale : site.dlscale;
  LaunchOptions lo{.dlscale = bin.empty() || bin == "self" ? self_exe() : bin,
                   .out = "", .campaign = sum.campaign};
  if (ex.points.empty()) throw ConfigError(fmt::format("plan {} on site {}: no points (clipped: {})", plan.name, site.name,
                                                       fmt::join(ex.clipped, "; ")));
  if (o.dry_run) {
    fmt::print("# plan {} on site {}: {} points{}\n", plan.name, site.name, ex.points.size(),
               ex.clipped.empty() ? "" : fmt::format(", {} clipped", ex.clipped.size()));
    for (const auto& c : ex.clipped) fmt::print("# clipped: {}\n", c);
    for (const Point& p : ex.points) {
      lo.out = fmt::format("{}/parts/{}.jsonl", sum.campaign, p.id);
      fmt::print("\n# point {} ({} repeat {})\n{}\n", p.id, p.experiment, p.repeat, launch_line(site, p, lo));
      const std::string script = batch_script(site, p, lo);
      if (!script.empty()) fmt::print("# batch script ({}):\n{}", site.scheduler.kind, script);
    }
    return sum;
  }
  fs::create_directories(sum.campaign + "/parts");
  const std::string records = sum.campaign + "/records.jsonl";
  {
    nlohmann::json pts = nlohmann::json::array();
    for (const Point& p : ex.points) pts.push_back({{"id", p.id}, {"experiment", p.experiment}, {"assignment", p.assignment}, {"repeat", p.repeat}});
    const nlohmann::json manifest = {{"schema", "dlscale.campaign/1"}, {"plan", plan.name}, {"plan_file", plan.file},
                                     {"site", site.name}, {"site_file", site.file}, {"points", pts}, {"clipped", ex.clipped},
                                     {"provenance", capture_provenance({.site = site.name, .command_line = "dlscale run"})}};
    const std::string tmp = sum.campaign + "/manifest.json.tmp";
    std::ofstream(tmp) << manifest.dump(2) << "\n";
    fs::rename(tmp, sum.campaign + "/manifest.json");
  }
  RecordWriter rec(records), log(sum.campaign + "/points.jsonl");
  std::set<std::string> done = merged_points(records);
  std::vector<std::string> env;
  for (const auto& [k, v] : site.environment)
    if (k != "OMP_NUM_THREADS") env.push_back(k + "=" + v);
  if (geteuid() == 0 && site.launcher.kind == "mpirun")
    env.push_back("OMPI_ALLOW_RUN_AS_ROOT=1"), env.push_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  const bool tty = o.progress && isatty(STDERR_FILENO);
  set_graceful_interrupt(true);
  const auto t_start = Clock::now();
  int k = 0;
  for (const Point& p : ex.points) {
    ++k;
    if (done.count(p.id)) {
      ++sum.skipped;
      continue;
    }
    if (interrupt_requested()) {
      sum.interrupted = true;
      break;
    }
    const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
    const int ran = k - 1 - sum.skipped;
    const std::string eta = ran > 0 ? fmt::format("{:.0f} s", el / ran * (sum.total - k + 1)) : "?";
    const std::string line = fmt::format("[{}/{}] {} {} ({} s elapsed, about {} left)", k, sum.total, p.experiment, p.id, el > 0 ? int(el) : 0, eta);
    if (tty) fmt::print(stderr, "\r\033[K{}", line);
    else fmt::print(stderr, "{}\n", line);
    const std::string part = fmt::format("{}/parts/{}.jsonl", sum.campaign, p.id), err = fmt::format("{}/parts/{}.err", sum.campaign, p.id);
    fs::remove(part);
    lo.out = part;
    std::vector<std::string> penv = env;
    penv.push_back(fmt::format("OMP_NUM_THREADS={}", p.threads));
    const Outcome out = run_point(launch_argv(site, p, lo), penv, err, p.time_limit_s);
    nlohmann::json entry = {{"id", p.id}, {"experiment", p.experiment}, {"assignment", p.assignment}, {"repeat", p.repeat},
                            {"status", out.status}, {"exit_code", out.exit_code}, {"signal", out.signal}, {"seconds", out.seconds}};
    if (out.status == "ok" || out.status == "check_failed") {  // completed: its records count
      std::ifstream f(part);
      for (std::string l; std::getline(f, l);) {
        if (l.empty()) continue;
        auto j = nlohmann::json::parse(l);
        j["harness_point"] = p.id;
        rec.append_json(j);
      }
      if (out.status == "ok") {
        ++sum.ok;
      } else {
        ++sum.check_failed;
        entry["stderr_tail"] = tail_lines(err, 20);
        if (tty) fmt::print(stderr, "\n");
        fmt::print(stderr, "dlscale run: point {} ({}) completed, but a check or target failed (exit 1; its records say which); {}\n",
                   p.id, p.experiment, err);
      }
    } else {
      entry["stderr_tail"] = tail_lines(err, 20);
      std::error_code ec;
      if (fs::exists(part)) fs::rename(part, fmt::format("{}/parts/{}.failed.jsonl", sum.campaign, p.id), ec);
      ++sum.failed;
      if (tty) fmt::print(stderr, "\n");
      fmt::print(stderr, "dlscale run: point {} ({}) {}: exit {} signal {}; {}\n", p.id, p.experiment, out.status, out.exit_code,
                 out.signal, err);
    }
    log.append_json(entry);
    if (out.status == "interrupted") {
      sum.interrupted = true;
      break;
    }
  }
  if (tty) fmt::print(stderr, "\n");
  return sum;
}

}  // namespace dls
