#include "catalog/catalog.h"
#include "catalog/catalog_tables.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <gtest/gtest.h>

namespace gw {
namespace {

Catalog embedded() {
  auto catalog = Catalog::embedded();
  EXPECT_TRUE(catalog.ok()) << catalog.error().to_string();
  return catalog.value();
}

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpuwise_catalog_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write_text_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(Catalog, EmbeddedCatalogCoversTheRequiredAccelerators) {
  Catalog catalog = embedded();
  EXPECT_GE(catalog.accelerators().size(), 20u);
  for (const char* name : {"T4", "L4", "A10G", "A10", "L40S", "A40", "V100-16GB", "V100-32GB", "A100-40GB",
                           "A100-80GB", "A100-40GB-PCIE", "A100-80GB-PCIE", "H100", "H100-PCIE", "H100-NVL",
                           "H200", "B200", "MI300X", "MI325X", "Gaudi2", "Gaudi3", "TPU-v4", "TPU-v5e",
                           "TPU-v5p", "TPU-v6e"}) {
    const Accelerator* a = catalog.find_accelerator(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_GT(a->memory_gib, 0) << name;
    EXPECT_GT(a->memory_gb_per_s, 0) << name;
    EXPECT_FALSE(a->source.empty()) << name;
    EXPECT_EQ(a->as_of.size(), 10u) << name;
  }
}

// The names people and tools give a part: its memory size, nvidia-smi's "H100 80GB HBM3", SXM.
// Offerings listed per zone (runpod's H200 in three) get a zone column, so that no two rows
// read alike; a listing without zones (lambda) has none.
TEST(Catalog, OfferingsTableNamesZonesWhereOfferingsHaveThem) {
  Catalog catalog = embedded();
  auto table_of = [&](const std::string& cloud, const std::string& accelerator) {
    OfferingSelection selection;
    selection.clouds = {cloud};
    if (!accelerator.empty()) selection.accelerators = {accelerator};
    auto chosen = select_offerings(catalog, selection);
    EXPECT_TRUE(chosen.ok()) << chosen.error().to_string();
    bool assumed = false;
    return offerings_table(catalog, chosen.value().offerings, chosen.value().pricing, false, &assumed);
  };
  Table zoned = table_of("runpod", "H200");
  ASSERT_GE(zoned.columns.size(), 3u);
  EXPECT_EQ(zoned.columns[2], "zone");
  ASSERT_GT(zoned.rows.size(), 3u);
  EXPECT_EQ(std::set<std::vector<std::string>>(zoned.rows.begin(), zoned.rows.end()).size(), zoned.rows.size());
  Table plain = table_of("lambda", "");
  ASSERT_FALSE(plain.rows.empty());
  EXPECT_EQ(std::count(plain.columns.begin(), plain.columns.end(), "zone"), 0);
}

TEST(Catalog, AliasesPeopleWrite) {
  Catalog catalog = embedded();
  const Accelerator* h100 = catalog.find_accelerator("H100");
  for (const char* name : {"H100-80GB", "H100 SXM", "h100-sxm5-80gb", "H100 80GB HBM3"})
    EXPECT_EQ(catalog.find_accelerator(name), h100) << name;
  EXPECT_EQ(catalog.find_accelerator("A100 80GB"), catalog.find_accelerator("A100-80GB"));
}

TEST(Catalog, DenseNotSparseFigures) {
  Catalog catalog = embedded();
  // H100 SXM: 989.4 dense bf16 TFLOPS (1,979 is the sparse figure); A100: 312.
  EXPECT_DOUBLE_EQ(*catalog.find_accelerator("H100")->peak(Precision::bf16), 989.4);
  EXPECT_DOUBLE_EQ(*catalog.find_accelerator("A100-80GB")->peak(Precision::bf16), 312);
  EXPECT_FALSE(catalog.find_accelerator("V100")->peak(Precision::bf16).has_value());  // no bf16 on Volta
  EXPECT_FALSE(catalog.find_accelerator("A100")->peak(Precision::fp8).has_value());
}

TEST(Catalog, AliasesAndSpellings) {
  Catalog catalog = embedded();
  EXPECT_EQ(catalog.find_accelerator("a100_80gb")->name, "A100-80GB");
  EXPECT_EQ(catalog.find_accelerator("H100-SXM")->name, "H100");
  EXPECT_EQ(catalog.find_accelerator("tpu-v5litepod")->name, "TPU-v5e");
  EXPECT_EQ(catalog.find_accelerator("K80"), nullptr);
}

TEST(Catalog, OfferingsFromFiveCloudsWithPricesAndSources) {
  Catalog catalog = embedded();
  std::set<std::string> clouds;
  for (const auto& o : catalog.offerings()) {
    clouds.insert(o.cloud);
    EXPECT_NE(catalog.find_accelerator(o.accelerator), nullptr) << o.instance_type;
    EXPECT_TRUE(o.on_demand_usd_per_hour || o.spot_usd_per_hour) << o.instance_type;
    EXPECT_FALSE(o.source.empty());
  }
  EXPECT_EQ(clouds, (std::set<std::string>{"aws", "azure", "gcp", "lambda", "runpod"}));
}

TEST(Catalog, CommittedPricesComeFromALabelledAssumption) {
  Catalog catalog = embedded();
  OfferingFilter filter;
  filter.clouds = {"aws"};
  filter.accelerators = {"H100"};
  auto p5 = catalog.select(filter);
  ASSERT_FALSE(p5.empty());
  const Offering& o = *p5.front();
  ASSERT_TRUE(o.reserved_1y_usd_per_hour.has_value());
  EXPECT_TRUE(o.reserved_is_assumption);
  EXPECT_NEAR(*o.reserved_1y_usd_per_hour, *o.on_demand_usd_per_hour * (1 - 0.31), 1e-9);
  EXPECT_TRUE(catalog.commitments().at("aws").assumption);
}

TEST(Catalog, NetworkFactsJoinOfferings) {
  Catalog catalog = embedded();
  OfferingFilter filter;
  filter.clouds = {"aws"};
  filter.accelerators = {"A100-40GB"};
  auto rows = catalog.select(filter);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front()->instance_type, "p4d.24xlarge");
  EXPECT_EQ(rows.front()->network_gbps.value_or(0), 400);
  EXPECT_EQ(rows.front()->fabric, "efa");
}

TEST(Catalog, FindsTheCheapest80GbGpuInEurope) {
  Catalog catalog = embedded();
  OfferingFilter filter;
  filter.geo = "europe";
  filter.min_vram_gib = 80;
  auto rows = catalog.select(filter);
  ASSERT_FALSE(rows.empty());
  for (const auto* o : rows) {
    EXPECT_EQ(region_geo(o->cloud, o->region), "europe");
    EXPECT_GE(catalog.find_accelerator(o->accelerator)->memory_gib, 80);
  }
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i]->on_demand_usd_per_hour) {
      EXPECT_LE(*rows[i - 1]->on_demand_usd_per_hour, *rows[i]->on_demand_usd_per_hour);
    }
  }
}

