// Hostile and broken plans and sites (issue 21): every value that reaches a path, a batch script
// or a launcher line is refused unless it is safe there, and every parse failure is a
// ConfigError naming file, line and key, never another exception.
#include <gtest/gtest.h>

#include <vector>

#include "harness/config/config_test_util.hpp"
#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "harness/run/launcher.hpp"
#include "measure/check.hpp"

namespace dls {
namespace {

using test::config_error;
using test::kRoot;

std::string write_hostile(const std::string& name, const std::string& text) {
  return test::write_file("hostile", name, text);
}

std::string site_error(const std::string& name, const std::string& text) {
  const std::string f = write_hostile(name, text);
  return config_error([&] { load_site(f, kRoot); });
}

std::string plan_error(const std::string& name, const std::string& text) {
  const std::string f = write_hostile(name, text);
  return config_error([&] { load_plan(f, kRoot); });
}

const std::string kSiteHead = "name: s\nnode: {cores: 4}\nlauncher: {kind: srun}\n";

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

struct Case {
  const char* file;
  std::string text,
      want;  // the file's text (a plan: the experiment's extra lines), a part of the error
};

void expect_site_errors(const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_HAS(site_error(c.file, c.text), c.want) << c.file;
}

TEST(Hostile, SchedulerValuesCannotAddScriptLines) {
  const std::string q = kSiteHead + "scheduler: {kind: slurm, ";
  expect_site_errors({
      {"part.yaml", q + "partition: \"normal\\ntouch /tmp/x\"}\n",
       "part.yaml:4: site.scheduler.partition: control character 0x0a is not allowed here"},
      {"acct.yaml", q + "account: \"a;touch x\"}\n",
       "site.scheduler.account: ';' is not allowed here"},
      {"qos.yaml", q + "qos: \"$(touch x)\"}\n", "site.scheduler.qos: '$' is not allowed here"},
  });
  for (const char* t :
       {"01:00:00\\ntouch x", "1:2:3", "01:60:00", "01:00:00 ", "aa:bb:cc", "-1:00:00"})
    expect_site_errors(
        {{"time.yaml", q + "time_limit: \"" + t + "\"}\n", "site.scheduler.time_limit: "},
         {"time.yaml", q + "time_limit: \"" + t + "\"}\n", "expected HH:MM:SS"}});
  EXPECT_EQ(site_error("ok.yaml", q + "partition: \"gpu,debug\", time_limit: \"100:05:09\"}\n"),
            "");
}

TEST(Hostile, EnvironmentNamesAreNamesAndValuesHaveNoControlCharacters) {
  const std::string env = kSiteHead + "scheduler: {kind: slurm}\nenvironment: ";
  const std::string mpirun = "name: s\nnode: {cores: 4}\nlauncher: {kind: mpirun";
  expect_site_errors({
      {"envk.yaml", env + "{\"Y; touch F; Z\": 1}\n",
       "envk.yaml:5: site.environment: 'Y; touch F; Z': ';' is not allowed in a variable name"},
      {"envd.yaml", env + "{1X: 1}\n", "'1X': a variable name starts with a letter or '_'"},
      {"envv.yaml", env + "{X: \"a\\nb\"}\n",
       "site.environment: X: control character 0x0a is not allowed"},
      {"flag.yaml", mpirun + ", extra_flags: [\"-x\\nrm\"]}\n",
       "site.launcher.extra_flags: '-x\nrm': control character 0x0a is not allowed"},
      {"bin.yaml", mpirun + "}\ndlscale: \"/opt/d\\u0000x\"\n",
       "site.dlscale: control character 0x00 is not allowed"},
      {"papi.yaml", mpirun + "}\npapi_events: [PAPI_TOT_CYC, \"--out=/etc/x\"]\n",
       "site.papi_events: '--out=/etc/x': expected a PAPI event name"},
      {"papi2.yaml", mpirun + "}\npapi_events: [\"PAPI_TOT_CYC; rm -rf x\"]\n",
       "site.papi_events: 'PAPI_TOT_CYC; rm -rf x': expected a PAPI event name"},
  });
  EXPECT_EQ(
      site_error("papi_ok.yaml", mpirun + "}\npapi_events: [PAPI_TOT_CYC, \"perf::TASK-CLOCK\", "
                                          "\"rapl:::PACKAGE_ENERGY:PACKAGE0\"]\n"),
      "");
}

TEST(Hostile, NamesCannotEscapeAFolder) {
  for (const char* n :
       {"../../../../tmp/x", "a/b", "..", ".hidden", "a b", "x;y", "$(id)", "`id`"}) {
    const std::string quoted = std::string("\"") + n + "\"";
    EXPECT_HAS(site_error("sname.yaml",
                          "name: " + quoted + "\nnode: {cores: 4}\nlauncher: {kind: mpirun}\n"),
               "site.name: ")
        << n;
    EXPECT_HAS(plan_error("pname.yaml",
                          "name: " + quoted + "\nexperiments:\n  - {name: a, kind: train}\n"),
               "plan.name: ")
        << n;
    EXPECT_HAS(plan_error("ename.yaml",
                          "name: p\nexperiments:\n  - {name: " + quoted + ", kind: train}\n"),
               "plan.experiments[0].name: ")
        << n;
  }
  EXPECT_HAS(plan_error("nul.yaml", "name: \"a\\0b\"\nexperiments:\n  - {name: a, kind: train}\n"),
             "nul.yaml:1: plan.name: control character 0x00 is not allowed");
}

// A plan with one train experiment whose remaining lines are `body`.
std::string one_experiment(const std::string& body) {
  return "name: p\nexperiments:\n  - name: a\n    kind: train\n" + body;
}

void expect_plan_errors(const std::vector<Case>& cases) {
  for (const Case& c : cases)
    EXPECT_HAS(plan_error(c.file, one_experiment(c.text)), c.want) << c.file;
}

TEST(Hostile, FlagsAndValuesCannotPoseAsOtherFlags) {
  expect_plan_errors({
      {"out.yaml", "    args: {out: /etc/passwd}\n",
       "plan.experiments[0].args: 'out' is set by the harness on every point; a plan cannot set "
       "it"},
      {"site.yaml", "    sweep: {site: [a]}\n", "'site' is set by the harness"},
      {"key.yaml", "    args: {\"model --out /tmp/x\": m}\n", "' ' is not allowed in a flag name"},
      {"dash.yaml", "    args: {model: \"--out=/tmp/x\"}\n",
       "model: '--out=/tmp/x' starts with '-' but is not a number (it would pose as a flag)"},
      {"nl.yaml", "    sweep: {batch: [\"8\\n9\"]}\n",
       "batch: control character 0x0a is not allowed"},
      {"place.yaml", "    args: {threads: 4}\n", "'threads' is placement: give it under sweep"},
  });
  EXPECT_EQ(
      plan_error(
          "neg.yaml",
          one_experiment(
              "    args: {eval-every: \"-1\", data: \"synthetic:512\", target: \"rmse=0.3\"}\n")),
      "");
}

TEST(Hostile, NumbersOutOfRangeAreConfigErrors) {
  expect_plan_errors({
      {"big.yaml", "    sweep: {nodes: [99999999999999999999999]}\n",
       "big.yaml:5: plan.experiments[0].sweep: nodes: '99999999999999999999999' is not an integer "
       "in [1, 1048576]"},
      {"rpn.yaml", "    sweep: {ranks_per_node: [65537]}\n",
       "ranks_per_node: '65537' is not an integer in [1, 65536]"},
      {"strong.yaml", "    sweep: {batch: [abc]}\n    scaling: strong\n",
       "batch: 'abc' is not an integer in [1, 1073741824]"},
      {"rep.yaml", "    repeats: 99999999999999999999\n",
       "plan.experiments[0].repeats: expected an integer"},
  });
  EXPECT_HAS(site_error("cores.yaml", "name: s\nnode: {cores: 1e400}\nlauncher: {kind: mpirun}\n"),
             "site.node.cores: expected an integer");
  EXPECT_HAS(site_error("inf.yaml",
                        "name: s\nnode: {cores: 2, peak_flops_sp: \"1e308 PFLOP/s\"}\n"
                        "launcher: {kind: mpirun}\n"),
             "site.node.peak_flops_sp: '1e308 PFLOP/s' is too large a quantity");
  expect_plan_errors({{"tl.yaml", "    time_limit: 1e9\n", "time_limit: at most 1e7 s"}});
  EXPECT_HAS(
      site_error("q.yaml",
                 "name: s\nnode: {cores: 2, memory: \"1e999 GiB\"}\nlauncher: {kind: mpirun}\n"),
      "site.node.memory: ");
}

TEST(Hostile, RepeatedValuesWouldMakeTwoPointsOfOneId) {
  expect_plan_errors({
      {"twice.yaml", "    sweep: {threads: [1, 1]}\n",
       "plan.experiments[0].sweep: threads: 1 is given twice"},
      {"ztwice.yaml", "    sweep: {b: [8, 8], lr: [1, 1]}\n    zip: [[b, lr]]\n",
       "plan.experiments[0].zip: b, lr: 8, 1 is given twice"},
      {"zzip.yaml", "    sweep: {b: [8, 9], lr: [1, 2], m: [1, 2]}\n    zip: [[b, lr], [m, b]]\n",
       "'b' is zipped twice"},
  });
  // a value repeated within a zip group, the tuples distinct: two points
  EXPECT_EQ(plan_error("zok.yaml",
                       one_experiment("    sweep: {b: [8, 8], lr: [1, 2]}\n    zip: [[b, lr]]\n")),
            "");
}

TEST(Hostile, TextThatWouldDriveATerminalOrExhaustMemoryIsRefused) {
  EXPECT_HAS(plan_error("esc.yaml",
                        "name: p\ndescription: \"a\\x1b[2J\"\nexperiments:\n  - "
                        "{name: a, kind: train}\n"),
             "esc.yaml:2: plan.description: control character 0x1b is not allowed");
  EXPECT_EQ(plan_error("multi.yaml",
                       "name: p\ndescription: |\n  two\n  lines\nexperiments:\n  - "
                       "{name: a, kind: train}\n"),
            "");
  expect_site_errors(
      {{"gpu.yaml", "name: s\nnode: {cores: 4, gpu_model: \"\\x07\"}\nlauncher: {kind: srun}\n",
        "site.node.gpu_model: control character 0x07 is not allowed"}});
  expect_plan_errors({{"long.yaml", "    args: {data: \"" + std::string(3000, 'x') + "\"}\n",
                       "data: 3000 characters: an argument value holds at most 2048"}});
}

TEST(Hostile, DuplicateAndNonStringKeysAreRefused) {
  std::string e =
      plan_error("dup.yaml", "name: p\nname: q\nexperiments:\n  - {name: a, kind: train}\n");
  EXPECT_HAS(e, "dup.yaml:2: key 'name' appears twice (first at line 1)");
  e = plan_error("dup2.yaml",
                 "name: p\nexperiments:\n  - name: a\n    kind: train\n    args: {lr: 1, lr: 2}\n");
  EXPECT_HAS(e, "dup2.yaml:5: key 'lr' appears twice");
  e = plan_error("key.yaml", "name: p\n? [a, b]\n: 1\nexperiments:\n  - {name: a, kind: train}\n");
  EXPECT_HAS(e, "key.yaml:2: a key must be a plain string, not a list or a mapping");
  e = plan_error("zip.yaml",
                 "name: p\nexperiments:\n  - name: a\n    kind: train\n    sweep: {b: [1, 2], c: "
                 "[1, 2]}\n    zip: [[b, [c]]]\n");
  EXPECT_HAS(e, "plan.experiments[0].zip: an axis name: expected a single value");
  e = plan_error("where.yaml",
                 "name: p\nexperiments:\n  - {name: a, kind: train}\nacceptance:\n  - {id: i, "
                 "experiment: a, metric: m, bound: 1, where: {x: [1]}}\n");
  EXPECT_HAS(e, "plan.acceptance[0].where: x: expected a single value");
}

TEST(Hostile, ASecondYamlDocumentIsRefusedNotDropped) {  // its experiments were never run
  const std::string e =
      plan_error("two.yaml",
                 "name: p\nexperiments:\n  - {name: a, kind: train}\n---\nexperiments:\n  - "
                 "{name: b, kind: train}\n");
  EXPECT_HAS(e, "two.yaml:4: a second YAML document (after '---')");
  // the fuzzer's input on which yaml-cpp's LoadAll never ends (its parser's documents never do)
  EXPECT_HAS(plan_error("endless.yaml", "#\n  !scalte,\n     de"), "endless.yaml");
  // a bare '---' at the end starts an empty document: nothing is dropped
  EXPECT_HAS(plan_error("end_dashes.yaml", "name: p\n---\n# nothing\n"),
             "plan.experiments: required");
  // one document, marked at both ends, is one document
  EXPECT_HAS(plan_error("marked.yaml", "---\nname: p\n...\n"), "plan.experiments: required");
}

TEST(Hostile, TextThatIsNotUtf8IsRefused) {  // found by the fuzzer: it reached the JSON writer and
                                             // threw there
  std::string e = plan_error(
      "utf8.yaml",
      "name: p\nexperiments:\n  - name: a\n    kind: train\n    args: {model: \"\xa8\xa8\"}\n");
  EXPECT_HAS(e, "utf8.yaml:5: a value that is not valid UTF-8");
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                          "\xe2\x82"}) {  // overlong, surrogate, > U+10FFFF, cut
    e = plan_error("utf8b.yaml", std::string("name: p\ndescription: \"") + bad +
                                     "\"\nexperiments:\n  - {name: a, kind: train}\n");
    EXPECT_HAS(e, "utf8b.yaml:2: a value that is not valid UTF-8");
  }
  e = plan_error("utf8k.yaml", "name: p\n\xff: 1\nexperiments:\n  - {name: a, kind: train}\n");
  EXPECT_HAS(e, "a key that is not valid UTF-8");
  EXPECT_EQ(plan_error("utf8ok.yaml",
                       "name: p\ndescription: \"1.5 \xc2\xb5s, \xe2\x82\xac, "
                       "\xf0\x9f\x9a\x80\"\nexperiments:\n  - {name: a, kind: train}\n"),
            "");
}

