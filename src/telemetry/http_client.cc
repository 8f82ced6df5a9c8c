#include "telemetry/http_client.h"
#include "telemetry/http_server.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#ifndef GPUWISE_LIBDIR
#define GPUWISE_LIBDIR "lib"
#endif
#ifndef GPUWISE_FULL_LIBDIR
#define GPUWISE_FULL_LIBDIR "/usr/local/lib"
#endif

namespace gw {

namespace {

using ClientFactory = HttpClient* (*)(const char* scheme_host_port, std::string* error);
using ServerFactory = HttpServer* (*)();
constexpr const char* kModule = "libgpuwise_http.so";

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Where the module may be: $GPUWISE_HTTP_MODULE; beside the object this code is in (the build
// tree, the Python package); from an installed bin/ or lib/, the install's lib/gpuwise.
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* set = std::getenv("GPUWISE_HTTP_MODULE"); set && *set) paths.emplace_back(set);
  std::vector<std::string> folders;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_candidates), &info) && info.dli_fname && info.dli_fname[0] == '/')
    folders.push_back(folder_of(info.dli_fname));
  char exe[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length > 0) folders.push_back(folder_of(std::string(exe, static_cast<size_t>(length))));
  if (folders.size() == 2 && folders[0] == folders[1]) folders.pop_back();  // the tool itself: one folder
  for (const std::string& folder : folders) {
    paths.push_back(folder + "/" + kModule);
    paths.push_back(folder + "/gpuwise/" + kModule);                       // beside an installed libgpuwise.so
    paths.push_back(folder + "/../" GPUWISE_LIBDIR "/gpuwise/" + kModule);  // from an installed bin/
  }
  paths.push_back(GPUWISE_FULL_LIBDIR "/gpuwise/" + std::string(kModule));  // where it was configured to install
  return paths;
}

struct LoadedModule {
  ClientFactory factory = nullptr;
  ServerFactory server_factory = nullptr;
  std::string error;
};

// Loaded once, never unloaded (clients may outlive any one caller).
const LoadedModule& http_module() {
  static const LoadedModule loaded = [] {
    LoadedModule m;
    std::string tried, failures;
    for (const std::string& path : module_candidates()) {
      tried += (tried.empty() ? "" : ", ") + path;
      if (access(path.c_str(), R_OK) != 0) continue;
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* why = dlerror();
        failures += std::string("; ") + (why ? why : path);
        continue;
      }
      m.factory = reinterpret_cast<ClientFactory>(dlsym(handle, "gpuwise_http_client_new"));
      m.server_factory = reinterpret_cast<ServerFactory>(dlsym(handle, "gpuwise_http_server_new"));
      if (m.factory && m.server_factory) return m;
      m.factory = nullptr;
      m.server_factory = nullptr;
      failures += "; " + path + " has no gpuwise_http_client_new or gpuwise_http_server_new";
    }
    m.error = "the HTTP module " + std::string(kModule) + " (installed with gpuwise) cannot be loaded; looked at " + tried +
              failures + " (set GPUWISE_HTTP_MODULE to its path)";
    return m;
  }();
  return loaded;
}

// A client that cannot send: each answer says why.
class UnreachableClient final : public HttpClient {
 public:
  explicit UnreachableClient(std::string why) : why_(std::move(why)) {}
  void set_timeouts(double, double) override {}
  void set_credentials(const HttpCredentials&) override {}
  HttpAnswer get(const std::string&, const HttpParams&, size_t) override {
    HttpAnswer a;
    a.error = why_;
    return a;
  }

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<HttpClient> make_http_client(const std::string& scheme_host_port) {
  const LoadedModule& m = http_module();
  if (!m.factory) return std::make_unique<UnreachableClient>(m.error);
  std::string error;
  HttpClient* client = m.factory(scheme_host_port.c_str(), &error);
  if (!client) return std::make_unique<UnreachableClient>(error);
  return std::unique_ptr<HttpClient>(client);
}

std::unique_ptr<HttpServer> make_http_server(std::string& error) {
  const LoadedModule& m = http_module();
  if (!m.server_factory) {
    error = m.error;
    return nullptr;
  }
  return std::unique_ptr<HttpServer>(m.server_factory());
}

}  // namespace gw
