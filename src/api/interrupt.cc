#include "gpuwise/interrupt.h"

#include "core/cancel.h"

namespace gpuwise {

InterruptScope::InterruptScope(const std::atomic<bool>& stop) : previous_(gw::exchange_cancel_flag(&stop)) {}
InterruptScope::~InterruptScope() { gw::exchange_cancel_flag(previous_); }

}  // namespace gpuwise
