// What the Prometheus push-down's hourly queries answered, kept between refreshes (`gpuwise
// watch`): each GPU series' hourly sums (with the first and last sample times raw reads found in
// boundary hours) and each host's hourly CPU, by the hour (hours since the epoch, by their start).
// An hour answered in full that ended `settle_s` before a refresh is complete: Prometheus holds
// all its samples, so it is not asked again; hours older than the longest window are forgotten.
// A one-shot audit uses a store of its own and drops it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/readers.h"

namespace gw::pushdown {

// What the server summed for one series in one hour, and the first and last sample times a raw
// read found in it, as seconds after the hour's start (NaN: not known). The mean in double
// precision (the audit's means match the files' to 1e-9), the rest in single, which halves what
// 10,000 series x 168 hours hold: counts and minutes are exact, a memory peak (whole MiB x 2^20)
// too.
enum HourField { kMean, kCount, kIdleMinutes, kFreshMinutes, kMemMax, kMemP95, kImpossible, kFirst, kLast, kHourFields };
class HourValues {
 public:
  HourValues() { rest_.fill(std::numeric_limits<float>::quiet_NaN()); }
  double operator[](HourField f) const { return f == kMean ? mean_ : rest_[f - 1]; }
  void set(HourField f, double value) {
    if (f == kMean) mean_ = value;
    else rest_[f - 1] = static_cast<float>(value);
  }
  bool any_known() const {
    return !std::isnan(mean_) || std::any_of(rest_.begin(), rest_.end(), [](float x) { return !std::isnan(x); });
  }

 private:
  double mean_ = std::numeric_limits<double>::quiet_NaN();
  std::array<float, kHourFields - 1> rest_;
};

// A run of consecutive hours of one series, from `first_hour`; hours outside it are unknown.
template <typename Hour>
struct HourRun {
  long long first_hour = 0;
  std::vector<Hour> hours;

  const Hour* find(long long hour) const {
    if (hour < first_hour || hour >= first_hour + static_cast<long long>(hours.size())) return nullptr;
    return &hours[static_cast<size_t>(hour - first_hour)];
  }
  Hour* find(long long hour) { return const_cast<Hour*>(std::as_const(*this).find(hour)); }
  // The hour, the run grown to hold it.
  Hour& at(long long hour) {
    if (hours.empty()) first_hour = hour;
    if (hour < first_hour) {
      hours.insert(hours.begin(), static_cast<size_t>(first_hour - hour), Hour{});
      first_hour = hour;
    }
    if (hour >= first_hour + static_cast<long long>(hours.size())) hours.resize(static_cast<size_t>(hour - first_hour + 1));
    return hours[static_cast<size_t>(hour - first_hour)];
  }
  // Drops the hours before `hour`.
  void forget_before(long long hour) {
    if (hour <= first_hour) return;
    const size_t drop = std::min(hours.size(), static_cast<size_t>(hour - first_hour));
    hours.erase(hours.begin(), hours.begin() + static_cast<std::ptrdiff_t>(drop));
    first_hour = hours.empty() ? 0 : hour;
  }
};

struct SeriesHours {
  Labels labels;
  std::string matchers;  // PromQL label matchers that select the series again
  HourRun<HourValues> run;
};

// A host's mean CPU busy and iowait (%) and its CPU count in an hour (NaN: not known).
struct HostHour {
  double cpu_pct = std::numeric_limits<double>::quiet_NaN();
  double iowait_pct = std::numeric_limits<double>::quiet_NaN();
  double cpus = std::numeric_limits<double>::quiet_NaN();
};
struct HostHours {
  Labels labels;
  HourRun<HostHour> run;
};

// Requests a pod's serving engine answered per second in an hour (NaN: not known).
struct ServedHour {
  double per_s = std::numeric_limits<double>::quiet_NaN();
};

class PushDownStore {
 public:
  explicit PushDownStore(double settle_s = 900) : settle_s_(settle_s) {}

  std::map<std::string, SeriesHours> series;
  std::map<std::string, HostHours> hosts;
  std::map<std::pair<std::string, std::string>, HourRun<ServedHour>> served;  // by (namespace, pod)
  // The window's end the store was last filled for: a window ending there asks nothing again.
  double filled_for_end_s = 0;

  bool complete(long long hour) const { return complete_.count(hour) > 0; }
  // Marks an hour answered in full complete when it ended settle_s before `now_s`.
  void answered(long long hour, double now_s) {
    if (static_cast<double>(hour + 1) * 3600 + settle_s_ <= now_s) complete_.insert(hour);
  }
  // Forgets an hour's values everywhere (it is asked again).
  void clear_hour(long long hour);
  // Drops everything before `hour`: hours, series and hosts left without any, placements.
  void forget_before(long long hour);
  double settle_s() const { return settle_s_; }

 private:
  double settle_s_;
  std::set<long long> complete_;
};

}  // namespace gw::pushdown
