#include "trace/request_trace.h"

#include "trace/prefix_reuse.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <random>
#include <simdjson.h>

#include "core/csv.h"
#include "core/numbers.h"
#include "core/text.h"

namespace gw {

namespace {

// Beyond any context window: larger counts are typos or garbage, and would stall the planner.
constexpr double kMaxTokens = 1e8;

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// Splits one CSV line (no quoted newlines in traces) into cells.
std::vector<std::string_view> cells_of(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

// One line of a Mooncake trace into `request` (timestamp still in milliseconds); the field and
// what is wrong with it otherwise.
std::optional<std::pair<std::string, std::string>> read_mooncake_line(simdjson::ondemand::parser& parser, const std::string& line,
                                                                      TraceRequest& request) {
  simdjson::padded_string padded(line);
  try {
    simdjson::ondemand::document doc = parser.iterate(padded);
    const char* keys[] = {"timestamp", "input_length", "output_length"};
    double* targets[] = {&request.timestamp_s, &request.input_tokens, &request.output_tokens};
    for (int k = 0; k < 3; ++k) {
      doc.rewind();
      auto value = doc[keys[k]];
      if (value.error() == simdjson::NO_SUCH_FIELD) return std::pair<std::string, std::string>{keys[k], "missing"};
      if (value.error()) return std::pair<std::string, std::string>{"", std::string("invalid JSON: ") + simdjson::error_message(value.error())};
      double d;
      if (value.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) || d < 0 || (k > 0 && d > kMaxTokens))
        return std::pair<std::string, std::string>{keys[k], k == 0 ? "not a time in milliseconds" : fmt::format("not a token count (0 to {:.0e})", kMaxTokens)};
      *targets[k] = d;
    }
    doc.rewind();
    auto ids = doc["hash_ids"];
    if (ids.error() == simdjson::NO_SUCH_FIELD) return std::pair<std::string, std::string>{"hash_ids", "missing"};
    simdjson::ondemand::array array;
    if (ids.get_array().get(array) != simdjson::SUCCESS)
      return std::pair<std::string, std::string>{"hash_ids", "not an array of block ids"};
    for (auto id : array) {
      uint64_t v;
      if (id.get_uint64().get(v) != simdjson::SUCCESS)
        return std::pair<std::string, std::string>{"hash_ids", "not an array of non-negative integer block ids"};
      request.prefix_block_ids.push_back(v);
    }
  } catch (const simdjson::simdjson_error& e) {
    return std::pair<std::string, std::string>{"", std::string("invalid JSON: ") + e.what()};
  }
  const double blocks = std::ceil(request.input_tokens / kMooncakeBlockTokens);
  if (static_cast<double>(request.prefix_block_ids.size()) > blocks)
    return std::pair<std::string, std::string>{
        "hash_ids", fmt::format("{} block ids for a prompt of {:.0f} tokens (at most {:.0f} blocks of {})",
                                request.prefix_block_ids.size(), request.input_tokens, blocks, kMooncakeBlockTokens)};
  request.prefix_block_tokens = kMooncakeBlockTokens;
  return std::nullopt;
}

}  // namespace

std::optional<TraceFormat> parse_trace_format(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "auto" || name.empty()) return TraceFormat::automatic;
  if (name == "azure") return TraceFormat::azure;
  if (name == "csv") return TraceFormat::csv;
  if (name == "jsonl") return TraceFormat::jsonl;
  if (name == "mooncake") return TraceFormat::mooncake;
  return std::nullopt;
}

std::optional<double> parse_timestamp(std::string_view text) {
  text = trim(text);
  // Seconds as plain digits (the common case: one per telemetry row): the decimal fast path,
  // which gives the general parser's correctly rounded value.
  // (parse_decimal falls back to the general parser itself: a date is not parsed as a number twice).
  const bool digits = !text.empty() && text.front() >= '0' && text.front() <= '9' && text.back() >= '0' && text.back() <= '9';
  if (auto seconds = digits ? parse_decimal(text) : parse_finite_double(text)) return seconds;
  // YYYY-MM-DD[ T]HH:MM:SS[.fraction][Z]
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') ||
      text[13] != ':' || text[16] != ':')
    return std::nullopt;
  auto field = [&](size_t at, size_t width) { return parse_integer(text.substr(at, width), 0, 9999); };
  auto year = field(0, 4), month = field(5, 2), day = field(8, 2), hour = field(11, 2), minute = field(14, 2),
       second = field(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 || *day < 1 ||
      *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  double fraction = 0;
  std::string_view rest = text.substr(19);
  if (!rest.empty() && rest.back() == 'Z') rest.remove_suffix(1);
  if (!rest.empty()) {
    if (rest.front() != '.') return std::nullopt;
    auto parsed = parse_finite_double(std::string("0") + std::string(rest));
    if (!parsed) return std::nullopt;
    fraction = *parsed;
  }
  long long days = days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
  return static_cast<double>(days * 86400 + *hour * 3600 + *minute * 60 + *second) + fraction;
}

