#include "perf/request_lengths.h"

#include <algorithm>
#include <cmath>

#include "core/csv.h"
#include "core/text.h"

namespace gw {

RequestLengths RequestLengths::fixed(double input_tokens, double output_tokens) {
  RequestLengths l;
  l.mean_input_tokens = input_tokens;
  l.mean_output_tokens = output_tokens;
  l.mean_input_squared = input_tokens * input_tokens;
  l.mean_input_times_output = input_tokens * output_tokens;
  l.mean_output_squared = output_tokens * output_tokens;
  return l;
}

RequestLengths RequestLengths::from_pairs(const std::vector<std::pair<double, double>>& input_output) {
  RequestLengths l;
  if (input_output.empty()) return l;
  for (const auto& [in, given_out] : input_output) {
    const double out = std::max(1.0, given_out);  // a request decodes at least one token
    l.mean_input_tokens += in;
    l.mean_output_tokens += out;
    l.mean_input_squared += in * in;
    l.mean_input_times_output += in * out;
    l.mean_output_squared += out * out;
  }
  double n = static_cast<double>(input_output.size());
  l.mean_input_tokens /= n;
  l.mean_output_tokens /= n;
  l.mean_input_squared /= n;
  l.mean_input_times_output /= n;
  l.mean_output_squared /= n;
  l.requests = input_output.size();
  return l;
}

double RequestLengths::tpot_p99_share() const {
  if (tpot_p99_excess_share > 0) return tpot_p99_excess_share;
  return 1 / std::sqrt(std::max(1.0, mean_output_tokens - 1));
}

// Fixed lengths take the closed forms, so that they give exactly what a single request's lengths
// always gave.
double RequestLengths::slot_context_tokens() const {
  if (requests == 0) return mean_input_tokens + mean_output_tokens / 2;
  return (mean_input_times_output + mean_output_squared / 2) / std::max(1.0, mean_output_tokens);
}

double RequestLengths::slot_reserved_tokens() const {
  if (requests == 0) return mean_input_tokens + mean_output_tokens;
  return (mean_input_times_output + mean_output_squared) / std::max(1.0, mean_output_tokens);
}

double RequestLengths::prefill_context_tokens() const {
  if (requests == 0) return mean_input_tokens;
  return mean_input_tokens > 0 ? mean_input_squared / mean_input_tokens : 0.0;
}

Result<RequestLengths> read_request_lengths(std::string_view csv_text, const std::string& file) {
  auto table = parse_csv(csv_text, file);
  if (!table.ok()) return table.error();
  // Either column pair: gpuwise's own, or an Azure LLM inference trace's.
  const bool azure = table.value().column("input_length") < 0 && table.value().column("ContextTokens") >= 0 &&
                     table.value().column("GeneratedTokens") >= 0;
  const char* input_column = azure ? "ContextTokens" : "input_length";
  const char* output_column = azure ? "GeneratedTokens" : "output_length";
  for (const auto& column : {input_column, output_column})
    if (table.value().column(column) < 0)
      return Error{file, 1, column, "missing column in the header (input_length and output_length, or an Azure "
                                    "trace's ContextTokens and GeneratedTokens)"};
  std::vector<std::pair<double, double>> pairs;
  pairs.reserve(table.value().rows.size());
  for (const auto& row : table.value().rows) {
    CsvRecord record(table.value(), row);
    double in = record.number(input_column, 0, 1e8);
    double out = record.number(output_column, 1, 1e8);
    if (!record.ok()) return record.error();
    pairs.emplace_back(in, out);
  }
  if (pairs.empty()) return Error{file, 0, "", "no requests"};
  return RequestLengths::from_pairs(pairs);
}

Result<RequestLengths> read_request_lengths_file(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", message};
  return read_request_lengths(text, path);
}

}  // namespace gw
