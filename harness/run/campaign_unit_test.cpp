// The campaign reader's merge rule and the campaign lock, on files made by hand.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/config/config_test_util.hpp"
#include "harness/run/campaign.hpp"
#include "harness/run/campaign_lock.hpp"
#include "measure/check.hpp"
#include "measure/test_tmp.hpp"

namespace dls {
namespace {

std::string fresh_dir(const std::string& name) {
  const auto d = test::tmp_dir("campaign_unit") / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

void lines(const std::string& path, const std::vector<nlohmann::json>& v) {
  std::ofstream f(path);
  for (const auto& j : v) f << j.dump() << "\n";
}

nlohmann::json record(const std::string& point, int x) {
  return {{"schema", "dlscale.record/1"},
          {"kind", "train"},
          {"benchmark", "m"},
          {"params", nlohmann::json::object()},
          {"metrics", nlohmann::json::object()},
          {"status", "ok"},
          {"harness_point", point},
          {"x", x}};
}

nlohmann::json rec(const std::string& point, const std::string& token, long n, int x) {
  nlohmann::json r = record(point, x);
  r["harness_merge"] = {{"token", token}, {"lines", n}};
  return r;
}

TEST(CampaignReader, OnlyWholeMergesCountAndTheFirstOneWins) {
  const std::string d = fresh_dir("merges");
  lines(d + "/manifest.json", {{{"points",
                                 {{{"id", "a"}, {"experiment", "e"}},
                                  {{"id", "b"}, {"experiment", "e"}},
                                  {{"id", "c"}, {"experiment", "e"}}}}}});
  lines(d + "/records.jsonl", {rec("a", "t1", 2, 1), rec("a", "t2", 2, 2), rec("a", "t2", 2, 3),
                               rec("b", "t3", 1, 4), rec("b", "t4", 1, 5), record("c", 6)});
  lines(d + "/points.jsonl", {{{"id", "a"}, {"status", "ok"}},
                              {{"id", "c"}, {"status", "failed"}},
                              {{"id", "c"}, {"status", "ok"}}});
  const Campaign c = read_campaign(d);
  std::vector<int> xs;
  for (const auto& r : c.records) xs.push_back(r["x"]);
  EXPECT_EQ(
      xs, (std::vector<int>{
              2, 3, 4, 6}));  // a's cut-short merge out, b's second copy out, c's untagged line in
  EXPECT_TRUE(c.done("a") && c.done("b") && c.done("c"));
  EXPECT_EQ(c.last_attempt.at("c")["status"], "ok");
  EXPECT_EQ(c.attempt_order, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0],
            d + "/records.jsonl: point a: a merge cut short (1 of 2 lines) is ignored");
  EXPECT_EQ(c.warnings[1],
            d + "/records.jsonl: point b was merged more than once; the first copy counts");
}

TEST(CampaignReader, ALineThatIsNotARecordIsAnErrorNamingFileAndLine) {
  const std::string d = fresh_dir("notrecord");
  lines(d + "/manifest.json", {{{"points", {{{"id", "a"}}}}}});
  nlohmann::json bad = rec("a", "t", 2, 1);
  bad.erase("benchmark"), bad["status"] = 5;
  nlohmann::json other = rec("a", "t", 2, 2);
  other["schema"] = "dlscale.record/2";
  for (const auto& [line, want] :
       {std::pair{bad, std::string(":1: not a dlscale record: missing benchmark, status")},
        std::pair{
            other,
            std::string(
                ":1: schema 'dlscale.record/2', expected 'dlscale.record/1' (mixed schemas)")}}) {
    lines(d + "/records.jsonl", {line, rec("a", "t", 2, 3)});
    try {
      read_campaign(d);
      ADD_FAILURE() << "no error for " << line.dump();
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), d + "/records.jsonl" + want);
    }
  }
}

TEST(CampaignReader, APointWithNoRecordsIsDoneByItsOutcome) {
  const std::string d = fresh_dir("empty");
  lines(d + "/manifest.json", {{{"points", {{{"id", "a"}}, {{"id", "b"}}}}}});
  lines(d + "/points.jsonl", {{{"id", "a"}, {"status", "ok"}, {"records", 0}},
                              {{"id", "b"}, {"status", "failed"}, {"records", 0}}});
  const Campaign c = read_campaign(d);
  EXPECT_TRUE(c.done("a"));
  EXPECT_FALSE(c.done("b"));
  EXPECT_THROW(read_campaign(fresh_dir("nothing")), ConfigError);
}

