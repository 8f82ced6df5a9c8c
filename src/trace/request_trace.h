// Request traces read as a stream, one request at a time: the Azure LLM inference trace CSV
// (TIMESTAMP,ContextTokens,GeneratedTokens), a generic CSV (timestamp,input_tokens,output_tokens)
// and JSON Lines with the same keys, and the Mooncake traces (JSON Lines of timestamp in
// milliseconds, input_length, output_length and hash_ids: the chain hash of each 512-token
// prompt block, equal ids meaning an equal prefix up to that block). Timestamps are seconds or
// ISO 8601 date-times.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace gw {

struct TraceRequest {
  double timestamp_s = 0;  // seconds since the epoch, or since the trace's own origin
  double input_tokens = 0;
  double output_tokens = 0;
  int line = 0;
  // The prompt's blocks of prefix_block_tokens tokens by the hash of their chain (the block and
  // all before it), where the trace gives them; empty otherwise.
  std::vector<unsigned long long> prefix_block_ids;
  int prefix_block_tokens = 0;
};

enum class TraceFormat { automatic, azure, csv, jsonl, mooncake };

// The Mooncake traces' block: hash_ids cover 512 prompt tokens each (kvcache-ai/Mooncake,
// FAST25-release/README.md, read 2026-12-04).
inline constexpr int kMooncakeBlockTokens = 512;

std::optional<TraceFormat> parse_trace_format(std::string_view text);

// Parses "2023-11-16 18:15:46.6805900", "2023-11-16T18:15:46Z" or a number of seconds.
std::optional<double> parse_timestamp(std::string_view text);

// Reads a trace one request at a time, holding one line in memory.
class TraceStream {
 public:
  TraceStream(std::string path, TraceFormat format);
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;
  // The next request; nullopt at the end or on an error (then error() is set).
  std::optional<TraceRequest> next();
  const std::optional<Error>& error() const { return error_; }
  long long rows() const { return rows_; }

 private:
  struct State;
  std::string path_;
  TraceFormat format_;
  std::unique_ptr<State> state_;
  std::optional<Error> error_;
  long long rows_ = 0;
};

// Streams the file's requests to on_request in file order; stops at the first bad row and
// returns its error (file, line, field). Timestamps must not go backwards.
std::optional<Error> read_trace(const std::string& path, TraceFormat format,
                                const std::function<void(const TraceRequest&)>& on_request);

// What the planner needs from a trace: rates and token-length distributions.
struct TraceSummary {
  std::string path;
  long long requests = 0;
  double duration_s = 0;
  double mean_rps = 0;
  double peak_rps = 0;  // busiest 60-second window
  std::vector<double> input_sample;   // up to 65,536 requests, reservoir-sampled (seeded)
  std::vector<double> output_sample;  // same requests as input_sample
  double input_mean = 0, output_mean = 0;
  // Traces that name their prompt blocks (Mooncake): the share of prompt tokens a prefix cache
  // could spare by replicas sharing the traffic (PrefixReuse over the first kPrefixReuseRequests
  // requests); empty for other traces.
  std::vector<std::pair<int, double>> prefix_reuse;
};

inline constexpr long long kPrefixReuseRequests = 200000;

Result<TraceSummary> summarize_trace(const std::string& path, TraceFormat format, double time_scale = 1.0);

}  // namespace gw
