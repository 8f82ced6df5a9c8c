#include "report/style.h"

#include <cstdlib>
#include <unistd.h>

namespace gw {

bool colour_wanted(bool stdout_is_terminal, const char* no_color_env, bool to_file, std::string_view format) {
  bool no_color = no_color_env != nullptr && no_color_env[0] != '\0';
  return stdout_is_terminal && !no_color && !to_file && format == "table";
}

bool colour_wanted_here(bool to_file, std::string_view format) {
  return colour_wanted(::isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR"), to_file, format);
}

std::string paint(std::string_view text, Style style, bool on) {
  if (!on) return std::string(text);
  const char* code = style == Style::bold ? "\x1b[1m" : style == Style::good ? "\x1b[1;32m" : style == Style::bad ? "\x1b[1;31m" : "\x1b[33m";
  return code + std::string(text) + "\x1b[0m";
}

}  // namespace gw
