#include "core/cancel.h"

namespace gw {

namespace {
thread_local const std::atomic<bool>* current_flag = nullptr;
}

const std::atomic<bool>* exchange_cancel_flag(const std::atomic<bool>* flag) {
  const std::atomic<bool>* previous = current_flag;
  current_flag = flag;
  return previous;
}

CancelScope::CancelScope(const std::atomic<bool>& flag) : previous_(exchange_cancel_flag(&flag)) {}
CancelScope::~CancelScope() { exchange_cancel_flag(previous_); }

const std::atomic<bool>* current_cancel_flag() { return current_flag; }

bool cancel_requested() { return current_flag && current_flag->load(std::memory_order_relaxed); }

}  // namespace gw
