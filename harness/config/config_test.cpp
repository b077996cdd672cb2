// Site configurations and plans: every shipped file loads; bad input names file, line and key;
// expansion crosses, zips and excludes as documented, with stable point ids.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/config/config_test_util.hpp"
#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/config/yaml_reader.hpp"
#include "harness/run/launcher.hpp"
#include "harness/verdict/accept.hpp"
#include "harness/verdict/summary.hpp"
#include "measure/check.hpp"
#include "measure/test_tmp.hpp"

namespace dls {
namespace {

using test::kRoot;

std::string write(const std::string& name, const std::string& text) {
  return test::write_file("config", name, text);
}

template <class F>
std::string error_of(F f) {
  return test::config_error(f);
}

const char* kSite = R"(name: t
node:
  cores: 4
launcher:
  kind: mpirun
  ranks_per_node: 2
  threads_per_rank: 2
max_nodes: 4
)";

TEST(Config, EveryShippedSiteAndPlanLoads) {
  const auto sites = shipped_sites(kRoot), plans = shipped_plans(kRoot);
  EXPECT_GE(sites.size(), 7u);  // localhost and the seeds' six machines
  for (const auto& s : sites) EXPECT_EQ(error_of([&] { load_site(s, kRoot); }), "") << s;
  for (const auto& p : plans) EXPECT_EQ(error_of([&] { load_plan(p, kRoot); }), "") << p;
  const SiteConfig summit = load_site("summit", kRoot);
  EXPECT_EQ(summit.node.gpus, 6);
  EXPECT_DOUBLE_EQ(summit.node.peak_flops_sp, 94.2e12);
  EXPECT_DOUBLE_EQ(summit.network.bandwidth, 25e9);
  // every shipped site states its network's kind and levels, the last the whole machine
  for (const auto& name : sites) {
    const SiteConfig s = load_site(name, kRoot);
    EXPECT_FALSE(s.network.kind.empty()) << name;
    ASSERT_FALSE(s.network.levels.empty()) << name;
    EXPECT_EQ(s.network.levels.back().nodes,
              s.max_nodes == 1 ? 1 : SiteConfig::NetworkLevel::kAllNodes)
        << name;
  }
  ASSERT_EQ(summit.network.levels.size(), 3u);
  EXPECT_EQ(summit.network.levels[0].kind, "nvlink");
  EXPECT_DOUBLE_EQ(summit.network.levels[1].bandwidth, 25e9);
  EXPECT_TRUE(load_site("localhost", kRoot).node.memory_bandwidth_auto);
  EXPECT_FALSE(summit.node.memory_bandwidth_auto);
}

const char* kLevels = R"(network:
  latency: "1 us"
  bandwidth: "25 GB/s"
  kind: fat_tree
  levels:
    - {name: node, kind: nvlink, nodes: 1, latency: "0.6 us", bandwidth: "50 GB/s"}
    - {name: rack, kind: infiniband, nodes: 18, latency: "1 us", bandwidth: "25 GB/s"}
    - name: system
      kind: infiniband
      nodes: all
      latency: 1.5e-6
      bandwidth: "25 GB/s"
      taper: 0.5
)";