struct TraceStream::State {
  std::ifstream in;
  std::string line;
  int line_number = 0;
  double last_timestamp = -1e300;
  int time_column = -1, input_column = -1, output_column = -1;
  size_t columns = 0;
  simdjson::ondemand::parser parser;
};

TraceStream::TraceStream(std::string path, TraceFormat format)
    : path_(std::move(path)), format_(format), state_(std::make_unique<State>()) {
  state_->in.open(path_, std::ios::binary);
  if (!state_->in) error_ = Error{path_, 0, "", "cannot read the trace file"};
  if (format_ == TraceFormat::automatic) {
    bool jsonl = path_.size() >= 6 && (path_.substr(path_.size() - 6) == ".jsonl" || path_.substr(path_.size() - 5) == ".json");
    format_ = jsonl ? TraceFormat::jsonl : TraceFormat::csv;  // CSV headers tell azure from generic
  }
}

TraceStream::~TraceStream() = default;

std::optional<TraceRequest> TraceStream::next() {
  if (error_) return std::nullopt;
  State& st = *state_;
  auto fail = [&](int line, const std::string& field, const std::string& message) -> std::optional<TraceRequest> {
    error_ = Error{path_, line, field, message};
    return std::nullopt;
  };
  while (std::getline(st.in, st.line)) {
    ++st.line_number;
    std::string& line = st.line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (st.line_number == 1 || line.find('\0') != std::string::npos)
      if (auto problem = encoding_problem(line)) return fail(st.line_number, "", *problem + ": not a request trace");
    const bool json_lines = format_ == TraceFormat::jsonl || format_ == TraceFormat::mooncake;
    if (trim(line).empty() || (!json_lines && trim(line).front() == '#')) continue;
    TraceRequest request;
    request.line = st.line_number;
    // JSON Lines in Mooncake's keys are read as such, named so or not.
    if (format_ == TraceFormat::jsonl && line.find("\"input_length\"") != std::string::npos &&
        line.find("\"input_tokens\"") == std::string::npos)
      format_ = TraceFormat::mooncake;
    if (format_ == TraceFormat::mooncake) {
      if (auto problem = read_mooncake_line(st.parser, line, request)) return fail(st.line_number, problem->first, problem->second);
      request.timestamp_s /= 1000;  // milliseconds in the trace
    } else if (format_ == TraceFormat::jsonl) {
      simdjson::padded_string padded(line);
      try {
        simdjson::ondemand::document doc = st.parser.iterate(padded);
        const char* keys[] = {"timestamp", "input_tokens", "output_tokens"};
        double* targets[] = {&request.timestamp_s, &request.input_tokens, &request.output_tokens};
        for (int k = 0; k < 3; ++k) {
          doc.rewind();
          auto value = doc[keys[k]];
          if (value.error() == simdjson::NO_SUCH_FIELD) return fail(st.line_number, keys[k], "missing");
          if (value.error()) return fail(st.line_number, "", std::string("invalid JSON: ") + simdjson::error_message(value.error()));
          if (k == 0 && value.type().value() == simdjson::ondemand::json_type::string) {
            auto parsed = parse_timestamp(value.get_string().value());
            if (!parsed) return fail(st.line_number, keys[k], "not a time");
            *targets[k] = *parsed;
            continue;
          }
          double d;
          if (value.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d))
            return fail(st.line_number, keys[k], "not a finite number");
          *targets[k] = d;
        }
      } catch (const simdjson::simdjson_error& e) {
        return fail(st.line_number, "", std::string("invalid JSON: ") + e.what());
      }
      if (request.input_tokens < 0 || request.input_tokens > kMaxTokens)
        return fail(st.line_number, "input_tokens", fmt::format("{} is not a token count (0 to {:.0e})", request.input_tokens, kMaxTokens));
      if (request.output_tokens < 0 || request.output_tokens > kMaxTokens)
        return fail(st.line_number, "output_tokens", fmt::format("{} is not a token count (0 to {:.0e})", request.output_tokens, kMaxTokens));
    } else {
      auto cells = cells_of(line);
      if (st.time_column < 0) {
        for (size_t i = 0; i < cells.size(); ++i) {
          std::string name = to_lower(cells[i]);
          if (name == "timestamp" || name == "time") st.time_column = static_cast<int>(i);
          if (name == "contexttokens" || name == "input_tokens") st.input_column = static_cast<int>(i);
          if (name == "generatedtokens" || name == "output_tokens") st.output_column = static_cast<int>(i);
        }
        if (st.time_column < 0 || st.input_column < 0 || st.output_column < 0)
          return fail(st.line_number, "", "header must name timestamp, input_tokens and output_tokens "
                                          "(or the Azure trace's TIMESTAMP, ContextTokens, GeneratedTokens)");
        st.columns = cells.size();
        continue;
      }
      if (cells.size() != st.columns)
        return fail(st.line_number, "", fmt::format("expected {} columns, found {}", st.columns, cells.size()));
      auto cell = [&](int column) { return cells[static_cast<size_t>(column)]; };
      auto timestamp = parse_timestamp(cell(st.time_column));
      if (!timestamp) return fail(st.line_number, "timestamp", "'" + std::string(cell(st.time_column)) + "' is not a time");
      auto input = parse_finite_double(cell(st.input_column));
      auto output = parse_finite_double(cell(st.output_column));
      if (!input || *input < 0 || *input > kMaxTokens)
        return fail(st.line_number, "input_tokens",
                    fmt::format("'{}' is not a token count (0 to {:.0e})", cell(st.input_column), kMaxTokens));
      if (!output || *output < 0 || *output > kMaxTokens)
        return fail(st.line_number, "output_tokens",
                    fmt::format("'{}' is not a token count (0 to {:.0e})", cell(st.output_column), kMaxTokens));
      request.timestamp_s = *timestamp;
      request.input_tokens = *input;
      request.output_tokens = *output;
    }
    // About 3,000 years either side of 1970: beyond that a timestamp is garbage (and overflows minutes).
    if (std::abs(request.timestamp_s) > 1e11)
      return fail(st.line_number, "timestamp", fmt::format("{} s is out of range (more than 3,000 years from 1970)", request.timestamp_s));
    if (request.timestamp_s < st.last_timestamp)
      return fail(st.line_number, "timestamp", "goes backwards (traces must be in time order)");
    st.last_timestamp = request.timestamp_s;
    ++rows_;
    return request;
  }
  if (st.in.bad()) return fail(st.line_number, "", "read error");
  if (format_ != TraceFormat::jsonl && format_ != TraceFormat::mooncake && st.time_column < 0)
    return fail(0, "", "empty trace: no header");
  if (rows_ == 0) return fail(st.line_number, "", "the trace has no requests");
  return std::nullopt;
}

