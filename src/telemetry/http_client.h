// HTTP GET for the Prometheus push-down. The client (cpp-httplib, with OpenSSL for https://,
// zlib and brotli) lives in a module, libgpuwise_http.so, loaded on the first request: a command
// that never talks to a server does not load those libraries nor run OpenSSL's initialisation
// (~2 ms of every start-up otherwise).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>


namespace gw {

using HttpParams = std::vector<std::pair<std::string, std::string>>;

// One GET's outcome: reached (a response came, with its status and body), or why not.
struct HttpAnswer {
  bool reached = false;
  bool over_limit = false;  // the body passed max_bytes: reading stopped there
  int status = 0;
  std::string error;        // why the server was not reached
  std::string body;
};

// How a client proves who it is, and whom it trusts: sent with every request, never logged.
struct HttpCredentials {
  std::string bearer_token;                  // Authorization: Bearer ...
  std::string basic_user, basic_password;    // Authorization: Basic ... (when bearer_token is empty)
  std::string ca_file;                       // PEM bundle that signs the server's certificate (https)
  bool any() const { return !bearer_token.empty() || !basic_user.empty() || !ca_file.empty(); }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual void set_timeouts(double connect_s, double read_s) = 0;
  virtual void set_credentials(const HttpCredentials& credentials) = 0;
  // GET path?params (sent in key order), the body read up to max_bytes.
  virtual HttpAnswer get(const std::string& path, const HttpParams& params, size_t max_bytes) = 0;
};

// A client for scheme://host[:port]. When the module cannot be found or loaded (it is looked for
// at $GPUWISE_HTTP_MODULE, beside the code that calls it and in the install's lib/gpuwise) or the
// scheme is not http or https, every answer of the client says why, as an unreachable server's.
std::unique_ptr<HttpClient> make_http_client(const std::string& scheme_host_port);

}  // namespace gw
