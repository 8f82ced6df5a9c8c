// For tests that run outside tools (node, chromium, haproxy): whether one is on the PATH, and
// the rule for when it is not: a packager's build skips the test; CI sets
// GPUWISE_REQUIRE_BROWSER=1, and there a missing tool fails it.
#pragma once

#include <cstdlib>
#include <string>

namespace gw::testing_support {

inline bool have(const std::string& command) { return std::system(("command -v " + command + " >/dev/null 2>&1").c_str()) == 0; }

}  // namespace gw::testing_support

#define REQUIRE_TOOLS(available, message)                                   \
  do {                                                                      \
    if (!(available)) {                                                     \
      if (std::getenv("GPUWISE_REQUIRE_BROWSER")) GTEST_FAIL() << message;  \
      GTEST_SKIP() << message;                                              \
    }                                                                       \
  } while (0)
