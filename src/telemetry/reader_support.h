// What the telemetry readers share: a block line reader, fast timestamp and CSV cell parsing,
// the series table that interns ids and labels, and Prometheus label blocks. Internal to
// src/telemetry (each format's reader is its own file: read_*.cc, declared in format_readers.h).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/flat_index.h"
#include "core/limits.h"
#include "core/numbers.h"
#include "core/text.h"
#include "telemetry/readers.h"
#include "trace/request_trace.h"

namespace gw::reader_support {

inline constexpr double kMiB = 1024.0 * 1024.0;

// Reads a file in large blocks and hands out lines as views: no allocation per line. The
// buffer is not zeroed (small files cost no 4 MiB memset) and grows for a long line up to
// kMaxLine; a longer "line" is handed out in pieces, which readers then skip as malformed.
class LineReader {
 public:
  explicit LineReader(std::ifstream& in) : in_(in), buffer_(new char[kBlock]), size_(kBlock) {}
  bool next(std::string_view& line) {
    while (true) {
      size_t newline = pending_.find('\n');
      if (newline != std::string_view::npos) {
        line = pending_.substr(0, newline);
        pending_.remove_prefix(newline + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
      }
      if (eof_ || pending_.size() >= kMaxLine) {
        if (pending_.empty()) return false;
        line = pending_;
        pending_ = {};
        return true;
      }
      // Move the partial line to the front and read more behind it.
      size_t keep = pending_.size();
      if (keep > 0) std::memmove(buffer_.get(), pending_.data(), keep);
      if (keep == size_) {  // a very long line
        std::unique_ptr<char[]> larger(new char[size_ * 2]);
        std::memcpy(larger.get(), buffer_.get(), keep);
        buffer_ = std::move(larger);
        size_ *= 2;
      }
      in_.read(buffer_.get() + keep, static_cast<std::streamsize>(size_ - keep));
      size_t got = static_cast<size_t>(in_.gcount());
      if (got == 0) eof_ = true;
      pending_ = std::string_view(buffer_.get(), keep + got);
    }
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 22;
  static constexpr size_t kMaxLine = size_t{1} << 28;
  std::ifstream& in_;
  std::unique_ptr<char[]> buffer_;
  size_t size_;
  std::string_view pending_;
  bool eof_ = false;
};

// "YYYY-MM-DD HH:MM:SS[.frac]" or with '/' separators, without allocating; else the general parser.
inline std::optional<double> fast_time(std::string_view text) {
  text = trim(text);
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  auto number = [&](size_t at, size_t width) {
    int v = 0;
    for (size_t i = at; i < at + width; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  if (text.size() >= 19 && digit(0) && digit(3) && (text[4] == '-' || text[4] == '/') && (text[7] == '-' || text[7] == '/') &&
      (text[10] == ' ' || text[10] == 'T') && text[13] == ':' && text[16] == ':' && digit(17) && digit(18)) {
    int year = number(0, 4), month = number(5, 2), day = number(8, 2);
    if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
    // Days from civil (Hinnant), as in trace/request_trace.cc.
    long long y = year - (month <= 2);
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = static_cast<unsigned>(y - era * 400);
    unsigned doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + static_cast<long long>(doe) - 719468;
    double t = static_cast<double>(days * 86400 + number(11, 2) * 3600 + number(14, 2) * 60 + number(17, 2));
    if (text.size() > 19 && text[19] == '.') {
      double scale = 0.1;
      for (size_t i = 20; i < text.size() && digit(i); ++i, scale /= 10) t += (text[i] - '0') * scale;
    }
    return t;
  }
  std::string copy(text);
  std::replace(copy.begin(), copy.end(), '/', '-');
  return parse_timestamp(copy);
}

struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
};

// Interns series ids and labels so samples carry stable pointers (bounded by the series count).
class SeriesTable {
 public:
  // Thread-safe: audits may run in several threads of one program (the Python module's).
  std::pair<const std::string*, const Labels*> intern(Labels labels) {
    std::sort(labels.begin(), labels.end());
    std::string id;
    for (const auto& [k, v] : labels) id += (id.empty() ? "" : ",") + k + "=" + v;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = series_.find(id);
    if (it == series_.end()) {
      if (series_.size() >= input_limits().max_series)
        throw SeriesLimitExceeded(fmt::format("more than {} telemetry series (raise the limit with --max-series)",
                                              input_limits().max_series));
      it = series_.emplace(id, std::move(labels)).first;
    }
    return {&it->first, &it->second};
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Labels> series_;  // node-based: pointers into it stay valid
};

inline SeriesTable& table() {
  static SeriesTable t;  // ids live as long as the process (one audit per run)
  return t;
}

// trim() for a cell, returning at once when neither end is blank, as most cells are (' ', '\t'
// and '\r' are all at or below ' '): a tenth of a long CSV's reading went to trimming.
inline std::string_view trim_cell(std::string_view text) {
  if (!text.empty() && static_cast<unsigned char>(text.front()) > ' ' && static_cast<unsigned char>(text.back()) > ' ') return text;
  return trim(text);
}

// Cells of a CSV line as views into it (no quoting in telemetry CSVs).
inline void split_views(std::string_view line, std::vector<std::string_view>& cells) {
  cells.clear();
  // A plain loop: cells are short, and memchr's set-up costs more than it saves here.
  const char* begin = line.data();
  const char* end = begin + line.size();
  const char* start = begin;
  for (const char* p = begin; p != end; ++p) {
    if (*p == ',') {
      cells.emplace_back(start, static_cast<size_t>(p - start));
      start = p + 1;
    }
  }
  cells.emplace_back(start, static_cast<size_t>(end - start));
}

// name="value" pairs of a Prometheus label block, with \" \\ and \n escapes.
std::vector<std::pair<std::string, std::string>> parse_label_block(std::string_view block);

}  // namespace gw::reader_support
