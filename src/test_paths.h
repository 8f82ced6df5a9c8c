// Where the tests find the checkout (examples, catalog, web/) and the gpuwise binary they run.
// Found at run time, not compiled in, so that test objects do not depend on the checkout's path
// and the compiler cache serves every clone: $GPUWISE_SOURCE_DIR and $GPUWISE_BINARY (ctest sets
// both), else the test binary's folder (the build folder: gpuwise beside it) and its parent
// (the Makefile's build folders live in the checkout).
#pragma once

namespace gw_test {
const char* source_dir();
const char* gpuwise_binary();
}  // namespace gw_test

#define GPUWISE_SOURCE_DIR (::gw_test::source_dir())
#define GPUWISE_BINARY (::gw_test::gpuwise_binary())
