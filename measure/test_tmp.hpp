// A test process's scratch folder, TMP/dls_<suite>_<pid> (tests only: it needs GoogleTest).
// Created on first use and removed when the process exits after every test passed; where one
// failed it is kept and its path printed, because the files a failure left are what its reader
// needs. Before this each test binary left its folder behind on every run.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace dls::test {
namespace detail {

struct TmpDirs {
  std::mutex mutex;
  std::vector<std::filesystem::path> dirs;
};

inline TmpDirs& tmp_dirs() {
  static TmpDirs* t = new TmpDirs;  // never destroyed: the exit handler reads it
  return *t;
}

inline void remove_tmp_dirs_if_passed() {
  const bool passed = ::testing::UnitTest::GetInstance()->Passed();
  for (const auto& d : tmp_dirs().dirs) {
    if (!passed) {
      std::fprintf(stderr, "a test failed: its scratch folder %s is kept\n", d.c_str());
      continue;
    }
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}

}  // namespace detail

// TMP/dls_<suite>_<pid>, created; removed at exit as above.
inline std::filesystem::path tmp_dir(const std::string& suite) {
  auto& t = detail::tmp_dirs();
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("dls_" + suite + "_" + std::to_string(getpid()));
  {
    const std::lock_guard<std::mutex> lock(t.mutex);
    if (std::find(t.dirs.begin(), t.dirs.end(), d) == t.dirs.end()) {
      if (t.dirs.empty()) std::atexit(detail::remove_tmp_dirs_if_passed);
      t.dirs.push_back(d);
    }
  }
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace dls::test
