// Cron schedules (the five fields of crontab(5): minute, hour, day of month, month, day of
// week; `*`, lists, ranges, steps, and names for months and weekdays) and the start times they
// give within a span, for jobs on a shared pool.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <vector>

namespace gw {

struct Cron {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;      // 1-31
  std::bitset<13> months;    // 1-12
  std::bitset<7> weekdays;   // 0 = Sunday
  bool any_day = true, any_weekday = true;  // crontab: when both are restricted, either matches
  bool matches(int minute, int hour, int day, int month, int weekday) const;
};

// Parses a five-field schedule; on error, returns nullopt and says why in *error.
std::optional<Cron> parse_cron(const std::string& text, std::string* error);

// Minutes (from the span's start) at which a schedule fires, over `days` days starting on the
// given civil date at 00:00 (UTC: no daylight saving).
std::vector<int> cron_starts(const Cron& cron, int year, int month, int day, int days);

}  // namespace gw
