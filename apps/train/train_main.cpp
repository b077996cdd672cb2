// `dlscale train` (see train_main.hpp): flags -> TrainOptions -> run_training -> record.
#include "apps/train/train_main.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "apps/dist/dist.hpp"
#include "apps/train/trainer.hpp"
#include "harness/instrument/interrupt.hpp"
#include "harness/instrument/provenance.hpp"
#include "harness/instrument/record.hpp"
#include "kernels/core/check.hpp"

namespace dls {

int train_main(int argc, char** argv) {
  TrainOptions o;
  std::string optim = "sgd", policy = "fixed", scaling = "none", backend = "openblas",
              conv_algo = "auto", target, out, site = "localhost";
  std::string vae_sampling = "exp_logvar", vae_kl = "mean";
  std::vector<long> lr_steps;
  bool list = false, no_aux = false, no_cache = false, no_fuse = false;
  DistOptions dist;
  std::string scheme = "single";
  double lr = 0.01;
  CLI::App app{
      "dlscale train: train a registered model on one process, with per-phase timing and held-out "
      "evaluation"};
  app.add_flag("--list-models", list, "list the registered models and exit");
  app.add_option("-m,--model", o.model, "model name (--list-models)")->default_str(o.model);
  app.add_option("-b,--batch", o.model_options.batch, "batch size per process")
      ->default_str("1")
      ->check(CLI::PositiveNumber);
  app.add_option("--image", o.model_options.image,
                 "input height and width (default: the data's, or the model's)");
  app.add_option("--width", o.model_options.width, "channel / hidden-size multiplier (tiny models)")
      ->default_str("1");
  app.add_option("--classes", o.model_options.classes, "output classes (default: the data's)");
  app.add_flag("--no-aux", no_aux, "GoogLeNet / Inception-v3 without the auxiliary classifiers");
  app.add_option("--latent", o.model_options.latent, "CVAE latent dimensions (default 3)");
  app.add_option("--vae-sampling", vae_sampling,
                 "CVAE reparameterisation: exp_logvar (the public code) or exp_half_logvar")
      ->check(CLI::IsMember({"exp_logvar", "exp_half_logvar"}))
      ->default_str(vae_sampling);
  app.add_option("--vae-kl", vae_kl,
                 "CVAE KL over the latent dims: mean (the public code) or sum (textbook)")
      ->check(CLI::IsMember({"mean", "sum"}))
      ->default_str(vae_kl);
  app.add_option("-d,--data", o.data,
                 "synthetic[:N] | fashion-mnist[:DIR] | idx:IMG,LAB[,TIMG,TLAB] | cifar10:DIR | "
                 "contact-maps:FILE | "
                 "chain[:FRAMES] | images:DIR")
      ->default_str(o.data);
  app.add_option("--holdout", o.holdout, "held-out fraction for data without a test set")
      ->default_str("0.1");
  app.add_option("--train-samples", o.train_samples, "use only this many training samples");
  app.add_option("--eval-samples", o.eval_samples,
                 "evaluate on at most this many held-out samples");
  auto* steps = app.add_option("--steps", o.steps, "training steps (overrides --epochs)");
  app.add_option("--epochs", o.epochs, "training epochs (fractions allowed)")
      ->default_str("1")
      ->excludes(steps);
  app.add_option("--warmup-steps", o.warmup_steps, "steps excluded from throughput and phase means")
      ->default_str("3");
  app.add_option("--eval-every", o.eval_every,
                 "evaluate every this many epochs (0: at the end only, -1: never)")
      ->default_str("1");
  app.add_option("--target", target,
                 "stop when the held-out metric reaches it: accuracy=X, loss=X or rmse=X");
  app.add_option("--optim", optim, "sgd (Caffe), sgd_torch, nesterov, rmsprop, adam, lars")
      ->default_str(optim);
  app.add_option("--lr", lr, "base learning rate")->default_str("0.01");
  app.add_option("--momentum", o.solver.params.momentum, "momentum")->default_str("0.9");
  app.add_option("--weight-decay", o.solver.params.weight_decay, "L2 weight decay")
      ->default_str("0.0005");
  app.add_option("--rho", o.solver.params.rho, "RMSprop decay")->default_str("0.9");
  app.add_option("--eps", o.solver.params.eps, "RMSprop / Adam epsilon")->default_str("1e-8");
  app.add_option("--trust", o.solver.params.eta, "LARS trust coefficient")->default_str("0.001");
  app.add_option("--lr-policy", policy, "fixed, step, multistep, poly, poly2, exp, inv")
      ->default_str(policy);
  app.add_option("--gamma", o.solver.schedule.gamma, "step / multistep / exp / inv factor")
      ->default_str("0.1");
  auto* stepsize =
      app.add_option("--stepsize", o.solver.schedule.stepsize, "step: iterations between decays");
  auto* steps_it =
      app.add_option("--lr-steps", lr_steps, "multistep: iterations of the decays")->delimiter(',');
  app.add_option("--power", o.solver.schedule.power, "poly / inv power")->default_str("1");
  auto* warm_it =
      app.add_option("--lr-warmup", o.solver.schedule.warmup, "linear warm-up iterations")
          ->default_str("0");
  app.add_option("--stepsize-epochs", o.lr_epochs.stepsize,
                 "step: epochs between decays (instead of --stepsize)")
      ->excludes(stepsize);
  app.add_option("--lr-step-epochs", o.lr_epochs.steps,
                 "multistep: epochs of the decays (instead of --lr-steps)")
      ->delimiter(',')
      ->excludes(steps_it);
  app.add_option("--lr-warmup-epochs", o.lr_epochs.warmup,
                 "linear warm-up in epochs (instead of --lr-warmup)")
      ->excludes(warm_it);
  app.add_option("--lr-scaling", scaling,
                 "none, linear or sqrt in the global batch over --ref-batch")
      ->default_str(scaling);
  app.add_option("--ref-batch", o.solver.schedule.ref_batch,
                 "the batch the base rate is for (scaling rules)");
  app.add_option("--backend", backend,
                 "ref, openblas, onednn, or cudnn (the GPU: cuDNN, cuBLAS and dlscale CUDA "
                 "kernels; one GPU per rank; DLS_GPU_MATH=fp32|tf32)")
      ->default_str(backend);
  app.add_option("--conv-algo", conv_algo,
                 "openblas backend's convolutions: auto (Winograd F(4x4,3x3) for 3x3 stride-1 "
                 "layers of 16+ "
                 "channels, im2col + GEMM elsewhere), gemm, or winograd (wherever it applies)")
      ->default_str(conv_algo);
  app.add_flag("--no-fuse", no_fuse,
               "run every ReLU as its own layer (default: folded into the batch norm or residual "
               "add before it)");
  app.add_option("--threads", o.threads, "OpenMP and OpenBLAS threads (default: as configured)");
  app.add_option("--seed", o.seed, "seed of weights, data order and dropout")->default_str("1");
  auto* dist_group =
      app.add_option_group("distributed", "under mpirun / srun (apps/dist/dist.hpp)");
  dist_group
      ->add_option("--scheme", scheme,
                   "single, ssgd (allreduce SGD), localsgd (weight averaging), easgd (elastic "
                   "averaging, parameter server)")
      ->default_str(scheme);
  dist_group
      ->add_option("--allreduce", dist.allreduce,
                   "auto (the fastest measured at start; NCCL with --backend cudnn where built), "
                   "mpi, ring, recdbl, rabenseifner, tree, or nccl (--backend cudnn)")
      ->default_str(dist.allreduce);
  dist_group
      ->add_option("--overlap", dist.overlap,
                   "ssgd: thread, nonblocking, or none (all buckets after backward)")
      ->default_str(dist.overlap);
  dist_group->add_option("--bucket-mb", dist.bucket_mb, "ssgd: gradient bucket size in MiB")
      ->default_str("25");
  dist_group
      ->add_option("--local-period", dist.local_period,
                   "localsgd: steps between weight averages (0: once an epoch)")
      ->default_str("0");
  dist_group
      ->add_option("--local-momentum", dist.local_momentum,
                   "localsgd: average, reset or local momentum buffers")
      ->default_str(dist.local_momentum);
  dist_group
      ->add_option("--local-bn", dist.local_bn,
                   "localsgd: average or local batch-norm running statistics")
      ->default_str(dist.local_bn);
  dist_group->add_option("--easgd-tau", dist.easgd_tau, "easgd: steps between elastic exchanges")
      ->default_str("1");
  dist_group->add_option("--easgd-alpha", dist.easgd_alpha,
                         "easgd: moving rate alpha (default: from --easgd-alpha-rule)");
  dist_group
      ->add_option("--easgd-alpha-rule", dist.easgd_alpha_rule,
                   "easgd: paper (0.9/p) or tf (0.9/(tau p))")
      ->default_str(dist.easgd_alpha_rule);
  dist_group->add_flag("--easgd-async", dist.easgd_async,
                       "easgd: asynchronous exchanges (default synchronous rounds)");
  dist_group
      ->add_option("--ps-servers", dist.ps_servers, "easgd: parameter-server ranks (the last ones)")
      ->default_str("1");
  dist_group
      ->add_option("--ps-idle-us", dist.ps_idle_us,
                   "easgd: servers sleep this long between polls (0: block)")
      ->default_str("50");
  dist_group->add_option("--inject-failure", dist.inject_failure,
                         "RANK:STEP: that rank fails there (to test the abort)");
  app.add_flag("--no-cache", no_cache, "read every epoch from the source (no in-memory cache)");
  app.add_flag("-q,--quiet", o.quiet, "no progress lines");
  app.add_option("--out", out, "append the run's record to this JSON Lines file");
  app.add_option("--site", site, "site name recorded in provenance")->default_str(site);
  app.footer(
      "Exit codes: 0 ok, 1 the run diverged or missed its target, 2 bad arguments, 3 runtime "
      "error, "
      "128+N stopped by signal N (Ctrl-C or SIGTERM: the record is still written, with the steps "
      "run).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (list) {
    for (const ModelInfo& m : model_table())
      fmt::print("{:<16} {}x{}x{}  {}\n", m.name, m.channels, m.image, m.image, m.description);
    return kExitOk;
  }
  o.model_options.aux = !no_aux;
  o.model_options.vae = {.half_logvar_sampling = vae_sampling == "exp_half_logvar",
                         .kl_sum = vae_kl == "sum"};
  o.solver.optim = parse_optim(optim);
  o.solver.schedule.base = lr;
  o.solver.schedule.policy = parse_lr_policy(policy, &o.solver.schedule.power);
  o.solver.schedule.steps = lr_steps;
  o.solver.schedule.scaling = parse_lr_scaling(scaling);
  o.backend = parse_backend(backend);
  o.conv_algo = parse_conv_algo(conv_algo);
  o.target = Target::parse(target);
  if (no_cache) o.cache_bytes = 0;
  o.fuse = !no_fuse;
  if (o.epochs <= 0 && o.steps <= 0) throw ConfigError("--epochs or --steps must be positive");
  dist.scheme = parse_scheme(scheme);
  std::optional<RecordWriter> writer;
  if (!out.empty()) writer.emplace(out);  // fails before the run, not after it
  std::string cmd;
  for (int k = 0; k < argc; ++k) cmd += (k ? " " : "") + std::string(argv[k]);
  const nlohmann::json prov = capture_provenance({.site = site, .command_line = cmd});
  TrainResult r;
  int rank = 0;
  set_graceful_interrupt(true);  // Ctrl-C ends the run at the next step and still writes its record
  try {
    DistRun dr = run_distributed(o, dist, &argc, &argv);
    r = std::move(dr.result);
    rank = dr.rank;
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    r.status = "failed", r.error = e.what();
  }
  if (rank != 0)
    return r.status == "ok" ? kExitOk : r.status == "diverged" ? kExitCheckFailed : kExitRuntime;
  Record rec;
  rec.kind = "train";
  rec.benchmark = o.model;
  rec.params = r.params.is_null() ? nlohmann::json{{"model", o.model}, {"data", o.data}} : r.params;
  rec.metrics = r.metrics.is_null() ? nlohmann::json::object() : r.metrics;
  rec.status = r.status;
  rec.error = r.error;
  rec.provenance = prov;
  if (writer) writer->append(rec);
  if (r.status != "ok") {
    fmt::print(stderr, "dlscale train: {}: {}\n", r.status, r.error);
    if (interrupt_requested()) return 128 + interrupt_signal();
    return r.status == "diverged" ? kExitCheckFailed : kExitRuntime;
  }
  const auto& m = r.metrics;
  if (m["steady_steps"].get<long>() == 0)
    fmt::print(stderr,
               "dlscale train: the {} steps run were all warm-up (--warmup-steps {}): throughput "
               "not measured\n",
               m["steps"].get<long>(), o.warmup_steps);
  fmt::print(
      "{}: {:.2f} images/s (median step {:.4f} s over {} steady steps); phases input {:.4f} "
      "forward {:.4f} "
      "backward {:.4f} update {:.4f} s; peak RSS {:.1f} MiB\n",
      o.model, m["images_per_s"].get<double>(), m["step_time_s"].get<double>(),
      m["steady_steps"].get<long>(), m["phase_s"]["input"].get<double>(),
      m["phase_s"]["forward"].get<double>(), m["phase_s"]["backward"].get<double>(),
      m["phase_s"]["update"].get<double>(), double(m["peak_rss_bytes"].get<long>()) / (1 << 20));
  if (m.contains("target_reached") && !m["target_reached"].get<bool>()) {
    fmt::print(stderr, "dlscale train: the target {} was not reached\n", o.target.str());
    return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace dls
