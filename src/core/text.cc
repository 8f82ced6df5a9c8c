#include "core/text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "core/limits.h"

namespace gw {

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string normalize_name(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '-' || c == '_' || c == ' ' || c == '.') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> split_lists(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& value : values)
    for (auto& part : split(value, ','))
      if (!part.empty()) out.push_back(part);
  return out;
}

std::string join_list(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string csv_quote(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

int line_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

bool read_file(const std::string& path, std::string& contents, std::string& error_message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error_message = std::strerror(errno);
    return false;
  }
  std::error_code ignored;
  auto size = std::filesystem::file_size(path, ignored);
  if (!ignored && size > input_limits().max_file_bytes) {
    error_message = fmt::format("{} bytes is over the input limit of {} bytes (raise it with --max-input-mib)", size,
                                input_limits().max_file_bytes);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error_message = "read error";
    return false;
  }
  contents = buffer.str();
  return true;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

// Each candidate's edit distance to the lowercased text, computed once for both questions.
std::vector<size_t> distances_to(const std::string& needle, const std::vector<std::string>& candidates) {
  std::vector<size_t> out;
  out.reserve(candidates.size());
  for (const auto& candidate : candidates) out.push_back(edit_distance(needle, to_lower(candidate)));
  return out;
}

// closest_match on distances already known: its index in candidates, or -1.
long closest_index(const std::string& needle, const std::vector<std::string>& candidates, const std::vector<size_t>& distance) {
  // A typo of one character names that candidate; otherwise the name's first token ("h100" of
  // "H100-80G") is what a person is surest of: a candidate that is exactly that token (the
  // family) wins over a closer string of another family ("A100-80GB").
  const std::string head = needle.substr(0, needle.find_first_of("-_ ./"));
  long family = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (distance[i] <= 1) return static_cast<long>(i);
    if (head.size() >= 2 && head.size() < needle.size() && to_lower(candidates[i]) == head) family = static_cast<long>(i);
  }
  if (family >= 0) return family;
  long best = -1;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (best < 0 || distance[i] < distance[static_cast<size_t>(best)]) best = static_cast<long>(i);
  if (best < 0 || distance[static_cast<size_t>(best)] > std::max<size_t>(2, needle.size() / 3)) return -1;
  return best;
}

}  // namespace

std::vector<std::string> close_matches(std::string_view text, const std::vector<std::string>& candidates, size_t most) {
  std::vector<std::string> out;
  const std::string needle = to_lower(text);
  const std::vector<size_t> distance = distances_to(needle, candidates);
  const long first = closest_index(needle, candidates, distance);
  if (first < 0) return out;
  out.push_back(candidates[static_cast<size_t>(first)]);
  const size_t limit = std::max<size_t>(2, needle.size() / 3);
  // The others end as the name does (its size, "70b"): a near name of another size is noise.
  const size_t cut = needle.find_last_of("-_ ");
  const std::string tail = cut == std::string::npos ? "" : needle.substr(cut);
  std::vector<std::pair<size_t, std::string>> others;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string lower = to_lower(candidates[i]);
    const bool same_tail = tail.empty() || (lower.size() >= tail.size() && lower.compare(lower.size() - tail.size(), tail.size(), tail) == 0);
    if (candidates[i] != out.front() && distance[i] <= limit && same_tail) others.emplace_back(distance[i], candidates[i]);
  }
  std::stable_sort(others.begin(), others.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [d, candidate] : others) {
    if (out.size() >= most) break;
    out.push_back(candidate);
  }
  return out;
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string closest_match(std::string_view text, const std::vector<std::string>& candidates) {
  const std::string needle = to_lower(text);
  const long i = closest_index(needle, candidates, distances_to(needle, candidates));
  return i < 0 ? std::string() : candidates[static_cast<size_t>(i)];
}

std::optional<std::string> encoding_problem(std::string_view text) {
  auto starts = [&](std::string_view bom) { return text.substr(0, bom.size()) == bom; };
  if (starts(std::string_view("\xFF\xFE\x00\x00", 4)) || starts(std::string_view("\x00\x00\xFE\xFF", 4)))
    return std::string("UTF-32 text (save it as UTF-8)");
  if (starts("\xFF\xFE") || starts("\xFE\xFF")) return std::string("UTF-16 text (save it as UTF-8)");
  // Compressed files by their magic numbers: say which tool opens them.
  if (starts("\x1F\x8B")) return std::string("a gzip-compressed file (gunzip it first; a .tar.gz: tar xzf)");
  if (starts("\x28\xB5\x2F\xFD")) return std::string("a zstd-compressed file (unzstd it first)");
  if (starts(std::string_view("\xFD" "7zXZ\x00", 6))) return std::string("an xz-compressed file (unxz it first)");
  if (starts("BZh") && text.size() >= 10 && text.substr(4, 6) == "1AY&SY") return std::string("a bzip2-compressed file (bunzip2 it first)");
  if (starts("PK\x03\x04")) return std::string("a zip archive (unzip it first)");
  if (text.find('\0') != std::string_view::npos) return std::string("binary content (NUL bytes)");
  return std::nullopt;
}

std::string without_exception_id(std::string message) {
  if (!message.empty() && message.front() == '[') {
    size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  return message;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so a character is never split.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace gw
