#include "core/cron.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace gw {

namespace {

int name_value(std::string token, int field) {
  static const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  static const char* days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  for (char& c : token) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (field == 3)
    for (int i = 0; i < 12; ++i)
      if (token == months[i]) return i + 1;
  if (field == 4)
    for (int i = 0; i < 7; ++i)
      if (token == days[i]) return i;
  if (token.empty() || token.size() > 2 || !std::all_of(token.begin(), token.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return -1;
  return std::stoi(token);
}

// One field into the set of values it allows; false on a malformed field.
bool parse_field(const std::string& text, int field, int low, int high, std::vector<int>& out, std::string* error) {
  static const char* names[] = {"minute", "hour", "day of month", "month", "day of week"};
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    int step = 1;
    auto slash = part.find('/');
    if (slash != std::string::npos) {
      std::string s = part.substr(slash + 1);
      if (s.empty() || s.size() > 2 || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
          (step = std::stoi(s)) <= 0) {
        *error = std::string("bad step in the ") + names[field] + " field '" + text + "'";
        return false;
      }
      part = part.substr(0, slash);
    }
    int from = low, to = high;
    if (part != "*") {
      auto dash = part.find('-');
      from = name_value(part.substr(0, dash), field);
      to = dash == std::string::npos ? (slash != std::string::npos ? high : from) : name_value(part.substr(dash + 1), field);
      if (from < low || to > high || from < 0 || to < from) {
        *error = std::string("'") + text + "' is outside the " + names[field] + " field's " + std::to_string(low) + "-" +
                 std::to_string(high);
        return false;
      }
    }
    for (int v = from; v <= to; v += step) out.push_back(field == 4 ? v % 7 : v);  // 7 is Sunday too
  }
  if (out.empty()) {
    *error = std::string("empty ") + names[field] + " field";
    return false;
  }
  return true;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
long days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(long z, int& y, int& m, int& d) {
  z += 719468;
  const long era = (z >= 0 ? z : z - 146096) / 146097;
  const long doe = z - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(yoe + era * 400 + (m <= 2));
}

}  // namespace

bool Cron::matches(int minute, int hour, int day, int month, int weekday) const {
  if (!minutes[static_cast<size_t>(minute)] || !hours[static_cast<size_t>(hour)] || !months[static_cast<size_t>(month)]) return false;
  bool day_ok = days[static_cast<size_t>(day)], weekday_ok = weekdays[static_cast<size_t>(weekday)];
  if (!any_day && !any_weekday) return day_ok || weekday_ok;
  return day_ok && weekday_ok;
}

std::optional<Cron> parse_cron(const std::string& text, std::string* error) {
  std::stringstream in(text);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() != 5) {
    *error = "a schedule has five fields (minute hour day-of-month month day-of-week), e.g. \"0 2 * * *\"";
    return std::nullopt;
  }
  Cron cron;
  const int low[] = {0, 0, 1, 1, 0}, high[] = {59, 23, 31, 12, 7};
  for (int i = 0; i < 5; ++i) {
    std::vector<int> values;
    if (!parse_field(fields[static_cast<size_t>(i)], i, low[i], high[i], values, error)) return std::nullopt;
    for (int v : values) {
      size_t at = static_cast<size_t>(v);
      if (i == 0) cron.minutes.set(at);
      if (i == 1) cron.hours.set(at);
      if (i == 2) cron.days.set(at);
      if (i == 3) cron.months.set(at);
      if (i == 4) cron.weekdays.set(at);
    }
  }
  cron.any_day = fields[2] == "*";
  cron.any_weekday = fields[4] == "*";
  return cron;
}

std::vector<int> cron_starts(const Cron& cron, int year, int month, int day, int days) {
  std::vector<int> starts;
  long first = days_from_civil(year, month, day);
  for (int d = 0; d < days; ++d) {
    int y = 0, m = 0, dd = 0;
    civil_from_days(first + d, y, m, dd);
    int weekday = static_cast<int>(((first + d) % 7 + 11) % 7);  // 1970-01-01 was a Thursday (4)
    for (int h = 0; h < 24; ++h) {
      if (!cron.hours[static_cast<size_t>(h)]) continue;
      for (int minute = 0; minute < 60; ++minute)
        if (cron.matches(minute, h, dd, m, weekday)) starts.push_back(d * 1440 + h * 60 + minute);
    }
  }
  return starts;
}

}  // namespace gw
