// libFuzzer target for the YAML-facing parsers (site configurations and plans): any input must
// either load or raise a ConfigError; a crash, a sanitizer report, a hang or any other
// exception is a bug. Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/config/plan.hpp"
#include "harness/config/site.hpp"
#include "kernels/core/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/dls_config_fuzz_" + std::to_string(getpid()) + ".yaml";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  dls::SiteConfig site;
  bool have_site = false;
  try {
    site = dls::load_site(path, "/nonexistent");
    have_site = true;
  } catch (const dls::ConfigError&) {
  }
  try {
    const dls::Plan plan = dls::load_plan(path, "/nonexistent");
    if (have_site) (void)dls::expand(plan, site);
  } catch (const dls::ConfigError&) {
  }
  return 0;
}