TEST(Config, NetworkLevelsParseInnermostFirst) {
  const SiteConfig s = load_site(write("levels.yaml", std::string(kSite) + kLevels), kRoot);
  EXPECT_DOUBLE_EQ(s.network.latency, 1e-6);  // the flat keys stay as they are
  EXPECT_DOUBLE_EQ(s.network.bandwidth, 25e9);
  EXPECT_EQ(s.network.kind, "fat_tree");
  ASSERT_EQ(s.network.levels.size(), 3u);
  const auto& l = s.network.levels;
  EXPECT_EQ(l[0].name, "node");
  EXPECT_EQ(l[0].kind, "nvlink");
  EXPECT_EQ(l[0].nodes, 1);
  EXPECT_DOUBLE_EQ(l[0].latency, 0.6e-6);
  EXPECT_DOUBLE_EQ(l[0].bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(l[0].taper, 1);  // the default
  EXPECT_EQ(l[1].name, "rack");
  EXPECT_EQ(l[1].nodes, 18);
  EXPECT_DOUBLE_EQ(l[1].latency, 1e-6);
  EXPECT_EQ(l[2].name, "system");
  EXPECT_EQ(l[2].nodes, SiteConfig::NetworkLevel::kAllNodes);
  EXPECT_EQ(l[2].nodes, 0);
  EXPECT_DOUBLE_EQ(l[2].latency, 1.5e-6);
  EXPECT_DOUBLE_EQ(l[2].bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(l[2].taper, 0.5);
  // without the new keys: no kind, no levels; memory bandwidth auto sets the flag only
  const SiteConfig plain = load_site(write("plain.yaml", kSite), kRoot);
  EXPECT_TRUE(plain.network.kind.empty());
  EXPECT_TRUE(plain.network.levels.empty());
  EXPECT_FALSE(plain.node.memory_bandwidth_auto);
  const SiteConfig autobw = load_site(
      write("auto.yaml", "name: t\nnode: {cores: 2, memory_bandwidth: auto}\nlauncher: {}\n"),
      kRoot);
  EXPECT_TRUE(autobw.node.memory_bandwidth_auto);
  EXPECT_EQ(autobw.node.memory_bandwidth, 0);
  EXPECT_FALSE(autobw.node.peak_auto);
}

// kSite with two levels (lines 11 and 12), then `extra` from line 13 on; the error it gives.
std::string levels_error(const std::string& name, const std::string& extra) {
  const std::string text = std::string(kSite) + "network:\n  levels:\n" +
                           "    - {name: node, kind: nvlink, nodes: 1, latency: 1 us, "
                           "bandwidth: 50 GB/s}\n" +
                           "    - {name: rack, kind: ib, nodes: 18, latency: 1 us, "
                           "bandwidth: 25 GB/s}\n" +
                           extra;
  const std::string f = write(name, text);
  return error_of([&] { load_site(f, kRoot); });
}

// A level line with `keys` and a latency and bandwidth.
std::string level(const std::string& keys) {
  return "    - {" + keys + ", latency: 2 us, bandwidth: 25 GB/s}\n";
}

TEST(Config, BadNetworkLevelOrderNamesFileLineAndKey) {
  EXPECT_EQ(levels_error("ok.yaml", level("name: top, kind: ib, nodes: all")), "");
  std::string e = levels_error("incr.yaml", level("name: top, kind: ib, nodes: 18"));
  EXPECT_NE(e.find("incr.yaml:13: site.network.levels[2].nodes: 18 is not above the previous "
                   "level's 18"),
            std::string::npos)
      << e;
  e = levels_error("first.yaml", level("name: top, kind: ib, nodes: 1"));
  EXPECT_NE(e.find("site.network.levels[2].nodes: 1 (inside one node) may only be the first level"),
            std::string::npos)
      << e;
  e = levels_error("all.yaml", level("name: top, kind: ib, nodes: all") +
                                   level("name: x, kind: ib, nodes: 4096"));
  EXPECT_NE(e.find("all.yaml:13: site.network.levels[2].nodes: all (the whole machine) may only be "
                   "the last level"),
            std::string::npos)
      << e;
  e = levels_error("twice.yaml", level("name: rack, kind: ib, nodes: all"));
  EXPECT_NE(e.find("twice.yaml:13: site.network.levels[2].name: 'rack' is given twice"),
            std::string::npos)
      << e;
  e = levels_error("nodes.yaml", level("name: top, kind: ib, nodes: 0"));
  EXPECT_NE(e.find("site.network.levels[2].nodes: 0 is out of range"), std::string::npos) << e;
  std::string nine = "  levels:\n";
  for (int i = 1; i <= 9; ++i)
    nine += fmt::format(
        "    - {{name: l{}, kind: k, nodes: {}, latency: 1 us, bandwidth: 1 GB/s}}\n", i, i * 2);
  e = error_of(
      [&] { load_site(write("nine.yaml", std::string(kSite) + "network:\n" + nine), kRoot); });
  EXPECT_NE(e.find("site.network.levels: 9 levels: at most 8"), std::string::npos) << e;
}

TEST(Config, BadNetworkLevelValuesNameFileLineAndKey) {
  std::string e;
  for (const char* t : {"0", "1.5", "-1", "full"}) {
    e = levels_error("taper.yaml",
                     level(std::string("name: top, kind: ib, nodes: all, taper: ") + t));
    EXPECT_NE(e.find("taper.yaml:13: site.network.levels[2].taper: "), std::string::npos)
        << t << ": " << e;
  }
  e = levels_error("taper.yaml", level("name: top, kind: ib, nodes: all, taper: 0"));
  EXPECT_NE(e.find("taper: 0 is not in (0, 1]"), std::string::npos) << e;
  e = levels_error("nobw.yaml", "    - {name: top, kind: ib, nodes: all, latency: 2 us}\n");
  EXPECT_NE(e.find("nobw.yaml:13: site.network.levels[2].bandwidth: required (a quantity in B/s"),
            std::string::npos)
      << e;
  e = levels_error("zerobw.yaml",
                   "    - {name: top, kind: ib, nodes: all, latency: 2 us, bandwidth: 0}\n");
  EXPECT_NE(e.find("site.network.levels[2].bandwidth: 0 must be a finite quantity above 0"),
            std::string::npos)
      << e;
  e = levels_error("nolat.yaml", "    - {name: top, kind: ib, nodes: all, bandwidth: 2 GB/s}\n");
  EXPECT_NE(e.find("site.network.levels[2].latency: required"), std::string::npos) << e;
  e = levels_error("unknown.yaml", level("name: top, kind: ib, nodes: all, links: 4"));
  EXPECT_NE(e.find("unknown.yaml:13: site.network.levels[2]: unknown key 'links'"),
            std::string::npos)
      << e;
  e = levels_error("word.yaml", level("name: \"top level\", kind: ib, nodes: all"));
  EXPECT_NE(e.find("site.network.levels[2].name: 'top level': expected letters, digits and _ -"),
            std::string::npos)
      << e;
  const auto network_error = [](const std::string& name, const std::string& network) {
    const std::string f = write(name, std::string(kSite) + "network:\n" + network);
    return error_of([&] { load_site(f, kRoot); });
  };
  e = network_error("kind.yaml", "  kind: hypercube\n");
  EXPECT_NE(e.find("kind.yaml:10: site.network.kind: 'hypercube' is not one of shared_memory, "
                   "fat_tree, dragonfly, torus, other"),
            std::string::npos)
      << e;
  e = network_error("list.yaml", "  levels: {name: node}\n");
  EXPECT_NE(e.find("site.network.levels: expected a list"), std::string::npos) << e;
}

TEST(Config, QuantitiesCarryTheirUnits) {
  EXPECT_DOUBLE_EQ(parse_quantity("12 GB/s", "B/s"), 12e9);
  EXPECT_DOUBLE_EQ(parse_quantity("1.5 us", "s"), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("64 GiB", "B"), 64.0 * (1L << 30));
  EXPECT_DOUBLE_EQ(parse_quantity("600", "s"), 600);
  EXPECT_THROW(parse_quantity("12 GB", "B/s"), std::invalid_argument);
  EXPECT_THROW(parse_quantity("fast", "s"), std::invalid_argument);
  // a plain number is in the SI unit, and as finite and non-negative as one with a unit
  EXPECT_THROW(parse_quantity("nan", "B/s"), std::invalid_argument);
  EXPECT_THROW(parse_quantity("-5", "B/s"), std::invalid_argument);
  EXPECT_THROW(parse_quantity("-5 GB/s", "B/s"), std::invalid_argument);
}

TEST(Config, BadSitesNameFileLineAndKey) {
  const auto bad = [](const std::string& name, const std::string& text) {
    const std::string f = write(name, text);
    return error_of([&] { load_site(f, kRoot); });
  };
  std::string e = bad("unknown.yaml", std::string(kSite) + "colour: blue\n");
  EXPECT_NE(e.find("unknown.yaml:9"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'colour'"), std::string::npos) << e;
  e = bad("type.yaml", "name: t\nnode:\n  cores: many\nlauncher: {kind: mpirun}\n");
  EXPECT_NE(e.find("type.yaml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("site.node.cores: expected an integer, got 'many'"), std::string::npos) << e;
  e = bad("over.yaml", "name: t\nnode: {cores: 2}\nlauncher: {kind: mpirun, ranks_per_node: 4}\n");
  EXPECT_NE(e.find("ranks_per_node: 4 ranks x 1 threads exceed the node's 2 hardware threads"),
            std::string::npos)
      << e;
  e = bad("kind.yaml", "name: t\nnode: {cores: 2}\nlauncher: {kind: qsub}\n");
  EXPECT_NE(e.find("site.launcher.kind: 'qsub' is not one of mpirun, srun, aprun, jsrun, local"),
            std::string::npos)
      << e;
  e = bad("unit.yaml",
          "name: t\nnode: {cores: 2, memory_bandwidth: 12 GB}\nlauncher: {kind: mpirun}\n");
  EXPECT_NE(e.find("memory_bandwidth"), std::string::npos) << e;
  e = bad("syntax.yaml", "name: t\nnode: {cores: 2\n");
  EXPECT_NE(e.find("syntax.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("YAML syntax"), std::string::npos) << e;
  e = error_of([] { load_site("no_such_site", kRoot); });
  EXPECT_NE(e.find("shipped sites: "), std::string::npos) << e;
  e = bad("srun.yaml", "name: t\nnode: {cores: 2}\nlauncher: {kind: srun}\n");
  EXPECT_NE(e.find("srun needs scheduler.kind slurm"), std::string::npos) << e;
  const std::string head = "name: t\nnode: {cores: 2}\nlauncher: {kind: mpirun}\nstorage:\n";
  e = bad("st1.yaml", head + "  - {name: s, read_bandwidth: 2 GB/s}\n");
  EXPECT_NE(e.find("st1.yaml:5: site.storage[0].filesystem: required"), std::string::npos) << e;
  e = bad("st2.yaml", head + "  - {name: s, filesystem: nfs, read_bandwidth: 2 GB}\n");
  EXPECT_NE(e.find("site.storage[0].read_bandwidth"), std::string::npos) << e;
  e = bad("st3.yaml", head + "  - {name: s, filesystem: nfs}\n  - {name: s, filesystem: lustre}\n");
  EXPECT_NE(e.find("site.storage[1].name: 's' is given twice"), std::string::npos) << e;
  e = bad("st4.yaml", head + "  - {name: s, filesystem: nfs, speed: 3}\n");
  EXPECT_NE(e.find("unknown key 'speed'"), std::string::npos) << e;
  const SiteConfig pd = load_site("piz_daint", kRoot);
  ASSERT_EQ(pd.storage.size(), 2u);
  EXPECT_EQ(pd.storage[1].name, "datawarp");
  EXPECT_DOUBLE_EQ(pd.storage[1].read_bandwidth, 13e9);
}

TEST(Config, BadPlansNameFileLineAndKey) {
  const auto bad = [](const std::string& name, const std::string& text) {
    const std::string f = write(name, text);
    return error_of([&] { load_plan(f, kRoot); });
  };
  std::string e =
      bad("zero.yaml",
          "name: p\nexperiments:\n  - name: a\n    kind: train\n    sweep: {nodes: [1, 0]}\n");
  EXPECT_NE(e.find("zero.yaml:5"), std::string::npos) << e;
  EXPECT_NE(e.find("nodes: '0' is not an integer in [1, 1048576]"), std::string::npos) << e;
  e = bad("kind.yaml", "name: p\nexperiments:\n  - {name: a, kind: bake}\n");
  EXPECT_NE(e.find("plan.experiments[0].kind: 'bake' is not one of kernels, collectives, train"),
            std::string::npos)
      << e;
  e = bad("zip.yaml",
          "name: p\nexperiments:\n  - name: a\n    kind: train\n    sweep: {batch: [1, 2], lr: "
          "[0.1]}\n    zip: [[batch, lr]]\n");
  EXPECT_NE(e.find("have different lengths"), std::string::npos) << e;
  e = bad("acc.yaml",
          "name: p\nexperiments:\n  - {name: a, kind: train}\nacceptance:\n  - {id: i, experiment: "
          "b, metric: x, bound: 1}\n");
  EXPECT_NE(e.find("'b' is not an experiment of this plan"), std::string::npos) << e;
  e = bad("extra.yaml", "name: p\nexperiments:\n  - {name: a, kind: train, repeat: 3}\n");
  EXPECT_NE(e.find("unknown key 'repeat'"), std::string::npos) << e;
  EXPECT_NE(e.find("repeats"), std::string::npos) << e;  // the known keys are listed
}

TEST(Config, ExpansionCrossesZipsExcludesAndClips) {
  const SiteConfig site = load_site(write("site.yaml", kSite), kRoot);
  const Plan p = load_plan(write("plan.yaml", R"(name: p
experiments:
  - name: a
    kind: train
    args: {model: m}
    sweep: {nodes: [1, 2, 8], batch: [64, 128], lr: [0.1, 0.2], scheme: [ssgd, localsgd]}
    zip: [[batch, lr]]
    exclude: [{nodes: 2, scheme: localsgd}]
    scaling: strong
    repeats: 2
)"),
                           kRoot);
  const Expansion x = expand(p, site);
  // nodes 3 x (batch,lr) 2 x scheme 2 = 12, minus 2 excluded (nodes 2, localsgd), minus 4 on
  // 8 nodes (the site has 4): 6 points, twice each
  EXPECT_EQ(x.points.size(), 12u);
  EXPECT_EQ(x.clipped.size(), 4u);
  for (const Point& q : x.points) {
    const long global = std::stol(q.assignment.at("batch"));
    const int ranks = q.nodes * q.ranks_per_node;
    const auto it = std::find(q.args.begin(), q.args.end(), "--batch");
    ASSERT_NE(it, q.args.end());
    EXPECT_EQ(std::stol(*(it + 1)), global / ranks);  // strong scaling: the batch is global
    EXPECT_EQ(q.assignment.at("lr"), global == 64 ? "0.1" : "0.2");  // zipped
    EXPECT_FALSE(q.nodes == 2 && q.assignment.at("scheme") == "localsgd");
  }
  // stable ids: the same plan gives the same ids; repeats and assignments differ
  const Expansion y = expand(p, site);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < x.points.size(); ++i) {
    EXPECT_EQ(x.points[i].id, y.points[i].id);
    ids.insert(x.points[i].id);
  }
  EXPECT_EQ(ids.size(), x.points.size());
  // repeats run round by round: the 6 combinations, then the 6 again in the same order
  for (std::size_t i = 0; i < x.points.size(); ++i) {
    EXPECT_EQ(x.points[i].repeat, int(i / 6)) << i;
    EXPECT_EQ(x.points[i].assignment, x.points[i % 6].assignment) << i;
  }
}

TEST(Config, LauncherLinesTranslateOnePlacement) {
  Point p;
  p.kind = "train", p.experiment = "e", p.id = "0123456789abcdef", p.nodes = 2,
  p.ranks_per_node = 4, p.threads = 3;
  p.args = {"--model", "m"};
  const LaunchOptions o{.dlscale = "dlscale", .out = "r.jsonl", .campaign = "c"};
  SiteConfig s;
  s.name = "x";
  s.launcher.kind = "srun";
  EXPECT_EQ(
      launch_line(s, p, o),
      "srun -N 2 --ntasks-per-node=4 --cpus-per-task=3 --cpu-bind=cores --mpi=pmix dlscale train "
      "--model m --site x --out r.jsonl");
  s.launcher.kind = "aprun";
  EXPECT_EQ(launch_line(s, p, o),
            "aprun -n 8 -N 4 -d 3 -cc depth dlscale train --model m --site x --out r.jsonl");
  s.launcher.kind = "jsrun", s.launcher.gpus_per_rank = 1;
  EXPECT_EQ(
      launch_line(s, p, o),
      "jsrun -n 8 -a 1 -c 3 -g 1 -r 4 -b packed:3 dlscale train --model m --site x --out r.jsonl");
  s.launcher.kind = "mpirun";
  EXPECT_EQ(launch_line(s, p, o),
            "mpirun -np 8 --map-by ppr:4:node:PE=3 --bind-to core -x OMP_NUM_THREADS dlscale train "
            "--model m --site x --out r.jsonl");
  EXPECT_EQ(shell_quote("a b'c"), "'a b'\\''c'");
  // the site's papi_events are counted, unless the plan chose its own counters
  s.papi_events = {"PAPI_TOT_CYC", "perf::TASK-CLOCK"};
  EXPECT_EQ(launch_line(s, p, o),
            "mpirun -np 8 --map-by ppr:4:node:PE=3 --bind-to core -x OMP_NUM_THREADS dlscale train "
            "--model m --counters PAPI_TOT_CYC,perf::TASK-CLOCK --site x --out r.jsonl");
  p.args = {"--model", "m", "--counters", "none"};
  EXPECT_EQ(launch_line(s, p, o),
            "mpirun -np 8 --map-by ppr:4:node:PE=3 --bind-to core -x OMP_NUM_THREADS dlscale train "
            "--model m --counters none --site x --out r.jsonl");
}

// Acceptance over a hand-made campaign: two repeats at 2 ranks (120 and 180 images/s, mean 150),
// one point at 1 rank (90); a dotted metric; a criterion that matches no record.
TEST(Config, AcceptanceVerdictsOverACampaign) {
  const auto dir = test::tmp_dir("config") / "accept";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json") << R"({"plan": "p", "points": [
    {"id": "a", "experiment": "train", "assignment": {"ranks_per_node": "2"}},
    {"id": "b", "experiment": "train", "assignment": {"ranks_per_node": "2"}},
    {"id": "c", "experiment": "train", "assignment": {"ranks_per_node": "1"}}]})";
  const std::string head =
      R"({"schema": "dlscale.record/1", "kind": "train", "benchmark": "m", "params": {}, "status": "ok", )";
  std::ofstream(dir / "records.jsonl")
      << head
      << R"("harness_point": "a", "metrics": {"images_per_s": 120, "phase_s": {"sync": 0.002}}})"
      << "\n"
      << head
      << R"("harness_point": "b", "metrics": {"images_per_s": 180, "phase_s": {"sync": 0.004}}})"
      << "\n"
      << head << R"("harness_point": "c", "metrics": {"images_per_s": 90, "phase_s": {"sync": 0}}})"
      << "\n";
  const Plan p = load_plan(write("accept_plan.yaml", R"(name: p
experiments:
  - {name: train, kind: train, sweep: {ranks_per_node: [1, 2]}}
acceptance:
  - {id: a, experiment: train, metric: images_per_s, where: {ranks_per_node: 2}, direction: ">=", bound: 100}
  - {id: b, experiment: train, metric: images_per_s, where: {ranks_per_node: 2}, direction: ">", bound: 150}
  - {id: c, experiment: train, metric: phase_s.sync, where: {ranks_per_node: 1}, direction: "<=", bound: 0.001}
  - {id: d, experiment: train, metric: images_per_s, where: {ranks_per_node: 4}, bound: 0}
  - {id: e, experiment: train, metric: images_per_s, direction: ">=", bound: 1000}
)"),
                           kRoot);
  const SiteConfig site = load_site("localhost", kRoot);
  const Campaign c = read_campaign(dir.string());
  const auto v = evaluate_acceptance({p, site, c});
  ASSERT_EQ(v.size(), 5u);
  // a and b are two repeats of one measurement: mean 150, s 42.4, 95 % half-width 12.7 x 30
  ASSERT_EQ(v[0].groups.size(), 1u);
  EXPECT_EQ(v[0].groups[0].value.est.n, 2);
  EXPECT_DOUBLE_EQ(v[0].groups[0].value.est.value, 150);
  EXPECT_NEAR(v[0].groups[0].value.est.half_width(), 12.706204736 * 30, 1e-6);
  EXPECT_EQ(v[0].result, "INCONCLUSIVE");  // [-231, 531] straddles 100
  EXPECT_EQ(v[1].result, "INCONCLUSIVE");
  EXPECT_EQ(v[2].result, "PASS");  // the 1-rank point's sync, 0
  EXPECT_EQ(v[3].result, "NO DATA");
  EXPECT_EQ(v[4].result, "FAIL");  // both groups' intervals lie below 1000
  EXPECT_EQ(v[4].groups.size(), 2u);
  EXPECT_EQ(acceptance_exit_code(v), kExitCheckFailed);
  EXPECT_EQ(acceptance_exit_code({v[0], v[1], v[2]}), kExitInconclusive);
  EXPECT_EQ(acceptance_exit_code({v[2]}), kExitOk);
}

// Repeats: three records of one measurement (images/s 100, 110, 120: mean 110, sample standard
// deviation 10) and one of another; a failed record is left out.
TEST(Config, RepeatsAreSummarisedWithMeanAndStd) {
  const auto dir = test::tmp_dir("config") / "summary";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json")
      << R"({"points": [{"id": "r0", "experiment": "t"}, {"id": "r1", "experiment": "t"},
    {"id": "r2", "experiment": "t"}, {"id": "q", "experiment": "t"}]})";
  std::ofstream f(dir / "records.jsonl");
  for (auto [hp, v] : {std::pair<const char*, int>{"r0", 100}, {"r1", 110}, {"r2", 120}})
    f << R"({"schema": "dlscale.record/1", "params": {}, "kind": "train", "benchmark": "m", "point_id": "A", "status": "ok", "harness_point": ")"
      << hp << R"(", "metrics": {"images_per_s": )" << v << "}}\n";
  f << R"({"schema": "dlscale.record/1", "params": {}, "kind": "train", "benchmark": "m", "point_id": "B", "status": "ok", "harness_point": "q", "metrics": {"images_per_s": 7}})"
    << "\n";
  f << R"({"schema": "dlscale.record/1", "params": {}, "kind": "train", "benchmark": "m", "point_id": "B", "status": "failed", "harness_point": "q", "metrics": {"images_per_s": 1000}})"
    << "\n";
  f.close();
  const auto rows = summarize_campaign(read_campaign(dir.string()));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].n, 3);
  EXPECT_DOUBLE_EQ(rows[0].mean, 110);
  EXPECT_DOUBLE_EQ(rows[0].stddev, 10);
  EXPECT_EQ(rows[1].n, 1);
  EXPECT_DOUBLE_EQ(rows[1].mean, 7);
  EXPECT_EQ(rows[1].stddev, 0);
}

}  // namespace
}  // namespace dls
