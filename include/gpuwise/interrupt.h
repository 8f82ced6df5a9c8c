// gpuwise::InterruptScope: lets another thread stop the long calls (plan, simulate, scale, fleet,
// audit) this thread makes, as Ctrl-C stops the CLI. While the scope lives, a call on this thread
// checks `stop` every few thousand simulated events or telemetry samples and between Prometheus
// queries; once it is set, the call stops and throws gpuwise::Error with kind() interrupted.
//
// Thread safety: the scope belongs to the thread that made it; `stop` may be set from any
// thread and must outlive the scope. Scopes nest; the innermost one is checked.
#pragma once

#include <atomic>

namespace gpuwise {

class InterruptScope {
 public:
  explicit InterruptScope(const std::atomic<bool>& stop);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

}  // namespace gpuwise
