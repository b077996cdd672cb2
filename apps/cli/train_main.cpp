// `dlscale train` (see train_main.hpp): flags -> TrainOptions and DistOptions (typed while the
// command line is parsed) -> run_distributed -> the record. This is the only place that decides
// the exit code and, in a job of several ranks, aborts it.
#include "apps/cli/train_main.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "apps/dist/dist.hpp"
#include "apps/dist/scheme.hpp"
#include "apps/train/trainer.hpp"
#include "measure/check.hpp"
#include "measure/cli_parse.hpp"
#include "measure/interrupt.hpp"
#include "measure/provenance.hpp"
#include "measure/record.hpp"

namespace dls {
namespace {

// What the flags give before they become options.
struct TrainCli {
  TrainOptions o;
  DistOptions dist;
  std::string policy = "fixed", out, site = "localhost";
  std::string vae_sampling = "exp_logvar", vae_kl = "mean", vae_recon = "bce";
  std::vector<long> lr_steps;
  bool list = false, no_cache = false, no_fuse = false;
  ImageSize image{0, 0};
  std::string aux = "on", huge_pages = "on";
  double cache_mb = 4096;
  double lr = 0.01;
};

void add_model_options(CLI::App& app, TrainCli& c) {
  TrainOptions& o = c.o;
  app.add_flag("--list-models", c.list, "list the registered models and exit");
  app.add_option("-m,--model", o.model, "model name (--list-models)")->default_str(o.model);
  app.add_option("-b,--batch", o.model_options.batch, "batch size per process")
      ->default_str("1")
      ->check(whole_at_least(1));
  app.add_option("--image",
                 "input size, N (square) or HxW such as 120x85 (default: the data's, or the "
                 "model's)")
      ->check(parsed_into(c.image, &parse_image_size))
      ->type_name("N|HxW");
  app.add_option("--channels", o.model_options.channels,
                 "input channels (default: the data's, or the model's; synthetic data and image "
                 "folders are made with this many)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--width", o.model_options.width, "channel / hidden-size multiplier (tiny models)")
      ->check(finite_in(0, 64, true))
      ->default_str("1");
  app.add_option("--classes", o.model_options.classes, "output classes (default: the data's)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--aux", c.aux,
                 "GoogLeNet / Inception-v3 auxiliary classifiers: on, or off (also where they do "
                 "not fit a small image; an option, so that a plan can give it)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str(c.aux);
  app.add_option("--latent", o.model_options.latent, "CVAE latent dimensions (default 3)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--vae-sampling", c.vae_sampling,
                 "CVAE reparameterisation: exp_logvar (the public code) or exp_half_logvar")
      ->check(CLI::IsMember({"exp_logvar", "exp_half_logvar"}))
      ->default_str(c.vae_sampling);
  app.add_option("--vae-kl", c.vae_kl,
                 "CVAE KL over the latent dims: mean (the public code) or sum (textbook)")
      ->check(CLI::IsMember({"mean", "sum"}))
      ->default_str(c.vae_kl);
  app.add_option("--vae-recon", c.vae_recon,
                 "CVAE reconstruction loss: bce (the sum over pixels, the public code) or rmse "
                 "(each sample's RMSE, DEEPEX's, seed 004)")
      ->check(CLI::IsMember({"bce", "rmse"}))
      ->default_str(c.vae_recon);
}

void add_data_options(CLI::App& app, TrainCli& c) {
  TrainOptions& o = c.o;
  app.add_option("-d,--data",
                 "synthetic[:N] | fashion-mnist[:DIR] | idx:IMG,LAB[,TIMG,TLAB] | cifar10:DIR | "
                 "contact-maps:FILE | chain[:FRAMES] | images:DIR")
      ->check(parsed_into(o.data, &DataRequest::parse))
      ->type_name("SOURCE[:ARG]")
      ->default_str(o.data.text);
  app.add_option("--holdout", o.holdout, "held-out fraction for data without a test set")
      ->check(finite_in(0, 0.99))
      ->default_str("0.1");
  app.add_option("--train-samples", o.train_samples, "use only this many training samples")
      ->check(whole_at_least(1));
  app.add_option("--eval-samples", o.eval_samples, "evaluate on at most this many held-out samples")
      ->check(whole_at_least(1));
  auto* steps = app.add_option("--steps", o.steps, "training steps (overrides --epochs)")
                    ->check(whole_at_least(1));
  app.add_option("--epochs", o.epochs, "training epochs (fractions allowed)")
      ->check(positive_finite())
      ->default_str("1")
      ->excludes(steps);
  app.add_option("--warmup-steps", o.warmup_steps, "steps excluded from throughput and phase means")
      ->check(whole_at_least(0))
      ->default_str("3");
  app.add_option("--eval-every", o.eval_every,
                 "evaluate every this many epochs (0: at the end only, -1: never)")
      ->check(
          CLI::Validator([](std::string& v) { return v == "-1" ? std::string() : finite_in(0)(v); },
                         "FLOAT >= 0 or -1"))
      ->default_str("1");
  app.add_option("--target",
                 "stop when the held-out metric reaches it: accuracy=X, loss=X or rmse=X")
      ->check(parsed_into(o.target, &Target::parse))
      ->type_name("TARGET");
  auto* no_cache = app.add_flag("--no-cache", c.no_cache,
                                "read every epoch from the source (no in-memory cache)");
  app.add_option("--cache-mb", c.cache_mb,
                 "the in-memory cache of training samples, MiB: the whole subset when it fits, "
                 "else as many samples as fit (a partial cache: the rest are read every epoch)")
      ->check(CLI::Range(0.0, 1e9))
      ->excludes(no_cache)
      ->default_str("4096");
  app.add_option(
         "--loader-threads", o.loader_threads,
         "threads reading each batch's samples (0: 1 on the CPU backends, where the "
         "prefetch thread overlaps the compute; with --backend cudnn the OpenMP threads, at most "
         "the node's cores over its ranks)")
      ->check(CLI::Range(0, 1024))
      ->default_str("0");
}

void add_solver_options(CLI::App& app, TrainCli& c) {
  SolverOptions& so = c.o.solver;
  app.add_option("--optim", "sgd (Caffe), sgd_torch, nesterov, rmsprop, adam, lars")
      ->check(parsed_into(so.optim, &parse_optim))
      ->type_name("OPTIM")
      ->default_str("sgd");
  app.add_option("--lr", c.lr, "base learning rate")->check(positive_finite())->default_str("0.01");
  app.add_option("--momentum", so.params.momentum, "momentum")
      ->check(finite_in(0, 1))
      ->default_str("0.9");
  app.add_option("--weight-decay", so.params.weight_decay, "L2 weight decay")
      ->check(finite_in(0))
      ->default_str("0.0005");
  app.add_option("--rho", so.params.rho, "RMSprop decay")
      ->check(finite_in(0, 1))
      ->default_str("0.9");
  app.add_option("--eps", so.params.eps, "RMSprop / Adam epsilon")
      ->check(positive_finite())
      ->default_str("1e-8");
  app.add_option("--trust", so.params.eta, "LARS trust coefficient")
      ->check(positive_finite())
      ->default_str("0.001");
  app.add_option("--lr-scaling", "none, linear or sqrt in the global batch over --ref-batch")
      ->check(parsed_into(so.schedule.scaling, &parse_lr_scaling))
      ->type_name("RULE")
      ->default_str("none");
  app.add_option("--ref-batch", so.schedule.ref_batch,
                 "the batch the base rate is for (scaling rules)")
      ->check(whole_at_least(1));
}

void add_schedule_options(CLI::App& app, TrainCli& c) {
  LrSchedule& s = c.o.solver.schedule;
  app.add_option("--lr-policy", c.policy, "fixed, step, multistep, poly, poly2, exp, inv")
      ->check(checked_by(
          [](const std::string& v) {
            double power = 0;  // poly2's power is set once every flag is read
            return parse_lr_policy(v, &power);
          },
          "POLICY"))
      ->default_str(c.policy);
  app.add_option("--gamma", s.gamma, "step / multistep / exp / inv factor")
      ->check(positive_finite())
      ->default_str("0.1");
  auto* stepsize = app.add_option("--stepsize", s.stepsize, "step: iterations between decays")
                       ->check(whole_at_least(1));
  auto* steps_it = app.add_option("--lr-steps", c.lr_steps, "multistep: iterations of the decays")
                       ->delimiter(',')
                       ->check(whole_at_least(0));
  app.add_option("--power", s.power, "poly / inv power")->check(finite_in(0))->default_str("1");
  auto* warm_it = app.add_option("--lr-warmup", s.warmup, "linear warm-up iterations")
                      ->check(whole_at_least(0))
                      ->default_str("0");
  app.add_option("--stepsize-epochs", c.o.lr_epochs.stepsize,
                 "step: epochs between decays (instead of --stepsize)")
      ->check(positive_finite())
      ->excludes(stepsize);
  app.add_option("--lr-step-epochs", c.o.lr_epochs.steps,
                 "multistep: epochs of the decays (instead of --lr-steps)")
      ->delimiter(',')
      ->check(finite_in(0))
      ->excludes(steps_it);
  app.add_option("--lr-warmup-epochs", c.o.lr_epochs.warmup,
                 "linear warm-up in epochs (instead of --lr-warmup)")
      ->check(finite_in(0))
      ->excludes(warm_it);
}

void add_engine_options(CLI::App& app, TrainCli& c) {
  TrainOptions& o = c.o;
  add_named(&app, "--denormals", o.denormals, kDenormalsNames,
            "keep (IEEE gradual underflow) or ftz (flush denormals to zero: FTZ + DAZ); "
            "recorded in provenance");
  app.add_option("--counters",
                 "events counted by phase over the steady window on every thread of the rank: "
                 "default | flops | cache | software | none | a comma list of PAPI event names "
                 "(Linux's software events perf::TASK-CLOCK, ... through perf_event_open where "
                 "PAPI cannot)")
      ->check(parsed_into(o.counters, &CounterList::parse))
      ->type_name("SET|EVENT,...")
      ->default_str("none");
  app.add_option("--backend",
                 "ref, openblas, onednn, or cudnn (the GPU: cuDNN, cuBLAS and dlscale CUDA "
                 "kernels; one GPU per rank; DLS_GPU_MATH=fp32|tf32)")
      ->check(parsed_into(o.backend, &parse_backend))
      ->type_name("BACKEND")
      ->default_str("openblas");
  app.add_option("--conv-algo",
                 "openblas backend's convolutions: auto (Winograd F(4x4,3x3) for 3x3 stride-1 "
                 "layers of 16+ channels a group but where its transformed filters outweigh "
                 "its tiles (forward: output channels over 4 times the 4x4 output tiles of the "
                 "batch; "
                 "backward data: input channels over 8 times), there blocked; the blocked "
                 "convolution for the forward of strided "
                 "layers larger than 1x1 of 16+ channels (and their backward data where dy is at "
                 "most 14 wide), the direct convolution wherever "
                 "else it applies, im2col + GEMM for the rest: a strided layer's backward data), "
                 "gemm, winograd, direct (wherever it applies), blocked (forward and backward "
                 "data; direct for the rest), or find (per layer and pass, the "
                 "fastest of those timed "
                 "on its first run; metrics.conv_algos)")
      ->check(parsed_into(o.conv_algo, &parse_conv_algo))
      ->type_name("ALGO")
      ->default_str(conv_algo_name(TrainOptions{}.conv_algo));
  app.add_flag("--no-fuse", c.no_fuse,
               "run every ReLU and residual add as its own layer (default: a ReLU folded into "
               "the batch norm or residual add before it, and an add into the batch norm that "
               "makes one of its addends)");
  app.add_option("--huge-pages", c.huge_pages,
                 "on: ask the kernel for transparent huge pages for the activations (madvise; "
                 "ResNet-50 training 1.00-1.06x), or off: 4 KiB pages (params.huge_pages: false); "
                 "metrics.huge_page_bytes")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str(c.huge_pages);
  app.add_option("--threads", o.threads, "OpenMP and OpenBLAS threads (default: as configured)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--seed", o.seed, "seed of weights, data order and dropout")->default_str("1");
  app.add_flag("-q,--quiet", o.quiet, "no progress lines");
  app.add_option("--out", c.out, "append the run's record to this JSON Lines file")
      ->check(records_file());
  app.add_option("--site", c.site, "site name recorded in provenance")->default_str(c.site);
}

std::string scheme_help() {
  std::string h;
  for (const SchemeInfo& s : scheme_table())
    h += fmt::format("{}{} ({})", h.empty() ? "" : ", ", s.name, s.help);
  return h;
}

// The periodic schemes' options: local SGD's period and what it averages, EASGD's and the
// parameter server's.
void add_periodic_options(CLI::Option_group* g, DistOptions& d) {
  g->add_option("--local-period", d.local_period,
                "localsgd: steps between weight averages (0: once an epoch); with --backend cudnn "
                "and NCCL (--allreduce nccl, or auto as for ssgd) averaged on the GPUs, else "
                "through host copies")
      ->check(whole_at_least(0))
      ->default_str("0");
  add_named(g, "--local-momentum", d.local_momentum, kLocalMomentumNames,
            "localsgd: average, reset or local momentum buffers");
  add_named(g, "--local-bn", d.local_bn, kLocalBnNames,
            "localsgd: average or local batch-norm running statistics");
  g->add_option("--easgd-tau", d.easgd_tau, "easgd: steps between elastic exchanges")
      ->check(whole_at_least(1))
      ->default_str("1");
  g->add_option("--easgd-alpha", d.easgd_alpha,
                "easgd: moving rate alpha (default: from --easgd-alpha-rule)");
  add_named(g, "--easgd-alpha-rule", d.easgd_alpha_rule, kAlphaRuleNames,
            "easgd: paper (0.9/p) or tf (0.9/(tau p))");
  g->add_flag("--easgd-async", d.easgd_async,
              "easgd: asynchronous exchanges (default synchronous rounds)");
  g->add_option("--ps-servers", d.ps_servers,
                "easgd, ps-sync: parameter-server ranks (the last ones)")
      ->check(whole_at_least(1))
      ->default_str("1");
  g->add_option("--ps-idle-us", d.ps_idle_us,
                "easgd, ps-sync: servers sleep this long between polls (0: block)")
      ->check(CLI::Range(0, 1000000))
      ->default_str("50");
}

void add_dist_options(CLI::App& app, TrainCli& c) {
  DistOptions& d = c.dist;
  auto* g = app.add_option_group("distributed", "under mpirun / srun (apps/dist/dist.hpp)");
  g->add_option("--scheme", d.scheme, scheme_help())
      ->check(CLI::IsMember(scheme_names()))
      ->default_str(d.scheme);
  g->add_option("--allreduce",
                "auto (the fastest measured at start, per bucket size band; with --backend "
                "cudnn NCCL where built and every rank has a GPU of its own), "
                "mpi, ring, recdbl, rabenseifner, tree, shm, or nccl (--backend cudnn)")
      ->check(parsed_into(d.allreduce, &AllreduceRequest::parse))
      ->type_name(fmt::format("{{{}}}", fmt::join(AllreduceRequest::names(), ",")))
      ->default_str(d.allreduce.name());
  add_named(g, "--overlap", d.overlap, kOverlapNames,
            "ssgd: thread, nonblocking, or none (all buckets after backward); on a GPU, each "
            "bucket staged to the host when its layers are done, or with NCCL (thread or "
            "nonblocking) queued on a stream of its team's as backward goes on");
  g->add_option("--bucket-mb", d.bucket_mb, "ssgd: gradient bucket size in MiB")
      ->check(positive_finite())
      ->default_str("25");
  g->add_option(
       "--comm-teams", d.comm_teams,
       "ssgd: communication threads (seed 003's nteams), each on its own communicator; "
       "bucket b is reduced by team b % M while backward goes on. Needs --overlap thread "
       "and MPI_THREAD_MULTIPLE; on a GPU with host staging too; with NCCL M communicators, "
       "each with a stream of its own")
      ->check(CLI::Range(1, kMaxCommTeams))
      ->default_str("1");
  g->add_option("--comm-threads-per-team", d.comm_threads_per_team,
                "ssgd: OpenMP threads of each team's local sums (seed 003's nthread_per_team); "
                "needs --overlap thread; ignored with NCCL (the GPU reduces)")
      ->check(CLI::Range(1, kMaxCommThreadsPerTeam))
      ->default_str("1");
  add_periodic_options(g, d);
  g->add_option("--inject-failure", "RANK:STEP: that rank fails there (to test the abort)")
      ->check(parsed_into(d.inject_failure, &FailureInjection::parse))
      ->type_name("RANK:STEP");
}

// The flags that need others' values, once everything is parsed.
void finish_options(TrainCli& c) {
  TrainOptions& o = c.o;
  o.model_options.aux = c.aux == "on";
  o.model_options.image = c.image.h, o.model_options.image_w = c.image.w;
  o.model_options.vae = {.half_logvar_sampling = c.vae_sampling == "exp_half_logvar",
                         .kl_sum = c.vae_kl == "sum",
                         .rmse = c.vae_recon == "rmse"};
  o.solver.schedule.base = c.lr;
  o.solver.schedule.policy = parse_lr_policy(c.policy, &o.solver.schedule.power);
  o.solver.schedule.steps = c.lr_steps;
  o.cache_bytes = c.no_cache ? 0 : long(c.cache_mb * double(1 << 20));
  o.fuse = !c.no_fuse;
  o.huge_pages = c.huge_pages == "on";
  if (o.epochs <= 0 && o.steps <= 0) throw ConfigError("--epochs or --steps must be positive");
}

int exit_code(const TrainResult& r) {
  if (r.status == "ok") return kExitOk;
  if (interrupt_requested()) return 128 + interrupt_signal();
  return r.status == "diverged" ? kExitCheckFailed : kExitRuntime;
}

// Rank 0's summary line; the exit code of a run that went to its end.
int report(const TrainCli& c, const TrainResult& r) {
  if (r.status != "ok") {
    fmt::print(stderr, "dlscale train: {}: {}\n", r.status, r.error);
    return exit_code(r);
  }
  const auto& m = r.metrics;
  if (m["steady_steps"].get<long>() == 0)
    fmt::print(stderr,
               "dlscale train: the {} steps run were all warm-up (--warmup-steps {}): throughput "
               "not measured\n",
               m["steps"].get<long>(), c.o.warmup_steps);
  const nlohmann::json& ph = m["phase_s"];
  fmt::print(
      "{}: {:.2f} images/s (wall clock: mean step {:.4f} s over a window of {} steady steps; "
      "median {:.4f} s); phases input {:.4f} forward {:.4f} backward {:.4f} sync {:.4f} update "
      "{:.4f} s; peak RSS {:.1f} MiB\n",
      c.o.model, m["images_per_s"].get<double>(), m["step_time_s"].get<double>(),
      m["steady_window"]["steps"].get<long>(), m["step_time_median_s"].get<double>(),
      ph["input"].get<double>(), ph["forward"].get<double>(), ph["backward"].get<double>(),
      ph["sync"].get<double>(), ph["update"].get<double>(),
      double(m["peak_rss_bytes"].get<long>()) / (1 << 20));
  if (m.contains("target_reached") && !m["target_reached"].get<bool>()) {
    fmt::print(stderr, "dlscale train: the target {} was not reached\n", c.o.target.str());
    return kExitCheckFailed;
  }
  return kExitOk;
}

Record train_record(const TrainCli& c, const TrainResult& r, const nlohmann::json& prov) {
  Record rec;
  rec.kind = "train";
  rec.benchmark = c.o.model;
  rec.params =
      r.params.is_null() ? nlohmann::json{{"model", c.o.model}, {"data", c.o.data.text}} : r.params;
  rec.metrics = r.metrics.is_null() ? nlohmann::json::object() : r.metrics;
  rec.counters = r.counters;
  rec.counters_unavailable = r.counters_unavailable;
  rec.status = r.status;
  rec.error = r.error;
  rec.provenance = prov;
  return rec;
}

// The run on this rank. A failure in a job of several ranks ends every rank here (no rank
// waits for ever on one that left); a lone process records it.
TrainResult run_on_this_rank(const TrainCli& c, const DistJob& job) {
  TrainResult r;
  try {
    r = run_distributed(c.o, c.dist).result;
  } catch (const ConfigError& e) {
    if (job.size() <= 1) throw;
    fmt::print(stderr, "dlscale train: rank {}: {}\n", job.rank(), e.what());
    job.abort(kExitUsage);
  } catch (const std::exception& e) {
    if (job.size() > 1) {
      fmt::print(stderr, "dlscale train: rank {} of {}: error: {}; aborting every rank\n",
                 job.rank(), job.size(), e.what());
      job.abort(kExitRuntime);
    }
    r.status = "failed", r.error = e.what();
  }
  return r;
}

void add_options(CLI::App& app, TrainCli& c) {
  add_model_options(app, c);
  add_data_options(app, c);
  add_solver_options(app, c);
  add_schedule_options(app, c);
  add_engine_options(app, c);
  add_dist_options(app, c);
}

}  // namespace

std::string train_args_refusal(const std::vector<std::string>& args) {
  TrainCli c;
  CLI::App app{"dlscale train"};
  add_options(app, c);
  return args_refusal(app, args, [&] { finish_options(c); });
}

int train_main(int argc, char** argv) {
  TrainCli c;
  CLI::App app{
      "dlscale train: train a registered model on one process, with per-phase timing and held-out "
      "evaluation"};
  add_options(app, c);
  app.footer(
      "Exit codes: 0 ok, 1 the run diverged or missed its target, 2 bad arguments, 3 runtime "
      "error, 128+N stopped by signal N (Ctrl-C or SIGTERM: the record is still written, with the "
      "steps run).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (c.list) {
    for (const ModelInfo& m : model_table())
      fmt::print("{:<16} {}x{}x{}  {}\n", m.name, m.channels, m.image, m.image, m.description);
    return kExitOk;
  }
  finish_options(c);
  if (!c.out.empty()) {  // fails before the run, not after it; the file is made at the end
    try {
      check_appendable(c.out);
    } catch (const Error& e) {
      throw ConfigError(fmt::format("--out: {}", e.what()));
    }
  }
  std::string cmd;
  for (int k = 0; k < argc; ++k) cmd += (k ? " " : "") + std::string(argv[k]);
  set_denormals(c.o.denormals);  // before provenance, which records the mode in effect
  const nlohmann::json prov = capture_provenance({.site = c.site, .command_line = cmd});
  set_graceful_interrupt(true);  // Ctrl-C ends the run at the next step and still writes its record
  const DistJob job(c.dist, &argc, &argv);
  const TrainResult r = run_on_this_rank(c, job);
  if (job.rank() != 0) return r.status == "ok" ? kExitOk : exit_code(r);
  if (!c.out.empty()) RecordWriter(c.out).append(train_record(c, r, prov));
  return report(c, r);
}

}  // namespace dls
