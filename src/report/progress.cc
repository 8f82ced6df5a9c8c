#include "report/progress.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <unistd.h>

#include "report/table.h"

namespace gw {

Progress::Progress(std::string label, std::string unit, double total, bool enabled)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), enabled_(enabled),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string Progress::line(double done, double seconds) const {
  double rate = seconds > 0 ? done / seconds : 0;
  std::string rate_text = format_count(rate) + " " + unit_ + "/s";
  if (total_ <= 0) return fmt::format("{} {} {} ({})", label_, format_count(done), unit_, rate_text);
  double fraction = std::clamp(done / total_, 0.0, 1.0);
  constexpr int kWidth = 30;
  int filled = static_cast<int>(std::lround(fraction * kWidth));
  std::string bar = std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(kWidth - filled), '.');
  double left_s = rate > 0 ? (total_ - done) / rate : 0;
  return fmt::format("{} [{}] {:3.0f}% {} ETA {:.0f}s", label_, bar, fraction * 100, rate_text, left_s);
}

void Progress::update(double done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  std::string text = line(done, std::chrono::duration<double>(now - start_).count());
  std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gw
