#include "cli/prometheus_options.h"

#include <cstdlib>
#include <fstream>

#include "cli/context.h"

namespace gw {

void add_prometheus_options(CLI::App& command, PrometheusQueryOptions& query, PrometheusCredentialArgs& args) {
  command.add_option("--prometheus-timeout", query.timeout_s, "Seconds to wait for one Prometheus answer")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  command.add_option("--prometheus-concurrency", query.concurrency, "Prometheus queries in flight at once")
      ->check(CLI::Range(1, 64))->capture_default_str();
  command.add_option("--prometheus-retries", query.retries, "Retries per query (exponential backoff)")
      ->check(CLI::Range(0, 10))->capture_default_str();
  command.add_option("--max-points-per-query", query.max_points_per_query, "Hourly points per series in one query")
      ->check(CLI::Range(1, 11000))->capture_default_str();
  command.add_option("--max-response-bytes", query.max_response_bytes,
                     "Largest Prometheus answer kept in memory (larger ones are split by time range), bytes")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 34))->capture_default_str();
  command.add_flag("--use-recording-rules", query.use_recording_rules,
                   "Fresh and idle minutes from gpuwise's recorded idle flag where the server has it (no subqueries)");
  command.add_option("--prometheus-bearer-token-file", args.bearer_token_file,
                     "A file holding the bearer token for Prometheus (or $GPUWISE_PROMETHEUS_BEARER_TOKEN)");
  command.add_option("--prometheus-basic-auth-file", args.basic_auth_file,
                     "A file holding user:password for Prometheus' basic auth (or $GPUWISE_PROMETHEUS_BASIC_AUTH)");
  command.add_option("--prometheus-ca-file", args.ca_file, "PEM certificates that sign Prometheus' (https)");
}

std::string read_secret_file(const std::string& option, const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(option, "cannot read " + path);
  std::string secret;
  std::getline(in, secret);
  while (!secret.empty() && (secret.back() == '\r' || secret.back() == ' ' || secret.back() == '\t')) secret.pop_back();
  if (secret.empty()) fail(option, path + " holds nothing on its first line");
  return secret;
}

namespace {

void split_basic(const std::string& option, const std::string& text, HttpCredentials& c) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) fail(option, "expected user:password");
  c.basic_user = text.substr(0, colon);
  c.basic_password = text.substr(colon + 1);
}

}  // namespace

HttpCredentials prometheus_credentials(const PrometheusCredentialArgs& args) {
  HttpCredentials c;
  if (!args.bearer_token_file.empty() && !args.basic_auth_file.empty())
    fail("--prometheus-bearer-token-file", "give a bearer token or basic auth, not both");
  if (!args.bearer_token_file.empty()) {
    c.bearer_token = read_secret_file("--prometheus-bearer-token-file", args.bearer_token_file);
  } else if (!args.basic_auth_file.empty()) {
    split_basic("--prometheus-basic-auth-file", read_secret_file("--prometheus-basic-auth-file", args.basic_auth_file), c);
  } else if (const char* token = std::getenv("GPUWISE_PROMETHEUS_BEARER_TOKEN"); token && *token) {
    c.bearer_token = token;
  } else if (const char* basic = std::getenv("GPUWISE_PROMETHEUS_BASIC_AUTH"); basic && *basic) {
    split_basic("GPUWISE_PROMETHEUS_BASIC_AUTH", basic, c);
  }
  if (!args.ca_file.empty()) {
    if (!std::ifstream(args.ca_file)) fail("--prometheus-ca-file", "cannot read " + args.ca_file);
    c.ca_file = args.ca_file;
  }
  return c;
}

}  // namespace gw