TEST(Catalog, SpotFilterKeepsOnlySpotPricedRows) {
  Catalog catalog = embedded();
  OfferingFilter filter;
  filter.pricing = Pricing::spot;
  filter.clouds = {"lambda"};
  EXPECT_TRUE(catalog.select(filter).empty());  // Lambda has no spot market
  filter.clouds = {"aws"};
  filter.max_usd_per_hour = 1.0;
  for (const auto* o : catalog.select(filter)) EXPECT_LE(*o->spot_usd_per_hour, 1.0);
}

TEST(Catalog, OverridesReplaceAndAddRows) {
  Catalog catalog = embedded();
  std::string dir = temp_dir("override");
  write_text_file(dir + "/accelerators.csv",
        "name,aliases,vendor,memory_gib,memory_gb_per_s,bf16_tflops,class,source,as_of\n"
        "X1,,acme,64,2000,500,both,vendor sheet,2026-11-01\n"
        "H100,,nvidia,80,3350,1000,training,my own measurement,2026-11-02\n");
  write_text_file(dir + "/offerings.csv",
        "cloud,region,zone,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,source,as_of\n"
        "acme,moon-1,,x1.big,X1,8,9.5,quote,2026-11-01\n");
  write_text_file(dir + "/commitments.csv", "cloud,discount_1y,discount_3y,kind,source,as_of\nacme,0.5,0.7,published,contract,2026-11-01\n");
  ASSERT_FALSE(catalog.apply_overrides(dir).has_value());
  EXPECT_DOUBLE_EQ(*catalog.find_accelerator("H100")->peak(Precision::bf16), 1000);
  EXPECT_EQ(catalog.find_accelerator("H100")->source, "my own measurement");
  OfferingFilter filter;
  filter.clouds = {"acme"};
  auto rows = catalog.select(filter);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0]->reserved_3y_usd_per_hour, 9.5 * 0.3);
  EXPECT_TRUE(rows[0]->reserved_is_assumption);  // derived from the cloud's discount
}

