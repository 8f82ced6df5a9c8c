// "Did you mean": the closest name (a one-character typo first, then the family a name starts
// with, then the nearest close enough), and the few worth naming beside it.
#include "core/text.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

const std::vector<std::string> kAccelerators = {"A100-80GB", "A100-40GB", "H100", "H200", "L4", "L40S"};

TEST(Text, ClosestMatchTakesATypoThenTheFamilyThenTheNearest) {
  EXPECT_EQ(closest_match("H10", kAccelerators), "H100");             // one character: the first such
  EXPECT_EQ(closest_match("h100-80g", kAccelerators), "H100");        // its family, over A100-80GB
  EXPECT_EQ(closest_match("A100-80", kAccelerators), "A100-80GB");    // the nearest
  EXPECT_EQ(closest_match("quantum-chip", kAccelerators), "");        // none close enough
  EXPECT_EQ(closest_match("L4", {}), "");
}

TEST(Text, CloseMatchesNameTheSameSizeClosestFirst) {
  const std::vector<std::string> models = {"llama-3.1-70b", "llama-3.1-8b", "llama-2-7b", "llama-2-70b", "mistral-7b"};
  EXPECT_EQ(close_matches("llama-3-70b", models), (std::vector<std::string>{"llama-2-70b", "llama-3.1-70b"}));
  EXPECT_EQ(close_matches("llama-3-70b", models, 1), (std::vector<std::string>{"llama-2-70b"}));
  // A one-character typo first, then only names of the same size ("-7b", not "-8b").
  EXPECT_EQ(close_matches("llama-3.1-7b", models), (std::vector<std::string>{"llama-3.1-70b", "llama-2-7b"}));
  EXPECT_TRUE(close_matches("stable-diffusion", models).empty());
}

}  // namespace
}  // namespace gw
