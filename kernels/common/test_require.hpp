// For tests that need something a machine may lack (a GPU, PAPI's counters, a root shell for
// Slurm, Chromium): such a test skips only for that one named reason and prints it, and a
// machine that must run it sets DLS_REQUIRE_<THING>=1 (CI sets the ones its machine has), where
// the skip is a failure instead. The printed marker "DLS_SKIP(no THING)" is what CTest's
// SKIP_REGULAR_EXPRESSION matches, so no other skip can pass for this one.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dls {

inline bool required_here(const std::string& thing) {
  const char* v = std::getenv(("DLS_REQUIRE_" + thing).c_str());
  return v && *v && std::string(v) != "0";
}

}  // namespace dls

// Skips the test because THING (a word: GPU, PAPI) is missing, for the reason `why`; fails
// instead where DLS_REQUIRE_<THING> is set.
#define DLS_SKIP_WITHOUT(thing, why)                                                              \
  do {                                                                                            \
    const std::string dls_why_ = (why);                                                           \
    if (::dls::required_here(thing)) FAIL() << "DLS_REQUIRE_" thing " is set, but: " << dls_why_; \
    std::printf("DLS_SKIP(no " thing "): %s\n", dls_why_.c_str());                                \
    GTEST_SKIP() << "no " thing ": " << dls_why_;                                                 \
  } while (0)
