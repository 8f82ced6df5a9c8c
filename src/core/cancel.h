// A cooperative stop for long calls: a caller on another thread (the Python module, on Ctrl-C)
// sets a flag; the simulator's event loop and the telemetry readers check it now and then, stop,
// and the entry point then fails with "interrupted" instead of returning a partial answer.
#pragma once

#include <atomic>

namespace gw {

// While alive, cancel_requested() on this thread reads `flag`. Scopes nest; not copyable.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>& flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// Makes `flag` (nullptr: none) this thread's stop flag, returning the one before it.
const std::atomic<bool>* exchange_cancel_flag(const std::atomic<bool>* flag);

// This thread's stop flag (nullptr: none), for handing to worker threads.
const std::atomic<bool>* current_cancel_flag();

// Whether this thread's call should stop: one thread-local load, and an atomic one in a scope.
bool cancel_requested();

}  // namespace gw
