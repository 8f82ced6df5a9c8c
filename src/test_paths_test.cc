#include "test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gw_test {

namespace {

std::filesystem::path test_binary_folder() {
  std::error_code ignored;
  return std::filesystem::read_symlink("/proc/self/exe", ignored).parent_path();
}

std::string from_environment_or(const char* name, const std::filesystem::path& fallback) {
  const char* set = std::getenv(name);
  return set && *set ? std::string(set) : fallback.string();
}

}  // namespace

const char* source_dir() {
  static const std::string dir = from_environment_or("GPUWISE_SOURCE_DIR", test_binary_folder().parent_path());
  return dir.c_str();
}

const char* gpuwise_binary() {
  static const std::string binary = from_environment_or("GPUWISE_BINARY", test_binary_folder() / "gpuwise");
  return binary.c_str();
}

namespace {

TEST(TestPaths, FindTheCheckoutAndTheBinary) {
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(source_dir()) / "examples" / "chat-azure.yaml")) << source_dir();
  EXPECT_TRUE(std::filesystem::exists(gpuwise_binary())) << gpuwise_binary();
}

}  // namespace
}  // namespace gw_test