nlohmann::json lock_of(const std::string& dir) {
  std::ifstream f(dir + "/runner.lock");
  return nlohmann::json::parse(f);
}

TEST(CampaignFolder, FilesThatAreNotItsOwnAreRefusedBeforeAnyWrite) {
  namespace fs = std::filesystem;
  const std::string d = fresh_dir("folder");
  EXPECT_EQ(test::config_error([&] { check_campaign_folder(d + "/new", true); }), "");
  EXPECT_TRUE(fs::is_directory(d + "/new/parts"));
  lines(d + "/outside.jsonl", {record("p", 1)});
  fs::create_directories(d + "/sym");
  fs::create_symlink(d + "/outside.jsonl", d + "/sym/records.jsonl");
  EXPECT_NE(test::config_error([&] {
              check_campaign_folder(d + "/sym", true);
            }).find("records.jsonl is a symbolic link"),
            std::string::npos);
  EXPECT_NE(test::config_error([&] { read_campaign(d + "/sym"); }).find("a symbolic link"),
            std::string::npos);
  fs::create_directories(d + "/dir/manifest.json");
  EXPECT_NE(
      test::config_error([&] { read_campaign(d + "/dir"); }).find("manifest.json is a folder"),
      std::string::npos);
  lines(d + "/file", {});
  EXPECT_NE(test::config_error([&] {
              check_campaign_folder(d + "/file", true);
            }).find("exists and is not a folder"),
            std::string::npos);
  fs::create_directories(d + "/parts_file");
  lines(d + "/parts_file/parts", {});
  EXPECT_NE(test::config_error([&] {
              check_campaign_folder(d + "/parts_file", true);
            }).find("parts is not a folder"),
            std::string::npos);
  std::ifstream f(d + "/outside.jsonl");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(f), {}, '\n'), 1);  // untouched
}

TEST(CampaignLock, ASecondLockIsRefusedNamingTheHolder) {
  const std::string d = fresh_dir("busy");
  const CampaignLock mine(d);
  EXPECT_EQ(lock_of(d)["pid"], long(getpid()));
  try {
    const CampaignLock second(d);
    FAIL() << "a second lock was taken";
  } catch (const CampaignBusy& e) {
    EXPECT_NE(
        std::string(e.what()).find(fmt::format("is being run by runner pid {} on host ", getpid())),
        std::string::npos)
        << e.what();
  }
  EXPECT_EQ(lock_of(d)["pid"], long(getpid()));  // the refusal left the holder's lock alone
}

TEST(CampaignLock, AStaleLockOfThisHostIsTakenOverAndAnotherHostsIsNot) {
  const std::string d = fresh_dir("stale");
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // a pid that is gone
  nlohmann::json dead = {{"host", ""},    {"pid", long(child)}, {"pid_start", "1"},
                         {"boot_id", ""}, {"token", "t"},       {"since", "x"}};
  {
    const CampaignLock probe(d);  // learn this host's name and boot id from a lock of our own
    const nlohmann::json me = lock_of(d);
    dead["host"] = me["host"], dead["boot_id"] = me["boot_id"],
    dead["pid_namespace"] = me["pid_namespace"];
  }
  EXPECT_FALSE(std::filesystem::exists(d + "/runner.lock"));  // released when it went out of scope
  lines(d + "/runner.lock", {dead});
  {
    const CampaignLock taken(d);
    EXPECT_NE(taken.took_over().find(fmt::format("runner pid {}", child)), std::string::npos)
        << taken.took_over();
    EXPECT_NE(taken.took_over().find("is not running"), std::string::npos) << taken.took_over();
  }
  dead["host"] = "some-other-host";
  lines(d + "/runner.lock", {dead});
  EXPECT_THROW(CampaignLock{d}, CampaignBusy);
  lines(d + "/runner.lock", {});  // empty: unreadable, refused rather than guessed
  EXPECT_THROW(CampaignLock{d}, CampaignBusy);
}

}  // namespace
}  // namespace dls