std::optional<Error> read_trace(const std::string& path, TraceFormat format,
                                const std::function<void(const TraceRequest&)>& on_request) {
  TraceStream stream(path, format);
  while (auto request = stream.next()) on_request(*request);
  return stream.error();
}

Result<TraceSummary> summarize_trace(const std::string& path, TraceFormat format, double time_scale) {
  TraceSummary summary;
  summary.path = path;
  constexpr size_t kReservoir = 65536;
  std::mt19937_64 random(42);  // seeded: the same trace gives the same summary
  double first = 0, last = 0, input_sum = 0, output_sum = 0;
  std::map<long long, long long> per_minute;
  PrefixReuse reuse;
  auto error = read_trace(path, format, [&](const TraceRequest& r) {
    if (!r.prefix_block_ids.empty() && summary.requests < kPrefixReuseRequests)
      reuse.add(r.input_tokens, r.prefix_block_ids, r.prefix_block_tokens);
    if (summary.requests == 0) first = r.timestamp_s;
    last = r.timestamp_s;
    double t = (r.timestamp_s - first) / time_scale;
    ++per_minute[static_cast<long long>(std::floor(t / 60.0))];
    input_sum += r.input_tokens;
    output_sum += r.output_tokens;
    ++summary.requests;
    if (summary.input_sample.size() < kReservoir) {
      summary.input_sample.push_back(r.input_tokens);
      summary.output_sample.push_back(r.output_tokens);
    } else {
      std::uniform_int_distribution<long long> pick(0, summary.requests - 1);
      long long slot = pick(random);
      if (slot < static_cast<long long>(kReservoir)) {
        summary.input_sample[static_cast<size_t>(slot)] = r.input_tokens;
        summary.output_sample[static_cast<size_t>(slot)] = r.output_tokens;
      }
    }
  });
  if (error) return *error;
  summary.duration_s = std::max(1.0, (last - first) / time_scale);
  summary.mean_rps = static_cast<double>(summary.requests) / summary.duration_s;
  long long busiest = 0;
  for (const auto& [minute, count] : per_minute) busiest = std::max(busiest, count);
  summary.peak_rps = std::max(summary.mean_rps, static_cast<double>(busiest) / 60.0);
  summary.input_mean = input_sum / static_cast<double>(summary.requests);
  summary.output_mean = output_sum / static_cast<double>(summary.requests);
  if (!reuse.empty()) summary.prefix_reuse = reuse.curve({1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64});
  return summary;
}

}  // namespace gw
