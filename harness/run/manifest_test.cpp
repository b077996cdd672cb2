// The manifest's measured node values: a site whose node says peak_flops_sp: auto gets
// measured_node_peak, one whose node says memory_bandwidth: auto gets
// measured_node_memory_bandwidth (the STREAM triad, one thread per physical core, arrays beyond
// the last-level cache), each only when asked for; a site that gives both gets neither.
#include "harness/run/manifest.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/run/campaign.hpp"
#include "measure/check.hpp"
#include "measure/stream.hpp"
#include "measure/test_tmp.hpp"

namespace dls {
namespace {

nlohmann::json manifest_for(const std::string& name, bool peak_auto, bool bandwidth_auto) {
  const auto d = test::tmp_dir("manifest_test") / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  SiteConfig site;
  site.name = "t";
  site.node.peak_auto = peak_auto;
  site.node.memory_bandwidth_auto = bandwidth_auto;
  if (!peak_auto) site.node.peak_flops_sp = 1e11;
  if (!bandwidth_auto) site.node.memory_bandwidth = 2e10;
  Plan plan;
  plan.name = "p";
  Expansion ex;
  Point p;
  p.id = "0123456789abcdef";
  p.experiment = "e";
  p.kind = "kernels";
  ex.points.push_back(p);
  EXPECT_EQ(prepare_manifest(d.string(), plan, site, ex, false), "");
  const nlohmann::json m = read_manifest(d.string());
  std::filesystem::remove_all(d);
  return m;
}

TEST(Manifest, MemoryBandwidthMeasuredWhenTheSiteSaysAuto) {
  const nlohmann::json m = manifest_for("bandwidth", false, true);
  EXPECT_FALSE(m.contains("measured_node_peak"));
  ASSERT_TRUE(m.contains("measured_node_memory_bandwidth")) << m.dump(2);
  const nlohmann::json& b = m["measured_node_memory_bandwidth"];
  EXPECT_GT(b["bytes_per_s"].get<double>(), 0);
  EXPECT_EQ(b["source"], "measured");
  EXPECT_EQ(b["threads"].get<long>(), json_count(m["provenance"]["cpu"], "physical_cores", 1));
  EXPECT_EQ(b["array_elements"].get<long>(), stream_array_elements());
  EXPECT_NE(b["method"].get<std::string>().find("STREAM triad, float32, best of"),
            std::string::npos)
      << b["method"];
}

TEST(Manifest, PeakMeasuredWhenTheSiteSaysAuto) {
  const nlohmann::json m = manifest_for("peak", true, false);
  EXPECT_FALSE(m.contains("measured_node_memory_bandwidth"));
  ASSERT_TRUE(m.contains("measured_node_peak")) << m.dump(2);
  EXPECT_GT(m["measured_node_peak"]["flop_per_s"].get<double>(), 0);
  EXPECT_EQ(m["measured_node_peak"]["source"], "measured");
}

TEST(Manifest, NothingMeasuredWhenTheSiteGivesBoth) {
  const nlohmann::json m = manifest_for("given", false, false);
  EXPECT_FALSE(m.contains("measured_node_peak"));
  EXPECT_FALSE(m.contains("measured_node_memory_bandwidth"));
}

// A campaign resumed with the same points but another launcher, environment or scheduler under
// the same site name is refused, naming what changed; with --allow-plan-change it goes on.
TEST(Manifest, AResumeWithAnotherSiteSetupIsRefusedNamingIt) {
  const auto d = test::tmp_dir("manifest_test") / "setup";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  SiteConfig site;
  site.name = "t";
  site.node.peak_flops_sp = 1e11, site.node.memory_bandwidth = 2e10;
  Plan plan;
  plan.name = "p";
  Expansion ex;
  ex.points.push_back(Point{.id = "0123456789abcdef", .experiment = "e", .kind = "kernels"});
  EXPECT_EQ(prepare_manifest(d.string(), plan, site, ex, false), "");
  EXPECT_EQ(prepare_manifest(d.string(), plan, site, ex, false), "");  // the same: resumed
  SiteConfig other = site;
  other.launcher.kind = "local";
  other.environment["OMP_WAIT_POLICY"] = "active";
  try {
    prepare_manifest(d.string(), plan, other, ex, false);
    ADD_FAILURE() << "a resume with another launcher was not refused";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("site environment.OMP_WAIT_POLICY (none) -> \"active\""), std::string::npos)
        << what;
    EXPECT_NE(what.find("site launcher.kind \"mpirun\" -> \"local\""), std::string::npos) << what;
  }
  EXPECT_NE(prepare_manifest(d.string(), plan, other, ex, true).find("launcher.kind"),
            std::string::npos);
  EXPECT_EQ(read_manifest(d.string())["site_setup"]["launcher"]["kind"], "local");
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace dls
