// gpuwise::Spec: a workload spec (the YAML every planning command reads: models, services with
// traffic and SLOs, training jobs, constraints, fleet), parsed and checked.
//
// Ownership: a cheap handle on shared, immutable data; copies share it. Traces and model configs
// named in the spec are read when it is parsed, relative to the spec's folder, so the files may
// change or go afterwards.
// Thread safety: immutable; safe to use from many threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace gpuwise {

class Spec {
 public:
  // Reads and parses a spec file. Throws gpuwise::Error naming the file, line and field at fault.
  static Spec load(const std::string& path);
  // Parses YAML text; `path` names it in errors and results, and its folder is where relative
  // trace and config paths are resolved ("spec.yaml": the working directory).
  static Spec parse(const std::string& yaml, const std::string& path = "spec.yaml");

  const std::string& path() const;
  const std::string& name() const;                 // the spec's `name:`, may be empty
  std::vector<std::string> service_names() const;  // in spec order
  std::vector<std::string> training_names() const; // in spec order

  // For the library's own use.
  struct Impl;
  const std::shared_ptr<const Impl>& impl() const { return impl_; }

 private:
  explicit Spec(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace gpuwise