TEST(Hostile, AnAliasBombIsRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i)
    text += fmt::format(
        "a{0}: &a{0} [*a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}]\n", i,
        i - 1);
  text += "name: p\nexperiments:\n  - {name: a, kind: train}\n";
  EXPECT_HAS(plan_error("bomb.yaml", text), "bomb.yaml: more than 100000 YAML nodes");
}

TEST(Hostile, AnExpansionOverTheCapIsRefusedBeforeAnyPointIsMade) {
  const SiteConfig site = load_site("localhost", kRoot);
  // 10^12 points, with a product that would overflow 32-bit arithmetic many times
  std::string axes;
  for (int i = 0; i < 12; ++i)
    axes += fmt::format("{}a{}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", i ? ", " : "", i);
  const Plan p =
      load_plan(write_hostile("huge.yaml",
                              "name: p\nexperiments:\n  - name: e\n    kind: train\n    sweep: {" +
                                  axes + "}\n"),
                kRoot);
  const std::string e = config_error([&] { expand(p, site); });
  EXPECT_HAS(e, "plan experiment e: expands to more than 100000 points");
  EXPECT_HAS(config_error([&] { expand(p, site, 50); }), "more than 50 points");
  // exactly the cap is fine
  const Plan q =
      load_plan(write_hostile("cap.yaml",
                              "name: q\nexperiments:\n  - name: e\n    kind: train\n    sweep: "
                              "{a: [1, 2, 3, 4, 5]}\n    repeats: 2\n"),
                kRoot);
  EXPECT_EQ(expand(q, site, 10).points.size(), 10u);
  EXPECT_HAS(config_error([&] { expand(q, site, 9); }), "more than 9 points");
}

