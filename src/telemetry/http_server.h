// A small HTTP server for what gpuwise serves (the watcher's /metrics, page and API): GETs
// answered by one handler on a pool of threads. Like the client, it lives in the HTTP module
// (libgpuwise_http.so, cpp-httplib), loaded on first use.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace gw {

struct HttpRequest {
  std::string path;
  std::string authorization;  // the Authorization header, as sent
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  // Binds host:port (port 0: any free one); false with the reason in `error`.
  virtual bool bind(const std::string& host, int port, std::string& error) = 0;
  virtual int port() const = 0;
  // Answers every GET (and HEAD) through `handler` until stop(); other methods get 405.
  virtual void serve(HttpHandler handler) = 0;
  virtual void stop() = 0;
};

// A server, or nullptr with the reason in `error` (the module cannot be loaded).
std::unique_ptr<HttpServer> make_http_server(std::string& error);

}  // namespace gw
