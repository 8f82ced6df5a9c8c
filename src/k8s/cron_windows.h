// A replica schedule over a day or a week as KEDA cron triggers. Each run of minutes that asks
// for more replicas than the floor becomes a window: a start and an end as cron expressions in
// the schedule's clock (days of the week for a weekly schedule) and the run's count; runs at the
// same times with the same count on several days share one trigger. KEDA's cron scaler is
// active from a start until the next end and reports its count then (kedacore/keda,
// pkg/scalers/cron_scaler.go, read 2026-12-06), and the HPA takes the largest count its
// triggers ask, so the pool follows the schedule above the floor and the metric below it.
#pragma once

#include <string>
#include <vector>

namespace gw {

struct CronWindow {
  std::string start, end;  // "M H * * D": minute, hour, days of the week (0 Sunday; * every day)
  int replicas = 0;
  std::string note;        // when it runs, in words ("Mon-Fri 08:43-19:00")
};

// replicas_by_minute: the count for each minute of the period, 1,440 (a day from 00:00) or
// 10,080 (a week from Monday 00:00), repeating. Windows for the runs above `floor`; none for
// any other length.
std::vector<CronWindow> cron_windows(const std::vector<int>& replicas_by_minute, int floor);

// The same schedule as a floor set at the minutes it changes (for an HPA without KEDA, whose
// minReplicas CronJobs patch): at each minute where the count (never below `floor`) differs from
// the minute before, the count from then on; a change at the same time of day to the same count
// on several days is one entry. Every entry sets a value, none adds to another, so two that fire
// at once agree and a missed one is mended by the next. None for one count throughout (the floor
// is then that count) or a length other than a day or a week.
struct CronChange {
  std::string at;         // "M H * * D", as CronWindow's
  int replicas = 0;
  int holds_minutes = 0;  // the shortest time, over its days, until the next change
  std::string note;       // "Mon-Fri 08:43"
};
std::vector<CronChange> cron_changes(const std::vector<int>& replicas_by_minute, int floor);

}  // namespace gw
