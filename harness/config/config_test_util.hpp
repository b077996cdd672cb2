// Helpers of the config tests (config_test, hostile_input_test): files written into a folder of
// the test process's own, and the text of the ConfigError a call throws.
#pragma once

#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "measure/check.hpp"
#include "measure/test_tmp.hpp"

namespace dls::test {

inline const std::string kRoot = DLS_SOURCE_ROOT;

// TMP/dls_<suite>_<pid>/name (measure/test_tmp.hpp: removed at exit when every test passed) with
// `text`; returns its path.
inline std::string write_file(const std::string& suite, const std::string& name,
                              const std::string& text) {
  const auto dir = tmp_dir(suite);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

// The ConfigError's text; "" when nothing is thrown, and "NOT A CONFIG ERROR: ..." for any
// other exception (bad input must never end as a runtime error).
template <class F>
std::string config_error(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A CONFIG ERROR: ") + e.what();
  }
  return "";
}

}  // namespace dls::test
