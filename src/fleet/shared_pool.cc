#include "fleet/shared_pool.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/money.h"
#include "core/cron.h"

namespace gw {

namespace {

constexpr int kStartYear = 2026, kStartMonth = 11, kStartDay = 2;  // a Monday

struct Timeline {
  std::vector<int> busy;  // GPUs in use per minute
  int peak() const { return busy.empty() ? 0 : *std::max_element(busy.begin(), busy.end()); }
  double average() const {
    double sum = 0;
    for (int v : busy) sum += v;
    return busy.empty() ? 0 : sum / static_cast<double>(busy.size());
  }
  // Ties on the peak break on how long the pool sits at it, then on the spread.
  double spread() const {
    double sum = 0;
    for (int v : busy) sum += static_cast<double>(v) * v;
    return sum;
  }
};

// One project's GPUs by minute; runs past the span's end wrap to its start (a steady state).
void lay(const FleetProjectSpec& p, const std::vector<int>& starts, int shift_minutes, std::vector<int>& busy, int sign) {
  const int span = static_cast<int>(busy.size());
  if (p.schedule.empty()) {
    for (int m = 0; m < span; ++m) {
      int hour = (m / 60) % 24;
      bool peak = p.peak_gpus > 0 && hour >= p.peak_from_hour && hour < p.peak_to_hour;
      busy[static_cast<size_t>(m)] += sign * (peak ? p.peak_gpus : p.gpus);
    }
    return;
  }
  const int length = std::max(1, static_cast<int>(std::lround(p.duration_hours * 60)));
  std::vector<char> covered(busy.size(), 0);  // overlapping runs of one project share its GPUs
  for (int start : starts)
    for (int k = 0; k < length; ++k) covered[static_cast<size_t>(((start + shift_minutes + k) % span + span) % span)] = 1;
  for (size_t m = 0; m < busy.size(); ++m)
    if (covered[m]) busy[m] += sign * p.gpus;
}

std::vector<int> week_profile(const std::vector<int>& busy) {
  std::vector<int> hours(168, 0);
  for (size_t m = 0; m < busy.size(); ++m) {
    size_t hour_of_week = (m / 60) % 168;
    hours[hour_of_week] = std::max(hours[hour_of_week], busy[m]);
  }
  return hours;
}

}  // namespace

Result<SharedPoolReport> plan_shared_pool(const std::vector<FleetProjectSpec>& projects, const SharedPoolOptions& options) {
  if (projects.empty()) return Error{"", 0, "fleet.projects", "no projects"};
  if (!(options.usd_per_gpu_hour > 0)) return Error{"", 0, "fleet.usd_per_gpu_hour", "a price per GPU-hour is required for the pool"};
  SharedPoolReport report;
  report.days = options.days;
  report.usd_per_gpu_hour = options.usd_per_gpu_hour;
  const int span = options.days * 1440;
  std::vector<std::vector<int>> starts(projects.size());
  Timeline pool;
  pool.busy.assign(static_cast<size_t>(span), 0);
  for (size_t i = 0; i < projects.size(); ++i) {
    const auto& p = projects[i];
    if (!p.schedule.empty()) {
      std::string why;
      auto cron = parse_cron(p.schedule, &why);
      if (!cron) return Error{"", p.line, "fleet.projects." + p.name + ".schedule", why};
      starts[i] = cron_starts(*cron, kStartYear, kStartMonth, kStartDay, options.days);
    }
    lay(p, starts[i], 0, pool.busy, +1);
    report.static_gpus += p.gpus;
    report.static_cover_gpus += std::max(p.gpus, p.peak_gpus);
  }
  report.pool_peak_gpus = pool.peak();
  report.pool_average_gpus = pool.average();
  report.week_peak_by_hour = week_profile(pool.busy);
  report.hourly_peak.assign(static_cast<size_t>(options.days) * 24, 0);
  for (size_t m = 0; m < pool.busy.size(); ++m) report.hourly_peak[m / 60] = std::max(report.hourly_peak[m / 60], pool.busy[m]);
  report.static_usd_per_month = report.static_gpus * kHoursPerMonth * options.usd_per_gpu_hour;
  report.pool_usd_per_month = report.pool_average_gpus * kHoursPerMonth * options.usd_per_gpu_hour;
  report.pool_fixed_usd_per_month = report.pool_peak_gpus * kHoursPerMonth * options.usd_per_gpu_hour;

  // Coordinate descent over whole-hour shifts of the shiftable scheduled jobs: each in turn
  // takes the shift that lowers (peak, spread) most given the others, until none improves.
  std::vector<int> shift(projects.size(), 0);
  Timeline best = pool;
  for (int round = 0; round < 8; ++round) {
    bool improved = false;
    for (size_t i = 0; i < projects.size(); ++i) {
      const auto& p = projects[i];
      if (p.schedule.empty() || !p.shiftable) continue;
      lay(p, starts[i], shift[i] * 60, best.busy, -1);
      int chosen = shift[i];
      std::pair<int, double> chosen_score{1 << 30, 0};
      for (int h = -options.max_shift_hours; h <= options.max_shift_hours; ++h) {
        lay(p, starts[i], h * 60, best.busy, +1);
        std::pair<int, double> score{best.peak(), best.spread()};
        // Prefer the smallest move among equals.
        if (score < chosen_score || (score == chosen_score && std::abs(h) < std::abs(chosen))) chosen = h, chosen_score = score;
        lay(p, starts[i], h * 60, best.busy, -1);
      }
      if (chosen != shift[i]) improved = true;
      shift[i] = chosen;
      lay(p, starts[i], shift[i] * 60, best.busy, +1);
    }
    if (!improved) break;
  }
  report.shifted_peak_gpus = best.peak();
  if (report.shifted_peak_gpus < report.pool_peak_gpus)
    for (size_t i = 0; i < projects.size(); ++i)
      if (shift[i] != 0) report.shifts.push_back({projects[i].name, shift[i]});
  if (report.shifts.empty()) report.shifted_peak_gpus = report.pool_peak_gpus;
  report.shifted_week_peak_by_hour = report.shifts.empty() ? report.week_peak_by_hour : week_profile(best.busy);

  auto& a = report.assumptions;
  a.push_back(fmt::format("{} days from Monday 2026-11-02 00:00 UTC, minute by minute; runs past the end wrap to the start",
                          options.days));
  a.push_back(fmt::format("static: each project keeps its own GPUs around the clock ({} GPUs; {} to cover every always-on peak)",
                          report.static_gpus, report.static_cover_gpus));
  a.push_back("pool: one elastic pool paid by the GPU-hour as used; or sized for its peak around the clock");
  a.push_back(fmt::format("${:.4g} per GPU-hour; a month is 730 hours", options.usd_per_gpu_hour));
  a.push_back(fmt::format("shifts: whole hours, up to {} either way, for scheduled jobs not marked shiftable: false", options.max_shift_hours));
  return report;
}

}  // namespace gw
