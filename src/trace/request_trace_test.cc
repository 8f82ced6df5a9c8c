#include "trace/request_trace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace gw {
namespace {

std::string write_trace_file(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("gpuwise_trace_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(Trace, ParsesTimestamps) {
  EXPECT_DOUBLE_EQ(*parse_timestamp("1970-01-02 00:00:01"), 86401);
  EXPECT_NEAR(*parse_timestamp("2023-11-16 18:15:46.6805900"), 1700158546.68059, 1e-5);
  EXPECT_DOUBLE_EQ(*parse_timestamp("2023-11-16T18:15:46Z"), 1700158546);
  EXPECT_DOUBLE_EQ(*parse_timestamp("12.5"), 12.5);
  EXPECT_FALSE(parse_timestamp("2023-13-16 18:15:46").has_value());
  EXPECT_FALSE(parse_timestamp("yesterday").has_value());
}

TEST(Trace, ReadsTheAzureTraceFormat) {
  std::string path = std::string(GPUWISE_SOURCE_DIR) + "/examples/traces/azure-llm-2023-conv.csv";
  auto summary = summarize_trace(path, TraceFormat::azure);
  ASSERT_TRUE(summary.ok()) << summary.error().to_string();
  EXPECT_EQ(summary.value().requests, 19366);  // as documented by the dataset
  EXPECT_NEAR(summary.value().input_mean, 1154.7, 0.1);
  EXPECT_NEAR(summary.value().output_mean, 211.1, 0.1);
  EXPECT_GT(summary.value().peak_rps, summary.value().mean_rps);
}

TEST(Trace, ReadsGenericCsvAndJsonLines) {
  auto csv = summarize_trace(write_trace_file("a.csv", "timestamp,input_tokens,output_tokens\n0,100,10\n1,200,20\n2,300,30\n"),
                             TraceFormat::automatic);
  ASSERT_TRUE(csv.ok()) << csv.error().to_string();
  EXPECT_EQ(csv.value().requests, 3);
  EXPECT_DOUBLE_EQ(csv.value().input_mean, 200);
  auto jsonl = summarize_trace(write_trace_file("a.jsonl", "{\"timestamp\": 0, \"input_tokens\": 10, \"output_tokens\": 5}\n"
                                               "{\"timestamp\": \"1970-01-01T00:00:02Z\", \"input_tokens\": 30, \"output_tokens\": 7}\n"),
                               TraceFormat::automatic);
  ASSERT_TRUE(jsonl.ok()) << jsonl.error().to_string();
  EXPECT_DOUBLE_EQ(jsonl.value().output_mean, 6);
}

TEST(Trace, BadRowsAreErrorsWithTheirLine) {
  auto backwards = summarize_trace(write_trace_file("b.csv", "timestamp,input_tokens,output_tokens\n5,1,1\n4,1,1\n"), TraceFormat::csv);
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.error().line, 3);
  EXPECT_EQ(backwards.error().field, "timestamp");
  auto negative = summarize_trace(write_trace_file("c.csv", "timestamp,input_tokens,output_tokens\n5,-1,1\n"), TraceFormat::csv);
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().field, "input_tokens");
  auto header = summarize_trace(write_trace_file("d.csv", "a,b,c\n1,2,3\n"), TraceFormat::csv);
  ASSERT_FALSE(header.ok());
  auto empty = summarize_trace(write_trace_file("e.csv", "timestamp,input_tokens,output_tokens\n"), TraceFormat::csv);
  ASSERT_FALSE(empty.ok());
  auto json = summarize_trace(write_trace_file("f.jsonl", "{\"timestamp\": 0, \"input_tokens\": 1\n"), TraceFormat::jsonl);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().line, 1);
}

TEST(Trace, ReadsTheMooncakeTracesWithTheirPrefixBlocks) {
  const std::string path = std::string(GPUWISE_SOURCE_DIR) + "/examples/traces/mooncake-conversation.jsonl";
  TraceStream stream(path, TraceFormat::automatic);  // told apart by its keys
  auto first = stream.next();
  ASSERT_TRUE(first) << stream.error()->to_string();
  EXPECT_EQ(first->input_tokens, 6758);
  EXPECT_EQ(first->output_tokens, 500);
  EXPECT_EQ(first->prefix_block_tokens, 512);
  EXPECT_EQ(first->prefix_block_ids, (std::vector<unsigned long long>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
  auto summary = summarize_trace(path, TraceFormat::mooncake);
  ASSERT_TRUE(summary.ok()) << summary.error().to_string();
  EXPECT_EQ(summary.value().requests, 12031);  // the trace's README
  EXPECT_NEAR(summary.value().input_mean, 12035, 1);
  EXPECT_NEAR(summary.value().output_mean, 343, 1);
  EXPECT_NEAR(summary.value().duration_s, 3537, 1);  // milliseconds in the file

  auto bad = [](const std::string& line) {
    TraceStream s(write_trace_file("mooncake.jsonl", line + "\n"), TraceFormat::mooncake);
    EXPECT_FALSE(s.next());
    return s.error() ? s.error()->field + ": " + s.error()->message : std::string("no error");
  };
  EXPECT_EQ(bad(R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2, 3]})"),
            "hash_ids: 3 block ids for a prompt of 600 tokens (at most 2 blocks of 512)");
  EXPECT_EQ(bad(R"({"timestamp": 0, "input_length": 600, "output_length": 5})"), "hash_ids: missing");
  EXPECT_EQ(bad(R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, -2]})"),
            "hash_ids: not an array of non-negative integer block ids");
  EXPECT_EQ(bad(R"({"timestamp": -3, "input_length": 600, "output_length": 5, "hash_ids": [1]})"),
            "timestamp: not a time in milliseconds");
  EXPECT_EQ(bad(R"({"timestamp": 0, "output_length": 5, "hash_ids": [1]})"), "input_length: missing");
}

}  // namespace
}  // namespace gw
