#include "k8s/cron_windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace gw {
namespace {

constexpr int kDayMinutes = 1440;
constexpr int kWeekMinutes = 7 * kDayMinutes;
constexpr const char* kDayNames[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};  // a weekly schedule starts on Monday

struct Run {
  int start = 0, length = 0, replicas = 0;
};

// Ranges of consecutive values ("1-5", "0,6"); `names` spells a value, `sep` joins ranges.
std::string ranges(std::vector<int> values, const auto& names, const char* sep) {
  std::sort(values.begin(), values.end());
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    out += (out.empty() ? "" : sep) + names(values[i]) + (j > i + 1 ? "-" + names(values[j]) : j == i + 1 ? sep + names(values[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string cron_days(const std::vector<int>& schedule_days, int shift) {
  std::vector<int> cron;
  for (int d : schedule_days) cron.push_back((d + shift + 1) % 7);  // cron counts from Sunday = 0
  return ranges(cron, [](int d) { return std::to_string(d); }, ",");
}

// Schedule days (0 Monday) in words: "Mon-Fri", "Sat, Sun".
std::string day_names(const std::vector<int>& days) {
  return ranges(days, [](int d) { return std::string(kDayNames[d]); }, ", ");
}

std::string clock(int minute_of_day) { return fmt::format("{:02}:{:02}", minute_of_day / 60, minute_of_day % 60); }

}  // namespace

std::vector<CronWindow> cron_windows(const std::vector<int>& counts, int floor) {
  const int period = static_cast<int>(counts.size());
  if (period != kDayMinutes && period != kWeekMinutes) return {};
  const bool weekly = period == kWeekMinutes;
  // The runs of equal counts, taken round the period from a minute where the count changes.
  std::vector<Run> runs;
  int first = -1;
  for (int m = 0; m < period && first < 0; ++m)
    if (counts[static_cast<size_t>(m)] != counts[static_cast<size_t>((m + period - 1) % period)]) first = m;
  if (first < 0) {
    // One count throughout: a start and an end must differ, so two halves.
    if (counts[0] > floor) runs = {{0, period / 2, counts[0]}, {period / 2, period - period / 2, counts[0]}};
  } else {
    for (int k = 0; k < period;) {
      const int m = (first + k) % period;
      int length = 1;
      while (k + length < period && counts[static_cast<size_t>((m + length) % period)] == counts[static_cast<size_t>(m)]) ++length;
      if (counts[static_cast<size_t>(m)] > floor) runs.push_back({m, length, counts[static_cast<size_t>(m)]});
      k += length;
    }
  }

  // Runs under a day at the same times and count on several days share a trigger, their days
  // listed (the end's days shifted with the start's when a run passes midnight).
  struct Group {
    int start_minute, end_minute, day_offset, replicas;
    bool whole_days;  // a run of a day or more is its own trigger: another day's start inside it would end it
    std::vector<int> days;
  };
  std::vector<Group> groups;
  for (const Run& r : runs) {
    const int end = (r.start + r.length) % period;
    const int start_day = r.start / kDayMinutes, end_day = end / kDayMinutes;
    const int offset = weekly ? (end_day - start_day + 7) % 7 : 0;
    Group g{r.start % kDayMinutes, end % kDayMinutes, offset, r.replicas, r.length >= kDayMinutes, {start_day}};
    auto same = std::find_if(groups.begin(), groups.end(), [&](const Group& o) {
      return !o.whole_days && !g.whole_days && std::tie(o.start_minute, o.end_minute, o.day_offset, o.replicas) ==
                                                   std::tie(g.start_minute, g.end_minute, g.day_offset, g.replicas);
    });
    if (weekly && same != groups.end())
      same->days.push_back(start_day);
    else
      groups.push_back(g);
  }

  std::vector<CronWindow> out;
  for (const Group& g : groups) {
    CronWindow w;
    w.replicas = g.replicas;
    const std::string start_days = weekly ? cron_days(g.days, 0) : "*";
    const std::string end_days = weekly ? cron_days(g.days, g.day_offset) : "*";
    w.start = fmt::format("{} {} * * {}", g.start_minute % 60, g.start_minute / 60, start_days);
    w.end = fmt::format("{} {} * * {}", g.end_minute % 60, g.end_minute / 60, end_days);
    const std::string when = weekly ? day_names(g.days) : "every day";
    const std::string later = g.day_offset == 0 && g.end_minute > g.start_minute ? ""
                              : g.day_offset <= 1                                ? " the next day"
                                                                                 : fmt::format(" {} days later", g.day_offset);
    w.note = fmt::format("{} {} to {}{}", when, clock(g.start_minute), clock(g.end_minute), later);
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<CronChange> cron_changes(const std::vector<int>& counts, int floor) {
  const int period = static_cast<int>(counts.size());
  if (period != kDayMinutes && period != kWeekMinutes) return {};
  const bool weekly = period == kWeekMinutes;
  auto at = [&](int m) { return std::max(floor, counts[static_cast<size_t>((m + period) % period)]); };
  std::vector<int> minutes;  // where the count changes; two at least when any
  for (int m = 0; m < period; ++m)
    if (at(m) != at(m - 1)) minutes.push_back(m);
  struct Group {
    int minute_of_day, replicas, holds_minutes;
    std::vector<int> days;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < minutes.size(); ++i) {
    const int m = minutes[i], minute_of_day = m % kDayMinutes, day = m / kDayMinutes;
    const int holds = (minutes[(i + 1) % minutes.size()] - m + period - 1) % period + 1;
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& g) { return g.minute_of_day == minute_of_day && g.replicas == at(m); });
    if (same != groups.end()) {
      same->days.push_back(day);
      same->holds_minutes = std::min(same->holds_minutes, holds);
    } else {
      groups.push_back({minute_of_day, at(m), holds, {day}});
    }
  }
  std::vector<CronChange> out;
  for (const Group& g : groups) {
    CronChange c;
    c.replicas = g.replicas;
    c.holds_minutes = g.holds_minutes;
    c.at = fmt::format("{} {} * * {}", g.minute_of_day % 60, g.minute_of_day / 60, weekly ? cron_days(g.days, 0) : "*");
    c.note = fmt::format("{} {}", weekly ? day_names(g.days) : "every day", clock(g.minute_of_day));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gw
