// Records: round trip through JSON text and the schema check; the writer's appends.
#include "measure/record.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "measure/check.hpp"
#include "measure/provenance.hpp"
#include "measure/test_tmp.hpp"

namespace dls {
namespace {

Record sample_record() {
  Record r;
  r.kind = "kernel";
  r.benchmark = "conv2d_fwd";
  r.params = {{"shape", "g1mb2_ic3ih5iw5_oc4oh5ow5_kh3kw3_sh1sw1_ph1pw1_dh0dw0"},
              {"backend", "openblas"}};
  r.metrics = {{"time_s", 1.5e-3}, {"gflop_per_s", 12.5}};
  r.counters = {{"perf::TASK-CLOCK", 1500000}};
  r.counters_unavailable = {{"PAPI_TOT_CYC", "PAPI_add_named_event: Event does not exist (-7)"}};
  r.check = {{"status", "passed"}, {"max_rel_err", 1e-7}};
  r.provenance = capture_provenance({.site = "localhost", .command_line = "test"});
  return r;
}

TEST(Record, RoundTripsThroughJsonText) {
  const Record r = sample_record();
  const auto j = nlohmann::json::parse(r.to_json().dump());
  EXPECT_EQ(j.at("schema"), "dlscale.record/1");
  const Record back = Record::from_json(j);
  EXPECT_EQ(back.to_json(), r.to_json());
}

TEST(Record, PointIdIsCanonical) {
  nlohmann::json a = nlohmann::json::object(), b = nlohmann::json::object();
  a["x"] = 1;
  a["y"] = "z";
  b["y"] = "z";
  b["x"] = 1;
  EXPECT_EQ(point_id(a), point_id(b));
  b["x"] = 2;
  EXPECT_NE(point_id(a), point_id(b));
  EXPECT_EQ(point_id(a).size(), 16u);
}

TEST(Record, SchemaViolationsAreRejectedWithTheKey) {
  const auto good = sample_record().to_json();
  auto expect_bad = [&](nlohmann::json j, const std::string& key) {
    try {
      Record::from_json(j);
      ADD_FAILURE() << "accepted a record with bad " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  auto j = good;
  j.erase("metrics");
  expect_bad(j, "metrics");
  j = good;
  j["status"] = "great";
  expect_bad(j, "status");
  j = good;
  j["kind"] = "kernal";
  expect_bad(j, "kind");
  j = good;
  j["check"]["status"] = "ok";
  expect_bad(j, "check.status");
  j = good;
  j["schema"] = "dlscale.record/0";
  expect_bad(j, "schema");
  j = good;
  j["params"]["backend"] = "onednn";
  expect_bad(j, "point_id");
  j = good;
  j["counters"] = 3;
  expect_bad(j, "counters");
}

TEST(RecordWriter, AppendsWholeLinesAcrossWriters) {
  const auto dir = test::tmp_dir("record_test");
  std::filesystem::remove_all(dir);
  const auto path = (dir / "sub" / "records.jsonl").string();
  {
    RecordWriter w1(path);
    RecordWriter w2(path);
    Record r = sample_record();
    for (int i = 0; i < 3; ++i) {
      r.metrics["i"] = i;
      w1.append(r);
      w2.append(r);
    }
  }
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    EXPECT_NO_THROW(Record::from_json(nlohmann::json::parse(line)));
    ++n;
  }
  EXPECT_EQ(n, 6);  // the folder goes at exit with the rest (kept if a test failed)
}

// A record whose text holds bytes that are not UTF-8 (an error message quoting a file) is kept,
// the bytes replaced; a FIFO or a folder is refused naming it (a FIFO's fdatasync failed only
// after the run).
TEST(RecordWriter, KeepsARecordWithBadBytesAndRefusesWhatIsNotAFile) {
  const auto dir = test::tmp_dir("record_test") / "bytes";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "r.jsonl").string();
  Record r = sample_record();
  r.status = "failed";
  r.error = "corrupt JPEG in caf\xe9/a.jpg";
  RecordWriter(path).append(r);
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(Record::from_json(nlohmann::json::parse(line)).error,
            "corrupt JPEG in caf\xef\xbf\xbd/a.jpg");  // U+FFFD
  const auto fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& bad : {fifo, dir.string()}) try {
      RecordWriter w(bad);
      ADD_FAILURE() << "opened " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
}

// check_appendable creates nothing where it passes, and names what cannot take records.
TEST(RecordWriter, CheckAppendableMakesNoFile) {
  const auto dir = test::tmp_dir("record_test") / "appendable";
  const auto path = (dir / "sub" / "r.jsonl").string();
  EXPECT_NO_THROW(check_appendable(path));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir / "sub"));  // the probe file went too
  std::ofstream(dir / "file") << "x";
  const auto under_a_file = (dir / "file" / "r.jsonl").string();
  try {
    check_appendable(under_a_file);
    ADD_FAILURE() << "accepted " << under_a_file;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "file").string()), std::string::npos) << e.what();
  }
}

TEST(Provenance, HasTheKeysAnalysisNeeds) {
  const auto p = capture_provenance({});
  for (const char* k : {"site", "host", "start_time", "git", "build", "libraries", "cpu", "env"})
    EXPECT_TRUE(p.contains(k)) << k;
  EXPECT_TRUE(p["libraries"]["blas"].contains("corename"));
  EXPECT_GT(p["cpu"]["logical_cpus"].get<int>(), 0);
  EXPECT_EQ(p["git"]["commit"].get<std::string>().size() == 40 ||
                p["git"]["commit"].get<std::string>() == "unknown",
            true);
  EXPECT_TRUE(is_relevant_env_var("OMP_NUM_THREADS"));
  EXPECT_TRUE(is_relevant_env_var("OPENBLAS_NUM_THREADS"));
  EXPECT_FALSE(is_relevant_env_var("HOME"));
  EXPECT_TRUE(is_relevant_env_var("OMPI_MCA_mpi_yield_when_idle"));  // a setting
  EXPECT_FALSE(is_relevant_env_var("OMPI_MCA_orte_hnp_uri"));        // a per-job value
  EXPECT_FALSE(is_relevant_env_var("SLURM_JOB_ID"));
}

}  // namespace
}  // namespace dls
