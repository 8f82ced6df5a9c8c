// libgpuwise_http.so: the HTTP client behind telemetry/http_client.h, on cpp-httplib. Built as a
// module of its own (not part of libgpuwise) and loaded with dlopen on the first request.
#include <httplib.h>

#include <cmath>
#include <ctime>
#include <string>

#include "telemetry/http_client.h"
#include "telemetry/http_server.h"

namespace {

class HttplibClient final : public gw::HttpClient {
 public:
  explicit HttplibClient(const std::string& scheme_host_port) : client_(scheme_host_port) {}
  bool valid() const { return client_.is_valid(); }
  void set_timeouts(double connect_s, double read_s) override {
    client_.set_connection_timeout(static_cast<time_t>(std::ceil(connect_s)));
    client_.set_read_timeout(static_cast<time_t>(std::ceil(read_s)));
  }
  void set_credentials(const gw::HttpCredentials& c) override {
    if (!c.bearer_token.empty()) {
      client_.set_bearer_token_auth(c.bearer_token);
    } else if (!c.basic_user.empty()) {
      client_.set_basic_auth(c.basic_user, c.basic_password);
    }
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (!c.ca_file.empty()) client_.set_ca_cert_path(c.ca_file);
#endif
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

class HttplibServer final : public gw::HttpServer {
 public:
  bool bind(const std::string& host, int port, std::string& error) override {
    if (port == 0) {
      port_ = server_.bind_to_any_port(host);
    } else if (server_.bind_to_port(host, port)) {
      port_ = port;
    }
    if (port_ <= 0) error = "cannot listen on " + host + ":" + std::to_string(port) + " (taken, or not an address of this host)";
    return port_ > 0;
  }
  int port() const override { return port_; }
  void serve(gw::HttpHandler handler) override {
    auto answer = [handler](const httplib::Request& request, httplib::Response& response) {
      gw::HttpRequest in;
      in.path = request.path;
      in.authorization = request.get_header_value("Authorization");
      gw::HttpReply out = handler(in);
      response.status = out.status;
      response.set_content(out.body, out.content_type);
    };
    server_.Get(".*", answer);
    server_.listen_after_bind();
  }
  void stop() override { server_.stop(); }

 private:
  httplib::Server server_;
  int port_ = -1;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) gw::HttpServer* gpuwise_http_server_new() { return new HttplibServer(); }

// The module's client entry point: a client, or nullptr with the reason in `error`.
extern "C" __attribute__((visibility("default"))) gw::HttpClient* gpuwise_http_client_new(const char* scheme_host_port,
                                                                                         std::string* error) {
  auto client = std::make_unique<HttplibClient>(scheme_host_port);
  if (!client->valid()) {
    *error = std::string("not an http:// or https:// address: ") + scheme_host_port;
    return nullptr;
  }
  return client.release();
}
