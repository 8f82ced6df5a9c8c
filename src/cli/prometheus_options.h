// The options the audit and the watcher share for the fleet's Prometheus: timeouts, concurrency,
// retries and size limits of the push-down, the recorded idle flag, and how they authenticate:
// a bearer token or basic auth, and the CA that signs its certificate, read from files or the
// environment, never from the command line (where every user of the host can read them) and
// never written to logs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "telemetry/http_client.h"
#include "telemetry/prometheus_client.h"

namespace gw {

struct PrometheusCredentialArgs {
  std::string bearer_token_file, basic_auth_file, ca_file;
};

// --prometheus-timeout, -concurrency, -retries, --max-points-per-query, --max-response-bytes,
// --use-recording-rules and the credential files.
void add_prometheus_options(CLI::App& command, PrometheusQueryOptions& query, PrometheusCredentialArgs& credentials);

// From the files given, else $GPUWISE_PROMETHEUS_BEARER_TOKEN or $GPUWISE_PROMETHEUS_BASIC_AUTH
// (user:password). Throws InputError naming the option when a file cannot be read or is empty.
HttpCredentials prometheus_credentials(const PrometheusCredentialArgs& args);

// The first line of a file holding a secret, trailing blanks removed; an InputError naming
// `option` when it cannot be read or holds nothing.
std::string read_secret_file(const std::string& option, const std::string& path);

}  // namespace gw
