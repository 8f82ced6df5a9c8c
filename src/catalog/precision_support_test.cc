#include "catalog/precision_support.h"

#include <gtest/gtest.h>

#include "catalog/catalog.h"

namespace gw {
namespace {

TEST(PrecisionSupport, ArchitecturesFromTheCatalogPeaks) {
  auto catalog = Catalog::embedded();
  ASSERT_TRUE(catalog.ok());
  auto arch = [&](const char* name) { return nvidia_architecture(*catalog.value().find_accelerator(name)); };
  EXPECT_EQ(arch("V100-32GB"), "Pascal/Volta");
  EXPECT_EQ(arch("T4"), "Turing");
  EXPECT_EQ(arch("A100-80GB"), "Ampere");
  EXPECT_EQ(arch("A10G"), "Ampere");
  EXPECT_EQ(arch("L4"), "Ada/Hopper/Blackwell");
  EXPECT_EQ(arch("H100"), "Ada/Hopper/Blackwell");
  EXPECT_EQ(arch("MI300X"), "");
}

// vLLM's kernel table: fp8 W8A8 on Ada/Hopper (and MI300), weight-only fp8 on Ampere, nothing
// before; int8 W8A8 from Turing; bf16 as fp16 before Ampere.
TEST(PrecisionSupport, RefusedOrFlaggedByArchitecture) {
  auto catalog = Catalog::embedded();
  auto a = [&](const char* name) -> const Accelerator& { return *catalog.value().find_accelerator(name); };
  EXPECT_TRUE(unsupported_precision(a("T4"), Precision::fp8));
  EXPECT_TRUE(unsupported_precision(a("V100-16GB"), Precision::fp8));
  EXPECT_NE(unsupported_precision(a("T4"), Precision::fp8)->find("Turing"), std::string::npos);
  EXPECT_FALSE(unsupported_precision(a("A100-80GB"), Precision::fp8));
  EXPECT_NE(precision_note(a("A100-80GB"), Precision::fp8).find("weight-only"), std::string::npos);
  EXPECT_FALSE(unsupported_precision(a("H100"), Precision::fp8));
  EXPECT_EQ(precision_note(a("H100"), Precision::fp8), "");
  EXPECT_FALSE(unsupported_precision(a("MI300X"), Precision::fp8));
  EXPECT_TRUE(unsupported_precision(a("MI300X"), Precision::int8));
  EXPECT_TRUE(unsupported_precision(a("V100-32GB"), Precision::int8));
  EXPECT_FALSE(unsupported_precision(a("T4"), Precision::int8));
  EXPECT_FALSE(unsupported_precision(a("T4"), Precision::int4));
  EXPECT_FALSE(unsupported_precision(a("T4"), Precision::bf16));
  EXPECT_NE(precision_note(a("T4"), Precision::bf16).find("fp16"), std::string::npos);
  EXPECT_EQ(precision_note(a("A10G"), Precision::bf16), "");
  EXPECT_TRUE(unsupported_precision(a("H100"), Precision::fp4));
  EXPECT_FALSE(unsupported_precision(a("B200"), Precision::fp4));
  // TPUs and Gaudi by their own columns of the table: int8 W8A8 on TPU, fp8 on Gaudi.
  EXPECT_FALSE(unsupported_precision(a("TPU-v5e"), Precision::int8));
  EXPECT_TRUE(unsupported_precision(a("TPU-v6e"), Precision::int4));
  EXPECT_TRUE(unsupported_precision(a("TPU-v6e"), Precision::fp8));
  EXPECT_NE(precision_note(a("TPU-v5e"), Precision::fp16).find("bf16"), std::string::npos);
  EXPECT_FALSE(unsupported_precision(a("Gaudi2"), Precision::fp8));
  EXPECT_TRUE(unsupported_precision(a("Gaudi3"), Precision::int4));
  EXPECT_TRUE(unsupported_precision(a("MI300X"), Precision::int4));
}

// AWQ and GPTQ store the same 4-bit weights but run on different kernels: vLLM's table has AWQ
// from Turing and GPTQ from Volta. Weights named awq are refused on V100 and P100, which plan
// and fit took for int4 and placed there; gptq and int4 still run on them.
TEST(PrecisionSupport, AwqNeedsTuringWhereGptqRunsOnVolta) {
  auto catalog = Catalog::embedded();
  auto a = [&](const char* name) -> const Accelerator& { return *catalog.value().find_accelerator(name); };
  const auto serving = PrecisionEngine::serving;
  for (const char* old : {"V100-16GB", "V100-32GB", "P100"}) {
    auto why = unsupported_precision(a(old), Precision::int4, serving, WeightFormat::awq);
    ASSERT_TRUE(why) << old;
    EXPECT_NE(why->find("AWQ needs Turing"), std::string::npos) << *why;
    EXPECT_FALSE(unsupported_precision(a(old), Precision::int4, serving, WeightFormat::gptq)) << old;
    EXPECT_FALSE(unsupported_precision(a(old), Precision::int4)) << old;
  }
  for (const char* newer : {"T4", "A10G", "H100"}) {
    EXPECT_FALSE(unsupported_precision(a(newer), Precision::int4, serving, WeightFormat::awq)) << newer;
  }
  // Refused everywhere int4 is, whatever the name.
  EXPECT_TRUE(unsupported_precision(a("TPU-v6e"), Precision::int4, serving, WeightFormat::awq));
  EXPECT_TRUE(unsupported_precision(a("MI300X"), Precision::int4, serving, WeightFormat::gptq));
  EXPECT_EQ(weight_format_of("AWQ"), WeightFormat::awq);
  EXPECT_EQ(weight_format_of("gptq"), WeightFormat::gptq);
  EXPECT_EQ(weight_format_of("int4"), WeightFormat::plain);
}

// MXFP4 (gpt-oss's experts) as vLLM's recipe runs it: natively on fp4 tensor cores (B200),
// weight-only with 16-bit compute on Ampere and Hopper (Marlin/Triton MXFP4 MoE) and on MI300X;
// not before Ampere, not on TPUs or Gaudi; never for training.
TEST(PrecisionSupport, Mxfp4RunsWeightOnlyWithoutFp4TensorCores) {
  auto catalog = Catalog::embedded();
  auto a = [&](const char* name) -> const Accelerator& { return *catalog.value().find_accelerator(name); };
  const auto serving = PrecisionEngine::serving;
  const auto mxfp4_format = WeightFormat::mxfp4;
  EXPECT_EQ(precision_support(a("B200"), Precision::fp4, serving, mxfp4_format).level, PrecisionSupport::Level::runs);
  for (const char* weight_only : {"A100-80GB", "A10G", "H100", "L4", "MI300X"}) {
    const PrecisionSupport s = precision_support(a(weight_only), Precision::fp4, serving, mxfp4_format);
    EXPECT_EQ(s.level, PrecisionSupport::Level::runs_as) << weight_only;
    EXPECT_NE(s.note.find("weight-only"), std::string::npos) << s.note;
    EXPECT_EQ(s.note.find("Blackwell has"), std::string::npos) << s.note;  // Blackwell runs it natively
    EXPECT_NE(s.source.find("GPT-OSS"), std::string::npos) << s.source;
    // Plain fp4 (NVFP4 W4A4) still needs fp4 tensor cores.
    EXPECT_TRUE(unsupported_precision(a(weight_only), Precision::fp4)) << weight_only;
  }
  for (const char* none : {"T4", "V100-32GB", "TPU-v6e", "TPU-v5e", "Gaudi3"})
    EXPECT_TRUE(unsupported_precision(a(none), Precision::fp4, serving, mxfp4_format)) << none;
  EXPECT_TRUE(unsupported_precision(a("H100"), Precision::fp4, PrecisionEngine::training, mxfp4_format));
  EXPECT_EQ(parse_precision("MXFP4"), Precision::fp4);
  EXPECT_EQ(weight_format_of("mxfp4"), mxfp4_format);
  EXPECT_DOUBLE_EQ(quantized_weight_bits(Precision::fp4, mxfp4_format), 4.25);
  EXPECT_DOUBLE_EQ(quantized_weight_bits(Precision::int4, WeightFormat::awq), 4.0 + 20.0 / 128);
}

TEST(PrecisionSupport, TrainingHasItsOwnColumn) {
  auto catalog = Catalog::embedded();
  auto a = [&](const char* name) -> const Accelerator& { return *catalog.value().find_accelerator(name); };
  const auto training = PrecisionEngine::training;
  EXPECT_TRUE(unsupported_precision(a("A100-80GB"), Precision::fp8, training));  // serving runs it weight-only
  EXPECT_FALSE(unsupported_precision(a("A100-80GB"), Precision::fp8));
  EXPECT_FALSE(unsupported_precision(a("H100"), Precision::fp8, training));
  EXPECT_FALSE(unsupported_precision(a("MI300X"), Precision::fp8, training));
  EXPECT_TRUE(unsupported_precision(a("H100"), Precision::int4, training));
  EXPECT_NE(precision_note(a("V100-32GB"), Precision::bf16, training).find("loss scaling"), std::string::npos);
}

TEST(PrecisionSupport, EveryRuleCarriesItsSourceAndQuantizationNamesParse) {
  auto catalog = Catalog::embedded();
  for (const auto& accelerator : catalog.value().accelerators())
    for (int p = 0; p < kPrecisionCount; ++p)
      for (auto engine : {PrecisionEngine::serving, PrecisionEngine::training}) {
        PrecisionSupport s = precision_support(accelerator, static_cast<Precision>(p), engine);
        if (s.level != PrecisionSupport::Level::runs) {
          EXPECT_NE(s.source, "") << accelerator.name;
          EXPECT_NE(s.note, "") << accelerator.name;
        }
      }
  EXPECT_EQ(parse_precision("AWQ"), Precision::int4);
  EXPECT_EQ(parse_precision("gptq"), Precision::int4);
  EXPECT_EQ(parse_precision("w8a8"), Precision::int8);
  EXPECT_EQ(accelerator_family(*catalog.value().find_accelerator("TPU-v5p")), "google-tpu");
}

}  // namespace
}  // namespace gw