TEST(Hostile, AFirstWordWithAnEqualsSignIsNotAnAssignment) {
  const SiteConfig s = load_site(
      write_hostile("eq.yaml",
                    "name: s\nnode: {cores: 4}\nlauncher: {kind: local}\ndlscale: PATH=/x/y\n"),
      kRoot);
  const Plan p = load_plan(
      write_hostile("eqp.yaml", "name: p\nexperiments:\n  - {name: a, kind: train}\n"), kRoot);
  const Expansion ex = expand(p, s);
  ASSERT_EQ(ex.points.size(), 1u);
  const std::string line =
      launch_line(s, ex.points[0], {.dlscale = s.dlscale, .out = "o", .campaign = "c"});
  EXPECT_EQ(line.rfind("'PATH=/x/y' train ", 0), 0u) << line;
}

TEST(Hostile, FreeTextIsQuotedInScripts) {
  const SiteConfig s = load_site(
      write_hostile(
          "q.yaml",
          kSiteHead + "scheduler: {kind: slurm}\nenvironment: {X: \"$(touch F); `id`; 'q'\"}\n"),
      kRoot);
  const Plan p =
      load_plan(write_hostile("qp.yaml",
                              "name: p\nexperiments:\n  - name: a\n    kind: train\n    args: "
                              "{model: \"$(touch G)\"}\n"),
                kRoot);
  const Expansion ex = expand(p, s);
  ASSERT_EQ(ex.points.size(), 1u);
  const std::string script = batch_script(
      s, ex.points[0], {.dlscale = "/opt/my dlscale", .out = "o.jsonl", .campaign = "c"});
  EXPECT_HAS(script, "export X='$(touch F); `id`; '\\''q'\\'''\n");
  EXPECT_HAS(script, "'/opt/my dlscale' train --model '$(touch G)'");
}

}  // namespace
}  // namespace dls
