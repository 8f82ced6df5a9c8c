// libgpuwise_http.so: the HTTP client behind telemetry/http_client.h, on cpp-httplib. Built as a
// module of its own (not part of libgpuwise) and loaded with dlopen on the first request.
#include <httplib.h>

#include <cmath>
#include <ctime>
#include <string>

#include "telemetry/http_client.h"

namespace {

class HttplibClient final : public gw::HttpClient {
 public:
  explicit HttplibClient(const std::string& scheme_host_port) : client_(scheme_host_port) {}
  bool valid() const { return client_.is_valid(); }
  void set_timeouts(double connect_s, double read_s) override {
    client_.set_connection_timeout(static_cast<time_t>(std::ceil(connect_s)));
    client_.set_read_timeout(static_cast<time_t>(std::ceil(read_s)));
  }
  gw::HttpAnswer get(const std::string& path, const gw::HttpParams& params, size_t max_bytes) override {
    gw::HttpAnswer a;
    httplib::Params query(params.begin(), params.end());
    auto response = client_.Get(
        path.c_str(), query, httplib::Headers{},
        [&](const httplib::Response& r) {
          a.status = r.status;
          return true;
        },
        [&](const char* data, size_t length) {
          if (a.body.size() + length > max_bytes) {
            a.over_limit = true;
            return false;
          }
          a.body.append(data, length);
          return true;
        });
    if (a.over_limit) return a;
    if (!response) {
      a.error = httplib::to_string(response.error());
      return a;
    }
    a.reached = true;
    a.status = response->status;
    return a;
  }

 private:
  httplib::Client client_;
};

}  // namespace

// The module's one entry point: a client, or nullptr with the reason in `error`.
extern "C" __attribute__((visibility("default"))) gw::HttpClient* gpuwise_http_client_new(const char* scheme_host_port,
                                                                                         std::string* error) {
  auto client = std::make_unique<HttplibClient>(scheme_host_port);
  if (!client->valid()) {
    *error = std::string("not an http:// or https:// address: ") + scheme_host_port;
    return nullptr;
  }
  return client.release();
}