TEST(Catalog, BadOverrideFilesNameFileLineAndField) {
  Catalog catalog = embedded();
  std::string dir = temp_dir("bad");
  write_text_file(dir + "/offerings.csv",
        "cloud,region,zone,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,source,as_of\n"
        "aws,us-east-1,,p9,H100,8,3.5,q,2026-11-01\n"
        "aws,us-east-1,,p10,H1OO,8,3.5,q,2026-11-01\n");
  auto error = catalog.apply_overrides(dir);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->line, 3);
  EXPECT_EQ(error->field, "accelerator");
  EXPECT_NE(error->message.find("did you mean 'H100'"), std::string::npos);

  write_text_file(dir + "/offerings.csv",
        "cloud,region,zone,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,source,as_of\n"
        "aws,us-east-1,,p9,H100,-8,3.5,q,2026-11-01\n");
  error = catalog.apply_overrides(dir);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->to_string(), dir + "/offerings.csv:2: field 'accelerator_count': -8 is outside [1, 100000]");

  write_text_file(dir + "/offerings.csv", "cloud,region\naws\n");
  error = catalog.apply_overrides(dir);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->line, 2);

  EXPECT_TRUE(catalog.apply_overrides(dir + "/nope").has_value());
  EXPECT_TRUE(catalog.apply_overrides(temp_dir("empty")).has_value());
}

// Names people type: a family name several parts begin with is ambiguous (listed), a typo gets
// the closest name, a part or alias resolves; cloud data keeps SkyPilot's "A100" (40 GB).
TEST(Catalog, AFamilyNameIsAmbiguousATypoGetsASuggestion) {
  Catalog catalog = Catalog::embedded().value();
  auto a100 = catalog.accelerator_named("A100");
  ASSERT_FALSE(a100.ok());
  EXPECT_EQ(a100.error().message, "'A100' is ambiguous: A100-40GB, A100-40GB-PCIE, A100-80GB, A100-80GB-PCIE; name one");
  EXPECT_FALSE(catalog.accelerator_named("v100").ok());
  auto typo = catalog.accelerator_named("A100-80G");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean 'A100-80GB'"), std::string::npos) << typo.error().message;
  EXPECT_EQ(catalog.accelerator_named("H100").value()->name, "H100");  // a part's own name, though H100-PCIE exists
  EXPECT_EQ(catalog.accelerator_named("h100_sxm").value()->name, "H100");
  EXPECT_EQ(catalog.accelerator_named("A100-80GB").value()->name, "A100-80GB");
  EXPECT_EQ(catalog.find_accelerator("A100")->name, "A100-40GB");
}

// The host CPU a serving image must be built for: Graviton (g5g) and Grace (GH200) are arm64,
// and a spec can keep to x86 hosts.
TEST(Catalog, HostCpuArchitectures) {
  Catalog catalog = Catalog::embedded().value();
  int arm = 0;
  for (const auto& o : catalog.offerings()) {
    if (o.instance_type.rfind("g5g.", 0) == 0 || o.accelerator == "GH200") {
      EXPECT_EQ(cpu_architecture(o), "arm64") << o.instance_type;
    }
    if (o.instance_type.rfind("g5.", 0) == 0 || o.instance_type.rfind("p4d", 0) == 0) {
      EXPECT_EQ(cpu_architecture(o), "x86_64") << o.instance_type;
    }
    arm += cpu_architecture(o) == "arm64";
  }
  EXPECT_GT(arm, 0);
  EXPECT_EQ(parse_cpu_architecture("aarch64"), "arm64");
  EXPECT_EQ(parse_cpu_architecture("amd64"), "x86_64");
  EXPECT_FALSE(parse_cpu_architecture("riscv"));
}

// The snapshot prices some AWS spot rows in Local Zones (opt-in zones beside a region): their
// zone IDs name a metro, and a spot plan there names the zone.
TEST(Catalog, LocalZoneRowsAreToldFromTheRegionsZones) {
  Catalog catalog = Catalog::embedded().value();
  int local = 0;
  for (const auto& o : catalog.offerings()) {
    if (o.zone == "use1-atl2-az1" || o.zone == "usw2-lax1-az1") {
      EXPECT_EQ(local_zone(o), o.zone);
      EXPECT_EQ(offering_place(o, Pricing::spot), o.region + " Local Zone " + o.zone);
      EXPECT_EQ(offering_place(o, Pricing::on_demand), o.region);  // on-demand rows carry the region's price
      ++local;
    }
    if (o.zone == "use1-az2" || o.cloud != "aws") {
      EXPECT_EQ(local_zone(o), "") << o.zone;
    }
  }
  EXPECT_GT(local, 0);
}

}  // namespace
}  // namespace gw
