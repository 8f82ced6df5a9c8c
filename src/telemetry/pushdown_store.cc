#include "telemetry/pushdown_store.h"

namespace gw::pushdown {

void PushDownStore::clear_hour(long long hour) {
  for (auto& [id, s] : series)
    if (s.run.find(hour)) s.run.at(hour) = HourValues{};
  for (auto& [id, h] : hosts)
    if (h.run.find(hour)) h.run.at(hour) = HostHour{};
  for (auto& [pod, run] : served)
    if (run.find(hour)) run.at(hour) = ServedHour{};
  complete_.erase(hour);
}

void PushDownStore::forget_before(long long hour) {
  for (auto it = series.begin(); it != series.end();) {
    it->second.run.forget_before(hour);
    const auto& hours = it->second.run.hours;
    bool any = std::any_of(hours.begin(), hours.end(), [](const HourValues& h) { return h.any_known(); });
    it = any ? std::next(it) : series.erase(it);
  }
  for (auto it = hosts.begin(); it != hosts.end();) {
    it->second.run.forget_before(hour);
    it = it->second.run.hours.empty() ? hosts.erase(it) : std::next(it);
  }
  for (auto it = served.begin(); it != served.end();) {
    it->second.forget_before(hour);
    it = it->second.hours.empty() ? served.erase(it) : std::next(it);
  }
  complete_.erase(complete_.begin(), complete_.lower_bound(hour));
}

}  // namespace gw::pushdown
