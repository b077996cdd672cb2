// Errors and checks shared by every part of dlscale (STYLE.md 3.11).
//   dls::Error        a failed library call or runtime problem (exit code 3 at the top of main)
//   dls::ConfigError  bad input: a file, key, argument or descriptor (exit code 2)
//   DLS_ASSERT        a broken invariant, i.e. a bug: on in release builds, prints file:line,
//   aborts
// Library code throws; only main() decides how to exit.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dls {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigError : public Error {
 public:
  using Error::Error;
};

// Exit codes of every dlscale binary.
enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2, kExitRuntime = 3 };

[[noreturn]] inline void assert_fail(const char* cond, const char* file, int line,
                                     const std::string& msg) {
  std::fprintf(stderr, "dlscale: internal error at %s:%d: assertion '%s' failed: %s\n", file, line,
               cond, msg.c_str());
  std::abort();
}

}  // namespace dls

#define DLS_ASSERT(cond, ...)                                                             \
  do {                                                                                    \
    if (!(cond)) ::dls::assert_fail(#cond, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)

// Throws dls::Error naming the expression and location when expr is false.
#define DLS_CHECK(cond, ...)                                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::dls::Error(fmt::format("{} ({}:{})", fmt::format(__VA_ARGS__), __FILE__, __LINE__)); \
  } while (0)
