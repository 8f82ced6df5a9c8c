// Small text helpers shared by readers and writers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

std::string to_lower(std::string_view text);
// Lower case with '-', '_', ' ' and '.' removed: "A100-80GB" and "a100_80gb" compare equal.
std::string normalize_name(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
// Values of a repeatable option, each possibly comma-separated: {"a,b", "c"} -> {a, b, c}.
std::vector<std::string> split_lists(const std::vector<std::string>& values);
// "a, b, c".
std::string join_list(const std::vector<std::string>& items, std::string_view separator = ", ");
// A CSV cell: quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_quote(const std::string& text);
// 1-based line number of a byte offset in text.
int line_of_offset(std::string_view text, size_t offset);
// Reads a whole file; an Error names the file when it cannot be read.
bool read_file(const std::string& path, std::string& contents, std::string& error_message);
// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to text, if it is close enough to be a useful suggestion.
std::string closest_match(std::string_view text, const std::vector<std::string>& candidates);
// Up to `most` candidates close enough to suggest, closest first (closest_match's first):
// names that differ by a version digit ("llama-3-70b": llama-2-70b, llama-3.1-70b) are all
// worth naming.
std::vector<std::string> close_matches(std::string_view text, const std::vector<std::string>& candidates, size_t most = 3);
// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string quoted_alternatives(const std::vector<std::string>& names);

// At most max_bytes of text, cut at a UTF-8 character boundary.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// A library's exception text without its "[json.exception.parse_error.101] " prefix.
std::string without_exception_id(std::string message);

// Why text is not UTF-8 we can read: "UTF-16 text (save it as UTF-8)", "binary content (NUL
// bytes)", or nullopt when it looks fine. Checks the byte-order marks and NUL bytes.
std::optional<std::string> encoding_problem(std::string_view text);

}  // namespace gw
