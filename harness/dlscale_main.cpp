// The dlscale command: one binary, one subcommand per part.
//   dlscale kernels ...      kernel microbenchmarks (kernels/bench)
//   dlscale collectives ...  allreduce sweeps under mpirun/srun (collectives/)
//   dlscale train ...        one training run of a registered model (apps/)
// Library code throws; this is the only place that turns errors into exit codes
// (0 ok, 1 check failed, 2 usage/config, 3 runtime).
#include <fmt/format.h>

#include <cstring>
#include <exception>

#include "apps/cli/train_main.hpp"
#include "harness/cli/commands.hpp"
#include "harness/run/point_process.hpp"
#include "kernels/bench/kernels_main.hpp"
#include "kernels/conv/direct_order.hpp"
#include "measure/blas_coretype.hpp"
#include "measure/check.hpp"
#include "measure/interrupt.hpp"
#include "measure/provenance.hpp"
#include "measure/utf8.hpp"

namespace dls {
int run_collectives(int argc, char** argv);  // dlscale_collectives[_none].cpp
}

namespace {

void usage(std::FILE* f) {
  fmt::print(
      f,
      "usage: dlscale <command> [options]\n\n"
      "commands:\n"
      "  kernels       check and time kernels (GEMM, convolution, ...) named by descriptors\n"
      "  collectives   allreduce algorithms side by side over message sizes (under mpirun/srun)\n"
      "  train         train a registered model (CaffeNet ... ResNet-50, the CVAE) with per-phase "
      "timing\n"
      "  run           run an experiment plan on a site (--site S --plan P [--dry-run])\n"
      "  sites         list the site configurations, or describe one\n"
      "  plans         list the experiment plans, or describe one\n"
      "  accept        evaluate a plan's acceptance criteria over a campaign (exit status for CI)\n"
      "  tables        a campaign's tables (CSV, Markdown) and plots (PNG) into "
      "CAMPAIGN/analysis/\n"
      "  compare       regressions between two campaigns A B, any metric (exit 1 on one)\n"
      "  history       one metric across campaigns DIR... in time order, changes marked\n"
      "  reproduce     a campaign's measurements beside the published figures, verdict per figure\n"
      "  report        one self-contained HTML report of a campaign (CAMPAIGN/report.html)\n"
      "  project       a training step projected to a site's scale from a calibration campaign\n"
      "  (tables, compare, history, reproduce, report and project are the Python analysis,\n"
      "   analysis/dlsanalysis)\n\n"
      "'dlscale <command> --help' describes a command's options; 'dlscale --version' the build\n"
      "and the libraries it runs on.\n");
}

// The first argument that is not UTF-8 text, by its place after the command (1 for the first);
// 0 when all are. Each may reach a record, a manifest or a report, which hold UTF-8 only (a
// Latin-1 folder name failed the JSON writer at the end of a run, its record lost).
int first_non_utf8(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!dls::valid_utf8(argv[i])) return i - 1;
  return 0;
}

bool asks_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return dls::kExitUsage;
  }
  dls::install_interrupt_handlers();
  const std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(stdout);
    return dls::kExitOk;
  }
  if (cmd == "--version" || cmd == "version") {
    dls::ensure_blas_coretype(argv);  // the BLAS kernels the measuring commands run on
    fmt::print("{}", dls::version_text());
    return dls::kExitOk;
  }
  if (const int bad = first_non_utf8(argc, argv)) {
    fmt::print(stderr,
               "dlscale {}: argument {} ('{}') is not valid UTF-8: records and reports are JSON "
               "and hold UTF-8 text only (rename the file or folder)\n",
               cmd, bad, dls::escaped_bytes(argv[bad + 1]));
    return dls::kExitUsage;
  }
  try {
    // the measuring commands run on the BLAS kernels that fit this CPU (may restart the process;
    // `run`'s points inherit what it set)
    if ((cmd == "kernels" || cmd == "collectives" || cmd == "train" || cmd == "run") &&
        !asks_help(argc, argv)) {
      dls::ensure_blas_coretype(argv);
      dls::direct::tile_order_policy();  // DLS_DIRECT_ORDER: a bad value refused before any run
    }
    if (cmd == "kernels") return dls::kernels_main(argc - 1, argv + 1);
    if (cmd == "collectives") return dls::run_collectives(argc - 1, argv + 1);
    if (cmd == "train") return dls::train_main(argc - 1, argv + 1);
    if (cmd == "run") return dls::run_main(argc - 1, argv + 1);
    if (cmd == "__watchdog")
      return dls::watchdog_main(argc - 1, argv + 1);  // started by `dlscale run`
    if (cmd == "sites") return dls::sites_main(argc - 1, argv + 1);
    if (cmd == "plans") return dls::plans_main(argc - 1, argv + 1);
    if (cmd == "accept") return dls::accept_main(argc - 1, argv + 1);
    if (cmd == "compare" || cmd == "history" || cmd == "reproduce" || cmd == "report" ||
        cmd == "tables" || cmd == "project")
      return dls::analysis_main(std::string(cmd), argc - 1, argv + 1);
  } catch (const dls::ConfigError& e) {
    fmt::print(stderr, "dlscale {}: {}\n", cmd, e.what());
    return dls::kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlscale {}: error: {}\n", cmd, e.what());
    return dls::kExitRuntime;
  }
  fmt::print(stderr, "dlscale: unknown command '{}'\n", cmd);
  usage(stderr);
  return dls::kExitUsage;
}
