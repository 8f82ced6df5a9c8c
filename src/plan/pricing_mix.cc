#include "plan/pricing_mix.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/money.h"
#include "core/csv.h"
#include "core/text.h"
#include "trace/request_trace.h"

namespace gw {

namespace {

// Whole units: a fractional demand of 3.2 instances needs 4 running.
long long whole(double units) { return static_cast<long long>(std::ceil(units - 1e-9)); }

double interruptible_price(const MixPrices& p) { return p.spot ? std::min(*p.spot, p.on_demand) : p.on_demand; }

}  // namespace

double effective_reserved_price(double usd_per_hour, double term_months, double horizon_months) {
  double terms = std::ceil(horizon_months / term_months - 1e-9);
  return usd_per_hour * terms * term_months / horizon_months;
}

double mix_cost(const std::vector<DemandInterval>& demand, const MixPrices& prices, int reserved_1y, int reserved_3y) {
  double r1 = prices.reserved_1y ? effective_reserved_price(*prices.reserved_1y, 12, prices.horizon_months) : 0;
  double r3 = prices.reserved_3y ? effective_reserved_price(*prices.reserved_3y, 36, prices.horizon_months) : 0;
  const double spot = interruptible_price(prices);
  const long long reserved = reserved_1y + reserved_3y;
  double usd = 0;
  for (const auto& d : demand) {
    long long firm = whole(d.firm_units), stacked = whole(d.firm_units + d.interruptible_units);
    usd += d.hours * ((reserved_1y * r1 + reserved_3y * r3) + prices.on_demand * static_cast<double>(std::max(0LL, firm - reserved)) +
                      spot * static_cast<double>(std::max(0LL, stacked - std::max(reserved, firm))));
  }
  return usd;
}

Result<PricingMix> optimize_pricing_mix(const std::vector<DemandInterval>& demand, const MixPrices& prices) {
  auto bad = [](const std::string& field, const std::string& message) { return Error{"", 0, field, message}; };
  if (!(prices.on_demand > 0) || !std::isfinite(prices.on_demand)) return bad("on_demand", "an on-demand price above zero is required");
  for (auto [name, price] : {std::pair{"reserved_1y", prices.reserved_1y}, std::pair{"reserved_3y", prices.reserved_3y},
                             std::pair{"spot", prices.spot}})
    if (price && (!std::isfinite(*price) || *price < 0)) return bad(name, "a price must be a finite number >= 0");
  if (!(prices.horizon_months > 0) || prices.horizon_months > 600) return bad("horizon_months", "must lie in (0, 600]");
  if (demand.empty()) return bad("demand", "the demand curve is empty");

  PricingMix mix;
  long long peak = 0;
  for (const auto& d : demand) {
    if (!(d.hours > 0) || !std::isfinite(d.hours) || d.firm_units < 0 || d.interruptible_units < 0 || !std::isfinite(d.firm_units) ||
        !std::isfinite(d.interruptible_units) || d.firm_units + d.interruptible_units > 1e6)
      return bad("demand", "intervals need positive hours and units in [0, 1e6]");
    mix.hours += d.hours;
    peak = std::max(peak, whole(d.firm_units + d.interruptible_units));
    mix.peak_units = std::max(mix.peak_units, d.firm_units + d.interruptible_units);
  }
  // Hours by level: firm_at[k] = hours with firm >= k, stacked_at[k] = hours with firm + interruptible >= k.
  std::vector<double> firm_at(static_cast<size_t>(peak) + 2, 0), stacked_at(static_cast<size_t>(peak) + 2, 0);
  for (const auto& d : demand) {
    firm_at[static_cast<size_t>(whole(d.firm_units))] += d.hours;
    stacked_at[static_cast<size_t>(whole(d.firm_units + d.interruptible_units))] += d.hours;
  }
  for (long long k = peak - 1; k >= 0; --k) {
    firm_at[static_cast<size_t>(k)] += firm_at[static_cast<size_t>(k + 1)];
    stacked_at[static_cast<size_t>(k)] += stacked_at[static_cast<size_t>(k + 1)];
  }

  // One reserved price applies to every level (each is paid for every hour): the cheaper term.
  std::optional<double> r1, r3;
  if (prices.reserved_1y) r1 = mix.reserved_1y_effective = effective_reserved_price(*prices.reserved_1y, 12, prices.horizon_months);
  if (prices.reserved_3y) r3 = mix.reserved_3y_effective = effective_reserved_price(*prices.reserved_3y, 36, prices.horizon_months);
  std::optional<double> reserved_price;
  std::string reserved_name;
  if (r3 && (!r1 || *r3 < *r1)) reserved_price = r3, reserved_name = "reserved-3y";
  else if (r1) reserved_price = r1, reserved_name = "reserved-1y";
  const double spot = interruptible_price(prices);

  int reserve = 0;
  for (long long k = 1; k <= peak; ++k) {
    MixLevel level;
    level.unit = static_cast<int>(k);
    double firm_hours = firm_at[static_cast<size_t>(k)];
    double stacked_hours = stacked_at[static_cast<size_t>(k)];
    level.firm_hour_share = firm_hours / mix.hours;
    level.stacked_hour_share = stacked_hours / mix.hours;
    level.usd_if_not_reserved = prices.on_demand * firm_hours + spot * (stacked_hours - firm_hours);
    level.usd_if_reserved = reserved_price ? *reserved_price * mix.hours : 0;
    bool take = reserved_price && level.usd_if_reserved < level.usd_if_not_reserved;
    level.choice = take ? reserved_name : firm_hours > 0 ? "on-demand" : prices.spot ? "spot" : "on-demand";
    if (take) reserve = static_cast<int>(k);
    mix.levels.push_back(level);
  }
  if (reserved_name == "reserved-3y") mix.reserved_3y = reserve;
  else mix.reserved_1y = reserve;

  for (const auto& d : demand) {
    long long firm = whole(d.firm_units), stacked = whole(d.firm_units + d.interruptible_units);
    double over_firm = static_cast<double>(std::max(0LL, firm - reserve));
    double over_stacked = static_cast<double>(std::max(0LL, stacked - std::max<long long>(reserve, firm)));
    mix.on_demand_unit_hours += d.hours * over_firm;
    (prices.spot && *prices.spot < prices.on_demand ? mix.spot_unit_hours : mix.on_demand_unit_hours) += d.hours * over_stacked;
    mix.reserved_used_unit_hours += d.hours * static_cast<double>(std::min<long long>(stacked, reserve));
  }
  mix.reserved_unit_hours = reserve * mix.hours;
  mix.usd = mix_cost(demand, prices, mix.reserved_1y, mix.reserved_3y);
  MixPrices on_demand_only;
  on_demand_only.on_demand = prices.on_demand;
  mix.all_on_demand_usd = mix_cost(demand, on_demand_only, 0, 0);
  mix.usd_per_month = mix.usd * kHoursPerMonth / mix.hours;
  mix.all_on_demand_usd_per_month = mix.all_on_demand_usd * kHoursPerMonth / mix.hours;

  auto& a = mix.assumptions;
  a.push_back(fmt::format("demand: {:.1f} hours, peak {:.3g} units; fractional demand rounds up to whole units", mix.hours, mix.peak_units));
  a.push_back(fmt::format("reserve unit k while its reserved cost over the span (price x {:.1f} h) is below on-demand for the hours "
                          "firm demand reaches k plus spot for the hours interruptible work stacked on top reaches it; with no "
                          "interruptible work: while the share of hours with demand >= k exceeds reserved / on-demand",
                          mix.hours));
  if (r1 || r3)
    a.push_back(fmt::format("commitments over a {:.0f}-month horizon, terms bought whole: 1-year {}, 3-year {} per unit-hour effective",
                            prices.horizon_months, r1 ? fmt::format("${:.4g}", *r1) : "not offered",
                            r3 ? fmt::format("${:.4g}", *r3) : "not offered"));
  a.push_back(prices.spot ? fmt::format("spot at ${:.4g}/unit-hour for interruptible work only, after idle reserved units; "
                                        "preemptions cost no extra hours here (checkpointed work)", *prices.spot)
                          : "no spot price: interruptible work beyond idle reserved units runs on demand");
  a.push_back("a month is 730 hours; the curve's cost scales to it");
  return mix;
}

Result<std::vector<DemandInterval>> load_demand_csv(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  const CsvTable& t = table.value();
  for (const char* column : {"timestamp", "units"})
    if (t.column(column) < 0) return Error{path, 1, column, "required column (timestamp,units[,interruptible_units])"};
  bool has_interruptible = t.column("interruptible_units") >= 0;
  std::vector<std::pair<double, DemandInterval>> rows;
  for (const auto& row : t.rows) {
    CsvRecord record(t, row);
    std::string stamp = record.text("timestamp");
    auto time = parse_timestamp(stamp);
    if (!time) return Error{path, row.line, "timestamp", "'" + stamp + "' is not a timestamp (epoch seconds or ISO 8601)"};
    DemandInterval d;
    d.firm_units = record.number("units", 0, 1e6);
    if (has_interruptible) d.interruptible_units = record.optional_number("interruptible_units", 0, 1e6).value_or(0);
    if (!record.ok()) return record.error();
    if (!rows.empty() && *time <= rows.back().first)
      return Error{path, row.line, "timestamp", "timestamps must increase (this one is not after the previous row's)"};
    rows.emplace_back(*time, d);
  }
  if (rows.empty()) return Error{path, 0, "units", "no rows"};
  std::vector<double> gaps;
  for (size_t i = 1; i < rows.size(); ++i) gaps.push_back(rows[i].first - rows[i - 1].first);
  double last_gap = 3600;
  if (!gaps.empty()) {
    std::vector<double> sorted = gaps;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
    last_gap = sorted[sorted.size() / 2];
  }
  std::vector<DemandInterval> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    DemandInterval d = rows[i].second;
    d.hours = (i + 1 < rows.size() ? gaps[i] : last_gap) / 3600;
    out.push_back(d);
  }
  return out;
}

}  // namespace gw
